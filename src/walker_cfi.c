// SPDX-License-Identifier: MIT
/*
 * The cfi walker (5.3+): kernel frames from bpf_get_stack as the getstack
 * walker has them, user frames unwound in BPF from the binaries' own
 * unwind tables (.eh_frame), which the frontend loads into maps
 * (src/unwind.c).  So code built without frame pointers, frameless leaf
 * functions and probes before a prologue all give their callers.  Same
 * object, keys and counts as getstack (bpf/getstack.bpf.c's gs_cfi_*).
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include "walker_int.h"
#include "getstack.skel.h"

static bool cfi_refuse(const struct sw_features *f, const struct walker_need *n,
		       char *msg, size_t len)
{
	const char *lacks = !f->helper_get_stack ?
		"this kernel has no bpf_get_stack (4.18+)" :
		"this kernel's verifier takes no bounded loops (5.3+), which "
		"the unwind-table walk needs";

	if (walkers_refuse_helper(&walker_cfi, f, n, f->helper_get_stack &&
				  f->map_percpu && f->prog_loops, lacks, msg, len))
		return true;
	if (n && !n->ustack)
		return walkers_refused(&walker_cfi, "it unwinds user frames, and "
				       "this run records none", msg, len);
	return false;
}

static const char *cfi_why(const struct sw_features *f, const struct walker_need *n)
{
	(void)n;
	return f->map_big_keys ?
	       "bounded loops (5.3+): user frames from unwind tables, "
	       "exact raw-frame keys" :
	       "bounded loops (5.3+): user frames from unwind tables, hash "
	       "keys are at most 512 bytes: exact interned chunks of frames";
}

/* Counting with small keys, counting, or emitting: the sink's variant. */
#define CFI_PROG(w, s, base) ((w)->o.sink == SINK_COUNT ? \
			      ((w)->small ? (s)->progs.base##_small : (s)->progs.base) : \
			      (s)->progs.base##_e)

static struct bpf_program *cfi_prog(const struct walker *w, enum sw_role role,
				    bool uentry)
{
	const struct getstack_bpf *s = w->skel;

	(void)uentry;	/* the rule at the entry's PC finds the caller */
	switch (role) {
	case SW_ROLE_KPROBE:
		return CFI_PROG(w, s, gs_cfi_kprobe);
	case SW_ROLE_TRACEPOINT:
		return CFI_PROG(w, s, gs_cfi_tp);
	default:
		return CFI_PROG(w, s, gs_cfi_uprobe);
	}
}

int walker_cfi_fds(const struct walker *w, int *rows, int *procs, int *maps)
{
	if (!w->cfi_rows)
		return -ENOENT;
	*rows = bpf_map__fd(w->cfi_rows);
	*procs = bpf_map__fd(w->cfi_procs);
	*maps = bpf_map__fd(w->cfi_maps);
	return 0;
}

const struct walker_desc walker_cfi = {
	.kind = SW_WALKER_CFI,
	.name = "cfi",
	.refuse = cfi_refuse,
	.why = cfi_why,
	.open = walker_getstack_open,
	.destroy = walker_getstack_destroy,
	.prog = cfi_prog,
	.choose = walker_getstack_choose,
	.read_begin = walker_getstack_read_begin,
	.key_frames = walker_getstack_key_frames,
};
