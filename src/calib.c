// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "calib.h"

/*
 * Written in assembly so that its first instruction is push %rbp whatever
 * the compiler's flags: that is the instruction kernels look for.
 */
__asm__(".text\n"
	".globl sw_calib_target\n"
	".type sw_calib_target, @function\n"
	"sw_calib_target:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov 8(%rbp), %rax\n"
	"	mov %rax, (%rdi)\n"
	"	pop %rbp\n"
	"	ret\n"
	".size sw_calib_target, .-sw_calib_target\n");

void sw_calib_target(__u64 *ret);

/* File offset of an address of ours, from the mapping that holds it. */
static int self_offset(__u64 addr, char *path, size_t len, unsigned long *off)
{
	unsigned long start, end, pgoff;
	char line[4352], file[4096];
	FILE *m = fopen("/proc/self/maps", "r");
	int err = -ENOENT;

	if (!m)
		return -errno;
	while (fgets(line, sizeof(line), m)) {
		file[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &start, &end,
			   &pgoff, file) < 3)
			continue;
		if (addr >= start && addr < end && file[0] == '/') {
			*off = addr - start + pgoff;
			snprintf(path, len, "%s", file);
			err = 0;
			break;
		}
	}
	fclose(m);
	return err;
}

int sw_calib_run(const struct sw_features *f, int prog_fd, struct sw_calib *c,
		 struct sw_attachment *a)
{
	struct sw_probe_spec spec = { .kind = SW_PROBE_UPROBE };
	void (*volatile target)(__u64 *) = sw_calib_target;
	char path[4096];
	int err;

	c->target = (__u64)(unsigned long)sw_calib_target;
	err = self_offset(c->target, path, sizeof(path), &spec.offset);
	if (err)
		return err;
	spec.path = path;
	/* armed in our process only: it stays attached until we exit */
	spec.pid = getpid();
	err = sw_attach(f, prog_fd, &spec, 0, a);
	if (err)
		return err;
	target(&c->ret);
	return 0;
}
