/* SPDX-License-Identifier: MIT */
/*
 * Counted stacks as bcc's stackcount prints them: frames two spaces in,
 * kernel then user, an optional "--" between, "comm [pid]", the count four
 * spaces in, least frequent first; or one folded line per stack.  Stacks
 * that print the same are one stack: user frames of different processes
 * merge when their names do, as a reader would expect.
 */
#ifndef SW_OUTPUT_H
#define SW_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "walker.h"
#include "symbolize.h"

struct sw_format {
	bool kernel, user;	/* which halves are shown */
	bool delimiter;		/* -d: "--" between them */
	bool offset;		/* -s: func+0x1f */
	bool verbose;		/* -v: raw addresses */
	bool folded;		/* -f */
	bool comm;		/* comm [pid] line (keyed by process, no -p) */
	bool folded_comm;	/* comm first in folded lines */
	bool trim_tracepoint;	/* fp walker at a tracepoint: drop tracing frames */
	/*
	 * Tracing has ended: a signal now asks to stop naming stacks, which
	 * returns -EINTR (see interrupt.h).
	 */
	bool stoppable;
};

/*
 * One frame's name as printed, whole, for free(); NULL when out of memory.
 * Every byte a terminal could take for a control is written as \xNN
 * (untrusted_escape).
 */
char *output_frame_name(struct symbolizer *sym, bool kernel, __u32 tgid,
		    __u64 addr, bool is_return, bool offset, bool verbose);
struct sw_stack;
/* Whether user frame i of st is named as a return address (at addr - 1). */
bool output_user_return(const struct sw_stack *st, size_t i);
/*
 * How the cfi walker found a user frame (SW_HOW_*), as -v prints it:
 * "regs" (where the event fired), "cfi" (the unwind table's rule), "fp"
 * (no rule: a frame-pointer step), "signal" (a signal frame's registers).
 */
const char *output_how_name(unsigned int how);
/*
 * The last frame of a side whose walk stopped at the walker's depth limit
 * (walker_stack_cut): the stack goes on beyond it.
 */
#define OUTPUT_TRUNCATED	"[truncated]"
/*
 * A task's comm as printed, escaped as names are, into buf: 4x its size
 * holds it all; a smaller one cuts it where an escape or character ends.
 */
const char *output_comm(const char *comm, char *buf, size_t len);
/* A stack as an output shows it, but for its count. */
struct output_shown {
	char *text;
	__u64 count;
};
/*
 * v[0, n) with the counts of equal texts added (the copies freed), least
 * frequent first, then by text: the number left.
 */
size_t output_merge(struct output_shown *v, size_t n);
/*
 * How many leading kernel frames are the tracing machinery's, when the fp
 * walker started from its own frame at a tracepoint.
 */
size_t probe_tracepoint_skip(struct symbolizer *sym, const struct sw_stack *st);
int output_stacks(FILE *out, const struct sw_stacks *s,
		    struct symbolizer *sym, const struct sw_format *fmt);

#endif
