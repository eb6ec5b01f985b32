/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Types shared by the BPF walkers and the frontend.  Every walker counts
 * into a hash keyed by what identifies a stack; the frontend reads those
 * keys back, so the layouts here are the contract between the two sides.
 */
#ifndef STACKWALK_H
#define STACKWALK_H

#include <linux/types.h>

#define SW_COMM_LEN		16
/* perf's default kernel.perf_event_max_stack: the helpers never return more */
#define SW_MAX_FRAMES		127

/*
 * threads with walk state of their own at once (walk state per thread, a
 * few KB each, made at a thread's first event, gone when it exits)
 */
#define SW_WALK_THREADS		16384

/* threads of a -- COMMAND tracked at once: no option sizes the follow map */
#define SW_FOLLOW_MAX		65536

/*
 * A uprobe inside a function whose %rbp chain does not reach its caller
 * there (a frameless function, or one that has not set %rbp up yet): its
 * CFI row at the probe puts the return address, and maybe the caller's
 * saved %rbp, at fixed offsets from %rsp.  The frontend reads them and
 * keeps them in array map "uframes" (value __u32, 0: no rule), indexed by
 * the probe's offset in its page, the part of its address no load
 * address changes; the walkers without CFI take the caller from there.
 */
#define SW_UFRAME_PAGE		0xfffu	/* index: address & this */
#define SW_UFRAMES		(SW_UFRAME_PAGE + 1)
#define SW_UFRAME_RA(v)		((v) & 0xfffu)	/* return address at sp + this */
#define SW_UFRAME_BP(v)		(((v) >> 12) & 0xfffu) /* caller's %rbp at sp + this */
#define SW_UFRAME_BP_SAVED	(1u << 24)	/* else %rbp is still the caller's */
#define SW_UFRAME_RULE		(1u << 25)	/* set in every rule */

/* sw_config.flags */
#define SW_CFG_KSTACK		(1u << 0)	/* record kernel frames */
#define SW_CFG_USTACK		(1u << 1)	/* record user frames */
/* the kernel's unwinder skips the caller at a kprobe on a function entry */
#define SW_CFG_KENTRY		(1u << 2)
/* the kernel is built with frame pointers: kernel RBP walks mean something */
#define SW_CFG_KFP		(1u << 3)
/*
 * cfi, 5.17+ (or 6.1+ without BTF): a PC no process list holds is looked
 * up by its VMA's file
 */
#define SW_CFG_VMA		(1u << 4)
/*
 * 4.18-5.16 (cfi): a process's list is built in BPF from its VMAs at exec
 * and after each mmap of code, from the files' tables (bpf/cfi.bpf.c)
 */
#define SW_CFG_VMA_LIST		(1u << 5)
/*
 * cfi without bpf_get_stack, a kernel with the syscall fast path (4.14):
 * a kprobe's user %rbp is where the kernel's frame chain ends, as the
 * saved registers hold a stale one
 */
#define SW_CFG_UBP_CHAIN	(1u << 6)
/*
 * cfi without bpf_get_stack (4.9-4.17): each kprobe and uprobe target
 * has sw_config.cfl_carries more probes, each of which carries on a walk
 * that the chain before it ran out of tail calls for
 */
#define SW_CFG_CFL_CARRY	(1u << 7)

/*
 * Where bpf_find_vma's callback finds a VMA's range and file, and a file's
 * inode: field offsets from the kernel's BTF, which differ between builds.
 * Before 5.17 (SW_CFG_VMA_LIST) also where a task's VMAs are listed
 * (task_struct.mm, mm_struct.mmap, vm_area_struct.vm_next, and vm_flags
 * for which of them hold code); 6.1+ without BTF, task_struct.mm and
 * the root of mm_struct's maple tree of VMAs, in mm_mmap's place: from
 * BTF, or measured on our own process where the kernel has none
 * (src/vma_calib.c).
 * i_generation 0: not known, and not compared.  mm_vdso (mm_struct's
 * context.vdso, where the vDSO starts; measured on our own process, 0 if
 * not found): the VMA-list build gives the vDSO the table the frontend
 * keeps for it under file key 0.
 */
struct sw_vma_offs {
	__u32 vm_start, vm_end, vm_pgoff, vm_file;
	__u32 f_inode, i_ino, i_sb, i_generation, s_dev;
	__u32 task_mm, mm_mmap, vm_next, vm_flags;
	__u32 mm_vdso, pad;
};

/* Array map "peek", one element: what bpf/peek.bpf.c copied. */
#define SW_PEEK_BYTES	4096
struct sw_peek {
	__u64 task;		/* the task that fired it */
	__u64 addr;		/* where the bytes were read */
	__u8 b[SW_PEEK_BYTES];
};

/*
 * Array map "peek41", one element: 4.1's reader (bpf/peek.bpf.c) copies a
 * chunk of the calling task's task_struct, which it finds through the
 * thread_info at the base of its kernel stack, or (SW_PEEK41_BASE in the
 * offset) of the thread_info itself; a 4.1 map update takes its value
 * from the BPF stack only, so a chunk fits there.
 */
#define SW_PEEK41_BYTES	256
#define SW_PEEK41_MAGIC	0x53774b31	/* getpriority's first argument */
#define SW_PEEK41_BASE	0x80000000u
struct sw_peek41 {
	__u64 base;		/* the kernel stack's base */
	__u64 task;		/* thread_info's first word there */
	__u8 b[SW_PEEK41_BYTES];
};

/*
 * Array map "config", one element: all run-time choices of a walker.
 * Filters are masks rather than flags so that a check is one compare that
 * either passes or leaves the program: no path rejoins, which keeps the
 * paths a 4.x verifier walks linear (see gen/walker.py).
 */
struct sw_config {
	__u32 flags;
	__u32 tgid;		/* -p: only this process ... */
	__u32 tgid_mask;	/* ... when ~0 */
	__u32 cpu;		/* -c: only this CPU ... */
	__u32 cpu_mask;		/* ... when ~0 */
	__u32 key_mask;		/* ~0: key by process (tgid and comm) */
	__u32 follow_mask;	/* ~0: only threads in the follow map */
	__u32 follow_root;	/* the followed command: passes without a lookup */
	/*
	 * Where the user registers sit below the top of a task's kernel
	 * stack: THREAD_SIZE and TOP_OF_KERNEL_STACK_PADDING differ between
	 * kernel builds, so the frontend measures them.
	 */
	__u32 thread_size;
	__u32 stack_padding;
	/*
	 * task_struct.stack, where the kernel stack holding those registers
	 * begins (0: unknown): from 6.13 a program may run on a stack of its
	 * own, and its frame pointer then finds nothing.
	 */
	__u32 task_stack_off;
	/* sched_process_fork's child_pid moved between kernels: 44, then 20 */
	__u32 fork_child_off;
	__u32 task_pid_off;	/* task_struct.pid, for its raw tracepoint */
	/*
	 * 4.1, which has no pid or comm helper: the task is the first word of
	 * the thread_info at the base of its kernel stack, checked by its
	 * task_struct.stack (task_stack_off), and the frontend measured where
	 * task_struct keeps pid, tgid and comm (task_pid_off, task_comm_off).
	 */
	__u32 task_comm_off;
	__u32 ti_cpu_off;	/* 4.1: thread_info.cpu, from the stack's base */
	/* stacksnoop on 4.1-4.3: tags our trace_printk lines in trace_pipe */
	__u32 magic;
	/*
	 * Where the JIT's frame (saved %rbp, return address) sits above the
	 * BPF frame pointer: 4.12-4.17 JITs keep callee-saved registers there.
	 */
	__u32 jit_frame_off;
	/*
	 * ret_from_fork, where every task's kernel stack begins: a walk ends
	 * at a return into it, as what lies beyond is no frame (a kernel
	 * thread's %rbp there holds its argument).  Its size << 32 | the low
	 * half of its address (see gen/walker.py).
	 */
	__u64 root;
	struct sw_vma_offs vma;	/* SW_CFG_VMA */
	/*
	 * The frames the kernel's unwinder gives a side at most: the least of
	 * 127 and perf_event_max_stack.  A side that fills them may go on
	 * past them, and is marked cut (SW_STOP_DEPTH): a stack of exactly
	 * that many frames cannot be told from a deeper one.
	 */
	__u32 stack_full;
	/* SW_CFG_CFL_CARRY: the probes that carry a walk on, a target */
	__u32 cfl_carries;
};

/*
 * Array map "lost": events whose stack could not be recorded, by cause,
 * the one table of them: X(cause, its --json key, how the end-of-run line
 * says it, NULL where it is said on a line of its own).
 */
#define SW_LOST_CAUSES(X)						\
	/* the counts hash is full */					\
	X(SW_LOST_COUNTS_FULL, "counts_map_full", "to a full counts map") \
	/* stackmap: another kernel stack holds the id */		\
	X(SW_LOST_KCOLLISION, "kernel_stack_collisions",		\
	  "to kernel stack id collisions")				\
	/* stackmap: another user stack holds the id */			\
	X(SW_LOST_UCOLLISION, "user_stack_collisions",			\
	  "to user stack id collisions")				\
	/* stackmap: no free stack slot */				\
	X(SW_LOST_STACKMAP_FULL, "stack_map_full", "to a full stack map") \
	/* a child of a followed process was not tracked */		\
	X(SW_LOST_FOLLOW_FULL, "follow_map_full",			\
	  "as children the follow map had no room for")			\
	/* perf buffer full (stacksnoop) */				\
	X(SW_LOST_OUTPUT, "perf_buffer_full", "to a full perf buffer")	\
	/* a walk's next program (fp's user walk, cfi's next frames) */	\
	X(SW_LOST_TAILCALL, "tail_call_failed", "to a failed tail call") \
	/* getstack, small keys: no room for a chunk */			\
	X(SW_LOST_CHUNKS_FULL, "chunk_map_full", "to a full chunk map")	\
	/* fp: a 32-bit task's 4-byte frames, not walked */		\
	X(SW_LOST_IA32, "ia32_not_walked", NULL)			\
	/* cfi: the process had no unwind tables (yet): fp steps */	\
	X(SW_LOST_NO_TABLE, "user_stacks_without_tables", NULL)	\
	/* cfi: a walk ended where it could not go on right */		\
	X(SW_LOST_CUT, "user_stacks_cut", NULL)				\
	/* cfi: a VMA looked up while its map changed: fp steps */	\
	X(SW_LOST_VMA_BUSY, "user_stacks_vma_busy", NULL)		\
	/* walk state per thread: no room for this thread's */		\
	X(SW_LOST_WALKS_FULL, "walk_state_map_full",			\
	  "as threads the walk state map had no room for")		\
	/* cfi, 4.9-4.17: a uprobe's walk no probe carried on */	\
	X(SW_LOST_CARRY, "walks_not_carried_on",			\
	  "as walks whose thread moved to another CPU between a "	\
	  "uprobe's programs")						\
	/* the kernel skipped the program (frontend; 4.1's cfi: BPF) */	\
	X(SW_LOST_SKIPPED, "skipped_by_kernel",				\
	  "skipped by the kernel, which runs no tracing program inside "	\
	  "another on one CPU, nor a kprobe one during a BPF map syscall") \
	/* not in the map: the same of the fork, exec and exit programs */ \
	X(SW_LOST_HOOKS_SKIPPED, "process_hooks_skipped_by_kernel", NULL)

#define SW_LOST_ENUM(cause, key, what) cause,
enum sw_lost {
	SW_LOST_CAUSES(SW_LOST_ENUM)
	SW_LOST_NR,
};
#undef SW_LOST_ENUM

/* Why a frame-pointer walk ended (key.kstop / key.ustop). */
enum sw_stop {
	SW_STOP_NONE,		/* not walked */
	SW_STOP_END,		/* frame pointer 0: the outermost frame */
	SW_STOP_UNREADABLE,	/* a frame could not be read */
	SW_STOP_LEFT_KERNEL,	/* the return address is not kernel text */
	SW_STOP_DEPTH,		/* out of key slots: the stack is deeper */
	SW_STOP_NO_USER,	/* no user registers (kernel thread, IRQ) */
	SW_STOP_ROOT,		/* returned into ret_from_fork: the first frame */
	SW_STOP_NO_TABLE,	/* cfi: no tables for the process, fp steps */
	SW_STOP_CUT,		/* cfi: CFI it cannot follow, or a CFA not above
				   the frame's own %rsp */
	SW_STOP_NR,
};

/*
 * cfi walker: how each user frame was found, in the bits of its address
 * that no user address uses; the frontend takes them out again.
 */
#define SW_HOW_SHIFT	60
#define SW_HOW_MASK	(3ULL << SW_HOW_SHIFT)
enum sw_how {
	SW_HOW_REGS,		/* the registers where the event fired */
	SW_HOW_CFI,		/* the unwind table's rule at the frame's PC */
	SW_HOW_FP,		/* no rule there: a frame-pointer step */
	SW_HOW_SIGNAL,		/* the registers a signal frame saved */
};

/* Every key starts with this; tgid 0 and empty comm when not per process. */
struct sw_key_hdr {
	__u32 tgid;
	__u8 kstop;
	__u8 ustop;
	__u8 nk, nu;		/* getstack: kernel, then user frames */
	char comm[SW_COMM_LEN];
};

/* stacksnoop: each event is this, then the walker's key (or explain record). */
struct sw_event_hdr {
	__u64 ts;		/* bpf_ktime_get_ns() */
	__u32 tid;
	__u32 cpu;
};

/*
 * What a getstack or cfi program does with the stack, and where its walk
 * keeps its state meanwhile; also the cfi walk's slot in its tail-call
 * maps.  The CPU's scratch maps hold it where nothing else runs on the CPU
 * until the program, and the programs it tail-calls, are done.  Not so on
 * a kernel that preempts uprobe programs (6.0+, see struct sw_features):
 * there the _T modes keep it in the thread's own entry of the walks map.
 * Small keys are 4.18-5.10 only, so always per CPU.
 */
enum sw_gs_mode {
	SW_GS_COUNT,
	SW_GS_EMIT,
	SW_GS_SMALL,		/* counting with small keys */
	SW_GS_LEGACY,		/* cfi counting without bpf_get_stack */
	SW_GS_COUNT_T,
	SW_GS_EMIT_T,
	SW_GS_MODES,
};

/*
 * getstack: raw frames from bpf_get_stack, kernel then user, packed.  A
 * key is hashed and compared whole on every event, so the counts live in
 * maps by size: a stack of n frames goes to the first class that holds n,
 * and its key is only that long.
 */
#define SW_GS_FRAMES	(2 * SW_MAX_FRAMES + 2)	/* + the entry callers */
#define SW_GS_CLASSES	6
#define SW_GS_CLASS(i)	((i) < 5 ? 4 << (i) : SW_GS_FRAMES)
struct sw_gs_key {
	struct sw_key_hdr h;
	__u64 ip[SW_GS_FRAMES];
};

/*
 * getstack where hash keys are at most 512 bytes (MAX_BPF_STACK, before
 * 5.11): each side of a stack is interned as a chain of chunks of frames.
 * Chunk j's key holds the id of chunk j-1 (0 for the first) and its
 * frames, zero-padded; a side is known by its last chunk's id (0: no
 * frames).  Equal frames and parent give the equal key, hence the same
 * id: the counts key stays exact however deep the stacks.
 */
#define SW_GSC_FRAMES	63	/* + the parent: 512 bytes */
#define SW_GSC_CHUNKS	3	/* enough for 127 frames and an entry caller */
struct sw_gsc_chunk {
	__u64 parent;
	__u64 ip[SW_GSC_FRAMES];
};

/* the counts key: h.nk and h.nu say how many frames each side has */
struct sw_gsc_key {
	struct sw_key_hdr h;
	__u64 kid, uid;
};

/*
 * cfi where there is no bpf_get_stack (4.9-4.17): the kernel side as the
 * stackmap walker keeps it (its id, the caller at a kprobe's entry), the
 * user frames the walk found in the key itself.  4.9-4.15 take a map
 * helper's key only from the BPF stack, so the whole key is copied there
 * before it is counted: it leaves room for the program's other locals.
 * Where a walk is carried on (SW_CFG_CFL_CARRY) a user side deeper than
 * the key's frames is interned SW_CFL_FRAMES frames at a time, leaf first,
 * as a chain of chunks: uid is the id of the chunk of the frames just
 * before those in ip[] (0: none), each chunk's parent the one before it,
 * and h.nu counts them all: ip[] holds the last nu - SW_CFL_FRAMES * c,
 * where c = (nu - 1) / SW_CFL_FRAMES chunks hold the rest.  Elsewhere a
 * deeper side is cut there, marked and counted (SW_STOP_DEPTH).
 */
#define SW_CFL_FRAMES	48
/* before 4.14: a frame a walk program, 30 programs (bpf/cfi.bpf.c) */
#define SW_CFL_FRAMES_EARLY	30
struct sw_cfl_key {
	struct sw_key_hdr h;
	__s32 kid;
	__u32 pad;
	__u64 kcaller;
	__u64 uid;
	__u64 ip[SW_CFL_FRAMES];
};

/*
 * A chunk as interned ("chunks_cfl": chunk -> id) and as the frontend
 * finds it by id ("chunk_ids_cfl": id -> chunk)
 */
struct sw_cfl_chunk {
	__u64 parent;
	__u64 ip[SW_CFL_FRAMES];
};

/*
 * stackmap: ids into the BPF_STACK_TRACE map, and the caller read at a
 * function-entry probe, which the kernel's unwinder may skip.
 */
struct sw_sm_key {
	struct sw_key_hdr h;
	__s32 kid;
	__s32 uid;
	__u64 kcaller;
	__u64 ucaller;
};

#endif /* STACKWALK_H */
