// SPDX-License-Identifier: MIT
/*
 * The stackmap walker (4.6+), as bcc's stackcount: each side's stack is
 * stored in a BPF_STACK_TRACE map, and counts are keyed by the two ids
 * (bpf/stackmap.bpf.c).
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "walker_int.h"
#include "stackmap.skel.h"

static bool sm_refuse(const struct sw_features *f, const struct walker_need *n,
		      char *msg, size_t len)
{
	return walkers_refuse_helper(&walker_stackmap, f, n, f->helper_stackid && f->map_stack_trace,
				     "this kernel has no BPF_STACK_TRACE map (4.6+)", msg, len);
}

static const char *sm_why(const struct sw_features *f, const struct walker_need *n)
{
	(void)f;
	(void)n;
	return "BPF_STACK_TRACE is available (4.6+), bpf_get_stack is not";
}

static int sm_open(struct walker *w)
{
	struct stackmap_bpf *s = stackmap_bpf__open();

	if (!s)
		return -errno;
	WALKER_COMMON(w, s);
	w->counts[w->ncounts++] = s->maps.counts;
	w->stacks = s->maps.stacks;
	return 0;
}

static void sm_destroy(struct walker *w)
{
	stackmap_bpf__destroy(w->skel);
}

#define SM_PROG(w, s, base) ((w)->o.sink == SINK_EMIT ? (s)->progs.base##_e : \
			     (s)->progs.base)

static struct bpf_program *sm_prog(const struct walker *w, enum sw_role role,
				   bool uentry)
{
	const struct stackmap_bpf *s = w->skel;

	switch (role) {
	case SW_ROLE_KPROBE:
		return SM_PROG(w, s, sm_kprobe);
	case SW_ROLE_TRACEPOINT:
		return SM_PROG(w, s, sm_tp);
	case SW_ROLE_USHIFT:
		return SM_PROG(w, s, sm_uprobe_shift);
	default:
		return uentry ? SM_PROG(w, s, sm_uprobe_entry) :
				SM_PROG(w, s, sm_uprobe);
	}
}

static struct bpf_program *sm_calib_prog(const struct walker *w)
{
	return ((const struct stackmap_bpf *)w->skel)->progs.sm_uprobe;
}

static void sm_key_frames(struct walker *w, const void *key, bool counted,
			  struct key_frames *f)
{
	const struct sw_sm_key *k = key;

	(void)counted;
	walker_kside_by_id(w, k->kid, k->kcaller, &k->h, f);
	f->nu = walker_stack_by_id(w, k->uid, f->ubuf);
	if (f->nu >= walker_stack_full(w->f))
		f->hbuf.ustop = SW_STOP_DEPTH;
	f->u = f->ubuf;
	f->ucaller = k->ucaller;
}

const struct walker_desc walker_stackmap = {
	.kind = SW_WALKER_STACKMAP,
	.name = "stackmap",
	.uframes = SW_UFRAMES_RBP_KEPT,
	.refuse = sm_refuse,
	.why = sm_why,
	.open = sm_open,
	.destroy = sm_destroy,
	.prog = sm_prog,
	.calib_prog = sm_calib_prog,
	.key_frames = sm_key_frames,
};
