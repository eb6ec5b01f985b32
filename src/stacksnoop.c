// SPDX-License-Identifier: MIT
/*
 * stacksnoop: print the stack of every event -- bcc's tool, extended to
 * every probe and walker stackcount has, on every kernel from 4.1.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "explain.h"
#include "formats.h"
#include "output.h"
#include "procs.h"
#include "session.h"

#define DEFAULT_PAGES 64

struct tool {
	struct session s;
	bool offset, verbose, delimited, explain, json;
	long pages;
	struct sw_explain_how how;
	bool trim_tracepoint;
};

static const char usage[] =
"usage: stacksnoop [-h] [-p PID] [-c CPU] [-s] [-v] [-K] [-U] [-d]\n"
"                  [-D DURATION] [-r]\n"
"                  [--walker {auto,cfi,getstack,stackmap,fp}]\n"
"                  [--explain] [--perf-buffer-pages PAGES]\n"
"                  [--stack-storage-size SIZE] [--unwind-memory MB]\n"
"                  [--file-memory MB] [--legacy[=VERSION]]\n"
"                  [--json] [--debug] [--kernel-features] [--no-demangle]\n"
"                  [--no-debuginfod] [--version]\n"
"                  function [-- COMMAND [ARG ...]]\n";

static const char help[] =
"\n"
"Trace and print the stack of every event\n"
"\n"
"positional arguments:\n"
"  function           kernel function, lib:func, t:cat:event or u:lib:probe\n"
"  COMMAND            run COMMAND, trace it and the processes it starts,\n"
"                     and stop when it exits\n"
"\n"
"optional arguments:\n"
"  -h, --help         show this help message and exit\n"
"  -p PID, --pid PID  trace this PID only\n"
"  -c CPU, --cpu CPU  trace this CPU only\n"
"  -s, --offset       show address offsets\n"
"  -v, --verbose      print more fields\n"
"  -K, --kernel-stacks-only\n"
"                     kernel frames only (the default for kernel events)\n"
"  -U, --user-stacks-only\n"
"                     user frames only (the default for user events)\n"
"  -d, --delimited    kernel and user frames, with a delimiter between\n"
"  -D DURATION, --duration DURATION\n"
"                     total duration of trace, seconds\n"
"  -r, --regexp       use regular expressions. Default is \"*\" wildcards\n"
"                     only.\n"
"  --walker WALKER    auto (default), cfi (unwind tables, 4.9+), getstack\n"
"                     (4.18+), stackmap (4.6+) or fp (frame pointers, 4.1+)\n"
"  --explain          show how each frame was found: the unwind rule at\n"
"                     each user frame (cfi walker), or every frame pointer\n"
"                     and return address the fp walker read\n"
"  --json             one JSON object per event, a line each, written as\n"
"                     it comes (schema: man stacksnoop)\n"
"  --perf-buffer-pages PAGES\n"
"                     buffer pages per CPU (default 64); events that do\n"
"                     not fit are counted and reported\n"
"  --stack-storage-size SIZE\n"
"                     stacks the stackmap walker can hold (default 16384)\n"
"  --unwind-memory MB room for the cfi walker's unwind tables (default 8)\n"
"  --file-memory MB   room for the symbols of files that users other than\n"
"                     root can write, and their perf maps (default 64)\n"
"  --no-demangle      keep C++ and Rust names as they are in the binary\n"
"  --no-debuginfod    do not ask the DEBUGINFOD_URLS servers for the debug\n"
"                     files of stripped binaries\n"
"  --legacy[=VERSION] behave as on a VERSION kernel (4.1-4.5, default 4.4)\n"
"  --debug            print the BPF program and why its walker was chosen\n"
"  --kernel-features  print what this kernel offers, then exit\n"
"  --version          print the version and exit\n"
"\n"
"examples:\n"
"    ./stacksnoop ext4_sync_fs           # print kernel stack traces for ext4_sync_fs\n"
"    ./stacksnoop -s ext4_sync_fs        # ... also show symbol offsets\n"
"    ./stacksnoop -v ext4_sync_fs        # ... show extra columns\n"
"    ./stacksnoop -p 185 ext4_sync_fs    # ... only when PID 185 is on-CPU\n"
"    ./stacksnoop -d t:syscalls:sys_enter_sync   # kernel and user frames\n"
"    ./stacksnoop --explain ./app:work -- ./app  # how each stack was walked\n"
"    ./stacksnoop --json ext4_sync_fs | jq -c '[.comm, .frames[0].name]'\n";

enum { OPT_PAGES = OPT_TOOL, OPT_EXPLAIN, OPT_JSON };

static int parse_args(int argc, char **argv, struct tool *t)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "offset", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "delimited", no_argument, NULL, 'd' },
		{ "explain", no_argument, NULL, OPT_EXPLAIN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "perf-buffer-pages", required_argument, NULL, OPT_PAGES },
		SESSION_LONGOPTS,
		{}
	};
	struct session_opts *o = &t->s.o;
	int c, e;

	session_opts_init(o, "stacksnoop", argv, &argc);
	o->sink = SINK_EMIT;
	o->own_side = true;
	t->pages = DEFAULT_PAGES;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hp:c:D:rsvKUd", longopts, NULL)) != -1) {
		e = session_option(o, c, optarg);
		if (e != 1) {
			if (e)
				return e;
			continue;
		}
		switch (c) {
		case 'h':
			printf("%s%s", usage, help);
			exit(0);
		case 's': t->offset = true; break;
		case 'v': t->verbose = true; break;
		case 'd': t->delimited = true; o->own_side = false; break;
		case OPT_EXPLAIN: t->explain = true; o->sink = SINK_EXPLAIN; break;
		case OPT_JSON: t->json = true; break;
		case OPT_PAGES:
			/* perf ring buffers are a power of two pages */
			if (session_parse_long(optarg, 1, 1 << 16, &t->pages) ||
			    (t->pages & (t->pages - 1)))
				return session_die(o->tool, "invalid buffer size '%s'; "
						   "give a power of two pages, at most "
						   "65536", optarg) + 1;
			break;
		default:
			return session_unknown(o, c, argv);
		}
	}
	e = session_args_done(o, optind, argc, argv);
	if (!e && t->explain && (t->delimited || o->kernel_only || o->user_only))
		e = session_die(o->tool, "--explain walks where the event fired; "
				"drop -K, -U and -d") + 1;
	if (!e && t->explain && t->json)
		e = session_die(o->tool, "--explain and --json are two formats of "
				"the output; give one") + 1;
	return e;
}

/* One line: the time, -v's columns, then msg. */
static void line(const struct tool *t, const struct sw_event *ev,
		 const char *comm, const char *msg)
{
	double ts = ev->ts / 1e9;
	/* the column's 12 bytes, escaped, cut where an escape or character ends */
	char shown[12 + 1];

	if (t->verbose)
		fprintf(t->s.out, "%-18.9f %-12s %-6u %-3u %s\n", ts,
			output_comm(comm, shown, sizeof(shown)), ev->tid, ev->cpu, msg);
	else
		fprintf(t->s.out, "%-18.9f %s\n", ts, msg);
}

/* --explain, cfi walker: the rule that led from this frame to the next */
static void explain_rule(struct tool *t, const struct sw_event *ev,
			 const char *comm, __u64 addr, bool exact, bool entry,
			 bool fp_step)
{
	char rule[512], msg[530];

	/* what the walk did then, not the rule the tables hold now */
	if (fp_step)
		snprintf(rule, sizeof(rule), "no unwind rule covered this "
			 "address when the event fired: a frame-pointer step, "
			 "the return address at %%rbp+8");
	else if (ev->stack.ustop == SW_STOP_NO_TABLE)
		snprintf(rule, sizeof(rule), "no unwind tables for this process "
			 "yet: a frame-pointer step to the caller");
	else
		session_unwind_rule(&t->s, ev->stack.tgid, addr, exact, entry,
				    rule, sizeof(rule));
	snprintf(msg, sizeof(msg), "    %s", rule);
	line(t, ev, comm, msg);
}

/* how: the cfi walker's user frames, -v or --explain: how each was found */
static void frames(struct tool *t, const struct sw_event *ev, const char *comm,
		   bool kernel, const __u64 *ip, size_t n, int *r)
{
	const __u64 *found = !kernel && ev->stack.has_how ? ev->stack.uhow : NULL;
	const __u64 *how = t->verbose || t->s.explain_rules ? found : NULL;
	char *name, *msg;
	int e;

	for (size_t i = 0; i < n; i++, (*r)++) {
		const char *how_s = how ? output_how_name(sw_how_get(how, i)) : "";
		const char *sep = how ? " " : "";

		/* a signal frame's PC is the interrupted instruction's own */
		name = output_frame_name(t->s.sym, kernel, ev->stack.tgid, ip[i],
				     *r >= 0 && !(found && sw_how_get(found, i) ==
						  SW_HOW_SIGNAL), t->offset, false);
		if (!name)
			e = -1;
		else if (*r < 0)
			e = asprintf(&msg, "ip: %llx %s%s%s",
				     (unsigned long long)ip[i], how_s, sep, name);
		else
			e = asprintf(&msg, "r%d: %llx %s%s%s", *r,
				     (unsigned long long)ip[i], how_s, sep, name);
		free(name);
		/* a frame is never left out silently */
		if (e < 0) {
			line(t, ev, comm, "(out of memory naming this frame)");
			continue;
		}
		line(t, ev, comm, msg);
		free(msg);
		if (t->s.explain_rules && !kernel)
			explain_rule(t, ev, comm, ip[i],
				     !i || (how && sw_how_get(how, i) == SW_HOW_SIGNAL),
				     !i && t->how.entry,
				     how && i + 1 < n && ev->stack.ustop != SW_STOP_NO_TABLE &&
				     sw_how_get(how, i + 1) == SW_HOW_FP);
	}
	if (t->s.explain_rules && !kernel && ev->stack.ustop == SW_STOP_CUT)
		line(t, ev, comm, "    the walk ends: that rule leads to no "
		     "frame above this one, and a guess could be wrong");
}

/*
 * An event as the 2016 tool printed it: a line with the time alone, then
 * "ip:" where it fired and "r<n>:" for each return address.
 */
static void print_event(const struct sw_event *ev, void *ctx)
{
	struct tool *t = ctx;
	const struct sw_stack *st = &ev->stack;
	const char *comm = st->comm;
	size_t k0 = 0;
	int r = -1;

	/* the reader has gone, or the disk is full: nothing to print to */
	if (t->s.out_err)
		return;
	/* trace_pipe loses the names of short-lived tasks: ask the model */
	if (!strcmp(comm, "<...>") && procs_comm(t->s.procs, st->tgid))
		comm = procs_comm(t->s.procs, st->tgid);
	if (t->json) {
		struct sw_format fmt = {
			.kernel = t->s.wo.kstack, .user = t->s.wo.ustack,
			.trim_tracepoint = t->trim_tracepoint,
		};

		if (json_event(t->s.out, ev, comm, t->s.sym, &fmt))
			session_die(t->s.o.tool, "out of memory naming the "
				    "frames of an event");
		session_flush(&t->s);
		return;
	}
	if (t->trim_tracepoint)
		k0 = probe_tracepoint_skip(t->s.sym, st);
	line(t, ev, comm, "");
	if (t->explain && !t->s.explain_rules) {
		frames(t, ev, comm, !t->how.user, st->nk ? st->kip : st->uip,
		       st->nk ? st->nk : st->nu, &r);
		explain_print(t->s.out, ev, t->s.sym, &t->how);
		session_flush(&t->s);
		return;
	}
	if (t->s.wo.kstack) {
		frames(t, ev, comm, true, st->kip + k0, st->nk - k0, &r);
		if (walker_stack_cut(st->kstop))
			line(t, ev, comm, OUTPUT_TRUNCATED);
	}
	if (t->delimited)
		line(t, ev, comm, "--");
	if (t->s.wo.ustack) {
		frames(t, ev, comm, false, st->uip, st->nu, &r);
		if (walker_stack_cut(st->ustop))
			line(t, ev, comm, OUTPUT_TRUNCATED);
	}
	session_flush(&t->s);
}

static int run(struct tool *t)
{
	struct session *s = &t->s;
	int e, fd;

	e = session_start(s);
	if (e || s->o.kernel_features)
		return e;
	t->trim_tracepoint = s->wo.kind == SW_WALKER_FP &&
			     s->pat.type == SW_PAT_TRACEPOINT && !t->explain;
	t->how.user = s->pat.type == SW_PAT_UPROBE || s->pat.type == SW_PAT_USDT;
	t->how.entry = s->pat.type == SW_PAT_UPROBE || s->pat.type == SW_PAT_KPROBE;
	t->how.tracepoint = s->pat.type == SW_PAT_TRACEPOINT;
	e = walker_events_open(s->w, t->pages, print_event, t);
	if (e)
		return session_die(s->o.tool, "cannot read events: %s", strerror(-e));
	fd = walker_events_fd(s->w);
	if (t->json)
		;	/* a line is an event: no header */
	else if (t->verbose)
		fprintf(s->out, "%-18s %-12s %-6s %-3s %s\n", "TIME(s)", "COMM",
			"PID", "CPU", "STACK");
	else
		fprintf(s->out, "%-18s %s\n", "TIME(s)", "STACK");
	/* nowhere to print (a full disk, a closed pipe): no point tracing */
	if (!session_flush(s)) {
		e = session_go(s);
		if (e)
			return e;
		while (!s->out_err &&
		       session_wait(s, walker_events_due_ms(s->w), fd) != WAKE_END)
			walker_events_poll(s->w, false);
		/* what is still in the buffers happened before the end */
		session_sync(s);
		if (!s->out_err)
			walker_events_poll(s->w, true);
	}
	return session_end(s, session_stop(s));
}

int main(int argc, char **argv)
{
	struct tool t = {};
	int rc;

	rc = parse_args(argc, argv, &t);
	if (rc)
		return rc;
	rc = session_init(&t.s);
	if (!rc)
		rc = run(&t);
	session_free(&t.s);
	return rc;
}
