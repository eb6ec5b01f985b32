/* SPDX-License-Identifier: MIT */
/*
 * The stack walkers, each a descriptor in a file of its own
 * (walker_cfi.c, walker_cfi41.c, walker_getstack.c, walker_stackmap.c,
 * walker_fp.c): what it needs from
 * the kernel and why it refuses, its BPF object, its programs by role
 * (skeleton fields, so that a missing one fails to compile), how its keys
 * become frames.  `auto` is the first of walkers_auto that runs.  The
 * mechanics every walker shares (load, attach, read, detach) are in
 * walker.c and its siblings, through struct walker (walker_int.h).
 */
#ifndef SW_WALKERS_H
#define SW_WALKERS_H

#include <stdbool.h>
#include <stddef.h>
#include "../compat/kfeatures.h"
#include "probe.h"

enum sw_walker {
	SW_WALKER_AUTO,
	SW_WALKER_FP,
	SW_WALKER_STACKMAP,
	SW_WALKER_GETSTACK,
	SW_WALKER_CFI,
};

/* What a run asks of a walker, as far as its choice goes. */
struct walker_need {
	bool kernel_event;	/* a kprobe or a tracepoint */
	bool tracepoint;
	bool syscall_tp;	/* a syscalls:* tracepoint: the slow path's */
	bool kstack, ustack;
	bool explain;		/* stacksnoop --explain */
	bool events;		/* stacksnoop: each event sent, not counted */
	/*
	 * Without a CPU helper for kprobes (4.1): an event's CPU not known
	 * (measured on two CPUs), and more than one; the task at the kernel
	 * stack's base not found (src/task_calib.c)
	 */
	bool no_cpu;
	bool no_task;
};

struct walker;
struct key_frames;
struct bpf_program;

struct walker_desc {
	enum sw_walker kind;
	const char *name;
	bool tail_calls;	/* its programs tail-call one another */
	/*
	 * for kernels the cfi walker cannot run on (4.1-4.8: no stack maps,
	 * per-CPU maps or bpf_get_current_task) only, in its kind's place
	 */
	bool stand_in;
	/* ... and all can be loaded for uprobe_multi links (choose_multi) */
	bool multi_tails;
	/*
	 * Which uframes rules (uframe.h) its SW_ROLE_USHIFT programs take:
	 * none (it has CFI of its own), those that leave %rbp the caller's
	 * (the kernel's unwinder walks on from %rbp), or all.
	 */
	enum { SW_UFRAMES_NONE, SW_UFRAMES_RBP_KEPT, SW_UFRAMES_ALL } uframes;
	/*
	 * Why it cannot run here for n, as the whole error line (without the
	 * tool's name) into msg; false if it can.  n NULL: in general.
	 */
	bool (*refuse)(const struct sw_features *f, const struct walker_need *n,
		       char *msg, size_t len);
	/* Why auto picks it here, as --debug and --kernel-features say. */
	const char *(*why)(const struct sw_features *f, const struct walker_need *n);
	/* Open its BPF object into w: obj, skel and the maps it has. */
	int (*open)(struct walker *w);
	void (*destroy)(struct walker *w);
	/* The program for a target's role; uentry: it reads the caller at %rsp. */
	struct bpf_program *(*prog)(const struct walker *w, enum sw_role role,
				    bool uentry);
	/* The hooks below may be NULL: nothing to do. */
	/* Its own programs and maps besides the targets', on or off. */
	void (*choose)(struct walker *w);
	/* After loading: what the kernel side needs before the first event. */
	int (*loaded)(struct walker *w);
	/* Its own programs' probes, before the targets'. */
	int (*attach)(struct walker *w);
	/*
	 * Probes of its own on a target, made just before and just after the
	 * target's: a function's probes run newest first (4.1's kprobe list).
	 */
	int (*before_target)(struct walker *w, const struct sw_target *tg);
	int (*after_target)(struct walker *w, const struct sw_target *tg);
	/* The counting program a calibration fires; NULL: it never calibrates. */
	struct bpf_program *(*calib_prog)(const struct walker *w);
	/* Before the counts are read: once per read. */
	int (*read_begin)(struct walker *w);
	/* A key's frames; counted: a key of a counts map, not an event's. */
	void (*key_frames)(struct walker *w, const void *key, bool counted,
			   struct key_frames *f);
};

extern const struct walker_desc walker_cfi, walker_cfi41, walker_getstack,
				 walker_stackmap, walker_fp;

/* The kernel has what the cfi walker needs (4.9+); else walker_cfi41 stands in. */
bool walker_cfi_runs(const struct sw_features *f);
/*
 * walker_cfi41 goes on by tail calls, with 4.2's helpers for the process
 * and CPU (and so follows forks); else it is 4.1's one program.
 */
bool walker_cfi41_chained(const struct sw_features *f);

/* The walker of that kind for this kernel (4.1 has a cfi walker of its own). */
const struct walker_desc *walkers_get(const struct sw_features *f,
				      enum sw_walker kind);
const char *walkers_name(enum sw_walker kind);
int walkers_parse(const char *s, enum sw_walker *kind);
/*
 * The walker auto picks, and why; n NULL: in general.  after: the first
 * after that one in auto's order (one that failed to load); NULL: from the
 * start.  NULL if none can run, with the last one's refusal in msg.
 */
const struct walker_desc *walkers_pick(const struct sw_features *f,
				       const struct walker_need *n,
				       const struct walker_desc *after,
				       const char **why, char *msg, size_t len);

/*
 * stacksnoop --explain's walker for asked: cfi, whose user frames show
 * their unwind rules, where it runs, else fp, whose reads show; and why.
 * 0, or the error line in msg and 1 (the kernel) or 2 (a usage error).
 */
int walkers_explain(const struct sw_features *f, enum sw_walker asked,
		    bool kprobe, enum sw_walker *kind, const char **why,
		    char *msg, size_t len);

/* For a descriptor's refuse(): "--walker NAME: WHY; use --walker auto". */
bool walkers_refused(const struct walker_desc *d, const char *why, char *msg,
		     size_t len);
/*
 * For the walkers that leave the walk to the kernel's unwinders: has, the
 * helpers it needs, or what it lacks.
 */
bool walkers_refuse_helper(const struct walker_desc *d,
			   const struct sw_features *f,
			   const struct walker_need *n, bool has,
			   const char *lacks, char *msg, size_t len);

#endif
