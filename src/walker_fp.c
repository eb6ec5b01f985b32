// SPDX-License-Identifier: MIT
/*
 * The fp walker (4.1+): the BPF program follows the %rbp chain itself,
 * unrolled by gen/walker.py, and a kernel event hands the user side over
 * to a second program by a tail call (bpf/fp.bpf.c).  The only walker the
 * kernels before the stack helpers (4.6) can run, and the one --explain
 * shows.
 */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "walker_int.h"
#include "ksyms.h"
#include "fp_key.h"
#include "fp.skel.h"

static bool fp_refuse(const struct sw_features *f, const struct walker_need *n,
		      char *msg, size_t len)
{
	if (!f->bpf)
		return walkers_refused(&walker_fp, "this kernel refuses BPF "
				       "programs (CONFIG_BPF_EVENTS, or run as root)",
				       msg, len);
	if (!n)
		return false;
	if (n->kernel_event && n->kstack && f->unwinder != SW_UNWINDER_FP) {
		snprintf(msg, len, "the fp walker cannot walk kernel frames: this "
			 "kernel has no frame pointers (%s); %s", f->unwinder_why,
			 n->explain ? "--explain a user function or USDT probe "
			 "instead" : "use -U for user frames, or another walker");
		return true;
	}
	if (n->tracepoint && n->kstack && !f->jit) {
		snprintf(msg, len, "--walker fp walks a tracepoint's kernel frames "
			 "from the JIT's frame pointer, and the BPF JIT is off; "
			 "enable it: sysctl net.core.bpf_jit_enable=1");
		return true;
	}
	/* 4.1 has neither, and one program walks both sides */
	if (n->kernel_event && n->ustack && !f->helper_tail_call && f->helper_pid) {
		snprintf(msg, len, "--walker fp needs tail calls (4.2+) for user "
			 "frames of kernel events; use -K");
		return true;
	}
	return false;
}

static const char *fp_why(const struct sw_features *f, const struct walker_need *n)
{
	if (f->legacy)
		return "forced legacy mode";
	if (n && n->kernel_event && n->ustack && f->syscall_fastpath)
		return "the syscall fast path leaves the saved user %rbp stale: "
		       "walk frame pointers from the kernel chain into user space";
	return "no kernel stack helpers (before 4.6): walk frame pointers";
}

static int fp_open(struct walker *w)
{
	struct fp_bpf *s = fp_bpf__open();

	if (!s)
		return -errno;
	WALKER_COMMON(w, s);
	w->counts[w->ncounts++] = s->maps.counts;
	return 0;
}

static void fp_destroy(struct walker *w)
{
	fp_bpf__destroy(w->skel);
}

/* A program of each sink: NULL where there is none (a bug to ask for). */
#define FP_BY_SINK(w, s, base) ((w)->o.sink == SINK_EMIT ? (s)->progs.base##_e : \
				(w)->o.sink == SINK_PRINTK ? (s)->progs.base##_p : \
				(w)->o.sink == SINK_EXPLAIN ? (s)->progs.base##_x : \
				(s)->progs.base)

static struct bpf_program *fp_prog(const struct walker *w, enum sw_role role,
				   bool uentry)
{
	const struct fp_bpf *s = w->skel;
	enum walker_sink k = w->o.sink;
	/* with user frames, a kernel event's first stage is shared: the tail differs */
	bool tail = w->o.ustack && k != SINK_EXPLAIN;

	(void)uentry;	/* it always reads the caller at %rsp itself */
	switch (role) {
	case SW_ROLE_KPROBE:
		if (k == SINK_EXPLAIN)
			return s->progs.fp_kprobe_x;
		if (!w->f->helper_pid)	/* 4.1: one program walks both sides */
			return k == SINK_PRINTK ? s->progs.fp_kprobe_v41_p :
			       k == SINK_COUNT ? s->progs.fp_kprobe_v41 : NULL;
		if (tail)
			return k == SINK_PRINTK ? s->progs.fp_kprobe_p : s->progs.fp_kprobe;
		return k == SINK_PRINTK ? s->progs.fp_kprobe_k_p :
		       k == SINK_EMIT ? s->progs.fp_kprobe_k_e : s->progs.fp_kprobe_k;
	case SW_ROLE_TRACEPOINT:
		/* tracepoints (4.7) came after perf output (4.4): no printk */
		if (k == SINK_EXPLAIN)
			return s->progs.fp_tp_x;
		if (tail)
			return k == SINK_PRINTK ? NULL : s->progs.fp_tp;
		return k == SINK_EMIT ? s->progs.fp_tp_k_e :
		       k == SINK_COUNT ? s->progs.fp_tp_k : NULL;
	case SW_ROLE_UENTRY:
		return FP_BY_SINK(w, s, fp_uprobe_entry);
	case SW_ROLE_USHIFT:
		return FP_BY_SINK(w, s, fp_uprobe_shift);
	default:
		return FP_BY_SINK(w, s, fp_uprobe);
	}
}

/* The user walk a kernel event's first stage tail-calls, by sink. */
static struct bpf_program *fp_tail(const struct walker *w, bool tracepoint)
{
	const struct fp_bpf *s = w->skel;

	switch (w->o.sink) {
	case SINK_COUNT:
		return tracepoint ? s->progs.fp_user_tp : s->progs.fp_user_kp;
	case SINK_EMIT:
		return tracepoint ? s->progs.fp_user_tp_e : s->progs.fp_user_kp_e;
	case SINK_PRINTK:
		return tracepoint ? NULL : s->progs.fp_user_kp_p;
	default:
		return NULL;
	}
}

static bool tails(const struct walker *w)
{
	return w->o.ustack && w->f->helper_tail_call && w->o.sink != SINK_EXPLAIN;
}

static bool tp_tail(const struct walker *w)
{
	return tails(w) && w->f->prog_tracepoint && w->o.sink != SINK_PRINTK;
}

static void fp_choose(struct walker *w)
{
	const struct fp_bpf *s = w->skel;

	if (tails(w))
		walker_want(w, fp_tail(w, false), true);
	if (tp_tail(w))
		walker_want(w, fp_tail(w, true), true);
	if (!w->f->map_prog_array) {
		bpf_map__set_autocreate(s->maps.tails_kp, false);
		bpf_map__set_autocreate(s->maps.tails_tp, false);
	}
	bpf_map__set_max_entries(s->maps.scratch, libbpf_num_possible_cpus());
}

/*
 * Where a kernel frame-pointer walk ends: the return into the code every
 * task starts in (6.6 split it into ret_from_fork_asm and a C part).
 */
static int find_root(struct walker *w)
{
	static const char *const names[] = { "ret_from_fork_asm", "ret_from_fork" };
	struct ksyms *ks = w->o.kernel_symbols(w->o.ksyms_ctx);
	const struct ksym *k = NULL;

	for (size_t i = 0; ks && i < 2 && !k; i++)
		k = ksyms_get(ks, names[i]);
	if (k)
		w->root = (k->end - k->addr) << 32 | (__u32)k->addr;
	return k ? 0 : -ENOENT;
}

static int fp_loaded(struct walker *w)
{
	const struct fp_bpf *s = w->skel;
	__u32 idx = 0;
	int pfd;

	if (tails(w)) {
		pfd = bpf_program__fd(fp_tail(w, false));
		if (bpf_map_update_elem(bpf_map__fd(s->maps.tails_kp), &idx, &pfd,
					BPF_ANY))
			return -errno;
	}
	if (tp_tail(w)) {
		pfd = bpf_program__fd(fp_tail(w, true));
		if (bpf_map_update_elem(bpf_map__fd(s->maps.tails_tp), &idx, &pfd,
					BPF_ANY))
			return -errno;
	}
	/* without kallsyms the walk ends one frame late: no reason to fail */
	if (w->f->unwinder == SW_UNWINDER_FP)
		find_root(w);
	return 0;
}

static void fp_key_frames(struct walker *w, const void *key, bool counted,
			  struct key_frames *f)
{
	const struct sw_fp_key *k = key;

	(void)w;
	(void)counted;
	f->h = &k->h;
	f->k = k->kip;
	f->u = k->uip;
	f->nk = walker_nframes(k->kip, SW_FP_KDEPTH);
	f->nu = walker_nframes(k->uip, SW_FP_UDEPTH);
}

const struct walker_desc walker_fp = {
	.kind = SW_WALKER_FP,
	.name = "fp",
	.uframes = SW_UFRAMES_ALL,
	.tail_calls = true,
	.refuse = fp_refuse,
	.why = fp_why,
	.open = fp_open,
	.destroy = fp_destroy,
	.prog = fp_prog,
	.choose = fp_choose,
	.loaded = fp_loaded,
	.key_frames = fp_key_frames,
};
