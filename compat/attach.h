/* SPDX-License-Identifier: MIT */
/*
 * Attach a loaded BPF program to one probe, the way the kernel at hand
 * allows: a kprobe/uprobe PMU event (4.17+), or a tracefs probe event
 * opened as a perf tracepoint (before 4.17, and in forced legacy mode);
 * either way PERF_EVENT_IOC_SET_BPF, as 4.1 introduced it.  A raw
 * tracepoint (4.17) takes no perf event, and many probes can share one
 * BPF link (below).
 */
#ifndef SW_ATTACH_H
#define SW_ATTACH_H

#include "kfeatures.h"
#include "tracefs.h"

enum sw_probe_kind {
	SW_PROBE_KPROBE,
	SW_PROBE_KRETPROBE,
	SW_PROBE_UPROBE,
	SW_PROBE_TRACEPOINT,
	/* 4.17+: no perf event, and no skip while another program runs */
	SW_PROBE_RAW_TRACEPOINT,
};

struct sw_probe_spec {
	enum sw_probe_kind kind;
	const char *func;		/* kprobe, kretprobe */
	const char *path;		/* uprobe: binary */
	unsigned long offset;		/* uprobe: file offset */
	unsigned long ref_ctr_off;	/* uprobe: USDT semaphore, 0 if none */
	const char *category, *event;	/* tracepoint (raw: event only) */
	int pid;			/* uprobe: only in this process (0: all) */
};

struct sw_attachment {
	int perf_fd;			/* or a BPF link's fd, if link */
	/* the frontend's: its program, and whether a target's event runs it */
	int prog_fd;
	bool target;
	bool link;
	bool tracefs_event;		/* remove ev_name on detach */
	enum sw_probe_event ev_kind;
	char ev_name[48];
};

int attach_probe(const struct sw_features *f, int prog_fd,
	      const struct sw_probe_spec *spec, unsigned seq,
	      struct sw_attachment *a);
void attach_remove(const struct sw_features *f, struct sw_attachment *a);

/*
 * Uprobes in one file (uprobe_multi, 6.6), or kernel functions' entries
 * (kprobe_multi, 5.18, on kernels with fprobe), that one BPF link
 * attaches at once: one link costs one open and one close, where a perf
 * event a probe costs a close each, and closing is what is slow.
 */
#define SW_TRACE_KPROBE_MULTI	42	/* enum bpf_attach_type */
#define SW_TRACE_UPROBE_MULTI	48

struct sw_multi {
	size_t n;
	const char *path;		/* uprobes: their file */
	unsigned long *offsets;
	unsigned long *ref_ctr_offs;	/* or NULL */
	int pid;			/* only this process (0: all) */
	const char **syms;		/* else kprobes: their functions */
};

/*
 * A link fd, or -errno; the program must be loaded for the link's type
 * (attach_multi_type).
 */
int attach_link_multi(int prog_fd, const struct sw_multi *m);
static inline int attach_multi_type(enum sw_probe_kind k)
{
	return k == SW_PROBE_KPROBE ? SW_TRACE_KPROBE_MULTI : SW_TRACE_UPROBE_MULTI;
}
/* The kernel refuses the whole link if it refuses one probe of it. */
int attach_multi_probes(int prog_fd, const struct sw_multi *m,
		    struct sw_attachment *a);

/* The kernel's internal "not supported", which reaches user space as is. */
#define SW_ENOTSUPP 524

/*
 * Why the kernel refused a probe of kind k with -err: a phrase for an
 * error line, or (brief) a word or two for a list of skipped targets.
 */
const char *attach_why(enum sw_probe_kind k, int err, bool brief);
/*
 * Whether -err is about the target itself, so that other targets may
 * still attach; not so of a lack of memory or of file descriptors.
 */
bool attach_target_err(int err);

#endif
