// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * A uprobe on a function of the tool's own (src/vma_calib.c): each call
 * copies SW_PEEK_BYTES of kernel memory from its first argument's address
 * (0: the calling task's task_struct) into the map, where the frontend
 * looks for values it knows, to learn where a kernel without BTF keeps
 * the fields the cfi walker reads.  Nothing but the tool's own process
 * fires it.  4.1's reader (below) does the same for the fp walker.
 */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "stackwalk.h"

#define SW_PEEK_CHUNK	256

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_peek);
} peek SEC(".maps");

SEC("kprobe") int sw_peek(struct pt_regs *ctx)
{
	__u64 addr = PT_REGS_PARM1(ctx), task = bpf_get_current_task();
	__u32 zero = 0;
	struct sw_peek *v = bpf_map_lookup_elem(&peek, &zero);

	if (!v)
		return 0;
	if (!addr)
		addr = task;
	v->task = task;
	v->addr = addr;
	/* a chunk that cannot be read is left zeroed */
#pragma unroll
	for (int i = 0; i < SW_PEEK_BYTES / SW_PEEK_CHUNK; i++)
		bpf_probe_read(&v->b[i * SW_PEEK_CHUNK], SW_PEEK_CHUNK,
			       (void *)(addr + i * SW_PEEK_CHUNK));
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_peek41);
} peek41 SEC(".maps");

/*
 * 4.1 (src/task_calib.c): a kprobe on getpriority, which the tool calls
 * with SW_PEEK41_MAGIC (a "which" no kernel takes: EINVAL, nothing done),
 * an offset (into the task_struct, or with SW_PEEK41_BASE the stack's
 * base) and THREAD_SIZE.  4.1 has no helper to name the task, so it is
 * the first word of the thread_info at the base of the kernel stack;
 * 4.1's helpers write to the BPF stack only.
 */
SEC("kprobe") int sw_peek_v41(struct pt_regs *ctx)
{
	struct sw_peek41 v = {};
	__u32 zero = 0;

	if (PT_REGS_PARM1(ctx) != SW_PEEK41_MAGIC)
		return 0;
	v.base = PT_REGS_SP(ctx) & ~(PT_REGS_PARM3(ctx) - 1);
	bpf_probe_read(&v.task, 8, (void *)v.base);
	if (PT_REGS_PARM2(ctx) & SW_PEEK41_BASE)
		bpf_probe_read(v.b, sizeof(v.b), (void *)(v.base +
			       (PT_REGS_PARM2(ctx) & ~SW_PEEK41_BASE)));
	else
		bpf_probe_read(v.b, sizeof(v.b),
			       (void *)(v.task + PT_REGS_PARM2(ctx)));
	bpf_map_update_elem(&peek41, &zero, &v, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
