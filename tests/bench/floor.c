// SPDX-License-Identifier: MIT
/*
 * floor {count|stack} {tp CAT:EVENT | up BINARY:FUNCTION} -- COMMAND...:
 * attach a floor program, run COMMAND, detach.  The attach is the tools':
 * compat/attach.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "../../compat/attach.h"
#include "../../src/elf_file.h"
#include "floor.skel.h"

int main(int argc, char **argv)
{
	struct sw_probe_spec spec = {};
	struct sw_attachment a;
	struct sw_features f;
	struct floor_bpf *skel;
	char prog[32], *where, *colon;
	int status, err;
	pid_t pid;

	if (argc < 6 || strcmp(argv[4], "--")) {
		fprintf(stderr, "usage: floor {count|stack} {tp CAT:EVENT|up BIN:FUNC} -- CMD...\n");
		return 2;
	}
	if (kfeatures_probe(&f, 0, NULL, NULL, NULL))
		return 1;
	where = strdup(argv[3]);
	colon = strrchr(where, ':');
	if (!colon)
		return 2;
	*colon = 0;
	snprintf(prog, sizeof(prog), "%s_%s", argv[1], argv[2]);
	skel = floor_bpf__open();
	if (!skel)
		return 1;
	for (struct bpf_program *p = NULL; (p = bpf_object__next_program(skel->obj, p));)
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), prog));
	if (floor_bpf__load(skel))
		return 1;
	if (!strcmp(argv[2], "tp")) {
		spec.kind = SW_PROBE_TRACEPOINT;
		spec.category = where;
		spec.event = colon + 1;
	} else {
		const struct elf_sym *sym;
		struct elf_file *ef;
		uint64_t off;

		if (elf_file_new(&ef, where) ||
		    !(sym = elf_file_sym_by_name(ef, colon + 1)) ||
		    elf_file_vaddr_to_offset(ef, sym->addr, &off)) {
			fprintf(stderr, "floor: no function %s in %s\n", colon + 1, where);
			return 1;
		}
		spec.kind = SW_PROBE_UPROBE;
		spec.path = where;
		spec.offset = off;
	}
	err = attach_probe(&f, bpf_program__fd(bpf_object__find_program_by_name(skel->obj, prog)),
			&spec, 0, &a);
	if (err) {
		fprintf(stderr, "floor: attach: %s\n", strerror(-err));
		return 1;
	}
	pid = fork();
	if (!pid) {
		execvp(argv[5], &argv[5]);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	attach_remove(&f, &a);
	floor_bpf__destroy(skel);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
