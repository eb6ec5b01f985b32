/* SPDX-License-Identifier: MIT */
/*
 * The outputs beside the text and folded ones (output.h): JSON for
 * programs, a pprof profile for profiling systems, an SVG flame graph for
 * people.  Each takes the counted stacks as the text output does, and what
 * the run was (struct sw_run).
 */
#ifndef SW_FORMATS_H
#define SW_FORMATS_H

#include <stdio.h>
#include "output.h"
#include "session.h"

/* What a report says about the run besides its stacks. */
struct sw_run {
	const char *tool, *pattern, *walker;
	unsigned probes;		/* probes attached */
	long long start_ns;		/* wall clock at the start, ns */
	double seconds;			/* what the counts cover */
	const char *time;		/* -T: HH:MM:SS; NULL: none */
	bool keyed;			/* by process: comm ... */
	bool per_pid;			/* ... and pid (-P) */
	struct session_losses losses;
	char lost_line[1024];		/* session_loss_line; "": none */
};

/* stackcount --json: one document, on one line. */
int json_stacks(FILE *out, const struct sw_stacks *s, struct symbolizer *sym,
		   const struct sw_format *fmt, const struct sw_run *run);
/* stacksnoop --json: one object for the event, on one line. */
int json_event(FILE *out, const struct sw_event *ev, const char *comm,
		  struct symbolizer *sym, const struct sw_format *fmt);

/* stackcount --pprof: a gzipped profile.proto to out. */
int pprof_write(FILE *out, const struct sw_stacks *s, struct symbolizer *sym,
		   const struct sw_format *fmt, const struct sw_run *run);

/* stackcount --svg: a flame graph to out. */
int svg_write(FILE *out, const struct sw_stacks *s, struct symbolizer *sym,
		 const struct sw_format *fmt, const struct sw_run *run);
/* Its script, src/flamegraph.js (generated into build/gen). */
extern const char sw_svg_script[];

#endif
