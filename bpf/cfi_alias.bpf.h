/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Before 4.16 a map helper takes its value only from the BPF stack, and a
 * process's mapping list is larger than that stack: a child of fork walks
 * with the list of the process it was forked from (or that one's, if it
 * was forked too), by reference, until it runs exec or gets a list of its
 * own.  By the child's id; gone at its exec and exit.  The list is taken
 * only while it is still the one the child forked with: its first
 * mapping's start and table, kept here, tell another image's (the parent
 * ran exec since) from it.  bpf/cfi.bpf.c (4.9-4.17) and bpf/cfi41.bpf.c
 * (4.2-4.8) keep them so.
 */
#ifndef SW_CFI_ALIAS_BPF_H
#define SW_CFI_ALIAS_BPF_H

#include "cfi_maps.bpf.h"

struct cfi_alias_ref {
	__u32 tgid;		/* whose list */
	__u32 first;		/* its first mapping's table (~0: it had none) */
	__u64 start;		/* and address */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SW_CFI_PROCS_MAX);
	__type(key, __u32);
	__type(value, struct cfi_alias_ref);
} cfi_alias SEC(".maps");

/*
 * A list's first mapping, which tells its image: read with a helper, as
 * 4.4's verifier takes no pointer into a map value but at its start.
 */
struct cfi_alias_head {
	__u32 nr, no_room, built, pad;
	struct sw_cfi_map m;
};

static __always_inline void cfi_alias_head(struct cfi_alias_head *h,
					   struct sw_cfi_proc *p)
{
	h->nr = 0;
	if (p)
		bpf_probe_read(h, sizeof(*h), (void *)sw_ptr_value(p));
}

/*
 * The list *tgid's process walks with, its owner into *tgid; or NULL (and
 * *tgid as it was) where there is none, or only another image's.
 */
static __always_inline struct sw_cfi_proc *cfi_alias_list(__u32 *tgid)
{
	struct cfi_alias_ref *a = bpf_map_lookup_elem(&cfi_alias, tgid);
	struct cfi_alias_head h = {};
	struct sw_cfi_proc *p;
	__u32 owner, first;
	__u64 start;

	if (!a)
		return NULL;
	/* a key on the stack: 4.14 takes none from a map value */
	owner = a->tgid;
	first = a->first;
	start = a->start;
	p = bpf_map_lookup_elem(&cfi_procs, &owner);
	cfi_alias_head(&h, p);
	if (!h.nr || h.m.first != first || h.m.start != start)
		return NULL;
	*tgid = owner;
	return p;
}

/*
 * child, just forked by the current process: its list is the parent's
 * own, or else the one the parent walks with (a pid used again loses the
 * list its last owner had).  No room: its events are counted as without
 * tables.
 */
static __always_inline void cfi_alias_fork(__u32 child)
{
	__u32 parent = bpf_get_current_pid_tgid() >> 32;
	struct cfi_alias_ref al = { .tgid = parent, .first = ~0u }, *a;
	struct cfi_alias_head h = {};

	bpf_map_delete_elem(&cfi_procs, &child);
	cfi_alias_head(&h, bpf_map_lookup_elem(&cfi_procs, &parent));
	a = bpf_map_lookup_elem(&cfi_alias, &parent);
	if (h.nr) {
		al.first = h.m.first;
		al.start = h.m.start;
	} else if (a) {
		bpf_probe_read(&al, sizeof(al), a);
	}
	bpf_map_update_elem(&cfi_alias, &child, &al, BPF_ANY);
}

#endif /* SW_CFI_ALIAS_BPF_H */
