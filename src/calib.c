// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "calib.h"
#include "procs.h"

/*
 * Written in assembly so that their first instructions are what kernels
 * look for whatever the compiler's flags: push %rbp in one, endbr64 (as
 * -fcf-protection puts there) in the other.  Each stores its return
 * address through its argument.
 */
#define SW_CALIB_TARGET(name, first)				\
	".text\n"						\
	".globl " name "\n"					\
	".type " name ", @function\n"				\
	name ":\n"						\
	first							\
	"	push %rbp\n"					\
	"	mov %rsp, %rbp\n"				\
	"	mov 8(%rbp), %rax\n"				\
	"	mov %rax, (%rdi)\n"				\
	"	pop %rbp\n"					\
	"	ret\n"						\
	".size " name ", .-" name "\n"

__asm__(SW_CALIB_TARGET("sw_calib_push", "")
	SW_CALIB_TARGET("sw_calib_endbr", "	endbr64\n"));

/*
 * The targets are called from a frame of known shape: an unwinder that
 * does not add the caller then finds the return address into our C code
 * behind %rbp, never the target's own return address, and never a %rbp
 * that -O2 code left holding something other than a frame.
 */
__asm__(".text\n"
	".globl sw_calib_call\n"
	".type sw_calib_call, @function\n"
	"sw_calib_call:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	call *%rax\n"
	"	pop %rbp\n"
	"	ret\n"
	".size sw_calib_call, .-sw_calib_call\n");

/* peek's target (src/vma_calib.c): the address to read in %rdi */
__asm__(".text\n"
	".globl sw_calib_peek\n"
	".type sw_calib_peek, @function\n"
	"sw_calib_peek:\n"
	"	nop\n"
	"	ret\n"
	".size sw_calib_peek, .-sw_calib_peek\n");

void sw_calib_push(__u64 *ret);
void sw_calib_endbr(__u64 *ret);
void sw_calib_call(void (*target)(__u64 *), __u64 *ret);

/* File offset of an address of ours, from the mapping that holds it. */
static int self_offset(__u64 addr, char *path, size_t len, unsigned long *off)
{
	char line[4352];
	FILE *f = fopen("/proc/self/maps", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct proc_map m;

		if (procs_parse_maps_line(line, &m) && m.path[0] == '/' &&
		    addr >= m.start && addr < m.end) {
			*off = addr - m.start + m.pgoff;
			snprintf(path, len, "%s", m.path);
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

int calib_attach(const struct sw_features *f, int prog_fd, __u64 fn,
		 unsigned seq, struct sw_attachment *a)
{
	struct sw_probe_spec spec = { .kind = SW_PROBE_UPROBE };
	char path[4096];
	int err;

	err = self_offset(fn, path, sizeof(path), &spec.offset);
	if (err)
		return err;
	spec.path = path;
	/* armed in our process only: it stays attached until we exit */
	spec.pid = getpid();
	return attach_probe(f, prog_fd, &spec, seq, a);
}

int calib_run(const struct sw_features *f, int prog_fd,
		 enum sw_entry_shape shape, unsigned seq, struct sw_calib *c,
		 struct sw_attachment *a)
{
	void (*target)(__u64 *);
	int err;

	switch (shape) {
	case SW_SHAPE_PUSH_RBP:
		target = sw_calib_push;
		break;
	case SW_SHAPE_ENDBR64:
		target = sw_calib_endbr;
		break;
	default:
		return -EINVAL;
	}
	c->target = (__u64)(unsigned long)target;
	err = calib_attach(f, prog_fd, c->target, seq, a);
	if (err)
		return err;
	sw_calib_call(target, &c->ret);
	return 0;
}
