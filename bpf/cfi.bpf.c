// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The cfi walker (4.9+): kernel frames as the getstack walker has them,
 * in its keys and counts (bpf/getstack.bpf.h), or before bpf_get_stack
 * (4.9-4.17, SW_GS_LEGACY) as the stackmap walker does, by stack id;
 * user frames unwound from the binaries' own unwind tables
 * (bpf/cfi_walk.bpf.h).
 */
#include "common.bpf.h"
#include "cfi_walk.bpf.h"
#include "cfi_alias.bpf.h"
#define GS_WALK_STATE struct cfi_state
#include "getstack.bpf.h"

/* calibration's programs: what the kernel's unwinder gives at an entry */
GS_UPROBE(, gs_event, SW_GS_COUNT)
GS_UPROBE(_t, gs_event, SW_GS_COUNT_T)
GS_UPROBE(_small, gsc_event, SW_GS_SMALL)

/*
 * Frames a walk program takes before it tail-calls the next: with about
 * 800 instructions a frame (bpf/cfi.h), 4 stay within the 4096 a program
 * of 4.18-5.1 (the build checks: gen/legacy_limits.c --insns), and 32
 * tail calls (the most a chain may make) reach 128 frames.
 */
#define GS_CFI_FRAMES	4
/*
 * SW_GS_LEGACY: 2 (24 tail calls reach SW_CFL_FRAMES, and the count is
 * one more), as 4.14's verifier walks the paths of 4 frames past its
 * 131,072 instructions (4.19's prunes them); 1 before 4.14, whose
 * verifier walks those of 2 past its 98,304, and whose walks then end at
 * the 32 tail calls a chain may make (SW_STOP_DEPTH, marked and counted).
 */
#define GS_CFL_STEPS		2
#define GS_CFL_STEPS_49		1
/*
 * SW_GS_LEGACY's frames at most: SW_CFL_FRAMES, or as many as 30 walk
 * programs of s frames take, the event's tail call and the count's left
 * of the 32 a chain may make: the count's must never fail.
 */
#define GS_CFL_MAX(s)	(SW_CFL_FRAMES_EARLY * (s) < SW_CFL_FRAMES ?		\
			 SW_CFL_FRAMES_EARLY * (s) : SW_CFL_FRAMES)

/*
 * The walk programs, by mode; SW_GS_MODES stays empty (gs_cfi_walk_loop),
 * GS_CFL_COUNT counts SW_GS_LEGACY's key, and GS_CFL_INTERN interns its
 * user frames (a kprobe's or uprobe's walk only)
 */
#define GS_CFL_COUNT	(SW_GS_MODES + 1)
#define GS_CFL_INTERN	(SW_GS_MODES + 2)
SW_PROG_ARRAY(cfi_tails_kp, GS_CFL_INTERN + 1);
SW_PROG_ARRAY(cfi_tails_tp, GS_CFL_INTERN + 1);

/*
 * SW_GS_LEGACY (no bpf_get_stack, 4.9-4.17): the key built per CPU, its
 * kernel side in a stack map, counted by the whole key.  A frame's index
 * is masked to 64 slots as well as bounded (gs_cfl_put): the slots past
 * the key keep that in bounds.
 */
#define GS_CFL_SLOTS	64
struct gs_cfl_scratch {
	struct sw_cfl_key key;
	__u64 past[GS_CFL_SLOTS - SW_CFL_FRAMES];
	/* the chunk ids this CPU gave, as gsc_scratch's (bpf/getstack.bpf.h) */
	__u64 next_id;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gs_cfl_scratch);
} scratch_cfl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sw_cfl_key);
	__type(value, __u64);
} counts_cfl SEC(".maps");

SW_STACK_MAP(kstacks);

/* chunks of user frames (struct sw_cfl_key), by frames and by id */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sw_cfl_chunk);
	__type(value, __u64);
} chunks_cfl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct sw_cfl_chunk);
} chunk_ids_cfl SEC(".maps");

/*
 * Frame n of SW_GS_LEGACY's key.  4.9's verifier knows no lower bound of
 * an index compared unsigned but one a mask gives, loses the bounds of a
 * map value's address spilled to the stack, and of one a constant was
 * added to: the address is looked up afresh, and the offset added to it
 * as one number.
 */
static __always_inline void gs_cfl_put(__u64 n, __u64 v)
{
	__u64 off = sw_bound(n, SW_CFL_FRAMES - 1) & (GS_CFL_SLOTS - 1);
	__u32 zero = 0;
	char *scr;

	off = sw_opaque(sw_opaque(off * 8) + __builtin_offsetof(struct sw_cfl_key, ip));
	scr = bpf_map_lookup_elem(&scratch_cfl, &zero);
	if (scr)
		*(__u64 *)(scr + off) = v;
}

/*
 * The mode's record (a struct gsc_scratch or sw_gs_record) and cfi state,
 * the thread's made at its first event (create); -1 if there are none.
 */
static __always_inline int gs_cfi_parts(const int mode, const int create,
					void **scr, struct cfi_state **st)
{
	__u32 zero = 0;
	struct gs_walk *w;

	if (GS_PER_TASK(mode)) {
		w = gs_task_walk(create);
		if (!w)
			return -1;
		*scr = &w->rec;
		*st = &w->st;
		return 0;
	}
	if (mode == SW_GS_LEGACY)
		*scr = bpf_map_lookup_elem(&scratch_cfl, &zero);
	else if (mode == SW_GS_SMALL)
		*scr = bpf_map_lookup_elem(&scratch_small, &zero);
	else
		*scr = bpf_map_lookup_elem(&scratch, &zero);
	*st = bpf_map_lookup_elem(&cfi_state, &zero);
	return *scr && *st ? 0 : -1;
}

/* Where the user frames go in the scratch record's key (SW_GS_LEGACY: gs_cfl_put). */
static __always_inline __u64 *gs_cfi_ubuf(void *scr, const int mode, __u64 nk)
{
	if (mode == SW_GS_SMALL)
		return &((struct gsc_scratch *)scr)->u[1];
	return &((struct sw_gs_record *)scr)->key.ip[sw_bound(nk, SW_MAX_FRAMES + 1)];
}

/*
 * SW_GS_LEGACY out of tail calls: the target's next probe that carries
 * walks on goes on at slot next, and takes back the loss counted here;
 * 0 if no such probe is left
 */
static __always_inline int gs_cfl_hand_over(struct cfi_state *st, __u64 next)
{
	if (!st->carry)
		return 0;
	st->carry--;
	st->carry_id = bpf_get_current_pid_tgid();
	st->carry_next = next;
	sw_lost(SW_LOST_CARRY);
	return 1;
}

/*
 * The user walk has ended: count or send the stack.  st: the walk's state,
 * where a walk program ends it (the event's own program, whose chain has
 * made one tail call, passes NULL: 4.9's verifier loses the bounds of the
 * state's address there)
 */
static __always_inline void gs_cfi_done(void *ctx, void *scr,
					struct cfi_state *st, __u64 nk,
					__u64 nu, __u8 ustop, const int mode,
					void *tails)
{
	if (mode == SW_GS_LEGACY) {
		struct sw_cfl_key *k = scr;

		k->h.ustop = ustop;
		k->h.nu = nu;
		bpf_tail_call(ctx, tails, GS_CFL_COUNT);
		if (!st || !gs_cfl_hand_over(st, GS_CFL_COUNT))
			sw_lost(SW_LOST_TAILCALL);
	} else if (mode == SW_GS_SMALL) {
		struct gsc_scratch *s = scr;

		s->key.h.ustop = ustop;
		gsc_done(s, nk, nu);
	} else {
		struct sw_gs_record *rec = scr;

		rec->key.h.ustop = ustop;
		gs_done(ctx, rec, nk, nu, GS_EMITS(mode));
	}
}

/*
 * SW_CFG_UBP_CHAIN: the user's %rbp, the first value of the kernel's
 * frame-pointer chain from bp that is no kernel address (the syscall's
 * first function saved it); 0 if not found within 32 frames.
 */
static __always_inline int gs_cfl_chain_bp(__u64 bp, __u64 *ubp)
{
#pragma unroll
	for (int i = 0; i < 32; i++) {
		if (bp < SW_CFI_USER_MAX) {
			*ubp = bp;
			return 1;
		}
		if (bpf_probe_read(&bp, sizeof(bp), (void *)bp))
			return 0;
	}
	return 0;
}

/*
 * The first stage: the key's header and kernel frames as getstack has
 * them, the user registers, then the walk (gs_cfi_walk) by tail call.
 * sp: an address on the task's kernel stack (kernel events).
 */
static __always_inline int gs_cfi_event(void *ctx, __u64 sp, const int kentry,
					const int user_ctx, const int uentry,
					const int kadds, const int mode, void *tails)
{
	__u64 id, nk = 0, nu = 0, pc = 0, usp = 0, bp = 0, *ubuf;
	struct sw_cfi_proc *proc;
	struct sw_config *cfg;
	void *scr;
	struct cfi_state *st;
	__u8 ustop = SW_STOP_NO_USER;
	__u32 list;
	int regs, bp_ok = 1;

	cfg = sw_filter(1, SW_BRANCHY, &id);
	if (!cfg || gs_cfi_parts(mode, 1, &scr, &st))
		return 0;
	if (mode == SW_GS_LEGACY) {
		struct sw_cfl_key *k = scr;
		struct sw_key_hdr h = {};
		__u64 caller = 0;
		long kid = -SW_EFAULT;

		/* no walk of an earlier event is left for this one's probes */
		st->carry_id = 0;
		st->carry = 0;

		/* on the stack first: 4.9's helpers write nowhere else */
		sw_key_hdr(&h, cfg, id, SW_BRANCHY);
		h.kstop = SW_STOP_NONE;
		h.nk = 0;
		if (cfg->flags & SW_CFG_KSTACK) {
			kid = sw_stackid(ctx, &kstacks, 0, SW_LOST_KCOLLISION);
			if (kid < 0 && kid != -SW_EFAULT)
				return 0;
			/* the stored stack cannot be edited: the caller aside */
			if (kentry && (cfg->flags & SW_CFG_KENTRY))
				bpf_probe_read(&caller, 8, (void *)sp);
		}
		k->h = h;
		k->kid = kid;
		k->pad = 0;
		k->kcaller = caller;
		k->uid = 0;
#pragma unroll
		for (int i = 0; i < SW_CFL_FRAMES; i++)
			k->ip[i] = 0;
	} else if (mode == SW_GS_SMALL) {
		struct gsc_scratch *s = scr;

		sw_key_hdr(&s->key.h, cfg, id, SW_BRANCHY);
		s->key.h.kstop = SW_STOP_NONE;
		if (cfg->flags & SW_CFG_KSTACK)
			nk = gsc_frames(ctx, s->k, 0,
					kentry && (cfg->flags & SW_CFG_KENTRY), sp,
					cfg, &s->key.h.kstop);
		s->u[1 + SW_MAX_FRAMES] = 0;
	} else {
		struct sw_gs_record *rec = scr;

		sw_key_hdr(&rec->key.h, cfg, id, SW_BRANCHY);
		rec->key.h.kstop = SW_STOP_NONE;
		if (cfg->flags & SW_CFG_KSTACK)
			nk = gs_frames(ctx, rec->key.ip, 0,
				       kentry && (cfg->flags & SW_CFG_KENTRY), sp,
				       cfg, &rec->key.h.kstop);
	}
	nk = sw_bound(nk, SW_MAX_FRAMES + 1);
	ubuf = gs_cfi_ubuf(scr, mode, nk);
	/* the rest of the side zeroed, as bpf_get_stack leaves it */
	if (!GS_EMITS(mode) && mode != SW_GS_LEGACY) {
#pragma unroll
		for (int i = 0; i < SW_MAX_FRAMES; i++)
			ubuf[i] = 0;
	}
	regs = cfg->flags & SW_CFG_USTACK ?
	       cfi_user_regs(ctx, cfg, user_ctx, sp, &pc, &usp, &bp) : CFI_REGS_NONE;
	/* a stale %rbp is not followed: the frames that need it end the walk */
	if (mode == SW_GS_LEGACY && kentry && regs == CFI_REGS_64 &&
	    (cfg->flags & SW_CFG_UBP_CHAIN))
		bp_ok = gs_cfl_chain_bp(PT_REGS_FP((struct pt_regs *)ctx), &bp);
	proc = NULL;
	list = id >> 32;
	if (regs == CFI_REGS_64) {
		proc = bpf_map_lookup_elem(&cfi_procs, &list);
		if (!proc && mode == SW_GS_LEGACY)
			proc = cfi_alias_list(&list);
	}
	/*
	 * 5.17+: a process without a list is walked by its VMAs' files;
	 * without bpf_get_stack, by the walk's frame-pointer steps
	 */
	if (proc || (regs == CFI_REGS_64 &&
		     (mode == SW_GS_LEGACY || (cfg->flags & SW_CFG_VMA)))) {
		st->tgid = list;
		st->n = 0;
		st->nk = nk;
		st->pc = pc;
		st->sp = usp;
		st->bp = bp;
		st->adj = 0;
		st->how = SW_HOW_REGS;
		st->bp_ok = bp_ok;
		st->bp_at = 0;
		st->entry = uentry;
		st->m_len = 0;
		/* no list yet (legacy): every step a frame-pointer one, said */
		st->no_table = mode == SW_GS_LEGACY && !proc;
		st->busy = 0;
		/* a tracepoint's event runs one program (before 4.15) */
		if (mode == SW_GS_LEGACY && (kentry || user_ctx)) {
			st->carry = cfg->flags & SW_CFG_CFL_CARRY ?
				    cfg->cfl_carries : 0;
			st->carry_sp = PT_REGS_SP((struct pt_regs *)ctx);
			st->carry_ip = PT_REGS_IP((struct pt_regs *)ctx);
		}
		if (mode == SW_GS_LEGACY) {
			st->cap = st->carry ? SW_MAX_FRAMES : 0;
			st->base = 0;
		}
		bpf_tail_call(ctx, tails, mode);
		sw_lost(SW_LOST_TAILCALL);
		return 0;
	}
	if (mode == SW_GS_LEGACY) {
		/* 4-byte frames: this side has no walk for them */
		if (regs == CFI_REGS_IA32)
			sw_lost(SW_LOST_IA32);
	} else if (regs == CFI_REGS_IA32) {
		/* 4-byte frames: the kernel's unwinder walks those */
		nu = gs_frames(ctx, ubuf, BPF_F_USER_STACK, 0, 0, cfg, &ustop);
	} else if (regs == CFI_REGS_64) {
		/*
		 * No tables for this process yet (it started after tracing
		 * did, and the frontend has not caught up): the getstack
		 * walker's frames, the caller at an entry kept (kadds: the
		 * kernel's unwinder adds it itself); counted and marked, as
		 * frames past a frameless function are wrong.  The mark says
		 * that each but the first is a frame-pointer step (the
		 * frontend tags them: a loop over the frames here was three
		 * quarters of what the verifier walked in this program).
		 */
		nu = gs_frames(ctx, ubuf, BPF_F_USER_STACK, uentry && !kadds, usp,
			       cfg, &ustop);
		/* what matters more than a cut: not a walk from the tables */
		ustop = SW_STOP_NO_TABLE;
		sw_lost(SW_LOST_NO_TABLE);
	}
	gs_cfi_done(ctx, scr, NULL, nk, nu, ustop, mode, tails);
	return 0;
}

/*
 * 4.18-5.16, from the processes' lists: GS_CFI_FRAMES frames of the walk,
 * then the next program, or the end: an outermost frame, one that cannot
 * be read, or out of tail calls (past 128 frames: SW_STOP_DEPTH).
 */
static __always_inline int gs_cfi_walk(void *ctx, const int mode, void *tails,
				       const int steps)
{
	struct sw_cfi_proc *proc;
	struct cfi_state *st;
	__u32 tgid;
	__u64 *ubuf, next = mode;
	int why = 0;
	void *scr;

	if (gs_cfi_parts(mode, 0, &scr, &st))
		return 0;
	/* NULL once the process has gone: frames then take fp steps */
	tgid = st->tgid;
	proc = bpf_map_lookup_elem(&cfi_procs, &tgid);
	ubuf = gs_cfi_ubuf(scr, mode, st->nk);
#pragma unroll
	for (int k = 0; k < steps; k++) {
		if (st->n >= (mode != SW_GS_LEGACY ? SW_MAX_FRAMES :
			      st->cap ? st->cap : GS_CFL_MAX(steps))) {
			why = SW_STOP_DEPTH;
			break;
		}
		/* the key's frames are full: interned, then the walk goes on */
		if (mode == SW_GS_LEGACY && st->n >= st->base + SW_CFL_FRAMES) {
			next = GS_CFL_INTERN;
			break;
		}
		if (mode == SW_GS_LEGACY)
			gs_cfl_put(st->n - st->base, st->pc | st->how << SW_HOW_SHIFT);
		else
			ubuf[st->n & SW_MAX_FRAMES] = st->pc | st->how << SW_HOW_SHIFT;
		st->n++;
		why = cfi_step(proc, st, 0, mode == SW_GS_LEGACY);
		if (why)
			break;
	}
	if (!why) {
		bpf_tail_call(ctx, tails, next);
		if (mode == SW_GS_LEGACY && gs_cfl_hand_over(st, next))
			return 0;
		/* an interned chunk's frames are past the key's */
		if (next != mode) {
			sw_lost(SW_LOST_TAILCALL);
			return 0;
		}
		why = SW_STOP_DEPTH;
	}
	if (why == SW_STOP_CUT)
		sw_lost(SW_LOST_CUT);
	if (st->no_table)
		sw_lost(SW_LOST_NO_TABLE);
	gs_cfi_done(ctx, scr, st, sw_bound(st->nk, SW_MAX_FRAMES + 1), st->n, why, mode,
		    tails);
	return 0;
}

/*
 * What each frame of a looped walk reaches: its caller's pointers.  Only
 * pointers: a value that changed from frame to frame here would have the
 * verifier check the frame again for each (st->why is map memory).
 */
struct cfi_loop {
	struct sw_cfi_proc *proc;
	struct cfi_state *st;
	__u64 *ubuf;
};

/*
 * One frame as a global function: the verifier checks it once, for any
 * state, where inlined in the loop's callback it is checked again for
 * each state the callback is entered with until they converge.
 */
__attribute__((noinline)) int cfi_frame_find(struct sw_cfi_proc *proc,
					     struct cfi_state *st)
{
	if (!st)
		return SW_STOP_UNREADABLE;
	return cfi_step(proc, st, CFI_VMA_FIND, 0);
}

__attribute__((noinline)) int cfi_frame_mt(struct sw_cfi_proc *proc,
					   struct cfi_state *st)
{
	if (!st)
		return SW_STOP_UNREADABLE;
	return cfi_step(proc, st, CFI_VMA_MT, 0);
}

/* One frame of gs_cfi_walk_loop: 1 ends the loop, its reason in st->why. */
static __always_inline long cfi_loop_step(void *data, const int vma)
{
	struct cfi_loop *l = data;
	struct cfi_state *st = l->st;

	if (st->n >= SW_MAX_FRAMES) {
		st->why = SW_STOP_DEPTH;
		return 1;
	}
	l->ubuf[st->n & SW_MAX_FRAMES] = st->pc | st->how << SW_HOW_SHIFT;
	st->n++;
	st->why = vma == CFI_VMA_MT ? cfi_frame_mt(l->proc, st) :
				      cfi_frame_find(l->proc, st);
	return st->why != 0;
}

static long cfi_loop_frame(__u64 i, void *data)
{
	return cfi_loop_step(data, CFI_VMA_FIND);
}

static long cfi_loop_frame_mt(__u64 i, void *data)
{
	return cfi_loop_step(data, CFI_VMA_MT);
}

/*
 * 5.17+ (bpf_find_vma, bpf_loop; 6.1+ without BTF, the maple tree read
 * instead): the whole walk in one program, a frame per call of
 * cfi_loop_frame, which the verifier checks once, not once
 * for each of GS_CFI_FRAMES unrolled copies and the paths between them:
 * loading took 20 ms instead of 58 on 6.18 (12 since its row search and
 * VMA look-up are global functions, bpf/cfi_walk.bpf.h), and there is no
 * tail call every four frames.
 */
static __always_inline int gs_cfi_walk_loop(void *ctx, const int mode,
					    void *tails, const int vma)
{
	struct cfi_loop l;
	struct cfi_state *st;
	void *scr;
	__u32 tgid;

	if (gs_cfi_parts(mode, 0, &scr, &st))
		return 0;
	tgid = st->tgid;
	l.proc = bpf_map_lookup_elem(&cfi_procs, &tgid);
	l.st = st;
	l.ubuf = gs_cfi_ubuf(scr, mode, st->nk);
	st->why = SW_STOP_DEPTH;
	bpf_loop(SW_MAX_FRAMES + 1, vma == CFI_VMA_MT ? cfi_loop_frame_mt :
		 cfi_loop_frame, &l, 0);
	/*
	 * A tail call no slot answers (past the modes): a program that may
	 * tail-call runs on the task's stack.  One that cannot gets a
	 * per-CPU private stack on 6.13+, and each bpf_probe_read into it
	 * then pays hardened usercopy's look-up of vmalloc'd memory: 30 ns
	 * a frame here, 12% of a 16-frame python3.11 walk.
	 */
	if (st->why == SW_STOP_DEPTH)
		bpf_tail_call(ctx, tails, SW_GS_MODES);
	if (st->why == SW_STOP_CUT)
		sw_lost(SW_LOST_CUT);
	if (st->no_table)
		sw_lost(SW_LOST_NO_TABLE);
	if (st->busy)
		sw_lost(SW_LOST_VMA_BUSY);
	gs_cfi_done(ctx, scr, st, sw_bound(st->nk, SW_MAX_FRAMES + 1), st->n,
		    st->why, mode, tails);
	return 0;
}

/*
 * SW_GS_LEGACY's key counted, or sent (stacksnoop), in a program of its
 * own: copied whole to the BPF stack (4.9-4.15 take a map helper's key,
 * and 4.9 the data it sends, from nowhere else), it leaves room for
 * little else.
 */
static __always_inline int gs_cfl_count(void)
{
	struct sw_cfl_key key, *k;
	__u32 zero = 0;

	k = bpf_map_lookup_elem(&scratch_cfl, &zero);
	if (!k)
		return 0;
	__builtin_memcpy(&key, k, sizeof(key));
	sw_count(&counts_cfl, &key);
	return 0;
}

struct gs_cfl_record {
	struct sw_event_hdr e;
	struct sw_cfl_key key;
};

static __always_inline int gs_cfl_emit(void *ctx)
{
	struct gs_cfl_record rec;
	struct sw_cfl_key *k;
	__u32 zero = 0;

	k = bpf_map_lookup_elem(&scratch_cfl, &zero);
	if (!k)
		return 0;
	__builtin_memcpy(&rec.key, k, sizeof(rec.key));
	sw_event_hdr(&rec.e);
	sw_emit(ctx, &rec, sizeof(rec));
	return 0;
}

SEC("kprobe") int gs_cfl_emit_kp(struct pt_regs *ctx)
{
	return gs_cfl_emit(ctx);
}

SEC("tracepoint") int gs_cfl_emit_tp(void *ctx)
{
	return gs_cfl_emit(ctx);
}

/* SW_GS_LEGACY's walks for 4.9-4.13 */
SEC("kprobe") int gs_cfi_walk_kp_cfl1(struct pt_regs *ctx)
{
	return gs_cfi_walk(ctx, SW_GS_LEGACY, &cfi_tails_kp, GS_CFL_STEPS_49);
}

SEC("tracepoint") int gs_cfi_walk_tp_cfl1(void *ctx)
{
	return gs_cfi_walk(ctx, SW_GS_LEGACY, &cfi_tails_tp, GS_CFL_STEPS_49);
}

/*
 * 4.9-4.13 (SW_CFG_CFL_CARRY): a kprobe or uprobe target's second probe,
 * made before the target's so that it runs after it (a function's
 * kprobes, and an address's uprobe consumers, run newest first), carries
 * on the walk that the first chain's 32 tail calls did not finish, in a
 * chain of its own.  The walk waiting for it is this event's where it is
 * this CPU's with the same thread, %rsp and %rip.  A kprobe's programs
 * run with preemption off; between a uprobe's two its thread may move to
 * another CPU, and then its walk is lost, counted as SW_LOST_CARRY
 * (taken back here from the count the first chain made: the counter is
 * one number, summed over CPUs by the additions).
 */
SEC("kprobe") int gs_cfl_carry_kp(struct pt_regs *ctx)
{
	struct cfi_state *st;
	__u32 zero = 0, why = SW_LOST_CARRY;
	__u64 *n;

	st = bpf_map_lookup_elem(&cfi_state, &zero);
	if (!st || !st->carry_id || st->carry_id != bpf_get_current_pid_tgid() ||
	    st->carry_sp != PT_REGS_SP(ctx) || st->carry_ip != PT_REGS_IP(ctx))
		return 0;
	st->carry_id = 0;
	n = bpf_map_lookup_elem(&lost, &why);
	if (n)
		__sync_fetch_and_add(n, -1);
	bpf_tail_call(ctx, &cfi_tails_kp, st->carry_next);
	sw_lost(SW_LOST_TAILCALL);
	return 0;
}

/*
 * A kprobe's or uprobe's walk (SW_CFG_CFL_CARRY) whose key's frames are
 * full: they are interned as a chunk whose parent is the key's uid, and
 * the key's uid becomes the chunk's; the walk goes on into the key's
 * frames from the first.  A chunk is copied to the BPF stack, where
 * 4.9-4.15 take a map helper's key and value from.  Its id is given once,
 * in chunk_ids_cfl before chunks_cfl, so that an id counted is always
 * found; of two CPUs interning the same chunk, the loser takes the
 * winner's id.
 */
SEC("kprobe") int gs_cfl_intern_kp(struct pt_regs *ctx)
{
	struct gs_cfl_scratch *s;
	struct sw_cfl_chunk c;
	struct cfi_state *st;
	__u64 id, *have;
	__u32 zero = 0;
	long err = 0;

	s = bpf_map_lookup_elem(&scratch_cfl, &zero);
	st = bpf_map_lookup_elem(&cfi_state, &zero);
	if (!s || !st)
		return 0;
	c.parent = s->key.uid;
	__builtin_memcpy(c.ip, s->key.ip, sizeof(c.ip));
	have = bpf_map_lookup_elem(&chunks_cfl, &c);
	if (have) {
		id = *have;
	} else {
		id = ((__u64)(bpf_get_smp_processor_id() + 1) << 40) | ++s->next_id;
		err = bpf_map_update_elem(&chunk_ids_cfl, &id, &c, BPF_ANY);
		if (!err)
			err = bpf_map_update_elem(&chunks_cfl, &c, &id, BPF_NOEXIST);
		if (err == -SW_EEXIST) {
			/* the id this CPU gave goes unused */
			bpf_map_delete_elem(&chunk_ids_cfl, &id);
			have = bpf_map_lookup_elem(&chunks_cfl, &c);
			if (have) {
				id = *have;
				err = 0;
			}
		}
	}
	if (err) {
		sw_lost(SW_LOST_CHUNKS_FULL);
		return 0;
	}
	s->key.uid = id;
	st->base += SW_CFL_FRAMES;
	bpf_tail_call(ctx, &cfi_tails_kp, SW_GS_LEGACY);
	if (!gs_cfl_hand_over(st, SW_GS_LEGACY))
		sw_lost(SW_LOST_TAILCALL);
	return 0;
}

SEC("kprobe") int gs_cfl_count_kp(struct pt_regs *ctx)
{
	return gs_cfl_count();
}

SEC("tracepoint") int gs_cfl_count_tp(void *ctx)
{
	return gs_cfl_count();
}

/* the programs of a mode: callers, then walks unrolled (4.9-5.16) or looped */
#define GS_CFI_UNROLLED(sfx, mode)					\
SEC("kprobe") int gs_cfi_kprobe##sfx(struct pt_regs *ctx)		\
{									\
	return gs_cfi_event(ctx, PT_REGS_SP(ctx), 1, 0, 0, 0, mode,	\
			    &cfi_tails_kp);				\
}									\
SEC("kprobe") int gs_cfi_uprobe##sfx(struct pt_regs *ctx)		\
{									\
	return gs_cfi_event(ctx, 0, 0, 1, 0, 0, mode, &cfi_tails_kp);	\
}									\
SEC("kprobe") int gs_cfi_uprobe_entry##sfx(struct pt_regs *ctx)	\
{									\
	return gs_cfi_event(ctx, 0, 0, 1, 1, 0, mode, &cfi_tails_kp);	\
}									\
SEC("kprobe") int gs_cfi_uprobe_entry_k##sfx(struct pt_regs *ctx)	\
{									\
	return gs_cfi_event(ctx, 0, 0, 1, 1, 1, mode, &cfi_tails_kp);	\
}									\
SEC("tracepoint") int gs_cfi_tp##sfx(void *ctx)				\
{									\
	return gs_cfi_event(ctx, sw_frame_pointer(), 0, 0, 0, 0, mode,	\
			    &cfi_tails_tp);				\
}									\
SEC("kprobe") int gs_cfi_walk_kp##sfx(struct pt_regs *ctx)		\
{									\
	return gs_cfi_walk(ctx, mode, &cfi_tails_kp,			\
			   mode == SW_GS_LEGACY ? GS_CFL_STEPS : GS_CFI_FRAMES); \
}									\
SEC("tracepoint") int gs_cfi_walk_tp##sfx(void *ctx)			\
{									\
	return gs_cfi_walk(ctx, mode, &cfi_tails_tp,			\
			   mode == SW_GS_LEGACY ? GS_CFL_STEPS : GS_CFI_FRAMES); \
}

#define GS_CFI_PROGRAMS(sfx, mode)					\
GS_CFI_UNROLLED(sfx, mode)						\
SEC("kprobe") int gs_cfi_walk_vma_kp##sfx(struct pt_regs *ctx)		\
{									\
	return gs_cfi_walk_loop(ctx, mode, &cfi_tails_kp, CFI_VMA_FIND);	\
}									\
SEC("tracepoint") int gs_cfi_walk_vma_tp##sfx(void *ctx)		\
{									\
	return gs_cfi_walk_loop(ctx, mode, &cfi_tails_tp, CFI_VMA_FIND);	\
}									\
SEC("kprobe") int gs_cfi_walk_mt_kp##sfx(struct pt_regs *ctx)		\
{									\
	return gs_cfi_walk_loop(ctx, mode, &cfi_tails_kp, CFI_VMA_MT);	\
}									\
SEC("tracepoint") int gs_cfi_walk_mt_tp##sfx(void *ctx)		\
{									\
	return gs_cfi_walk_loop(ctx, mode, &cfi_tails_tp, CFI_VMA_MT);	\
}

/*
 * A process's mappings follow it as the kernel's do, whoever started it:
 * a child of fork maps what its parent maps, at the same addresses, from
 * its first instruction, so it starts with a copy of its parent's list
 * (a pid used again gets its new parent's, or none); an exec leaves no
 * list until the frontend has read the new image's.  A thread gets a copy
 * too, under its own id, which no walk looks up (fork tells no thread
 * from a process here): it goes when the thread ends.  A process's own
 * list stays after it ends, so that its last events can be explained; the
 * frontend reaps those when the map fills.
 */
SEC("tracepoint") int gs_cfi_fork(void *ctx)
{
	__u32 zero = 0, child, parent = bpf_get_current_pid_tgid() >> 32;
	struct sw_config *cfg = bpf_map_lookup_elem(&config, &zero);
	struct sw_cfi_proc *proc;

	if (!cfg)
		return 0;
	child = sw_fork_child(ctx, cfg);
	proc = bpf_map_lookup_elem(&cfi_procs, &parent);
	/* no room: its events are counted as without tables */
	if (proc)
		bpf_map_update_elem(&cfi_procs, &child, proc, BPF_ANY);
	else
		bpf_map_delete_elem(&cfi_procs, &child);
	return 0;
}

/*
 * SW_GS_LEGACY's hooks: a child of fork gets its parent's list by
 * reference, not a copy (bpf/cfi_alias.bpf.h says why).
 * Before 4.15 a tracepoint runs one BPF program: these also follow
 * -- COMMAND's threads, in place of sw_fork_tp and sw_exit_tp.
 */
SEC("tracepoint") int gs_cfl_fork(void *ctx)
{
	__u32 zero = 0, child;
	struct sw_config *cfg = bpf_map_lookup_elem(&config, &zero);

	if (!cfg)
		return 0;
	child = sw_fork_child(ctx, cfg);
	sw_follow_child(child);
	cfi_alias_fork(child);
	return 0;
}

SEC("tracepoint") int gs_cfl_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	bpf_map_delete_elem(&cfi_procs, &tgid);
	bpf_map_delete_elem(&cfi_alias, &tgid);
	return 0;
}

SEC("tracepoint") int gs_cfl_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = id;

	sw_follow_exit();
	bpf_map_delete_elem(&cfi_alias, &tid);
	if (tid != id >> 32)
		bpf_map_delete_elem(&cfi_procs, &tid);
	return 0;
}

SEC("tracepoint") int gs_cfi_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	bpf_map_delete_elem(&cfi_procs, &tgid);
	return 0;
}

/*
 * 4.18-5.16 (SW_CFG_VMA_LIST): a process's list built here, from its
 * VMAs and the tables the frontend has loaded by file (cfi_files), at
 * exec and after each mmap of code, so that a process is walked from its
 * first instruction without being held while the frontend reads it (no
 * ptrace): what 5.17's bpf_find_vma does for each PC, once per mapping.
 * The VMAs are read through the offsets in sw_config.vma, in address
 * order, CFI_BUILD_VMAS a program, CFI_BUILD_ROUNDS programs at most; a
 * list that is full keeps the lowest mappings and counts the rest.
 */
#define CFI_BUILD_VMAS		14
#define CFI_BUILD_ROUNDS	18

struct cfi_build {
	struct sw_cfi_proc p;
	__u64 vma;		/* the next VMA to read; 0: the last was read */
	__u64 vdso;		/* where the process's vDSO starts, if known */
	__u32 tgid, rounds;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cfi_build);
} cfi_build SEC(".maps");

/* the next part of a build: one for each type of program that starts one */
SW_PROG_ARRAY(cfi_build_x, 1);
SW_PROG_ARRAY(cfi_build_m, 1);

/* Threads inside an mmap of code: their exit rebuilds their list. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} cfi_mmaps SEC(".maps");

#define CFI_VM_EXEC	4

static __always_inline __u64 cfi_kread(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read(&v, sizeof(v), (void *)addr);
	return v;
}

/* VMA a's mapping added to b's list where its file has a table; a's next. */
static __always_inline __u64 cfi_build_vma(const struct sw_config *cfg,
					   struct cfi_build *b, __u64 a)
{
	__u64 file, inode, sb, fo, start, end, delta = 0;
	struct sw_cfi_file_key k = {};
	struct sw_cfi_file *f;
	struct sw_cfi_map *m;
	__u32 gen = 0, n;
	__u64 next = cfi_kread(a + cfg->vma.vm_next);
	__u32 first = SW_CFI_UNTABLED, count = 0, stale = 0;

	/* only code: a PC is never in a mapping of data */
	if (!(cfi_kread(a + cfg->vma.vm_flags) & CFI_VM_EXEC))
		return next;
	start = cfi_kread(a + cfg->vma.vm_start);
	file = cfi_kread(a + cfg->vma.vm_file);
	inode = file ? cfi_kread(file + cfg->vma.f_inode) : 0;
	/*
	 * The vDSO, no file's: its table is the frontend's under key 0, so
	 * that a list built here is as whole as the frontend's (which then
	 * never replaces it: src/unwind.c)
	 */
	if (!inode && (!b->vdso || start != b->vdso))
		return next;
	if (inode) {
		k.ino = cfi_kread(inode + cfg->vma.i_ino);
		sb = cfi_kread(inode + cfg->vma.i_sb);
		if (sb)
			bpf_probe_read(&k.dev, 4, (void *)(sb + cfg->vma.s_dev));
	}
	f = bpf_map_lookup_elem(&cfi_files, &k);
	fo = cfi_kread(a + cfg->vma.vm_pgoff) << 12;
	/*
	 * No f = NULL for a stale one: 4.19's verifier loses the type of a
	 * pointer that may have been set to NULL
	 */
	if (f && inode && cfg->vma.i_generation && f->gen_known) {
		bpf_probe_read(&gen, 4, (void *)(inode + cfg->vma.i_generation));
		stale = gen != f->gen;
	}
	if (f && !stale) {
		/* a file known to have no table (no CFI, or it did not fit) */
		if (!f->count)
			return next;
		if (!cfi_file_seg(f, fo, &delta))
			return next;
		first = f->first;
		count = f->count;
	}
	/* else not read yet: the walk counts the events that reach it */
	n = b->p.nr;
	if (n >= SW_CFI_PROC_MAPS) {
		b->p.no_room++;
		return next;
	}
	end = cfi_kread(a + cfg->vma.vm_end);
	/* bounded where it is used: clang keeps n on the stack over the calls */
	m = &b->p.maps[sw_bound(n, SW_CFI_PROC_MAPS - 1)];
	m->start = start;
	m->end = end;
	m->bias = start - fo + delta;
	m->first = first;
	m->count = count;
	b->p.nr = n + 1;
	return next;
}

/*
 * The build in this CPU's cfi_build: CFI_BUILD_VMAS more VMAs, then the
 * next program, or the list stored.  begin: the calling task's first.
 */
static __always_inline int cfi_build_run(void *ctx, void *tails, const int begin)
{
	__u32 zero = 0, tgid;
	struct sw_config *cfg = bpf_map_lookup_elem(&config, &zero);
	struct cfi_build *b = bpf_map_lookup_elem(&cfi_build, &zero);
	__u64 a;

	if (!cfg || !b || !(cfg->flags & SW_CFG_VMA_LIST))
		return 0;
	if (begin) {
		__u64 mm = cfi_kread(bpf_get_current_task() + cfg->vma.task_mm);

		b->tgid = bpf_get_current_pid_tgid() >> 32;
		b->rounds = 0;
		b->p.nr = 0;
		b->p.no_room = 0;
		b->p.built = 1;
		b->vma = mm ? cfi_kread(mm + cfg->vma.mm_mmap) : 0;
		b->vdso = mm && cfg->vma.mm_vdso ? cfi_kread(mm + cfg->vma.mm_vdso) : 0;
	}
	a = b->vma;
#pragma unroll
	for (int i = 0; i < CFI_BUILD_VMAS; i++)
		if (a)
			a = cfi_build_vma(cfg, b, a);
	b->vma = a;
	if (a && ++b->rounds < CFI_BUILD_ROUNDS) {
		bpf_tail_call(ctx, tails, 0);
		/* no next program: what was read is kept */
	}
	/* VMAs never read: counted as not kept */
	b->p.no_room += !!a;
	tgid = b->tgid;
	bpf_map_update_elem(&cfi_procs, &tgid, &b->p, BPF_ANY);
	return 0;
}

SEC("tracepoint") int gs_cfi_exec_build(void *ctx)
{
	return cfi_build_run(ctx, &cfi_build_x, 1);
}

SEC("tracepoint") int gs_cfi_build_next_x(void *ctx)
{
	return cfi_build_run(ctx, &cfi_build_x, 0);
}

/* syscalls:sys_enter_mmap: the prot argument, after the common fields */
#define CFI_MMAP_PROT_OFF	32
#define CFI_PROT_EXEC		4

SEC("tracepoint") int gs_cfi_mmap_enter(void *ctx)
{
	__u32 tid = bpf_get_current_pid_tgid();
	__u64 prot = 0;
	__u8 one = 1;

	bpf_probe_read(&prot, sizeof(prot), (void *)(sw_ptr_value(ctx) + CFI_MMAP_PROT_OFF));
	if (prot & CFI_PROT_EXEC)
		bpf_map_update_elem(&cfi_mmaps, &tid, &one, BPF_ANY);
	return 0;
}

/*
 * syscalls:sys_exit_mmap: a list this side built made again, now that
 * the process maps more code.  One the frontend wrote is left to it: it
 * reads the process's maps again when the kernel reports the mapping.
 */
SEC("tracepoint") int gs_cfi_mmap_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = id, tgid = id >> 32;
	struct sw_cfi_proc *proc;

	if (!bpf_map_lookup_elem(&cfi_mmaps, &tid))
		return 0;
	bpf_map_delete_elem(&cfi_mmaps, &tid);
	proc = bpf_map_lookup_elem(&cfi_procs, &tgid);
	if (!proc || !proc->built)
		return 0;
	return cfi_build_run(ctx, &cfi_build_m, 1);
}

SEC("tracepoint") int gs_cfi_build_next_m(void *ctx)
{
	return cfi_build_run(ctx, &cfi_build_m, 0);
}

SEC("tracepoint") int gs_cfi_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = id;

	if (tid != id >> 32)
		bpf_map_delete_elem(&cfi_procs, &tid);
	return 0;
}

GS_CFI_PROGRAMS(, SW_GS_COUNT)
GS_CFI_PROGRAMS(_e, SW_GS_EMIT)
GS_CFI_PROGRAMS(_t, SW_GS_COUNT_T)
GS_CFI_PROGRAMS(_et, SW_GS_EMIT_T)
GS_CFI_PROGRAMS(_small, SW_GS_SMALL)
GS_CFI_UNROLLED(_cfl, SW_GS_LEGACY)

SW_FOLLOW_PROGRAMS()
