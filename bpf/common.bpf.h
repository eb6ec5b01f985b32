/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * What every walker shares: configuration, loss accounting, the process
 * filter and the in-kernel counting.  Kept to what a 4.1 kernel accepts
 * (ordinary hash and array maps, no global data, everything inlined), as
 * the frame-pointer walker includes it too.
 */
#ifndef SW_COMMON_BPF_H
#define SW_COMMON_BPF_H

#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "stackwalk.h"

#define SW_EEXIST 17

/* x86_64 struct pt_regs, as saved at the top of a task's kernel stack */
#define SW_PT_REGS_SIZE	168
#define SW_PT_REGS_BP	32
#define SW_PT_REGS_IP	128
#define SW_PT_REGS_CS	136
#define SW_PT_REGS_SP	152
#define SW_USER_CS	0x33
#define SW_USER32_CS	0x23

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SW_LOST_NR);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

/* Threads of a followed command (stackcount -- COMMAND); key 0 is always
 * present so that a lookup with follow_mask 0 passes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SW_FOLLOW_MAX);
	__type(key, __u32);
	__type(value, __u8);
} follow SEC(".maps");

/* see SW_UFRAMES */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SW_UFRAMES);
	__type(key, __u32);
	__type(value, __u32);
} uframes SEC(".maps");

/* stacksnoop: one record per event, read from the CPU's buffer */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} events SEC(".maps");

/* A tail-call map of n programs; a tail call may only reach programs of
 * the caller's type, so each walker has one for kprobes, one for
 * tracepoints. */
#define SW_PROG_ARRAY(name, n)					\
struct {							\
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);			\
	__uint(max_entries, n);					\
	__uint(key_size, sizeof(__u32));			\
	__uint(value_size, sizeof(__u32));			\
} name SEC(".maps")

static __always_inline void sw_lost(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &why);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/* A BPF_STACK_TRACE map (4.6+) of the kernel unwinder's frames, by id. */
#define SW_STACK_MAP(name)						\
struct {								\
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);				\
	__uint(max_entries, 16384);					\
	__uint(key_size, sizeof(__u32));				\
	__uint(value_size, SW_MAX_FRAMES * sizeof(__u64));		\
} name SEC(".maps")

#define SW_EFAULT 14
#define SW_ENOMEM 12

/*
 * A stack's id in a BPF_STACK_TRACE map (4.6+), or a negative errno;
 * -EFAULT means there is no such stack.  Ids are hash buckets: a second
 * stack that hashes to a taken one is refused (no BPF_F_REUSE_STACKID,
 * which would silently overwrite the first), and that loss is counted as
 * collided.
 */
static __always_inline long sw_stackid(void *ctx, void *stacks, __u64 flags,
				       __u32 collided)
{
	long id = bpf_get_stackid(ctx, stacks, flags);

	if (id >= 0 || id == -SW_EFAULT)
		return id;
	sw_lost(id == -SW_ENOMEM ? SW_LOST_STACKMAP_FULL : collided);
	return id;
}

/*
 * A uprobe's ctx is the user's pt_regs, whose cs tells a 32-bit (ia32)
 * task: its frames are 4-byte pairs a 64-bit walk would read as garbage.
 * The low 16 bits only: FRED (6.9+) keeps other state above them.
 */
static __always_inline int sw_user_ia32(const struct pt_regs *ctx)
{
	return (ctx->cs & 0xffff) == SW_USER32_CS;
}

/*
 * How a walker's programs may be shaped.  The fp walker stays straight-line
 * for the 4.x verifiers (see struct sw_config): every check is a mask that
 * passes or leaves.  The 4.6+ walkers may branch around work an event does
 * not need, which is cheaper per event.
 */
#define SW_LINEAR	1
#define SW_BRANCHY	0

/*
 * The event's config if it passes -p, -c and the follow filter, else NULL;
 * *idp gets bpf_get_current_pid_tgid(), for the key (0 on 4.1).  have_42:
 * the helpers 4.2 gave kprobe programs (pid, comm, CPU id); 4.1 refuses a
 * program that so much as names one, so the frontend refuses -p, -c, -P
 * and -- COMMAND there.
 */
static __always_inline struct sw_config *sw_filter(const int have_42,
						   const int linear, __u64 *idp)
{
	__u32 zero = 0, tid;
	struct sw_config *cfg;
	__u64 id;

	*idp = 0;
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg)
		return NULL;
	if (!have_42)
		return cfg;
	if ((bpf_get_smp_processor_id() ^ cfg->cpu) & cfg->cpu_mask)
		return NULL;
	id = bpf_get_current_pid_tgid();
	*idp = id;
	if (((id >> 32) ^ cfg->tgid) & cfg->tgid_mask)
		return NULL;
	/* not following, or the followed command itself: no lookup */
	if (!linear && (!cfg->follow_mask || (__u32)(id >> 32) == cfg->follow_root))
		return cfg;
	tid = (__u32)id & cfg->follow_mask;
	if (!bpf_map_lookup_elem(&follow, &tid))
		return NULL;
	return cfg;
}

/* Process identity of the key: zeroed unless keyed by process.  id is
 * what sw_filter() read. */
static __always_inline void sw_key_hdr(struct sw_key_hdr *h,
				       const struct sw_config *cfg, __u64 id,
				       const int linear)
{
	__u32 *comm = (__u32 *)h->comm;
	__u32 m = cfg->key_mask;

	if (!linear && !m) {
		h->tgid = 0;
		comm[0] = comm[1] = comm[2] = comm[3] = 0;
		return;
	}
	h->tgid = (id >> 32) & m;
	bpf_get_current_comm(h->comm, sizeof(h->comm));
	comm[0] &= m;
	comm[1] &= m;
	comm[2] &= m;
	comm[3] &= m;
}

/*
 * Add one to the key's count.  Two CPUs may both miss and race to insert:
 * the loser sees EEXIST and adds to the winner's entry, so no event is lost
 * to the race; only a full map loses one, and that is counted.
 */
static __always_inline void sw_count(void *counts, const void *key)
{
	__u64 one = 1, *val;
	long err;

	val = bpf_map_lookup_elem(counts, key);
	if (val) {
		__sync_fetch_and_add(val, 1);
		return;
	}
	err = bpf_map_update_elem(counts, key, &one, BPF_NOEXIST);
	if (!err)
		return;
	if (err == -SW_EEXIST) {
		val = bpf_map_lookup_elem(counts, key);
		if (val) {
			__sync_fetch_and_add(val, 1);
			return;
		}
	}
	sw_lost(SW_LOST_COUNTS_FULL);
}

static __always_inline void sw_event_hdr(struct sw_event_hdr *e)
{
	e->ts = bpf_ktime_get_ns();
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->cpu = bpf_get_smp_processor_id();
}

/*
 * One event to user space.  4.4 wants the current CPU's index in the
 * array (BPF_F_CURRENT_CPU came later) and the record on the stack; a full
 * buffer drops the record, and the drop is counted.
 */
static __always_inline void sw_emit(void *ctx, void *rec, __u64 size)
{
	if (bpf_perf_event_output(ctx, &events, bpf_get_smp_processor_id(),
				  rec, size))
		sw_lost(SW_LOST_OUTPUT);
}

/*
 * v, at most max, in a form every verifier can follow.  Left to itself,
 * clang may clamp a 32-bit copy and go on with the original register,
 * whose bounds a 6.1 verifier then no longer knows.  Written with the
 * v1 instruction set's jumps, as the objects are built for 4.x.
 */
static __always_inline __u64 sw_bound(__u64 v, const __u64 max)
{
	asm volatile("if %0 > %1 goto +1\n\t"
		     "goto +1\n\t"
		     "%0 = %1"
		     : "+r"(v) : "i"(max));
	return v;
}

/*
 * Masks for walks with no branch at all (4.1's, gen/walker.py): all ones
 * or zero, made in assembly so that clang cannot turn them back into
 * jumps.  sw_mask_ok: a helper's result was 0 (it is 0 or -errno).
 */
static __always_inline __u64 sw_mask_ok(long r)
{
	asm volatile("%0 s>>= 63\n\t"
		     "%0 ^= -1"
		     : "+r"(r));
	return r;
}

/* all ones where a == b */
static __always_inline __u64 sw_mask_eq(__u64 a, __u64 b)
{
	__u64 t = a ^ b, n;

	asm volatile("%1 = %0\n\t"
		     "%1 = -%1\n\t"
		     "%0 |= %1\n\t"
		     "%0 s>>= 63\n\t"
		     "%0 ^= -1"
		     : "+r"(t), "=&r"(n));
	return t;
}

/* all ones where a < b, both below 2^63 */
static __always_inline __u64 sw_mask_lt(__u64 a, __u64 b)
{
	__u64 d = a - b;

	asm volatile("%0 s>>= 63" : "+r"(d));
	return d;
}

/*
 * v, of which clang then knows nothing: an offset it would otherwise fold
 * into a pointer, or add with an OR (its low bits being zero), both of
 * which 4.9's verifier takes for an unbounded offset.
 */
static __always_inline __u64 sw_opaque(__u64 v)
{
	asm volatile("" : "+r"(v));
	return v;
}

/*
 * sw_emit() of head bytes, then n frames of 8 bytes, n at most max.  The
 * size is bounded after the last call before the output: clang may keep a
 * value that outlives a call on the BPF stack, and before 5.10 a scalar
 * filled from the stack has lost its bounds (4.19 keeps only pointers
 * there, 5.3 constants too), so a size bounded any earlier may reach the
 * helper unbounded on 4.19 and 5.4: "R5 min value is negative".
 */
static __always_inline void sw_emit_frames(void *ctx, void *rec,
					   const __u64 head, __u64 n,
					   const __u64 max)
{
	__u32 cpu = bpf_get_smp_processor_id();

	n = sw_bound(n, max);
	if (bpf_perf_event_output(ctx, &events, cpu, rec, head + n * 8))
		sw_lost(SW_LOST_OUTPUT);
}

/*
 * The numeric value of a pointer the verifier tracks (the stack, ctx).
 * Copying the spilled pointer with bpf_probe_read hands back plain bytes;
 * root may do that, and arithmetic on the result (masking a stack address
 * down to the stack's base) is then allowed.
 */
static __always_inline __u64 sw_ptr_value(void *p)
{
	void *slot = p;
	__u64 v = 0;

	bpf_probe_read(&v, sizeof(v), &slot);
	return v;
}

/* The program's own frame pointer (R10); the JIT maps it to %rbp. */
static __always_inline __u64 sw_frame_pointer(void)
{
	void *fp;

	asm volatile("%0 = r10" : "=r"(fp));
	return sw_ptr_value(fp);
}

/* Address of the user registers saved at kernel entry, from any address on
 * the current task's kernel stack. */
static __always_inline __u64 sw_user_regs(const struct sw_config *cfg,
					  __u64 stack_addr)
{
	__u64 top = (stack_addr | (cfg->thread_size - 1)) + 1;

	return top - cfg->stack_padding - SW_PT_REGS_SIZE;
}

/*
 * At a uprobe with a uframes rule: where its caller's return address is
 * (the walk reads it as at a function's entry), and the caller's %rbp in
 * *bp.  0 where the rule is missing, which no read there gets past.
 */
static __always_inline __u64 sw_uframe_sp(const struct pt_regs *ctx, __u64 *bp)
{
	__u32 key = PT_REGS_IP(ctx) & SW_UFRAME_PAGE, v;
	__u32 *rule = bpf_map_lookup_elem(&uframes, &key);
	__u64 sp = PT_REGS_SP(ctx);

	*bp = PT_REGS_FP(ctx);
	if (!rule || !(*rule & SW_UFRAME_RULE))
		return 0;
	v = *rule;
	if (v & SW_UFRAME_BP_SAVED)
		bpf_probe_read(bp, sizeof(*bp), (void *)(sp + SW_UFRAME_BP(v)));
	return sp + SW_UFRAME_RA(v);
}

/* -- COMMAND: track the threads a followed thread creates, drop exited ones. */
static __always_inline void sw_follow_child(__u32 child)
{
	__u32 parent = (__u32)bpf_get_current_pid_tgid();
	__u8 one = 1;

	if (!bpf_map_lookup_elem(&follow, &parent))
		return;
	if (bpf_map_update_elem(&follow, &child, &one, BPF_ANY))
		sw_lost(SW_LOST_FOLLOW_FULL);
}

/*
 * The child's id at sched_process_fork, from its perf event's record or,
 * where the frontend attached the program as a raw tracepoint
 * (task_pid_off set), from the child's task, the event's second argument.
 */
static __always_inline __u32 sw_fork_child(void *ctx, const struct sw_config *cfg)
{
	/*
	 * both read first: clang would pick the field's address by a branch,
	 * and 4.7-4.8 take no pointer into a map value but at a constant offset
	 */
	__u64 pid_off = sw_opaque(cfg->task_pid_off);
	__u64 child_off = sw_opaque(cfg->fork_child_off);
	__u64 task = 0;
	__u32 child = 0;

	if (!pid_off) {
		bpf_probe_read(&child, sizeof(child),
			       (void *)(sw_ptr_value(ctx) + child_off));
		return child;
	}
	bpf_probe_read(&task, sizeof(task), (void *)(sw_ptr_value(ctx) + 8));
	bpf_probe_read(&child, sizeof(child), (void *)(task + pid_off));
	return child;
}

static __always_inline void sw_follow_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (tid)
		bpf_map_delete_elem(&follow, &tid);
}

/*
 * What else a walker does with each child of fork its hooks see, where it
 * runs them without -- COMMAND too (walker.fork_hooks): bpf/cfi41.bpf.c's
 * lists.
 */
#ifndef SW_FORKED
#define SW_FORKED(child)	do { } while (0)
#endif

#define SW_FOLLOW_PROGRAMS()						\
SEC("tracepoint")							\
int sw_fork_tp(void *ctx)						\
{									\
	__u32 zero = 0, child;						\
	struct sw_config *cfg = bpf_map_lookup_elem(&config, &zero);	\
									\
	if (!cfg)							\
		return 0;						\
	child = sw_fork_child(ctx, cfg);				\
	sw_follow_child(child);						\
	SW_FORKED(child);						\
	return 0;							\
}									\
									\
SEC("kprobe")								\
int sw_fork_kretprobe(struct pt_regs *ctx)				\
{									\
	long child = PT_REGS_RC(ctx);					\
									\
	if (child > 0) {						\
		sw_follow_child(child);					\
		SW_FORKED(child);					\
	}								\
	return 0;							\
}									\
									\
/* wake_up_new_task(p): the child's id, before the child first runs */	\
SEC("kprobe")								\
int sw_fork_kprobe(struct pt_regs *ctx)					\
{									\
	__u32 zero = 0, child = 0;					\
	struct sw_config *cfg = bpf_map_lookup_elem(&config, &zero);	\
									\
	if (!cfg)							\
		return 0;						\
	bpf_probe_read(&child, sizeof(child),				\
		       (void *)(PT_REGS_PARM1(ctx) + cfg->task_pid_off));	\
	if (child) {							\
		sw_follow_child(child);					\
		SW_FORKED(child);					\
	}								\
	return 0;							\
}									\
									\
SEC("tracepoint")							\
int sw_exit_tp(void *ctx)						\
{									\
	sw_follow_exit();						\
	return 0;							\
}									\
									\
SEC("kprobe")								\
int sw_exit_kprobe(struct pt_regs *ctx)					\
{									\
	sw_follow_exit();						\
	return 0;							\
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";

#endif /* SW_COMMON_BPF_H */
