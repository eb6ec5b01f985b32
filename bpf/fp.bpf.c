// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The frame-pointer walker: every kernel from 4.1, because it needs nothing
 * but bpf_probe_read.  The walk itself is generated (gen/walker.py) as
 * straight-line code; this file wires it to probes and to where a stack
 * goes once walked:
 *
 *   (no suffix)  counted in "counts" (stackcount)
 *   _e           sent to user space with bpf_perf_event_output (4.4+)
 *   _p           printed with bpf_trace_printk, one line a frame (4.1-4.3)
 *   _x           one walk, with every frame pointer read (stacksnoop --explain)
 *
 * One program holds one walk.  A kernel-context event walks the kernel
 * frames, parks the key in "scratch" and tail-calls the user walk, so each
 * program stays within a 4.4 verifier's budget on its own.
 */
#include "common.bpf.h"

/* fp_walk.h's printed walks take its formats' sizes */
#include "printk.bpf.h"
#include "fp_walk.h"
#include "task41.bpf.h"

/*
 * A walk's end, ret_from_fork's range, as a number (gen/walker.py): 4.1
 * forbids arithmetic on a map value pointer and 4.9 loses one spilled to
 * the stack, so the walks never see the config's address.
 */
#define SW_ROOT(cfg)	(cfg)->root

enum sink { COUNT, EMIT };
/* a uprobe's walk: 0 anywhere, 1 at a function's entry, SHIFT by its uframes rule */
#define SHIFT 2

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sw_fp_key);
	__type(value, __u64);
} counts SEC(".maps");

/* The kernel walk's result, handed to the user walk on the same CPU. */
struct sw_fp_handover {
	struct sw_fp_key key;
	__u64 regs;		/* user registers at kernel entry */
	__u64 ubp;		/* where the kernel chain left for user space */
};

/* Indexed by CPU; the frontend sizes it to the possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_fp_handover);
} scratch SEC(".maps");

#define SW_TAIL_USER 0
SW_PROG_ARRAY(tails_kp, 1);
SW_PROG_ARRAY(tails_tp, 1);

/* 4.4 sends perf records from the stack only: header and walk together. */
struct sw_fp_xrecord {
	struct sw_event_hdr e;
	struct sw_fp_explain x;
};

/* A walked stack is counted, or sent to user space. */
static __always_inline void fp_done(void *ctx, struct sw_fp_record *rec,
				    const enum sink sink)
{
	if (sink == COUNT) {
		sw_count(&counts, &rec->key);
	} else {
		sw_event_hdr(&rec->e);
		sw_emit(ctx, rec, sizeof(*rec));
	}
}

/*
 * Kernel frames are in the key: park it for the user walk and tail-call
 * it.  Nothing else happens after a kernel walk, so the many ways a walk
 * can end each carry only this short tail through the verifier.
 */
static __always_inline void fp_hand_over(void *ctx, struct sw_fp_key *key,
					 __u64 regs, __u64 ubp, void *tails)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct sw_fp_handover *h;

	h = bpf_map_lookup_elem(&scratch, &cpu);
	if (!h)
		return;
	__builtin_memcpy(&h->key, key, sizeof(*key));
	h->regs = regs;
	h->ubp = ubp;
	bpf_tail_call(ctx, tails, SW_TAIL_USER);
	sw_lost(SW_LOST_TAILCALL);
}

/* kprobe, kernel and user frames: the user walk follows by tail call */
SEC("kprobe")
int fp_kprobe(struct pt_regs *ctx)
{
	struct sw_fp_key key = {};
	struct sw_config *cfg;
	__u64 id;
	__u64 ubp = 0;

	cfg = sw_filter(1, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	sw_key_hdr(&key.h, cfg, id, SW_LINEAR);
	/* even for user frames only: on 4.4 the chain's end is the user %rbp */
	if (cfg->flags & SW_CFG_KFP)
		sw_fp_kwalk_entry(SW_ROOT(cfg), &key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
				  PT_REGS_FP(ctx), &ubp);
	fp_hand_over(ctx, &key, sw_user_regs(cfg, PT_REGS_SP(ctx)), ubp,
		     &tails_kp);
	return 0;
}

/* kprobe, kernel frames only (-K) */
static __always_inline int fp_kprobe_kernel(struct pt_regs *ctx,
					    const enum sink sink)
{
	struct sw_fp_record rec = {};
	struct sw_config *cfg;
	__u64 id;
	__u64 ubp = 0;

	cfg = sw_filter(1, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	sw_key_hdr(&rec.key.h, cfg, id, SW_LINEAR);
	sw_fp_kwalk_entry(SW_ROOT(cfg), &rec.key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
			  PT_REGS_FP(ctx), &ubp);
	fp_done(ctx, &rec, sink);
	return 0;
}

SEC("kprobe") int fp_kprobe_k(struct pt_regs *ctx) { return fp_kprobe_kernel(ctx, COUNT); }
SEC("kprobe") int fp_kprobe_k_e(struct pt_regs *ctx) { return fp_kprobe_kernel(ctx, EMIT); }

/*
 * 4.1, kernel frames and, unless -K, user frames: no tail calls, so one
 * program walks both.
 * The kernel walk has no branch, so the user walk is verified once, not
 * once for each of the kernel walk's ends (gen/legacy_limits.c counts
 * every path).
 */
SEC("kprobe")
int fp_kprobe_v41(struct pt_regs *ctx)
{
	__u64 id, ubp, regs, ip, bp, m, tmp = 0;
	struct sw_fp_key key = {};
	struct sw_config *cfg;

	cfg = sw_filter(0, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	if ((fp_cpu41(PT_REGS_SP(ctx), cfg->thread_size, cfg->ti_cpu_off, &tmp) ^
	     cfg->cpu) & cfg->cpu_mask)
		return 0;
	id = fp_task41(cfg, PT_REGS_SP(ctx), &key.h, &tmp, 0);
	if (((id >> 32) ^ cfg->tgid) & cfg->tgid_mask)
		return 0;
	/*
	 * The BPF stack has room for the key and little else: the last user
	 * slot keeps where the user registers are until the user walk.
	 */
	key.uip[SW_FP_UDEPTH - 1] = sw_user_regs(cfg, PT_REGS_SP(ctx));
	sw_fp_kwalk_entry_m(SW_ROOT(cfg), &key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
			    PT_REGS_FP(ctx), &ubp, &tmp);
	regs = key.uip[SW_FP_UDEPTH - 1];
	key.uip[SW_FP_UDEPTH - 1] = 0;
	/* looked up again, for the same reason */
	cfg = sw_filter(0, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	/* -U: the kernel was walked only to find the user frame pointer */
	m = -(__u64)(cfg->flags & SW_CFG_KSTACK);
#pragma unroll
	for (int i = 0; i < SW_FP_KDEPTH; i++)
		key.kip[i] &= m;
	key.h.kstop &= m;
	if (!(cfg->flags & SW_CFG_USTACK))
		goto done;
	if (!fp_user_entry41(regs, ubp, &tmp, &ip, &bp)) {
		key.h.ustop = SW_STOP_NO_USER;
		goto done;
	}
	sw_fp_uwalk(&key, ip, bp, &tmp);
done:
	sw_count(&counts, &key);
	return 0;
}

/*
 * A tracepoint has no registers: start from this program's own frame,
 * which the JIT links into the kernel's frame chain (the frontend drops
 * the tracing machinery's frames above the traced call site).
 */
static __always_inline int fp_tp_common(void *ctx, const int user,
					const enum sink sink)
{
	struct sw_fp_record rec = {};
	struct sw_config *cfg;
	__u64 id;
	__u64 ubp = 0, fp;

	cfg = sw_filter(1, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	sw_key_hdr(&rec.key.h, cfg, id, SW_LINEAR);
	fp = sw_frame_pointer() + cfg->jit_frame_off;
	if (!user) {
		sw_fp_kwalk(SW_ROOT(cfg), &rec.key, fp, &ubp);
		fp_done(ctx, &rec, sink);
		return 0;
	}
	if (cfg->flags & SW_CFG_KFP)
		sw_fp_kwalk(SW_ROOT(cfg), &rec.key, fp, &ubp);
	fp_hand_over(ctx, &rec.key, sw_user_regs(cfg, fp), ubp, &tails_tp);
	return 0;
}

SEC("tracepoint") int fp_tp(void *ctx) { return fp_tp_common(ctx, 1, COUNT); }
SEC("tracepoint") int fp_tp_k(void *ctx) { return fp_tp_common(ctx, 0, COUNT); }
SEC("tracepoint") int fp_tp_k_e(void *ctx) { return fp_tp_common(ctx, 0, EMIT); }

/* User frames of a kernel-context event, from the registers saved at entry. */
static __always_inline int fp_user_of_kernel(void *ctx, const enum sink sink)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 next = 0, cs = 0, ip = 0, bp = 0, ubp, kmask;
	struct sw_fp_handover *h;
	struct sw_fp_record rec;
	struct sw_config *cfg;

	h = bpf_map_lookup_elem(&scratch, &cpu);
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!h || !cfg)
		return 0;
	__builtin_memcpy(&rec.key, &h->key, sizeof(rec.key));
	ubp = h->ubp;
	/*
	 * -U: the kernel was walked only to find the user frame pointer.
	 * Masking, not a branch, so the paths through here do not double.
	 */
	kmask = -(__u64)(cfg->flags & SW_CFG_KSTACK);
#pragma unroll
	for (int i = 0; i < SW_FP_KDEPTH; i++)
		rec.key.kip[i] &= kmask;
	rec.key.h.kstop &= kmask;
	/* kernel threads and IRQ stacks have no user registers there */
	if (bpf_probe_read(&cs, 8, (void *)(h->regs + SW_PT_REGS_CS)) ||
	    cs != SW_USER_CS) {
		rec.key.h.ustop = SW_STOP_NO_USER;
		goto done;
	}
	bpf_probe_read(&ip, 8, (void *)(h->regs + SW_PT_REGS_IP));
	bpf_probe_read(&bp, 8, (void *)(h->regs + SW_PT_REGS_BP));
	/*
	 * Before 4.17 the syscall fast path did not save %rbp in pt_regs; the
	 * user's %rbp is then the last link of the kernel chain.
	 */
	if (!ubp || ubp >= SW_USER_MAX)
		ubp = bp;
	sw_fp_uwalk(&rec.key, ip, ubp, &next);
done:
	fp_done(ctx, &rec, sink);
	return 0;
}

SEC("kprobe") int fp_user_kp(struct pt_regs *ctx) { return fp_user_of_kernel(ctx, COUNT); }
SEC("kprobe") int fp_user_kp_e(struct pt_regs *ctx) { return fp_user_of_kernel(ctx, EMIT); }
SEC("tracepoint") int fp_user_tp(void *ctx) { return fp_user_of_kernel(ctx, COUNT); }
SEC("tracepoint") int fp_user_tp_e(void *ctx) { return fp_user_of_kernel(ctx, EMIT); }

static __always_inline int fp_uprobe_common(struct pt_regs *ctx,
					    const int entry,
					    const enum sink sink)
{
	struct sw_fp_record rec = {};
	struct sw_config *cfg;
	__u64 id;
	__u64 next = 0;

	cfg = sw_filter(1, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	if (sw_user_ia32(ctx)) {
		sw_lost(SW_LOST_IA32);
		return 0;
	}
	sw_key_hdr(&rec.key.h, cfg, id, SW_LINEAR);
	if (entry == SHIFT) {
		__u64 bp, sp = sw_uframe_sp(ctx, &bp);

		sw_fp_uwalk_entry(&rec.key, PT_REGS_IP(ctx), sp, bp, &next);
	} else if (entry) {
		sw_fp_uwalk_entry(&rec.key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
				  PT_REGS_FP(ctx), &next);
	} else {
		sw_fp_uwalk(&rec.key, PT_REGS_IP(ctx), PT_REGS_FP(ctx), &next);
	}
	fp_done(ctx, &rec, sink);
	return 0;
}

/* uprobe on a function's first instruction: the caller is at *sp */
SEC("kprobe") int fp_uprobe_entry(struct pt_regs *ctx) { return fp_uprobe_common(ctx, 1, COUNT); }
SEC("kprobe") int fp_uprobe_entry_e(struct pt_regs *ctx) { return fp_uprobe_common(ctx, 1, EMIT); }
/* USDT, or a uprobe inside a function */
SEC("kprobe") int fp_uprobe(struct pt_regs *ctx) { return fp_uprobe_common(ctx, 0, COUNT); }
SEC("kprobe") int fp_uprobe_e(struct pt_regs *ctx) { return fp_uprobe_common(ctx, 0, EMIT); }
/* the same where %rbp does not lead to the caller: its CFI rule (uframes) */
SEC("kprobe") int fp_uprobe_shift(struct pt_regs *ctx) { return fp_uprobe_common(ctx, SHIFT, COUNT); }
SEC("kprobe") int fp_uprobe_shift_e(struct pt_regs *ctx) { return fp_uprobe_common(ctx, SHIFT, EMIT); }

/* ---- 4.1-4.3: trace_printk, a line per frame as the walk reads it ---- */
/*
 * Copies, not a third sink of the programs above: printing the key after
 * the walk gives each of the unrolled walk's exits the whole printing
 * tail, and the verifier's walk of fp_kprobe_k_p grows to ~2.3 million
 * instructions (as gen/legacy_limits.c counts them), where 4.x allows
 * 32768.  Printed as read, no path rejoins.
 */

/* kprobe, kernel frames only */
SEC("kprobe")
int fp_kprobe_k_p(struct pt_regs *ctx)
{
	struct sw_fp_key key = {};
	volatile __u64 fmt[2];
	struct sw_config *cfg;
	__u64 id;
	__u64 ubp = 0;

	cfg = sw_filter(1, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	fp_fmt(fmt, 'k');
	sw_fp_kwalk_entry_p(SW_ROOT(cfg), &key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
			    PT_REGS_FP(ctx), &ubp, (const char *)fmt, cfg->magic);
	fp_printk_end(&key.h, fmt, cfg->magic);
	return 0;
}

/*
 * 4.1: as fp_kprobe_v41, each frame printed as it is read.  What it needs
 * of the config is read before any call: clang would otherwise keep the
 * config's address on the stack, spilled before its NULL check, which a
 * 4.1 verifier then no longer knows for checked.
 */
SEC("kprobe")
int fp_kprobe_v41_p(struct pt_regs *ctx)
{
	__u64 id, ubp, regs, ip, bp, root, tmp = 0, sp = PT_REGS_SP(ctx);
	struct sw_fp_uside key = {};
	volatile __u64 fmt[2];
	struct sw_config *cfg;
	__u32 magic, flags, tgid, tgid_mask, cpu, cpu_mask, cpu_off, thread_size;

	cfg = sw_filter(0, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	magic = cfg->magic;
	flags = cfg->flags;
	root = SW_ROOT(cfg);
	regs = sw_user_regs(cfg, sp);
	tgid = cfg->tgid;
	tgid_mask = cfg->tgid_mask;
	cpu = cfg->cpu;
	cpu_mask = cfg->cpu_mask;
	cpu_off = cfg->ti_cpu_off;
	thread_size = cfg->thread_size;
	id = fp_task41(cfg, sp, &key.h, &tmp, 1);
	if (((id >> 32) ^ tgid) & tgid_mask)
		return 0;
	if ((fp_cpu41(sp, thread_size, cpu_off, &tmp) ^ cpu) & cpu_mask)
		return 0;
	fp_fmt(fmt, 'k');
	sw_fp_kwalk_entry_mp(root, &key.h, PT_REGS_IP(ctx), sp, PT_REGS_FP(ctx),
			     &ubp, &tmp, (const char *)fmt, magic);
	if (!(flags & SW_CFG_USTACK))
		goto done;
	if (!fp_user_entry41(regs, ubp, &tmp, &ip, &bp)) {
		key.h.ustop = SW_STOP_NO_USER;
		goto done;
	}
	fp_fmt(fmt, 'u');
	sw_fp_uwalk_up(&key, ip, bp, &tmp, (const char *)fmt, magic);
done:
	fp_printk_end(&key.h, fmt, magic);
	return 0;
}

/* kprobe, kernel then user frames (4.2-4.3: tail calls, no perf output) */
SEC("kprobe")
int fp_kprobe_p(struct pt_regs *ctx)
{
	struct sw_fp_key key = {};
	volatile __u64 fmt[2];
	struct sw_config *cfg;
	__u64 id;
	__u64 ubp = 0;

	cfg = sw_filter(1, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	fp_fmt(fmt, 'k');
	if (cfg->flags & SW_CFG_KFP)
		sw_fp_kwalk_entry_p(SW_ROOT(cfg), &key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
				    PT_REGS_FP(ctx), &ubp, (const char *)fmt,
				    cfg->magic);
	fp_hand_over(ctx, &key, sw_user_regs(cfg, PT_REGS_SP(ctx)), ubp,
		     &tails_kp);
	return 0;
}

SEC("kprobe")
int fp_user_kp_p(struct pt_regs *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 next = 0, cs = 0, ip = 0, bp = 0, ubp;
	struct sw_fp_handover *h;
	struct sw_fp_key key = {};	/* 4.x: helpers write only written stack */
	volatile __u64 fmt[2];
	struct sw_config *cfg;

	h = bpf_map_lookup_elem(&scratch, &cpu);
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!h || !cfg)
		return 0;
	/* the kernel frames went out already; only the stop reason is left */
	key.h.kstop = h->key.h.kstop;
	key.h.ustop = SW_STOP_NO_USER;
	fp_fmt(fmt, 'u');
	ubp = h->ubp;
	if (bpf_probe_read(&cs, 8, (void *)(h->regs + SW_PT_REGS_CS)) ||
	    cs != SW_USER_CS)
		goto done;
	bpf_probe_read(&ip, 8, (void *)(h->regs + SW_PT_REGS_IP));
	bpf_probe_read(&bp, 8, (void *)(h->regs + SW_PT_REGS_BP));
	if (!ubp || ubp >= SW_USER_MAX)
		ubp = bp;
	sw_fp_uwalk_p(&key, ip, ubp, &next, (const char *)fmt, cfg->magic);
done:
	fp_printk_end(&key.h, fmt, cfg->magic);
	return 0;
}

static __always_inline int fp_uprobe_print(struct pt_regs *ctx, const int entry)
{
	struct sw_fp_key key = {};
	volatile __u64 fmt[2];
	struct sw_config *cfg;
	__u64 id;
	__u64 next = 0;

	cfg = sw_filter(1, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	if (sw_user_ia32(ctx)) {
		sw_lost(SW_LOST_IA32);
		return 0;
	}
	fp_fmt(fmt, 'u');
	if (entry == SHIFT) {
		__u64 bp, sp = sw_uframe_sp(ctx, &bp);

		sw_fp_uwalk_entry_p(&key, PT_REGS_IP(ctx), sp, bp, &next,
				    (const char *)fmt, cfg->magic);
	} else if (entry)
		sw_fp_uwalk_entry_p(&key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
				    PT_REGS_FP(ctx), &next, (const char *)fmt,
				    cfg->magic);
	else
		sw_fp_uwalk_p(&key, PT_REGS_IP(ctx), PT_REGS_FP(ctx), &next,
			      (const char *)fmt, cfg->magic);
	fp_printk_end(&key.h, fmt, cfg->magic);
	return 0;
}

SEC("kprobe") int fp_uprobe_entry_p(struct pt_regs *ctx) { return fp_uprobe_print(ctx, 1); }
SEC("kprobe") int fp_uprobe_p(struct pt_regs *ctx) { return fp_uprobe_print(ctx, 0); }
SEC("kprobe") int fp_uprobe_shift_p(struct pt_regs *ctx) { return fp_uprobe_print(ctx, SHIFT); }

/*
 * --explain: the walk of where the event fired, with the frame pointer of
 * every frame, sent with the event (4.4+).  user: the event is in user
 * space (uprobe, USDT); entry: at a function's first instruction.
 */
static __always_inline int fp_explain(void *ctx, __u64 ip, __u64 sp,
				      __u64 bp, const int user,
				      const int entry)
{
	struct sw_fp_xrecord rec = {};
	struct sw_config *cfg;
	__u64 id;
	__u64 next = 0;

	cfg = sw_filter(1, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	sw_key_hdr(&rec.x.h, cfg, id, SW_LINEAR);
	if (user && entry)
		sw_fp_uwalk_entry_x(&rec.x, ip, sp, bp, &next);
	else if (user)
		sw_fp_uwalk_x(&rec.x, ip, bp, &next);
	else if (entry)
		sw_fp_kwalk_entry_x(SW_ROOT(cfg), &rec.x, ip, sp, bp, &next);
	else
		sw_fp_kwalk_x(SW_ROOT(cfg), &rec.x, bp, &next);
	sw_event_hdr(&rec.e);
	sw_emit(ctx, &rec, sizeof(rec));
	return 0;
}

SEC("kprobe") int fp_uprobe_entry_x(struct pt_regs *ctx)
{
	if (sw_user_ia32(ctx)) {
		sw_lost(SW_LOST_IA32);
		return 0;
	}
	return fp_explain(ctx, PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx), 1, 1);
}

SEC("kprobe") int fp_uprobe_x(struct pt_regs *ctx)
{
	if (sw_user_ia32(ctx)) {
		sw_lost(SW_LOST_IA32);
		return 0;
	}
	return fp_explain(ctx, PT_REGS_IP(ctx), 0, PT_REGS_FP(ctx), 1, 0);
}

SEC("kprobe") int fp_uprobe_shift_x(struct pt_regs *ctx)
{
	__u64 bp, sp;

	if (sw_user_ia32(ctx)) {
		sw_lost(SW_LOST_IA32);
		return 0;
	}
	sp = sw_uframe_sp(ctx, &bp);
	return fp_explain(ctx, PT_REGS_IP(ctx), sp, bp, 1, 1);
}

SEC("kprobe") int fp_kprobe_x(struct pt_regs *ctx)
{
	return fp_explain(ctx, PT_REGS_IP(ctx), PT_REGS_SP(ctx), PT_REGS_FP(ctx), 0, 1);
}

SEC("tracepoint") int fp_tp_x(void *ctx)
{
	__u32 zero = 0;
	struct sw_config *cfg = bpf_map_lookup_elem(&config, &zero);

	if (!cfg)
		return 0;
	return fp_explain(ctx, 0, 0, sw_frame_pointer() + cfg->jit_frame_off, 0, 0);
}

SW_FOLLOW_PROGRAMS()
