/* SPDX-License-Identifier: MIT */
/*
 * What the running kernel offers, probed once at start; the walker and the
 * attach method follow from it.  A forced legacy mode masks the table down
 * to what an old release had, so the old code paths run on any kernel.
 */
#ifndef SW_KFEATURES_H
#define SW_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <limits.h>
#include <linux/types.h>

#define SW_KVERSION(a, b, c) (((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))

enum sw_unwinder {
	SW_UNWINDER_UNKNOWN,
	SW_UNWINDER_FP,		/* frame pointers: RBP walks work */
	SW_UNWINDER_ORC,	/* no frame pointers */
	SW_UNWINDER_GUESS,	/* neither: the kernel guesses from the stack */
};

struct sw_features {
	__u32 version;		/* LINUX_VERSION_CODE, as kprobe loads need it */
	char release[65];
	__u32 legacy;		/* emulated release (0: none) */
	bool kept;		/* what holds for the boot was kept by an earlier run */

	bool bpf;		/* bpf() works at all */
	bool prog_kprobe, prog_tracepoint;
	bool helper_pid, helper_comm, helper_cpu, helper_tail_call, helper_output;
	bool helper_stackid, helper_get_stack;
	/* get_current_task (4.8): probed only where get_stack is missing */
	bool helper_current_task;
	bool map_stack_trace, map_percpu, map_perf_array, map_prog_array;
	/* a pointer into a map value moved by an offset, fixed or bounded (4.9) */
	bool map_value_offsets;
	bool map_big_keys;	/* hash keys over 512 bytes (5.11) */
	bool map_mmap;		/* array maps user space can mmap (5.5) */
	bool small_keys_forced;	/* STACKWALK_SMALL_KEYS=1 cleared it */
	bool no_find_vma_forced; /* STACKWALK_NO_FIND_VMA=1 cleared helper_find_vma */
	bool walk_state_forced;	/* STACKWALK_WALK_STATE set walk_per_task */

	bool kprobes, uprobes;	/* BPF can run on these probe kinds */
	bool prog_syscall_tp;	/* BPF on syscalls:* tracepoints (4.14) */
	bool prog_raw_tp;	/* raw tracepoints (4.17) */
	/*
	 * The syscall fast path (gone in 4.16, and from later 4.9 and 4.14
	 * stable releases) leaves %rbp stale in the saved user registers.
	 */
	bool syscall_fastpath;
	bool pmu_kprobe, pmu_uprobe; /* attachable without tracefs (4.17) */
	bool uprobe_ref_ctr;	/* the kernel bumps USDT semaphores (4.20) */
	/*
	 * One BPF link attaches many uprobes, or many kernel functions'
	 * entries (where the kernel has fprobe): see struct sw_multi.
	 */
	bool link_uprobe_multi, link_kprobe_multi;
	bool no_links_forced;	/* STACKWALK_NO_LINKS=1 cleared both */
	/* STACKWALK_NO_VMA_LISTS=1: lists never built in BPF (src/walker_cfi.c) */
	bool no_vma_lists_forced;
	int kprobe_pmu_type, uprobe_pmu_type;
	int uprobe_ref_ctr_shift;

	enum sw_unwinder unwinder;
	char unwinder_why[160];
	bool btf, jit;
	bool memlock_ok;	/* RLIMIT_MEMLOCK raised (or not needed) */
	__u32 thread_size, stack_padding;
	__u32 task_stack_off;	/* task_struct.stack, from BTF; 0: unknown */
	__u32 task_pid_off;	/* task_struct.pid, from BTF; 0: unknown */
	/*
	 * The VMA of an address, its file, found in BPF (5.17): the fields
	 * read, from BTF, in struct sw_vma_offs's order; vma_ok: the first
	 * SW_VMA_FILE_FIELDS found; vma_list_ok: all, where a task's VMAs
	 * are still a list (before 6.1).
	 */
	bool helper_find_vma;
	bool helper_loop;	/* bpf_loop (5.17) */
#define SW_VMA_FILE_FIELDS	9
#define SW_VMA_FIELDS	13
	__u32 vma_off[SW_VMA_FIELDS];
	bool vma_ok, vma_list_ok;
	__u32 jit_frame_off;	/* see struct sw_config */
	/*
	 * The frames the kernel's unwinder hands a BPF program at most: the
	 * sysctl perf_event_max_stack (4.8+); 0: none, so 127.
	 */
	__u32 max_stack;
	/*
	 * 6.0+ runs uprobe programs with migration, not preemption, disabled
	 * (so that they may sleep): on a kernel that preempts, another task
	 * can run on the CPU in the middle of one, or between its tail calls,
	 * and use the CPU's scratch maps.  Then a walk keeps its state in its
	 * thread's own map entry (bpf/getstack.bpf.h).  preempt_why: how the
	 * preemption model was learned.
	 */
	bool uprobe_preemptible;
	bool walk_per_task;
	char preempt_why[96];
	char tracefs[PATH_MAX];	/* "" until sw_tracefs() mounts or finds it */
};

/* Whether the kernel has a text symbol of that name (kallsyms). */
typedef bool (*sw_has_ksym_fn)(void *ctx, const char *name);
/*
 * Where the answers that hold until the kernel boots again (its program,
 * helper, map and link types, PMUs, BTF offsets, config and kallsyms
 * answers: all of the probing but 0.2 ms of sysctls and mounts) are kept
 * between runs: load fills len bytes that store kept under the same key,
 * or says there are none.
 */
struct sw_keep {
	bool (*load)(void *ctx, const void *key, size_t keylen, void *buf,
		     size_t len);
	void (*store)(void *ctx, const void *key, size_t keylen,
		      const void *buf, size_t len);
	void *ctx;
};
/*
 * What the kernel offers, read without changing anything: tracefs only
 * if mounted, RLIMIT_MEMLOCK as it is; has (or NULL) answers what only
 * kallsyms tells, on kernels before 4.16 or with no config; keep (or
 * NULL) keeps what holds for the boot.
 */
int kfeatures_probe(struct sw_features *f, __u32 legacy, sw_has_ksym_fn has,
		      void *ctx, const struct sw_keep *keep);
/*
 * When tracing starts: raise RLIMIT_MEMLOCK, mount tracefs (or debugfs)
 * if it is not, and see what that shows.  -ENOENT if no tracefs.
 */
int kfeatures_prepare(struct sw_features *f);
/* Behave as if hash keys were limited to 512 bytes (4.18-5.10). */
void kfeatures_force_small_keys(struct sw_features *f);
/* Attach every probe alone, as before multi-probe links. */
void kfeatures_force_no_links(struct sw_features *f);
void kfeatures_force_no_vma_lists(struct sw_features *f);
/* Walk as if bpf_find_vma were missing (4.18-5.16). */
void kfeatures_force_no_find_vma(struct sw_features *f);
/* Keep each walk's state per thread (true) or per CPU, whatever the kernel. */
void kfeatures_force_walk_state(struct sw_features *f, bool per_task);
void kfeatures_print(const struct sw_features *f, FILE *out);
int kversion_parse(const char *s, __u32 *code);

/* LINUX_VERSION_CODE of the running kernel, seeing through distro labels. */
int kversion_running(__u32 *code, char *release, size_t len);
/* The same from /proc/version_signature (or NULL), uname -r and uname -v. */
int kversion_of(const char *signature, const char *release,
		  const char *uts_version, __u32 *code);

#endif
