/* SPDX-License-Identifier: MIT */
/*
 * Offsets of a few struct members from the kernel's BTF
 * (/sys/kernel/btf/vmlinux): one pass over its types where the file can
 * be mapped (6.16+ maps the kernel's), else read in passes through a
 * small buffer.
 * Parsing the whole of it (libbpf's btf__load_vmlinux_btf) holds two
 * copies of its 5-6 MB and costs ~60 ms of page faults in a fresh process,
 * most of the start-up and of the peak memory of a run; what the walkers
 * need is ten offsets.
 */
#ifndef SW_KBTF_H
#define SW_KBTF_H

#include <stddef.h>

struct kbtf_member {
	const char *type;	/* a struct's name */
	const char *name;	/* a member of it, or of an anonymous member */
	long off;		/* set: its offset in bytes; -1 none */
};

/*
 * Fills each v[i].off from the BTF file at path: the first struct of that
 * name, as libbpf's btf__find_by_name_kind takes it.  0, or a negative
 * errno when the file cannot be read or is not BTF (every off -1).
 */
int kbtf_members(const char *path, struct kbtf_member *v, size_t n);
/*
 * The same through libbpf's parse of the whole file: what kbtf_members
 * falls back to for a kind of type newer than it knows (the unit test's
 * reference too).
 */
int kbtf_members_libbpf(const char *path, struct kbtf_member *v, size_t n);

#endif
