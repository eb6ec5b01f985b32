/* SPDX-License-Identifier: MIT */
/*
 * One stack walker, loaded and configured: the getstack, stackmap or fp
 * BPF object, whichever the kernel (or --walker) calls for, attached to a
 * set of probes, and read back as walker-neutral stacks.
 */
#ifndef SW_WALKER_H
#define SW_WALKER_H

#include <stdbool.h>
#include <sys/types.h>
#include "../bpf/stackwalk.h"
#include "../compat/kfeatures.h"
#include "probe.h"
#include "task_calib.h"
#include "walkers.h"

/* Where stacks go: counted in the kernel, or one by one to user space. */
enum walker_sink {
	SINK_COUNT,		/* stackcount */
	SINK_EMIT,		/* stacksnoop: perf_event_output (4.4+) */
	SINK_PRINTK,		/* stacksnoop: trace_printk lines (4.1-4.3) */
	SINK_EXPLAIN,		/* stacksnoop --explain: fp walks, every frame pointer */
};

struct walker_opts {
	enum sw_walker kind;	/* not AUTO */
	enum walker_sink sink;
	bool kstack, ustack;
	bool per_process;	/* key by tgid and comm */
	pid_t pid;		/* -p, 0: any */
	/*
	 * For the tests (STACKWALK_ATTACH_STOP=N): stop the process (SIGSTOP)
	 * once N targets are attached, so that a signal can be sent while the
	 * rest are not yet; 0: never.
	 */
	unsigned stop_after;
	int cpu;		/* -c, -1: any */
	bool follow;		/* -- COMMAND: only threads in the follow map */
	__u32 storage;		/* max unique stacks (and stack map size) */
	__u32 unwind_mb;	/* cfi: MiB for the unwind-table rows the kernel holds */
	/* bytes the maps storage sizes may grow to at most; 0: no bound */
	__u64 map_limit;
	/* the kernel's symbols, read once by the caller; NULL: unreadable */
	struct ksyms *(*kernel_symbols)(void *ctx);
	void *ksyms_ctx;
	/*
	 * Run in a thread of its own while the kernel checks the programs
	 * (NULL: none): the maps user space fills (the cfi walker's unwind
	 * tables) are created first, so that filling them takes no time of
	 * its own.  It may use only those maps' fds (walker_cfi_fds).  Its
	 * error is walker_open's when the load succeeds.
	 */
	int (*beside_load)(void *ctx, const struct walker *w);
	void *beside_ctx;
	/*
	 * cfi: its rows map made already, zeroing its megabytes while the
	 * kernel was probed (-1: none): taken if it is the one the walker
	 * would make (type, sizes, flags), else left alone.
	 */
	int rows_fd;
	/* 4.1: where task_struct keeps the ids (src/task_calib.c); 0: unmeasured */
	struct sw_task_offs task41;
};

/* cfi: how each user frame was found, SW_HOW_* in 2 bits a frame */
#define SW_HOW_WORDS	((SW_MAX_FRAMES + 1 + 31) / 32)

static inline unsigned int sw_how_get(const __u64 *how, size_t i)
{
	return how[i / 32] >> (2 * (i % 32)) & 3;
}

static inline void sw_how_set(__u64 *how, size_t i, unsigned int v)
{
	how[i / 32] |= (__u64)v << (2 * (i % 32));
}

/* A counted stack, whatever walker produced it. */
struct sw_stack {
	__u32 tgid;
	char comm[SW_COMM_LEN];
	__u64 count;
	__u8 kstop, ustop;
	__u16 nk, nu;
	/* frame 0 is where the event fired; the rest are return addresses */
	__u64 *kip, *uip;
	bool kframe0_is_return;	/* tracepoint kernel stacks start at a caller */
	bool has_how;		/* uhow says how each user frame was found */
	__u64 uhow[SW_HOW_WORDS];
};

/* stacksnoop: one event, whatever walker and delivery produced it. */
struct sw_event {
	__u64 ts;		/* ns: CLOCK_MONOTONIC, or the trace clock */
	__u32 tid, cpu;
	struct sw_stack stack;	/* tgid, comm, frames */
	__u64 frames[2 * SW_MAX_FRAMES + 2];
	const void *explain;	/* --explain: a struct sw_fp_explain */
};

typedef void (*sw_event_fn)(const struct sw_event *ev, void *ctx);

struct sw_stacks {
	struct sw_stack *v;
	size_t n, cap;
	__u64 *frames;		/* backing store for kip/uip */
};

struct walker;
struct ksyms;

/* Whether the threads a process starts can be followed from the kernel. */
bool walker_can_follow(const struct sw_features *f);
/* cfi: whether BPF finds processes' mappings from their VMAs (any kernel). */
bool walker_finds_vmas(const struct walker *w);
/* cfi: whether BPF builds each process's list of mappings (4.18-5.16). */
bool walker_builds_lists(const struct walker *w);
/* --debug: that, and the fields it reads (nothing where it is not so). */
void walker_print_lists(const struct walker *w, FILE *out);
/*
 * -E2BIG when the maps storage sizes could grow past map_limit: then
 * *map_bytes says how far.
 */
int walker_open(struct walker **out, const struct sw_features *f,
		 const struct walker_opts *o, const struct sw_targets *t,
		 __u64 *map_bytes);
/*
 * Attach every target, each one's error in its attach_err.  Of several, a
 * target the kernel refuses is skipped (see walker.c).  Returns 0 if
 * every target that is not skipped attached, or -errno; *failed is then
 * the target that failed, or NULL if none did (the follow probes).
 */
int walker_attach(struct walker *w, struct sw_targets *t,
		   const struct sw_target **failed);
/*
 * The cfi walker's unwind-table maps (bpf/cfi.h): -ENOENT for another
 * walker.
 */
int walker_cfi_fds(const struct walker *w, int *rows, int *procs, int *files);
/* How many multi-probe links attached how many targets. */
void walker_links(const struct walker *w, size_t *links, size_t *linked);
/* Trace the process pid (a -- COMMAND) and what it starts. */
int walker_follow(struct walker *w, pid_t pid);
/* All stacks counted so far (cumulative). */
int walker_read(struct walker *w, struct sw_stacks *out);
int walker_lost(struct walker *w, __u64 lost[SW_LOST_NR]);
/* fn hears the tgid of every stack counted so far, once or more each. */
int walker_counted_tgids(struct walker *w, void (*fn)(void *ctx, __u32 tgid),
			  void *ctx);
/* Stacks the last read showed without some of their frames (small keys). */
__u64 walker_partial(const struct walker *w);
/*
 * Whether a side's walk stopped at the walker's depth limit, the stack
 * going on beyond: its outputs end it in OUTPUT_TRUNCATED.
 */
static inline bool walker_stack_cut(__u8 stop)
{
	return stop == SW_STOP_DEPTH;
}
/*
 * The frames the kernel's unwinder gives a side at most (struct
 * sw_config's stack_full): a side of getstack or stackmap with that many
 * is marked cut, as it may go on.
 */
static inline __u32 walker_stack_full(const struct sw_features *f)
{
	return f->max_stack && f->max_stack < SW_MAX_FRAMES ? f->max_stack :
							       SW_MAX_FRAMES;
}
/* Events whose stack was cut so: of the last read, and every event's. */
__u64 walker_cut(const struct walker *w);
/* trace_pipe delivery (4.1-4.3): lines the trace buffer overwrote unread. */
__u64 walker_trace_lost(const struct walker *w);
/*
 * stacksnoop: deliver events to fn, in time order; the buffer holds pages
 * pages a CPU (perf), or trace_pipe is read (printk).  walker_events_fd
 * is for poll(); walker_events_poll delivers what is in, but for the
 * newest events, which it holds back until walker_events_due_ms (on
 * session_now_ms's clock; -1: none held), or it is told all.
 */
int walker_events_open(struct walker *w, size_t pages, sw_event_fn fn,
			void *ctx);
int walker_events_fd(const struct walker *w);
int walker_events_poll(struct walker *w, bool all);
long long walker_events_due_ms(const struct walker *w);
/* The process of each event held back, to fn (a process more than once). */
void walker_held_tgids(const struct walker *w, void (*fn)(void *ctx, __u32 tgid),
		       void *ctx);
const char *walker_source(const struct walker *w);
/* Detach without waiting for the kernel (see walker.c); then free. */
void walker_detach_async(struct walker *w);
void walker_free(struct walker *w);

void walker_stacks_clear(struct sw_stacks *s);
void walker_stacks_free(struct sw_stacks *s);

#endif
