/* SPDX-License-Identifier: MIT */
/*
 * Inside a walker: the state the shared mechanics (walker.c: load, attach,
 * detach; walker_read.c: counts; walker_events.c: stacksnoop's events) and
 * the walker descriptors (walker_*.c, see walkers.h) work on.  Nothing
 * outside those files includes this.
 */
#ifndef SW_WALKER_INT_H
#define SW_WALKER_INT_H

#include "walker.h"
#include "walkers.h"

struct bpf_object;
struct bpf_map;
struct perf_buffer;
struct tracepipe;

/* getstack with small keys: an entry of the chunks map, as read back */
struct chunk {
	struct sw_gsc_chunk c;
	__u64 id;
};

/* stacksnoop: the events of one poll, to be sorted by time */
struct batch {
	struct walker *w;
	struct sw_event *v;
	size_t n, cap;
	int err;
};

/* A key's frames, whichever walker's key it is. */
struct key_frames {
	const struct sw_key_hdr *h;
	struct sw_key_hdr hbuf;		/* h, where the descriptor amends it */
	const __u64 *k, *u;
	size_t nk, nu;
	__u64 kcaller, ucaller;		/* stackmap: inserted after frame 0 */
	__u64 uhow[SW_HOW_WORDS];	/* cfi: how each user frame was found */
	bool uhow_set;
	__u64 kbuf[SW_MAX_FRAMES + 1], ubuf[SW_MAX_FRAMES + 1];
};

/*
 * What the getstack and cfi objects both have (bpf/getstack.bpf.h): the
 * counts by size class, small keys' chunks, the walk state per thread,
 * and the programs calibration runs.
 */
struct walker_gs_parts {
	struct bpf_map *classes[SW_GS_CLASSES];
	struct bpf_map *counts, *chunks, *scratch_small, *walks, *walk_zero;
	struct bpf_program *walk_exit, *calib, *calib_t, *calib_small;
};

struct walker {
	const struct sw_features *f;
	const struct walker_desc *d;
	void *skel;		/* the descriptor's skeleton */
	const void *image;	/* the BPF object it embeds, in the tool's text */
	size_t image_size;
	__u64 root;		/* see struct sw_config */
	struct walker_opts o;
	struct bpf_object *obj;
	/* getstack keeps counts by stack size (SW_GS_CLASS); the others, one */
	struct bpf_map *counts[SW_GS_CLASSES];
	int ncounts;
	/* getstack where hash keys are at most 512 bytes: interned chunks */
	bool small;
	/* getstack, cfi: each walk's state in its thread's entry (struct sw_features) */
	bool per_task;
	struct bpf_map *chunks;
	struct walker_gs_parts gs;	/* getstack, cfi */
	struct chunk *chunk_tab;	/* by id, as of the last read */
	size_t nchunks;
	__u64 partial;		/* stacks of the last read missing chunks */
	/* events whose walk stopped at the depth limit: by the last read
	   (counts), or since the start (events) */
	__u64 cut, cut_events;
	struct bpf_map *stacks, *config, *lost, *follow, *events;
	/* the cfi walker's unwind tables (bpf/cfi.h); NULL for the others */
	struct bpf_map *cfi_rows, *cfi_procs, *cfi_files;
	/*
	 * cfi, 5.17+: PCs no process list holds found by their VMA's file;
	 * vma_mt: the VMA read from the maple tree (6.1+ without BTF), not
	 * by bpf_find_vma
	 */
	bool vma, vma_mt;
	/*
	 * cfi without bpf_get_stack (4.9-4.17): kernel side by stack id,
	 * user frames in the key (struct sw_cfl_key)
	 */
	bool cfl;
	/*
	 * ... how many more probes of a kprobe or uprobe target carry its
	 * walk on past each chain's tail calls, to SW_MAX_FRAMES
	 */
	unsigned cfl_carries;
	/* its own fork and exit hooks follow -- COMMAND (sw_fork_tp's job) */
	bool hooks_follow;
	/*
	 * sw_fork_tp's hooks run without -- COMMAND too: the walker's
	 * programs see each fork there (SW_FORKED, bpf/common.bpf.h)
	 */
	bool fork_hooks;
	/* cfi, 4.18-5.16: processes' lists built in BPF from their VMAs */
	bool vma_list;
	/* where vma_list's or vma_mt's offsets came from */
	const char *vma_list_how;
	struct sw_vma_offs vma_offs;	/* the fields either reads */
	/* its uprobe callers and walks loaded for uprobe_multi links */
	bool multi_typed;
	/* every walker's object has the fork-following programs */
	struct bpf_map *uframes;	/* see SW_UFRAMES */
	struct bpf_program *fork_tp, *exit_tp, *fork_kretprobe, *fork_kprobe, *exit_kprobe;
	struct perf_buffer *pb;
	struct tracepipe *tp;
	struct batch batch;
	sw_event_fn on_event;
	void *on_event_ctx;
	__u32 magic;		/* tags our trace_printk lines */
	bool user_events;	/* the events fire in user space */
	bool missing;		/* a program this run needs is not built */
	struct sw_attachment *att;
	size_t natt, cap;
	/* programs loaded again for multi-probe links: see attach_multi() */
	struct { int fd, multi_fd; } clones[8];
	int nclones;
	size_t nlinks, nlinked;	/* links made, targets attached through them */
	/*
	 * By the shape of a function's first instruction: the kernel's
	 * unwinder adds the caller at a uprobe there (SW_SHAPE_OTHER: never)
	 */
	bool kernel_adds_ucaller[SW_SHAPES];
};

/*
 * The maps and programs every walker's object has (bpf/common.bpf.h),
 * from skeleton s, whatever its type, into w.
 */
#define WALKER_COMMON(w, s) do {				\
	(w)->skel = (s);					\
	(w)->image = (s)->skeleton->data;			\
	(w)->image_size = (s)->skeleton->data_sz;		\
	(w)->obj = (s)->obj;					\
	(w)->config = (s)->maps.config;				\
	(w)->lost = (s)->maps.lost;				\
	(w)->follow = (s)->maps.follow;				\
	(w)->events = (s)->maps.events;				\
	(w)->uframes = (s)->maps.uframes;			\
	(w)->fork_tp = (s)->progs.sw_fork_tp;			\
	(w)->exit_tp = (s)->progs.sw_exit_tp;			\
	(w)->fork_kretprobe = (s)->progs.sw_fork_kretprobe;	\
	(w)->fork_kprobe = (s)->progs.sw_fork_kprobe;		\
	(w)->exit_kprobe = (s)->progs.sw_exit_kprobe;		\
} while (0)

/*
 * A getstack object's program for this run (walker_getstack.c,
 * walker_cfi.c): emitting, counting with small keys, or counting, each
 * keeping its walk's state per CPU or (suffixed t) per thread.
 */
#define WALKER_GS_PROG(w, s, base)					\
	((w)->o.sink == SINK_EMIT ?					\
	 ((w)->per_task ? (s)->progs.base##_et : (s)->progs.base##_e) :	\
	 (w)->small ? (s)->progs.base##_small :				\
	 (w)->per_task ? (s)->progs.base##_t : (s)->progs.base)

/* The walker_gs_parts of skeleton s, of either object. */
#define WALKER_GS_PARTS(s) ((struct walker_gs_parts){			\
	.classes = { (s)->maps.counts_4, (s)->maps.counts_8,		\
		     (s)->maps.counts_16, (s)->maps.counts_32,		\
		     (s)->maps.counts_64, (s)->maps.counts_256 },	\
	.counts = (s)->maps.counts, .chunks = (s)->maps.chunks,		\
	.scratch_small = (s)->maps.scratch_small,			\
	.walks = (s)->maps.walks, .walk_zero = (s)->maps.walk_zero,	\
	.walk_exit = (s)->progs.gs_walk_exit,				\
	.calib = (s)->progs.gs_uprobe, .calib_t = (s)->progs.gs_uprobe_t, \
	.calib_small = (s)->progs.gs_uprobe_small })

/*
 * The getstack walker's parts, which the cfi walker (walker_cfi.c) shares:
 * the same keys and counts; only the user frames differ.  walker_gs_open:
 * the counting maps of this kernel's mode on in w->gs, set by the caller.
 */
int walker_gs_open(struct walker *w);
void walker_getstack_choose(struct walker *w);
int walker_getstack_attach(struct walker *w);
int walker_getstack_read_begin(struct walker *w);
struct bpf_program *walker_getstack_calib_prog(const struct walker *w);
void walker_getstack_key_frames(struct walker *w, const void *key, bool counted,
				struct key_frames *f);

/* Load p or not; a program this run wants that does not exist is a bug. */
void walker_want(struct walker *w, struct bpf_program *p, bool on);
/*
 * The same for a program that follows processes at tracepoint sched:ev
 * (fork, exec, exit), and attaching it there, detached with the rest:
 * as a raw tracepoint where the kernel has them (see walker.c).
 */
void walker_want_hook(struct walker *w, struct bpf_program *p, bool on);
/*
 * A uprobe running prog_fd at our own function fn, detached with the
 * run's probes: 0 or -errno.
 */
int walker_self_probe(struct walker *w, int prog_fd, __u64 fn);
/* prog_fd attached as spec says, detached with the run's probes. */
int walker_attach_spec(struct walker *w, int prog_fd, const struct sw_probe_spec *spec);
int walker_attach_hook(struct walker *w, struct bpf_program *p, const char *ev);
/* The frames before the first 0 of v, at most max. */
size_t walker_nframes(const __u64 *v, size_t max);
/* The frames of stack id in w->stacks (a BPF_STACK_TRACE map) into buf. */
size_t walker_stack_by_id(const struct walker *w, int id, __u64 *buf);
/*
 * A key's kernel side kept by stack id (stackmap, and cfi before 4.18):
 * its frames, the caller at the entry, and the key's header h into f
 */
void walker_kside_by_id(struct walker *w, int kid, __u64 kcaller,
			const struct sw_key_hdr *h, struct key_frames *f);
/*
 * A key's frames, whichever walker's key it is; counted: a key of a
 * counts map, not an event's.  The descriptor decodes; this fixes up.
 */
void walker_key_frames(struct walker *w, const void *key, bool counted,
		       struct key_frames *f);
/* What every walker's frames need, however they came: see walker_read.c. */
void walker_frames_fixup(struct key_frames *f);
/* Whether f's user frames carry how each was found (the cfi walker's). */
void walker_frames_tagged(const struct walker *w, struct key_frames *f);
/* How the user frames were found, into a stack of f's frames. */
void walker_frames_how(struct sw_stack *st, const struct key_frames *f);
/* Every key of m with its 8-byte value after it, in *recs (to be freed). */
int walker_snapshot(struct bpf_map *m, char **recs, size_t *n);

#endif
