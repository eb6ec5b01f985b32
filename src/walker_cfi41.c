// SPDX-License-Identifier: MIT
/*
 * The cfi walker on 4.1-4.8 (bpf/cfi41.bpf.c): before 4.9 none of the
 * stack maps, per-CPU maps, current task and map value offsets the cfi
 * walker's chains need (src/walker_cfi.c).  One program takes a kernel event's user frames
 * (and from 4.3 a uprobe's), the first few by the unwind tables the
 * frontend loads (src/unwind.c, as on 4.9+); on 4.1, which has no tail
 * calls, the rest by frame pointers, from 4.2 by more of the tables in a
 * chain of tail calls; each frame is tagged with how it was found.  The
 * kernel walk does not fit beside it: another probe of each function,
 * made after it so that it runs first, walks the kernel frames and finds
 * the user's %rbp where their chain ends; with kernel frames (-d), and in
 * stacksnoop, a third, made before it so that it runs last, counts both
 * sides, prints them as the fp walker's 4.1 program does, or sends them
 * (4.4+).  Its keys and events are the fp walker's, the user side alone
 * (struct sw_fp_uside) or both (struct sw_fp_key), but from 4.2 a user
 * side counted alone, deeper (struct sw_cfi41_key).
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "walker_int.h"
#include "cfi.h"
#include "fp_key.h"
#include "cfi41.skel.h"

#define CFI41_STR_(x) #x
#define CFI41_STR(x) CFI41_STR_(x)

bool walker_cfi41_chained(const struct sw_features *f)
{
	return f->helper_tail_call && f->helper_pid && f->helper_cpu;
}

static bool cfi41_refuse(const struct sw_features *f, const struct walker_need *n,
			 char *msg, size_t len)
{
	if (!f->bpf)
		return walkers_refused(&walker_cfi41, "this kernel refuses BPF "
				       "programs (CONFIG_BPF_EVENTS, or run as root)",
				       msg, len);
	if (f->legacy)
		return walkers_refused(&walker_cfi41, "forced legacy mode runs the "
				       "fp walker only", msg, len);
	/* in general, auto's pick is the fp walker's: it walks both sides */
	if (!n)
		return walkers_refused(&walker_cfi41, "it walks user frames only",
				       msg, len);
	if (n->tracepoint)
		return walkers_refused(&walker_cfi41, "before 4.9 it walks the user "
				       "frames of kprobes and uprobes only", msg, len);
	if (!n->kernel_event && !f->uprobes)
		return walkers_refused(&walker_cfi41, "this kernel runs no BPF "
				       "programs on uprobes (4.3+)", msg, len);
	if (!n->ustack)
		return walkers_refused(&walker_cfi41, "it unwinds user frames, and "
				       "this run records none", msg, len);
	if (n->kernel_event && n->no_cpu && !walker_cfi41_chained(f))
		return walkers_refused(&walker_cfi41, "it keeps each walk's state "
				       "by CPU, and where thread_info keeps the "
				       "CPU was not found (it is measured on two "
				       "CPUs)", msg, len);
	if (n->kernel_event && n->no_task && !walker_cfi41_chained(f))
		return walkers_refused(&walker_cfi41, "it finds each event's process "
				       "from the task at the kernel stack's base, "
				       "not found here", msg, len);
	/*
	 * its events carry each frame's tag, the rules shown beside them
	 * (4.3: through trace_pipe)
	 */
	if (n->explain && (n->kernel_event || !walker_cfi41_chained(f)))
		return walkers_refused(&walker_cfi41, "before 4.9 it shows the "
				       "unwind rules of uprobes' events only "
				       "(4.3+)", msg, len);
	return false;
}

#define CFI41_KERNEL "kernel frames by a second probe's frame-pointer walk"

static const char *cfi41_why(const struct sw_features *f, const struct walker_need *n)
{
	(void)n;
	if (!walker_cfi41_chained(f))
		return "no tail calls (4.1): the first " CFI41_STR(SW_CFI41_FRAMES)
		       " user callers from unwind tables, then frame pointers; "
		       CFI41_KERNEL;
	return "no stack maps, per-CPU maps or map value offsets (4.2-4.8): "
	       "user callers from unwind tables, " CFI41_STR(SW_CFI41_FRAMES)
	       " a program by tail calls, " CFI41_STR(SW_CFI41_UDEPTH)
	       " counted alone, " CFI41_STR(SW_FP_UDEPTH) " beside kernel "
	       "frames or in an event; " CFI41_KERNEL;
}

static int cfi41_open(struct walker *w)
{
	struct cfi41_bpf *s = cfi41_bpf__open();
	bool deep = walker_cfi41_chained(w->f) && !w->o.kstack;

	if (!s)
		return -errno;
	WALKER_COMMON(w, s);
	/* 4.2+ counts a user side alone in a deeper key (bpf/cfi41.bpf.c) */
	w->counts[w->ncounts++] = w->o.kstack ? s->maps.counts_kd :
				  deep ? s->maps.counts_deep : s->maps.counts;
	bpf_map__set_autocreate(s->maps.counts, !w->o.kstack && !deep);
	bpf_map__set_autocreate(s->maps.counts_deep, deep);
	bpf_map__set_autocreate(s->maps.counts_kd, w->o.kstack);
	bpf_map__set_max_entries(s->maps.cfi41_hand, libbpf_num_possible_cpus());
	bpf_map__set_max_entries(s->maps.cfi41_deep, libbpf_num_possible_cpus());
	bpf_map__set_autocreate(s->maps.cfi41_deep, walker_cfi41_chained(w->f));
	w->cfi_rows = s->maps.cfi_rows;
	w->cfi_procs = s->maps.cfi_procs;
	bpf_map__set_max_entries(w->cfi_rows, cfi_rows_in(w->o.unwind_mb));
	bpf_map__set_max_entries(s->maps.cfi41_state, libbpf_num_possible_cpus());
	/* no program arrays before 4.2, where the walk is one program */
	bpf_map__set_autocreate(s->maps.cfi41_links, walker_cfi41_chained(w->f));
	/* nor a fork hook that says whose fork it saw */
	w->fork_hooks = walker_cfi41_chained(w->f);
	bpf_map__set_autocreate(s->maps.cfi_alias, w->fork_hooks);
	return 0;
}

static void cfi41_destroy(struct walker *w)
{
	cfi41_bpf__destroy(w->skel);
}

/* A kprobe's user side is handed on to a last program: -d, stacksnoop. */
static bool cfi41_hands(const struct walker *w)
{
	return w->o.sink != SINK_COUNT || w->o.kstack;
}

/* stacksnoop: events sent (4.4+) or printed to trace_pipe (4.3) */
static bool cfi41_events(const struct walker *w)
{
	return w->o.sink == SINK_EMIT || w->o.sink == SINK_PRINTK;
}

static struct bpf_program *cfi41_prog(const struct walker *w, enum sw_role role,
				      bool uentry)
{
	const struct cfi41_bpf *s = w->skel;

	(void)uentry;
	if (role == SW_ROLE_TRACEPOINT)
		return NULL;
	/*
	 * a uprobe's (4.3+) registers are the user's: its program walks from
	 * them, and sends its events (4.4+) through slot 0's program
	 */
	if (role == SW_ROLE_UENTRY)
		return cfi41_events(w) ? s->progs.cfi41_uprobe_entry_e_v43 :
		       w->o.sink == SINK_COUNT ? s->progs.cfi41_uprobe_entry_v43 : NULL;
	if (role != SW_ROLE_KPROBE)
		return cfi41_events(w) ? s->progs.cfi41_uprobe_e_v43 :
		       w->o.sink == SINK_COUNT ? s->progs.cfi41_uprobe_v43 : NULL;
	if (w->o.sink == SINK_EXPLAIN)
		return NULL;
	/* 4.2+: the walk goes on by tail calls (bpf/cfi41.bpf.c's links) */
	if (walker_cfi41_chained(w->f))
		return cfi41_hands(w) ? s->progs.cfi41_kprobe_ch_v42 :
					s->progs.cfi41_kprobe_c_v42;
	return cfi41_hands(w) ? s->progs.cfi41_kprobe_uh : s->progs.cfi41_kprobe_u;
}

/*
 * What runs after a kprobe's user side, where it hands its frames on:
 * the one that counts both sides (-d), or the one that prints them
 * (stacksnoop, 4.1-4.3) or sends them (4.4+); NULL where it counts them
 * itself.
 */
static struct bpf_program *cfi41_last(const struct walker *w)
{
	const struct cfi41_bpf *s = w->skel;
	bool v42 = walker_cfi41_chained(w->f);

	if (w->o.sink == SINK_PRINTK)
		return v42 ? s->progs.cfi41_kprobe_kp_v42 : s->progs.cfi41_kprobe_kp;
	if (w->o.sink == SINK_EMIT)
		return s->progs.cfi41_kprobe_ke_v44;
	if (!w->o.kstack)
		return NULL;
	return v42 ? s->progs.cfi41_kprobe_k_v42 : s->progs.cfi41_kprobe_k;
}

/* The program a kprobe's event runs first: the kernel walk */
static struct bpf_program *cfi41_first(const struct walker *w)
{
	const struct cfi41_bpf *s = w->skel;

	return walker_cfi41_chained(w->f) ? s->progs.cfi41_kprobe_bp_v42 :
					    s->progs.cfi41_kprobe_bp;
}

/* The program that drops a process's list at exec and exit */
static struct bpf_program *cfi41_dropper(const struct walker *w)
{
	const struct cfi41_bpf *s = w->skel;

	return walker_cfi41_chained(w->f) ? s->progs.cfi41_drop_v42 :
					    s->progs.cfi41_drop;
}

/*
 * Links 1 on of 4.2+'s chain, each in its slot, then the one that ends
 * it (bpf/cfi41.bpf.c: CFI41_LINKS)
 */
#define CFI41_SLOTS	((SW_CFI41_UDEPTH - 1) / SW_CFI41_FRAMES + 1)
_Static_assert(CFI41_SLOTS == 12, "a program for each link");
static void cfi41_link_progs(const struct cfi41_bpf *s,
			     struct bpf_program *l[CFI41_SLOTS - 1])
{
	struct bpf_program *v[CFI41_SLOTS - 1] = {
		s->progs.cfi41_link1_v42, s->progs.cfi41_link2_v42,
		s->progs.cfi41_link3_v42, s->progs.cfi41_link4_v42,
		s->progs.cfi41_link5_v42, s->progs.cfi41_link6_v42,
		s->progs.cfi41_link7_v42, s->progs.cfi41_link8_v42,
		s->progs.cfi41_link9_v42, s->progs.cfi41_link10_v42,
		s->progs.cfi41_link_end_v42,
	};

	memcpy(l, v, sizeof(v));
}

static void cfi41_choose(struct walker *w)
{
	const struct cfi41_bpf *s = w->skel;
	/* the programs a target may have: those of kprobes, those chained */
	const struct bpf_program *kprobes[] = {
		s->progs.cfi41_kprobe_u, s->progs.cfi41_kprobe_uh,
		s->progs.cfi41_kprobe_c_v42, s->progs.cfi41_kprobe_ch_v42,
	}, *chained[] = {
		s->progs.cfi41_kprobe_c_v42, s->progs.cfi41_kprobe_ch_v42,
		s->progs.cfi41_uprobe_v43, s->progs.cfi41_uprobe_entry_v43,
		s->progs.cfi41_uprobe_e_v43, s->progs.cfi41_uprobe_entry_e_v43,
	};
	struct bpf_program *lasts[] = {
		s->progs.cfi41_kprobe_k, s->progs.cfi41_kprobe_k_v42,
		s->progs.cfi41_kprobe_kp, s->progs.cfi41_kprobe_kp_v42,
		s->progs.cfi41_kprobe_ke_v44,
	};
	struct bpf_program *links[CFI41_SLOTS - 1];
	bool kprobe = false, chain = false;

	cfi41_link_progs(s, links);

	for (size_t i = 0; i < sizeof(kprobes) / sizeof(kprobes[0]); i++)
		kprobe |= bpf_program__autoload(kprobes[i]);
	for (size_t i = 0; i < sizeof(chained) / sizeof(chained[0]); i++)
		chain |= bpf_program__autoload(chained[i]);
	walker_want(w, cfi41_dropper(w), true);
	/* a kprobe's kernel walk first, and where it hands on, the last program */
	walker_want(w, cfi41_first(w), kprobe);
	for (size_t i = 0; i < sizeof(lasts) / sizeof(lasts[0]); i++)
		walker_want(w, lasts[i], kprobe && cfi41_last(w) == lasts[i]);
	for (size_t i = 0; i < CFI41_SLOTS - 1; i++)
		walker_want(w, links[i], chain);
	/* slot 0: counts what the links end, or sends it (stacksnoop) */
	walker_want(w, s->progs.cfi41_count_v42, chain && !w->o.kstack &&
		    w->o.sink == SINK_COUNT);
	walker_want(w, s->progs.cfi41_emit_v44, chain && w->o.sink == SINK_EMIT);
	walker_want(w, s->progs.cfi41_print_v43, chain && w->o.sink == SINK_PRINTK);
}

/* 4.2+: each link of the walk in its slot, the counting (or sending) one in 0 */
static int cfi41_loaded(struct walker *w)
{
	const struct cfi41_bpf *s = w->skel;
	struct bpf_program *slots[CFI41_SLOTS];
	int fd;

	slots[0] = w->o.sink == SINK_EMIT ? s->progs.cfi41_emit_v44 :
		   w->o.sink == SINK_PRINTK ? s->progs.cfi41_print_v43 :
					      s->progs.cfi41_count_v42;
	cfi41_link_progs(s, slots + 1);
	for (__u32 i = 0; i < CFI41_SLOTS; i++) {
		fd = bpf_program__fd(slots[i]);
		if (fd >= 0 && bpf_map_update_elem(bpf_map__fd(s->maps.cfi41_links),
						   &i, &fd, BPF_ANY))
			return -errno;
	}
	return 0;
}

/*
 * 4.1 runs a function's probes newest first: the last program's probe
 * before the target's, so that it runs after the user side.
 */
static int cfi41_before_target(struct walker *w, const struct sw_target *tg)
{
	const struct bpf_program *last = cfi41_last(w);

	if (tg->role != SW_ROLE_KPROBE)
		return 0;
	return last ? walker_attach_spec(w, bpf_program__fd(last), &tg->spec) : 0;
}

/* ... and the one that finds the user's %rbp after it, to run first */
static int cfi41_after_target(struct walker *w, const struct sw_target *tg)
{
	if (tg->role != SW_ROLE_KPROBE)
		return 0;
	return walker_attach_spec(w, bpf_program__fd(cfi41_first(w)), &tg->spec);
}

/* a process's list dropped at exec and at its exit (bpf/cfi41.bpf.c) */
static int cfi41_attach(struct walker *w)
{
	static const char *const fns[] = { "setup_new_exec", "do_exit" };
	struct sw_probe_spec spec = { .kind = SW_PROBE_KPROBE };
	int err = 0;

	for (size_t i = 0; i < 2 && !err; i++) {
		spec.func = fns[i];
		err = walker_attach_spec(w, bpf_program__fd(cfi41_dropper(w)), &spec);
	}
	return err;
}

/*
 * Past the frames the tables gave, each a frame-pointer step (4.1): tagged
 * so here, where the key has no room for it (the first is where the event
 * fired; 4.2+'s links tag every frame).  Such a step may read a word that
 * is no user address (a %rbp that was not a frame pointer): the walk ends
 * before it, as the cfi walk's own steps end, unreadable.
 */
static void cfi41_key_frames(struct walker *w, const void *key, bool counted,
			     struct key_frames *f)
{
	const struct sw_fp_key *both = key;
	const struct sw_fp_uside *user = key;
	const struct sw_cfi41_key *deep = key;
	/* an event's record holds both sides (bpf/cfi41.bpf.c) */
	bool two = w->o.kstack || !counted;
	/* 4.2+ counts a user side alone in a deeper key */
	bool chained = !two && walker_cfi41_chained(w->f);
	const __u64 *uip = two ? both->uip : chained ? deep->uip : user->uip;

	f->h = &user->h;
	f->k = two ? both->kip : f->kbuf;
	f->nk = two ? walker_nframes(both->kip, SW_FP_KDEPTH) : 0;
	f->nu = walker_nframes(uip, chained ? SW_CFI41_UDEPTH : SW_FP_UDEPTH);
	for (size_t i = 0; i < f->nu; i++) {
		if (i > SW_CFI41_FRAMES && (uip[i] & ~SW_HOW_MASK) >= SW_USER_MAX) {
			f->hbuf = user->h;
			f->hbuf.ustop = SW_STOP_UNREADABLE;
			f->h = &f->hbuf;
			f->nu = i;
			break;
		}
		f->ubuf[i] = uip[i] | (i > SW_CFI41_FRAMES && !(uip[i] & SW_HOW_MASK) ?
				       (__u64)SW_HOW_FP << SW_HOW_SHIFT : 0);
	}
	f->u = f->ubuf;
}

const struct walker_desc walker_cfi41 = {
	.kind = SW_WALKER_CFI,
	.name = "cfi",
	.stand_in = true,
	.refuse = cfi41_refuse,
	.why = cfi41_why,
	.open = cfi41_open,
	.destroy = cfi41_destroy,
	.prog = cfi41_prog,
	.choose = cfi41_choose,
	.loaded = cfi41_loaded,
	.attach = cfi41_attach,
	.before_target = cfi41_before_target,
	.after_target = cfi41_after_target,
	.key_frames = cfi41_key_frames,
};
