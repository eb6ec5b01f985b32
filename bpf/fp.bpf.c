// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The frame-pointer walker: every kernel from 4.1, because it needs nothing
 * but bpf_probe_read.  The walk itself is generated (gen/walker.py) as
 * straight-line code; this file wires it to probes.
 *
 * One program holds one walk.  A kernel-context event walks the kernel
 * frames, parks the key in "scratch" and tail-calls the user walk, so each
 * program stays within a 4.4 verifier's budget on its own.
 */
#include "common.bpf.h"
#include "fp_walk.h"

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

/* A tail call may only reach programs of the caller's type. */
#define SW_TAIL_USER 0
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} tails_kp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} tails_tp SEC(".maps");

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
	__u64 ubp = 0;

	cfg = sw_filter(1);
	if (!cfg)
		return 0;
	sw_key_hdr(&key.h, cfg);
	/* even for user frames only: on 4.4 the chain's end is the user %rbp */
	if (cfg->flags & SW_CFG_KFP)
		sw_fp_kwalk_entry(&key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
				  PT_REGS_FP(ctx), &ubp);
	fp_hand_over(ctx, &key, sw_user_regs(cfg, PT_REGS_SP(ctx)), ubp,
		     &tails_kp);
	return 0;
}

/* kprobe, kernel frames only (-K); also all 4.1 can do, with have_pid 0 */
static __always_inline int fp_kprobe_kernel(struct pt_regs *ctx,
					    const int have_pid)
{
	struct sw_fp_key key = {};
	struct sw_config *cfg;
	__u64 ubp = 0;

	cfg = sw_filter(have_pid);
	if (!cfg)
		return 0;
	if (have_pid)
		sw_key_hdr(&key.h, cfg);
	sw_fp_kwalk_entry(&key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
			  PT_REGS_FP(ctx), &ubp);
	sw_count(&counts, &key);
	return 0;
}

SEC("kprobe")
int fp_kprobe_k(struct pt_regs *ctx)
{
	return fp_kprobe_kernel(ctx, 1);
}

/* 4.1 has neither pid/comm helpers nor tail calls */
SEC("kprobe")
int fp_kprobe_k_v41(struct pt_regs *ctx)
{
	return fp_kprobe_kernel(ctx, 0);
}

/*
 * A tracepoint has no registers: start from this program's own frame,
 * which the JIT links into the kernel's frame chain (the frontend drops
 * the tracing machinery's frames above the traced call site).
 */
static __always_inline int fp_tp_common(void *ctx, const int user)
{
	struct sw_fp_key key = {};
	struct sw_config *cfg;
	__u64 ubp = 0, fp;

	cfg = sw_filter(1);
	if (!cfg)
		return 0;
	sw_key_hdr(&key.h, cfg);
	fp = sw_frame_pointer();
	if (!user) {
		sw_fp_kwalk(&key, fp, &ubp);
		sw_count(&counts, &key);
		return 0;
	}
	if (cfg->flags & SW_CFG_KFP)
		sw_fp_kwalk(&key, fp, &ubp);
	fp_hand_over(ctx, &key, sw_user_regs(cfg, fp), ubp, &tails_tp);
	return 0;
}

SEC("tracepoint")
int fp_tp(void *ctx)
{
	return fp_tp_common(ctx, 1);
}

SEC("tracepoint")
int fp_tp_k(void *ctx)
{
	return fp_tp_common(ctx, 0);
}

/* User frames of a kernel-context event, from the registers saved at entry. */
static __always_inline int fp_user_of_kernel(void)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	__u64 next = 0, cs = 0, ip = 0, bp = 0, ubp, kmask;
	struct sw_fp_handover *h;
	struct sw_config *cfg;
	struct sw_fp_key key;

	h = bpf_map_lookup_elem(&scratch, &cpu);
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!h || !cfg)
		return 0;
	__builtin_memcpy(&key, &h->key, sizeof(key));
	ubp = h->ubp;
	/*
	 * -U: the kernel was walked only to find the user frame pointer.
	 * Masking, not a branch, so the paths through here do not double.
	 */
	kmask = -(__u64)(cfg->flags & SW_CFG_KSTACK);
#pragma unroll
	for (int i = 0; i < SW_FP_KDEPTH; i++)
		key.kip[i] &= kmask;
	key.h.kstop &= kmask;
	/* kernel threads and IRQ stacks have no user registers there */
	if (bpf_probe_read(&cs, 8, (void *)(h->regs + SW_PT_REGS_CS)) ||
	    cs != SW_USER_CS) {
		key.h.ustop = SW_STOP_NO_USER;
		goto count;
	}
	bpf_probe_read(&ip, 8, (void *)(h->regs + SW_PT_REGS_IP));
	bpf_probe_read(&bp, 8, (void *)(h->regs + SW_PT_REGS_BP));
	/*
	 * Before 4.17 the syscall fast path did not save %rbp in pt_regs; the
	 * user's %rbp is then the last link of the kernel chain.
	 */
	if (!ubp || ubp >= SW_USER_MAX)
		ubp = bp;
	sw_fp_uwalk(&key, ip, ubp, &next);
count:
	sw_count(&counts, &key);
	return 0;
}

SEC("kprobe")
int fp_user_kp(struct pt_regs *ctx)
{
	return fp_user_of_kernel();
}

SEC("tracepoint")
int fp_user_tp(void *ctx)
{
	return fp_user_of_kernel();
}

static __always_inline int fp_uprobe_common(struct pt_regs *ctx,
					    const int entry)
{
	struct sw_fp_key key = {};
	struct sw_config *cfg;
	__u64 next = 0;

	cfg = sw_filter(1);
	if (!cfg)
		return 0;
	sw_key_hdr(&key.h, cfg);
	if (entry)
		sw_fp_uwalk_entry(&key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
				  PT_REGS_FP(ctx), &next);
	else
		sw_fp_uwalk(&key, PT_REGS_IP(ctx), PT_REGS_FP(ctx), &next);
	sw_count(&counts, &key);
	return 0;
}

/* uprobe on a function's first instruction: the caller is at *sp */
SEC("kprobe")
int fp_uprobe_entry(struct pt_regs *ctx)
{
	return fp_uprobe_common(ctx, 1);
}

/* USDT, or a uprobe inside a function */
SEC("kprobe")
int fp_uprobe(struct pt_regs *ctx)
{
	return fp_uprobe_common(ctx, 0);
}

SW_FOLLOW_PROGRAMS()
