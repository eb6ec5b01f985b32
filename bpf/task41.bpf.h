/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * 4.1's stand-ins for the helpers 4.2 brought (the process, the CPU) and
 * the user registers a kernel event left, read from the task's kernel
 * stack with the offsets the frontend measured (src/task_calib.c).  For
 * the 4.1 programs of bpf/fp.bpf.c and bpf/cfi41.bpf.c; included after
 * common.bpf.h.
 */
#ifndef SW_TASK41_BPF_H
#define SW_TASK41_BPF_H

/*
 * 4.1 has no pid helper: the task is the first word of the thread_info at
 * the base of its kernel stack, taken where its task_struct.stack points
 * back there (else the probe ran on an interrupt's stack, and the process
 * is 0, unknown).  Its pid and tgid, as bpf_get_current_pid_tgid() gives
 * them, and its comm into h->comm where the key is by process; offsets
 * the frontend measured (src/task_calib.c).  No branch: see
 * sw_fp_kwalk_entry_m.
 */
static __always_inline __u64 fp_task41(const struct sw_config *cfg, __u64 sp,
				       struct sw_key_hdr *h, __u64 *tmp,
				       const int early)
{
	__u64 base = sp & ~((__u64)cfg->thread_size - 1), task, id, m;
	__u32 *comm = (__u32 *)h->comm;
	__u32 km = cfg->key_mask, so = 0, po = 0, co = 0;

	/*
	 * early: every field read before the first call, for a program that
	 * must not keep cfg past one (fp_kprobe_v41_p); late, where there is
	 * no stack for the fields (fp_kprobe_v41).
	 */
	if (early) {
		so = cfg->task_stack_off;
		po = cfg->task_pid_off;
		co = cfg->task_comm_off;
	}
	*tmp = 0;
	bpf_probe_read(tmp, 8, (void *)base);
	task = *tmp;
	*tmp = 0;
	bpf_probe_read(tmp, 8, (void *)(task + (early ? so : cfg->task_stack_off)));
	m = sw_mask_eq(*tmp, base);
	task &= m;
	*tmp = 0;
	bpf_probe_read(tmp, 8, (void *)(task + (early ? po : cfg->task_pid_off)));
	id = *tmp & m;
	bpf_probe_read(h->comm, sizeof(h->comm),
		       (void *)(task + (early ? co : cfg->task_comm_off)));
	h->tgid = (id >> 32) & km;
	comm[0] &= km & m;
	comm[1] &= km & m;
	comm[2] &= km & m;
	comm[3] &= km & m;
	return id;
}

/* 4.1: the CPU, from the thread_info at the kernel stack's base */
static __always_inline __u32 fp_cpu41(__u64 sp, __u32 thread_size, __u32 off,
				      __u64 *tmp)
{
	*tmp = 0;
	bpf_probe_read(tmp, 4, (void *)((sp & ~((__u64)thread_size - 1)) + off));
	return (__u32)*tmp;
}

/*
 * 4.1: the user's pc and frame pointer at kernel entry, from the registers
 * saved at regs; 0 where there are none (a kernel thread, an interrupt's
 * stack).  The syscall fast path leaves the saved %rbp stale: the user's
 * is then ubp, where the kernel chain left for user space.
 */
static __always_inline int fp_user_entry41(__u64 regs, __u64 ubp, __u64 *tmp,
					   __u64 *ip, __u64 *bp)
{
	__u64 m = ~sw_mask_eq(ubp, 0) & sw_mask_eq(ubp >> 47, 0);

	*tmp = 0;
	if (bpf_probe_read(tmp, 8, (void *)(regs + SW_PT_REGS_CS)) ||
	    *tmp != SW_USER_CS)
		return 0;
	*tmp = 0;
	bpf_probe_read(tmp, 8, (void *)(regs + SW_PT_REGS_IP));
	*ip = *tmp;
	*tmp = 0;
	bpf_probe_read(tmp, 8, (void *)(regs + SW_PT_REGS_BP));
	*bp = (ubp & m) | (*tmp & ~m);
	*tmp = 0;
	return 1;
}

#endif /* SW_TASK41_BPF_H */
