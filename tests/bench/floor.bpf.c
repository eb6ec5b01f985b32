// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The floors the walkers are measured against: a program that only
 * counts, and one that only takes the kernel and user stacks (into a
 * per-CPU buffer, kept nowhere).  Whatever a walker costs beyond the
 * second is its own.
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[2 * 127]);
} buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} n SEC(".maps");

static __always_inline int count(void)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&n, &zero);

	if (v)
		(*v)++;
	return 0;
}

static __always_inline int stacks(void *ctx)
{
	__u32 zero = 0;
	__u64 *b = bpf_map_lookup_elem(&buf, &zero);

	if (!b)
		return 0;
	bpf_get_stack(ctx, b, 127 * 8, 0);
	bpf_get_stack(ctx, b + 127, 127 * 8, BPF_F_USER_STACK);
	return 0;
}

SEC("tracepoint") int count_tp(void *ctx) { return count(); }
SEC("tracepoint") int stack_tp(void *ctx) { return stacks(ctx); }
SEC("kprobe") int count_up(struct pt_regs *ctx) { return count(); }
SEC("kprobe") int stack_up(struct pt_regs *ctx) { return stacks(ctx); }

char LICENSE[] SEC("license") = "GPL";
