/* SPDX-License-Identifier: MIT */
/*
 * 4.1 gives a kprobe program no helper that names the current process.
 * The task is still found from the program's stack, the thread_info at the
 * base of the kernel stack holding it; where the task_struct keeps the
 * process's ids and name is measured here, on a thread of our own.
 */
#ifndef SW_TASK_CALIB_H
#define SW_TASK_CALIB_H

#include <linux/types.h>
#include "../compat/kfeatures.h"

struct sw_task_offs {
	__u32 stack;	/* task_struct.stack: the base it was found from */
	__u32 pid;	/* task_struct.pid, then tgid */
	__u32 comm;	/* task_struct.comm */
	__u32 cpu;	/* thread_info.cpu, from the stack's base; 0: one CPU */
};

/*
 * Fires bpf/peek.bpf.c's 4.1 reader (a kprobe on getpriority, attached
 * and removed here) on a thread of ours and then on the calling thread.
 * Returns 0 and the offsets, -ENOENT when a field is not where the two
 * agree (a kernel whose stacks hold no thread_info: 4.9+), or -errno of
 * the step that failed.
 */
int task_calib(const struct sw_features *f, struct sw_task_offs *out);

#endif
