// SPDX-License-Identifier: MIT
/*
 * stackcount: count events by their full stack, summarised in the kernel,
 * and print the unique stacks with their counts -- bcc's tool, on every
 * kernel from 4.1.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "deltas.h"
#include "formats.h"
#include "outfile.h"
#include "output.h"
#include "session.h"
#include "symbolize.h"
#include "walkers.h"

struct tool {
	struct session s;
	long interval;		/* seconds; 0: once, at the end */
	bool timestamp, offset, verbose, delimited, folded, json;
	const char *pprof_path, *svg_path;	/* --pprof, --svg: NULL if not */
	struct outfile pprof, svg;
	int files_failed;		/* the exit status when they could not be */
	long long start_ms, last_ms;	/* tracing began; the last print */
	long long start_ns;		/* wall clock when tracing began */
	struct sw_format fmt;
	struct deltas *deltas;
};

enum { OPT_JSON = OPT_TOOL, OPT_PPROF, OPT_SVG };

static const char usage[] =
"usage: stackcount [-h] [-p PID] [-c CPU] [-i INTERVAL] [-D DURATION] [-T]\n"
"                  [-r] [-s] [-P] [-K] [-U] [-v] [-d] [-f] [--json]\n"
"                  [--pprof FILE] [--svg FILE] [--debug]\n"
"                  [--walker {auto,cfi,getstack,stackmap,fp}]\n"
"                  [--stack-storage-size SIZE] [--unwind-memory MB]\n"
"                  [--file-memory MB] [--legacy[=VERSION]]\n"
"                  [--kernel-features] [--no-demangle] [--no-debuginfod]\n"
"                  [--version]\n"
"                  pattern [-- COMMAND [ARG ...]]\n";

static const char help[] =
"\n"
"Count events and their stack traces\n"
"\n"
"positional arguments:\n"
"  pattern               search expression for events\n"
"  COMMAND               run COMMAND, trace it and the processes it starts,\n"
"                        and print the counts when it exits\n"
"\n"
"optional arguments:\n"
"  -h, --help            show this help message and exit\n"
"  -p PID, --pid PID     trace this PID only\n"
"  -c CPU, --cpu CPU     trace this CPU only\n"
"  -i INTERVAL, --interval INTERVAL\n"
"                        summary interval, seconds\n"
"  -D DURATION, --duration DURATION\n"
"                        total duration of trace, seconds\n"
"  -T, --timestamp       include timestamp on output\n"
"  -r, --regexp          use regular expressions. Default is \"*\" wildcards\n"
"                        only.\n"
"  -s, --offset          show address offsets\n"
"  -P, --perpid          display stacks separately for each process\n"
"  -K, --kernel-stacks-only\n"
"                        kernel stack only\n"
"  -U, --user-stacks-only\n"
"                        user stack only\n"
"  -v, --verbose         show raw addresses\n"
"  -d, --delimited       insert delimiter between kernel/user stacks\n"
"  -f, --folded          output folded format\n"
"  --json                output one JSON document (per interval): stacks,\n"
"                        frames, counts, losses (schema: man stackcount)\n"
"  --pprof FILE          also write the counts of the whole run to FILE as a\n"
"                        gzipped pprof profile (go tool pprof, Parca, ...)\n"
"  --svg FILE            also write the counts of the whole run to FILE as an\n"
"                        interactive flame graph\n"
"  --debug               print BPF program before starting (for debugging\n"
"                        purposes), and why its walker was chosen\n"
"  --walker WALKER       auto (default), cfi (unwind tables, 4.9+), getstack\n"
"                        (4.18+), stackmap (4.6+) or fp (frame pointers,\n"
"                        4.1+)\n"
"  --stack-storage-size SIZE\n"
"                        the number of unique stacks that can be stored\n"
"                        and displayed (default 16384)\n"
"  --unwind-memory MB    room for the cfi walker's unwind tables in the\n"
"                        kernel (default 8)\n"
"  --file-memory MB      room for the symbols of files that users other\n"
"                        than root can write, and their perf maps\n"
"                        (default 64)\n"
"  --legacy[=VERSION]    behave as on a VERSION kernel (4.1-4.5, default\n"
"                        4.4): the fp walker, attached through tracefs\n"
"                        (also: STACKWALK_LEGACY=VERSION)\n"
"  --kernel-features     print what this kernel offers and the walker it\n"
"                        gets, then exit\n"
"  --no-demangle         keep C++ and Rust names as they are in the binary\n"
"  --no-debuginfod       do not ask the DEBUGINFOD_URLS servers for the debug\n"
"                        files of stripped binaries\n"
"  --version             print the version and exit\n"
"\n"
"examples:\n"
"    ./stackcount submit_bio         # count kernel stack traces for submit_bio\n"
"    ./stackcount -d ip_output       # include a user/kernel stack delimiter\n"
"    ./stackcount -s ip_output       # show symbol offsets\n"
"    ./stackcount -sv ip_output      # show offsets and raw addresses (verbose)\n"
"    ./stackcount 'tcp_send*'        # count stacks for funcs matching tcp_send*\n"
"    ./stackcount -r '^tcp_send.*'   # same as above, using regular expressions\n"
"    ./stackcount -Ti 5 ip_output    # output every 5 seconds, with timestamps\n"
"    ./stackcount -p 185 ip_output   # count ip_output stacks for PID 185 only\n"
"    ./stackcount -p 185 c:malloc    # count stacks for malloc in PID 185\n"
"    ./stackcount t:sched:sched_fork # count stacks for sched_fork tracepoint\n"
"    ./stackcount -p 185 u:node:*    # count stacks for all USDT probes in node\n"
"    ./stackcount -c 1 put_prev_entity   # count put_prev_entity stacks for CPU 1 only\n"
"    ./stackcount -K t:sched:sched_switch   # kernel stacks only\n"
"    ./stackcount -U t:sched:sched_switch   # user stacks only\n"
"    ./stackcount -U ./app:work -- ./app    # run ./app, count stacks of work()\n"
"    ./stackcount --json -D 5 submit_bio | jq .   # the counts as JSON\n"
"    ./stackcount --svg io.svg -D 5 submit_bio    # also draw a flame graph\n"
"    ./stackcount --pprof io.pb.gz -D 5 submit_bio   # also write a pprof profile\n";

static int parse_args(int argc, char **argv, struct tool *t)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "interval", required_argument, NULL, 'i' },
		{ "timestamp", no_argument, NULL, 'T' },
		{ "offset", no_argument, NULL, 's' },
		{ "perpid", no_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "delimited", no_argument, NULL, 'd' },
		{ "folded", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "svg", required_argument, NULL, OPT_SVG },
		SESSION_LONGOPTS,
		{}
	};
	struct session_opts *o = &t->s.o;
	int c, e;
	long v;

	session_opts_init(o, "stackcount", argv, &argc);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hp:c:i:D:TrsPKUvdf", longopts,
				NULL)) != -1) {
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
		case 'i':
			if (session_parse_long(optarg, 1, INT_MAX, &v))
				return session_die(o->tool, "invalid interval '%s'; "
						   "give a whole number of seconds",
						   optarg) + 1;
			t->interval = v;
			break;
		case 'T': t->timestamp = true; break;
		case 's': t->offset = true; break;
		case 'P': o->perpid = true; break;
		case 'v': t->verbose = true; break;
		case 'd': t->delimited = true; break;
		case 'f': t->folded = true; break;
		case OPT_JSON: t->json = true; break;
		case OPT_PPROF: t->pprof_path = optarg; break;
		case OPT_SVG: t->svg_path = optarg; break;
		default:
			return session_unknown(o, c, argv);
		}
	}
	if (t->json && t->folded)
		return session_die(o->tool, "--json and -f are two formats of the "
				   "output; give one") + 1;
	if (t->pprof_path && t->svg_path && !strcmp(t->pprof_path, t->svg_path))
		return session_die(o->tool, "--pprof and --svg both write %s; give "
				   "each its own file", t->svg_path) + 1;
	return session_args_done(o, optind, argc, argv);
}

static int open_file(struct tool *t, struct outfile *f, const char *opt,
		     const char *path)
{
	const char *why;
	int e = outfile_open(f, path, &why);

	if (e && why)
		return session_die(t->s.o.tool, "%s %s: %s; give another path",
				   opt, path, why);
	if (e)
		return session_die(t->s.o.tool, "cannot create %s: %s; give %s "
				   "a path that can be written", path,
				   strerror(-e), opt);
	return 0;
}

/* Created before tracing, so that a path that cannot be is said at once. */
static int open_files(struct tool *t)
{
	if (t->pprof_path && open_file(t, &t->pprof, "--pprof", t->pprof_path))
		return 1;
	if (t->svg_path && open_file(t, &t->svg, "--svg", t->svg_path))
		return 1;
	return 0;
}

static void run_info(struct tool *t, struct sw_run *r, long long since_ms,
		     const char *ts)
{
	struct session *s = &t->s;

	*r = (struct sw_run){
		.tool = s->o.tool,
		.pattern = s->o.pattern,
		.walker = walkers_name(s->wo.kind),
		.probes = s->targets.matched,
		.start_ns = t->start_ns,
		.seconds = (session_now_ms() - since_ms) / 1000.0,
		.time = ts,
		.keyed = s->wo.per_process,
		.per_pid = s->o.perpid,
	};
	if (!session_losses(s, &r->losses))
		session_loss_line(s, &r->losses, r->lost_line, sizeof(r->lost_line));
}

/* One of --pprof and --svg, written (err: what went wrong before) and renamed. */
static int close_file(struct tool *t, struct outfile *f, const char *path, int err)
{
	int e;

	/* a signal came: the target is left as it was (session_end says so) */
	if (session_interrupted(&t->s))
		return 0;
	/*
	 * Renamed only when whole; the file's own error first (ENOSPC, not
	 * stdio's EIO after it), and then not renamed either.
	 */
	e = err && !f->err ? err : outfile_commit(f);
	if (e)
		return session_die(t->s.o.tool, "cannot write %s: %s", path,
				   strerror(-e));
	return 0;
}

/* --pprof and --svg: the whole run, from the cumulative counts. */
static int write_files(struct tool *t, const struct sw_stacks *st)
{
	struct sw_run r;

	run_info(t, &r, t->start_ms, NULL);
	if (t->pprof_path && close_file(t, &t->pprof, t->pprof_path,
			pprof_write(t->pprof.f, st, t->s.sym, &t->fmt, &r)))
		return 1;
	if (t->svg_path && close_file(t, &t->svg, t->svg_path,
			svg_write(t->svg.f, st, t->s.sym, &t->fmt, &r)))
		return 1;
	return 0;
}

/*
 * Returns 0, or the output's error (the counts are lost then); the last
 * one (final) writes --pprof and --svg too.
 */
static int print_interval(struct tool *t, bool final)
{
	FILE *out = t->s.out;
	struct sw_stacks st = {};
	struct sw_run r;
	char ts[16];
	time_t now;
	int err;

	/* the signal that ended tracing has been read: another stops this */
	t->fmt.stoppable = final;
	err = walker_read(t->s.w, &st);
	session_sync(&t->s);
	if (!err && final)
		t->files_failed = write_files(t, &st);
	if (!err && t->interval)
		err = deltas_apply(t->deltas, &st);
	if (t->timestamp) {
		now = time(NULL);
		strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
	}
	if (!t->folded && !t->json)
		fputc('\n', out);
	if (t->timestamp && !t->json)
		fprintf(out, "%-8s\n", ts);
	if (!err && t->json) {
		run_info(t, &r, t->last_ms, t->timestamp ? ts : NULL);
		err = json_stacks(out, &st, t->s.sym, &t->fmt, &r);
	} else if (!err) {
		err = output_stacks(out, &st, t->s.sym, &t->fmt);
	}
	t->last_ms = session_now_ms();
	if (err == -EINTR && session_interrupted(&t->s))
		t->s.out_err = -EINTR;	/* nothing more is printed */
	else if (err)
		session_die("stackcount", "cannot read the counted stacks: %s",
			    strerror(-err));
	walker_stacks_free(&st);
	return session_flush(&t->s);
}

/*
 * Opening the files that name user frames is most of the end of a run
 * (libc with its debug symbols: 2 ms of 5): done while tracing runs, as
 * kallsyms' reading is (symbolizer_preload_kernel), for the stacks counted
 * by 0.5, 1, 2, 4... s into it (a pass reads every stack: a long run
 * makes few).  Only where the sideband keeps the processes' maps current
 * (they are read once); -i's prints name as they go.
 */
#define NAME_AHEAD_MS 500

static void name_ahead(struct tool *t, long long at_ms)
{
	struct sw_stacks st = {};
	int err;

	err = walker_read(t->s.w, &st);
	session_sync(&t->s);
	if (!err) {
		for (size_t i = 0; i < st.n; i++) {
			const struct sw_stack *k = &st.v[i];
			uint64_t lo = 0, hi = 0;

			/* a file's mapping holds runs of a stack's frames */
			for (size_t j = 0; j < k->nu; j++)
				if (k->uip[j] < lo || k->uip[j] >= hi)
					symbolizer_open_ahead(t->s.sym, k->tgid,
							      k->uip[j], &lo, &hi);
		}
		if (t->s.o.debug)
			fprintf(stderr, "%s: the files naming the user frames of "
				"%zu stacks opened, %lld ms into tracing\n",
				t->s.o.tool, st.n, at_ms);
	}
	walker_stacks_free(&st);
}

/* Without -i: the wait until the end, naming ahead meanwhile. */
static void wait_naming_ahead(struct tool *t)
{
	bool ahead = t->s.sb && t->fmt.user;
	long long at = NAME_AHEAD_MS;

	while (session_wait(&t->s, ahead ? t->start_ms + at : -1, -1) ==
	       WAKE_TIMEOUT) {
		name_ahead(t, at);
		at *= 2;
	}
}

static int run(struct tool *t)
{
	struct session *s = &t->s;
	const struct walker_opts *wo = &s->wo;
	long long next = -1;
	int e;

	/* before anything is attached: a refused path changes nothing */
	e = open_files(t);
	if (!e)
		e = session_start(s);
	if (e || s->o.kernel_features)
		return e;
	t->fmt = (struct sw_format){
		.kernel = wo->kstack,
		.user = wo->ustack,
		.delimiter = t->delimited && !s->o.kernel_only && !s->o.user_only,
		.offset = t->offset,
		.verbose = t->verbose,
		.folded = t->folded,
		.comm = s->o.perpid && !s->o.pid,
		.folded_comm = wo->per_process,
		.trim_tracepoint = wo->kind == SW_WALKER_FP &&
				   s->pat.type == SW_PAT_TRACEPOINT,
	};
	if (t->interval && deltas_new(&t->deltas))
		return session_die("stackcount", "out of memory");
	if (!t->folded && !t->json)
		fprintf(s->out, "Tracing %u functions for \"%s\"... Hit Ctrl-C to end.\n",
			s->targets.matched, s->o.pattern);
	/* nowhere to print (a full disk, a closed pipe): no point tracing */
	if (!session_flush(s)) {
		struct timespec now;

		e = session_go(s);
		if (e)
			return e;
		clock_gettime(CLOCK_REALTIME, &now);
		t->start_ns = now.tv_sec * 1000000000LL + now.tv_nsec;
		t->start_ms = t->last_ms = session_now_ms();
		if (t->interval)
			next = session_now_ms() + t->interval * 1000;
		if (!t->interval)
			wait_naming_ahead(t);
		else
			while (session_wait(s, next, -1) == WAKE_TIMEOUT &&
			       !print_interval(t, false))
				next += t->interval * 1000;
		/* with no reader left, the files still get the counts */
		if (!print_interval(t, true) && !t->folded && !t->json)
			fprintf(s->out, "Detaching...\n");
	}
	e = session_end(s, session_stop(s));
	return e ? e : t->files_failed;
}

int main(int argc, char **argv)
{
	struct tool t = { .pprof = { .dirfd = -1, .fd = -1 },
			  .svg = { .dirfd = -1, .fd = -1 } };
	int rc;

	rc = parse_args(argc, argv, &t);
	if (rc)
		return rc;
	rc = session_init(&t.s);
	if (!rc)
		rc = run(&t);
	session_free(&t.s);
	deltas_free(t.deltas);
	outfile_free(&t.pprof);
	outfile_free(&t.svg);
	return rc;
}
