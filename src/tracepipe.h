/* SPDX-License-Identifier: MIT */
/*
 * stacksnoop on 4.1-4.3, which have no bpf_perf_event_output: the fp
 * walker prints each frame with bpf_trace_printk, and the lines are read
 * back from trace_pipe, as the 2016 tools did.  A line per frame,
 *
 *   <task>-<tid> [<cpu>] <flags> <secs>.<usecs>: <ip>: k<magic> <i> <addr>
 *
 * ("u" for user frames), then "e<magic> <kstop | ustop << 8>" ends the
 * event; 4.1's kernel walk prints all its slots, 0 past the walk's end.
 * An event's lines come from one CPU, one after another; lines of other
 * CPUs (and of other tracers) may come between.
 */
#ifndef SW_TRACEPIPE_H
#define SW_TRACEPIPE_H

#include <linux/types.h>
#include "../bpf/stackwalk.h"

#define TP_MAX_FRAMES 64

struct tp_event {
	__u64 ts;		/* ns, trace clock */
	__u32 tid, cpu;
	char comm[SW_COMM_LEN];	/* "<...>" when the trace cache lost it */
	__u64 k[TP_MAX_FRAMES], u[TP_MAX_FRAMES];
	__u32 nk, nu;
	__u8 kstop, ustop;
};

struct tracepipe;
typedef void (*tp_event_fn)(const struct tp_event *ev, void *ctx);

int tracepipe_open(struct tracepipe **out, const char *tracefs, __u32 magic);
int tracepipe_fd(const struct tracepipe *tp);
/* Reads what is there (never blocks); fn gets each event as it completes. */
int tracepipe_read(struct tracepipe *tp, tp_event_fn fn, void *ctx);
/* One line, for tests of the parser: returns 1 when it completed an event. */
int tracepipe_line(struct tracepipe *tp, const char *line, tp_event_fn fn,
		    void *ctx);
/*
 * Lines the trace buffer overwrote since we opened it (anyone's: it is
 * shared), which may include ours.
 */
unsigned long long tracepipe_lost(const struct tracepipe *tp);
void tracepipe_free(struct tracepipe *tp);

#endif
