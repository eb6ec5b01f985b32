// SPDX-License-Identifier: MIT
/*
 * stackcount: count events by their full stack, summarised in the kernel,
 * and print the unique stacks with their counts -- bcc's tool, on every
 * kernel from 4.1.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "cmd.h"
#include "../compat/semaphore.h"
#include "deltas.h"
#include "output.h"
#include "probe.h"
#include "procs.h"
#include "sideband.h"
#include "symbolize.h"
#include "walker.h"

#define DEFAULT_STORAGE 16384

struct opts {
	pid_t pid;
	int cpu;
	long interval, duration;	/* seconds; 0: none */
	bool timestamp, regexp, offset, perpid, kernel_only, user_only;
	bool verbose, delimited, folded, debug, kernel_features;
	enum sw_walker walker;
	__u32 storage;
	__u32 legacy;
	const char *pattern;
	char **command;
};

struct tool {
	struct opts o;
	struct sw_features f;
	struct sw_pattern pat;
	struct sw_targets targets;
	struct walker *w;
	struct procs *procs;
	struct sideband *sb;
	struct symbolizer *sym;
	struct deltas *deltas;
	struct sw_format fmt;
	struct sw_cmd cmd;
	bool have_cmd;
	int cmd_status;
	pid_t sema_pid;		/* where we set USDT semaphores, to unset */
	int sigfd;
	sigset_t oldmask;
};

static const char usage[] =
"usage: stackcount [-h] [-p PID] [-c CPU] [-i INTERVAL] [-D DURATION] [-T]\n"
"                  [-r] [-s] [-P] [-K] [-U] [-v] [-d] [-f] [--debug]\n"
"                  [--walker {auto,fp,stackmap,getstack}]\n"
"                  [--stack-storage-size SIZE] [--legacy[=VERSION]]\n"
"                  [--kernel-features]\n"
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
"  --debug               print BPF program before starting (for debugging\n"
"                        purposes), and why its walker was chosen\n"
"  --walker WALKER       auto (default), getstack (4.18+), stackmap (4.6+)\n"
"                        or fp (frame pointers, 4.1+)\n"
"  --stack-storage-size SIZE\n"
"                        the number of unique stacks that can be stored\n"
"                        and displayed (default 16384)\n"
"  --legacy[=VERSION]    behave as on a VERSION kernel (4.1-4.5, default\n"
"                        4.4): the fp walker, attached through tracefs\n"
"                        (also: STACKWALK_LEGACY=VERSION)\n"
"  --kernel-features     print what this kernel offers and the walker it\n"
"                        gets, then exit\n"
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
"    ./stackcount -U ./app:work -- ./app    # run ./app, count stacks of work()\n";

/* One line naming the problem and what to do; every error ends here. */
static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int die(const char *fmt, ...)
{
	va_list ap;

	fputs("stackcount: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int parse_long(const char *s, long min, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	if (errno || end == s || *end || *v < min || *v > max)
		return -EINVAL;
	return 0;
}

/* The releases forced legacy mode emulates: before the stack helpers. */
static bool legacy_in_range(__u32 v)
{
	return v >= SW_KVERSION(4, 1, 0) && v < SW_KVERSION(4, 6, 0);
}

enum { OPT_DEBUG = 256, OPT_WALKER, OPT_STORAGE, OPT_LEGACY, OPT_FEATURES };

static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'D' },
		{ "timestamp", no_argument, NULL, 'T' },
		{ "regexp", no_argument, NULL, 'r' },
		{ "offset", no_argument, NULL, 's' },
		{ "perpid", no_argument, NULL, 'P' },
		{ "kernel-stacks-only", no_argument, NULL, 'K' },
		{ "user-stacks-only", no_argument, NULL, 'U' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "delimited", no_argument, NULL, 'd' },
		{ "folded", no_argument, NULL, 'f' },
		{ "debug", no_argument, NULL, OPT_DEBUG },
		{ "walker", required_argument, NULL, OPT_WALKER },
		{ "stack-storage-size", required_argument, NULL, OPT_STORAGE },
		{ "legacy", optional_argument, NULL, OPT_LEGACY },
		{ "kernel-features", no_argument, NULL, OPT_FEATURES },
		{}
	};
	const char *env = getenv("STACKWALK_LEGACY");
	int nargs = argc, c;
	long v;

	memset(o, 0, sizeof(*o));
	o->cpu = -1;
	o->storage = DEFAULT_STORAGE;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			nargs = i;
			o->command = &argv[i + 1];
			break;
		}
	}
	if (env && *env && (sw_version_parse(env, &o->legacy) ||
			    !legacy_in_range(o->legacy)))
		return die("STACKWALK_LEGACY=%s: give a release from 4.1 to 4.5, "
			   "e.g. STACKWALK_LEGACY=4.4", env);
	opterr = 0;
	while ((c = getopt_long(nargs, argv, ":hp:c:i:D:TrsPKUvdf", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'h':
			printf("%s%s", usage, help);
			exit(0);
		case 'p':
			if (parse_long(optarg, 1, INT_MAX, &v))
				return die("invalid PID '%s'; give a process id", optarg);
			o->pid = v;
			break;
		case 'c':
			if (parse_long(optarg, 0, INT_MAX, &v))
				return die("invalid CPU '%s'; give a CPU number", optarg);
			o->cpu = v;
			break;
		case 'i':
		case 'D':
			if (parse_long(optarg, 1, INT_MAX, &v))
				return die("invalid %s '%s'; give a whole number of seconds",
					   c == 'i' ? "interval" : "duration", optarg);
			*(c == 'i' ? &o->interval : &o->duration) = v;
			break;
		case 'T': o->timestamp = true; break;
		case 'r': o->regexp = true; break;
		case 's': o->offset = true; break;
		case 'P': o->perpid = true; break;
		case 'K': o->kernel_only = true; break;
		case 'U': o->user_only = true; break;
		case 'v': o->verbose = true; break;
		case 'd': o->delimited = true; break;
		case 'f': o->folded = true; break;
		case OPT_DEBUG: o->debug = true; break;
		case OPT_FEATURES: o->kernel_features = true; break;
		case OPT_WALKER:
			if (sw_walker_parse(optarg, &o->walker))
				return die("unknown walker '%s'; use auto, getstack, "
					   "stackmap or fp", optarg);
			break;
		case OPT_STORAGE:
			if (parse_long(optarg, 1, 1 << 24, &v))
				return die("invalid stack storage size '%s'; give a "
					   "number of stacks", optarg);
			o->storage = v;
			break;
		case OPT_LEGACY:
			if (sw_version_parse(optarg ? optarg : "4.4", &o->legacy) ||
			    !legacy_in_range(o->legacy))
				return die("--legacy=%s: give a release from 4.1 to "
					   "4.5, e.g. --legacy=4.4", optarg);
			break;
		case ':':
			return die("option '%s' needs an argument; see stackcount --help",
				   argv[optind - 1]);
		default:
			if (optopt)
				return die("unknown option '-%c'; see stackcount --help",
					   optopt);
			return die("unknown option '%s'; see stackcount --help",
				   argv[optind - 1]);
		}
	}
	if (o->kernel_features)
		return 0;
	if (optind >= nargs)
		return die("no pattern given; e.g. stackcount t:sched:sched_switch "
			   "(see stackcount --help)");
	if (optind + 1 < nargs)
		return die("unexpected argument '%s'; give one pattern, and a "
			   "command after --", argv[optind + 1]);
	o->pattern = argv[optind];
	if (o->command && !o->command[0])
		return die("no command after --; e.g. stackcount PATTERN -- ls");
	if (o->kernel_only && o->user_only)
		return die("-K and -U are mutually exclusive; both stacks are "
			   "the default");
	if (o->command && o->pid)
		return die("-p and -- COMMAND both choose what to trace; give one");
	if (o->legacy && o->walker != SW_WALKER_AUTO && o->walker != SW_WALKER_FP)
		return die("--walker %s: forced legacy mode runs the fp walker only; "
			   "drop --walker", sw_walker_name(o->walker));
	if (o->legacy)
		o->walker = SW_WALKER_FP;
	return 0;
}

static bool is_kernel_probe(const struct sw_pattern *p)
{
	return p->type == SW_PAT_KPROBE || p->type == SW_PAT_TRACEPOINT;
}

/* Decide the walker and what it records; refuse what the kernel cannot do. */
static int plan(struct tool *t, struct walker_opts *wo)
{
	const struct opts *o = &t->o;
	const struct sw_features *f = &t->f;
	const char *why = NULL, *no;
	enum sw_walker kind = o->walker;

	if (kind == SW_WALKER_AUTO)
		kind = sw_features_pick(f, &why);
	no = sw_features_refuse(f, kind);
	if (no)
		return die("--walker %s: %s; use --walker auto", sw_walker_name(kind), no);
	memset(wo, 0, sizeof(*wo));
	wo->kind = kind;
	wo->pid = o->pid;
	wo->cpu = o->cpu;
	wo->follow = o->command != NULL;
	wo->storage = o->storage;
	wo->kstack = !o->user_only;
	wo->ustack = !o->kernel_only;
	if (!f->helper_pid) {
		/* 4.1: no way to tell processes apart in the kernel */
		if (o->pid || o->perpid || o->command || o->user_only)
			return die("%s needs bpf_get_current_pid_tgid, which this "
				   "kernel lacks (4.2+); count without it",
				   o->pid ? "-p" : o->perpid ? "-P" :
				   o->command ? "-- COMMAND" : "-U");
		wo->ustack = false;
	}
	if (kind == SW_WALKER_FP && is_kernel_probe(&t->pat) && wo->kstack &&
	    f->unwinder != SW_UNWINDER_FP)
		return die("--walker fp cannot walk kernel frames: this kernel "
			   "has no frame pointers (%s); use -U for user frames, "
			   "or another walker", f->unwinder_why);
	if (kind == SW_WALKER_FP && t->pat.type == SW_PAT_TRACEPOINT &&
	    wo->kstack && !f->jit)
		return die("--walker fp walks a tracepoint's kernel frames from "
			   "the JIT's frame pointer, and the BPF JIT is off; "
			   "enable it: sysctl net.core.bpf_jit_enable=1");
	if (wo->ustack && is_kernel_probe(&t->pat) && kind == SW_WALKER_FP &&
	    !f->helper_tail_call)
		return die("--walker fp needs tail calls (4.2+) for user frames "
			   "of kernel events; use -K");
	if (o->kernel_only && !is_kernel_probe(&t->pat))
		return die("-K keeps kernel stacks only, and the events of user "
			   "functions and USDT probes have none; drop -K");
	wo->per_process = o->perpid || wo->ustack;
	t->fmt = (struct sw_format){
		.kernel = wo->kstack,
		.user = wo->ustack,
		.delimiter = o->delimited && !o->kernel_only && !o->user_only,
		.offset = o->offset,
		.verbose = o->verbose,
		.folded = o->folded,
		.comm = wo->per_process && !o->pid,
		.folded_comm = wo->per_process,
		.trim_tracepoint = kind == SW_WALKER_FP &&
				   t->pat.type == SW_PAT_TRACEPOINT,
	};
	if (o->debug) {
		if (!why)
			why = "chosen with --walker";
		printf("walker: %s (%s)\n", sw_walker_name(kind), why);
	}
	return 0;
}

static bool needs_semaphores(const struct sw_targets *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		if (ts->v[i].semaphore)
			return true;
	return false;
}

/* Add delta to each USDT semaphore this kernel leaves to us, once each. */
static int semaphores(const struct sw_targets *ts, pid_t pid, int delta)
{
	for (size_t i = 0; i < ts->n; i++) {
		const struct sw_target *tg = &ts->v[i];
		bool seen = false;
		int err;

		for (size_t j = 0; j < i && !seen; j++)
			seen = ts->v[j].semaphore == tg->semaphore &&
			       !strcmp(ts->v[j].spec.path, tg->spec.path);
		if (!tg->semaphore || seen)
			continue;
		err = sw_semaphore_add(pid, tg->spec.path, tg->semaphore, delta);
		if (err && delta > 0)
			return err;
	}
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int libbpf_debug(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void print_interval(struct tool *t)
{
	struct sw_stacks s = {};
	char ts[16];
	time_t now;
	int err;

	if (t->sb)
		sideband__drain(t->sb);
	err = walker__read(t->w, &s);
	if (!err && t->o.interval)
		err = deltas__apply(t->deltas, &s);
	if (!t->o.folded)
		putchar('\n');
	if (t->o.timestamp) {
		now = time(NULL);
		strftime(ts, sizeof(ts), "%H:%M:%S", localtime(&now));
		printf("%-8s\n", ts);
	}
	if (!err)
		err = sw_print_stacks(stdout, &s, t->sym, &t->fmt);
	if (err)
		die("cannot read the counted stacks: %s", strerror(-err));
	fflush(stdout);
	sw_stacks__free(&s);
}

static const char *const lost_what[SW_LOST_NR] = {
	[SW_LOST_COUNTS_FULL] = "to a full counts map",
	[SW_LOST_KCOLLISION] = "to kernel stack id collisions",
	[SW_LOST_UCOLLISION] = "to user stack id collisions",
	[SW_LOST_STACKMAP_FULL] = "to a full stack map",
	[SW_LOST_FOLLOW_FULL] = "as children the follow map had no room for",
	[SW_LOST_OUTPUT] = "to a full perf buffer",
	[SW_LOST_TAILCALL] = "to a failed tail call",
};

/* Nothing lost silently: every loss the kernel side counted, said once. */
static void report_losses(struct tool *t)
{
	__u64 lost[SW_LOST_NR], total = 0;
	char line[1024];
	size_t n = 0;

	if (walker__lost(t->w, lost))
		return;
	for (int i = 0; i < SW_LOST_NR; i++)
		total += lost[i];
	if (total) {
		n = snprintf(line, sizeof(line), "%llu stacks lost:",
			     (unsigned long long)total);
		for (int i = 0; i < SW_LOST_NR && n < sizeof(line); i++)
			if (lost[i])
				n += snprintf(line + n, sizeof(line) - n, "%s %llu %s",
					      n > 20 && line[n - 1] != ':' ? "," : "",
					      (unsigned long long)lost[i], lost_what[i]);
		fprintf(stderr, "%s; raise --stack-storage-size (now %u)\n", line,
			t->o.storage);
	}
	if (t->sb && sideband__lost(t->sb))
		fprintf(stderr, "%llu process mapping records lost: some user "
			"frames may show as [unknown]\n",
			(unsigned long long)sideband__lost(t->sb));
}

static int setup_symbols(struct tool *t, bool user)
{
	int err = procs__new(&t->procs);

	if (!err)
		err = symbolizer__new(&t->sym, t->procs);
	if (err || !user)
		return err;
	/* processes that start from now on are followed from the kernel */
	if (sideband__open(t->procs, &t->sb, 0))
		t->sb = NULL;	/* fall back to /proc at print time */
	if (t->o.pid)
		procs__load(t->procs, t->o.pid);
	return 0;
}

static int block_signals(struct tool *t)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, &t->oldmask))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	t->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return t->sigfd < 0 ? -errno : 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Returns true when tracing should end. */
static bool handle_signals(struct tool *t)
{
	struct signalfd_siginfo si;
	bool end = false;
	int ws;

	while (read(t->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGCHLD) {
			end = true;
			continue;
		}
		if (t->have_cmd && waitpid(t->cmd.pid, &ws, WNOHANG) == t->cmd.pid) {
			t->cmd_status = sw_cmd_exit_code(ws);
			t->have_cmd = false;
			end = true;
		}
	}
	return end;
}

static void trace(struct tool *t)
{
	struct pollfd pfd[1 + 256];
	long long start = now_ms(), next_print, end_at;
	const int *sbfds = NULL;
	int nsb = t->sb ? sideband__fds(t->sb, &sbfds) : 0;
	int n = 0;

	pfd[n++] = (struct pollfd){ .fd = t->sigfd, .events = POLLIN };
	for (int i = 0; i < nsb && n < (int)(sizeof(pfd) / sizeof(pfd[0])); i++)
		pfd[n++] = (struct pollfd){ .fd = sbfds[i], .events = POLLIN };
	next_print = t->o.interval ? start + t->o.interval * 1000 : -1;
	end_at = t->o.duration ? start + t->o.duration * 1000 : -1;
	for (;;) {
		long long now = now_ms(), wake = -1;
		int timeout;

		if (end_at >= 0 && now >= end_at)
			return;
		if (next_print >= 0 && now >= next_print) {
			print_interval(t);
			next_print += t->o.interval * 1000;
			continue;
		}
		if (next_print >= 0)
			wake = next_print;
		if (end_at >= 0 && (wake < 0 || end_at < wake))
			wake = end_at;
		timeout = wake < 0 ? -1 : (int)(wake - now);
		if (poll(pfd, n, timeout) < 0 && errno != EINTR)
			return;
		if (pfd[0].revents && handle_signals(t))
			return;
		if (t->sb && n > 1)
			sideband__drain(t->sb);
	}
}

static int run(struct tool *t)
{
	struct walker_opts wo;
	char err[512];
	int e;

	e = sw_features_probe(&t->f, t->o.legacy);
	if (e)
		return die("cannot tell what this kernel offers: %s", strerror(-e));
	if (t->o.kernel_features) {
		sw_features_print(&t->f, stdout);
		return 0;
	}
	if (!t->f.bpf)
		return die("this kernel refuses BPF programs; run as root on a "
			   "kernel with CONFIG_BPF_SYSCALL and CONFIG_BPF_EVENTS");
	if (t->o.legacy && t->f.tracefs[0])
		sw_tracefs_remove_stale(t->f.tracefs);
	else if (!t->f.pmu_kprobe && t->f.tracefs[0])
		sw_tracefs_remove_stale(t->f.tracefs);
	if (sw_pattern_parse(t->o.pattern, t->o.regexp, &t->pat, err, sizeof(err)))
		return die("%s", err) + 1;	/* a usage error */
	if (plan(t, &wo))
		return 1;
	if (t->o.pid && kill(t->o.pid, 0) && errno == ESRCH)
		return die("no process with PID %d; check the PID (ps -e)", t->o.pid);
	e = sw_targets_resolve(&t->pat, &t->f, t->o.pid, &t->targets, err, sizeof(err));
	if (e)
		return die("%s", err);
	if (needs_semaphores(&t->targets) && !t->o.pid && !t->o.command)
		return die("USDT probes of \"%s\" have semaphores, which this "
			   "kernel does not set (4.20+ does); give -p PID or "
			   "-- COMMAND so that stackcount sets them", t->o.pattern);
	if (setup_symbols(t, wo.ustack))
		return die("out of memory");
	if (t->o.interval && deltas__new(&t->deltas))
		return die("out of memory");
	if (t->o.command) {
		/* held at its first instruction while its semaphores are set */
		t->cmd.stop_at_exec = needs_semaphores(&t->targets);
		e = sw_cmd_spawn(&t->cmd, t->o.command, &t->oldmask);
		if (e) {
			die("cannot run %s: %s; check the command", t->o.command[0],
			    strerror(-e));
			return 127;
		}
		t->have_cmd = true;
		if (!walker_can_follow(&t->f)) {
			/* a 4.4 kernel hooks fork with a kretprobe; none here */
			fprintf(stderr, "stackcount: this kernel has no kprobes to "
				"see forks with, so only %s itself is traced, not "
				"the processes it starts\n", t->o.command[0]);
			wo.follow = false;
			wo.pid = t->cmd.pid;
		}
	}
	e = walker__open(&t->w, &t->f, &wo, &t->targets);
	if (e) {
		if (e == -EPERM && !t->f.memlock_ok)
			return die("the kernel refused the BPF program: RLIMIT_MEMLOCK "
				   "could not be raised; run as root or raise it "
				   "(ulimit -l unlimited)");
		return die("cannot load the %s walker: %s; try --debug, or "
			   "another --walker", sw_walker_name(wo.kind), strerror(-e));
	}
	if (t->o.debug)
		printf("%s\n", walker__source(t->w));
	if (t->have_cmd && walker__follow(t->w, t->cmd.pid))
		return die("cannot follow %s: %s", t->o.command[0], strerror(errno));
	e = walker__attach(t->w, &t->targets);
	if (e)
		return die("cannot attach to \"%s\": %s", t->o.pattern, strerror(-e));
	if (t->o.pid && needs_semaphores(&t->targets)) {
		e = semaphores(&t->targets, t->o.pid, 1);
		if (e)
			return die("cannot set the USDT semaphores in PID %d: %s",
				   t->o.pid, strerror(-e));
		t->sema_pid = t->o.pid;
	}
	if (!t->o.folded)
		printf("Tracing %u functions for \"%s\"... Hit Ctrl-C to end.\n",
		       t->targets.matched, t->o.pattern);
	fflush(stdout);
	if (t->have_cmd) {
		e = sw_cmd_go(&t->cmd);
		if (!e && t->cmd.stop_at_exec) {
			e = semaphores(&t->targets, t->cmd.pid, 1);
			if (e)
				die("cannot set the USDT semaphores in %s: %s (only "
				    "its own image's, not libraries', can be set "
				    "at its start)", t->o.command[0], strerror(-e));
			sw_cmd_resume(&t->cmd);
			e = 0;
		}
		if (e) {
			t->have_cmd = false;
			die("cannot run %s: %s; check the command",
			    t->o.command[0], strerror(-e));
			return 127;
		}
	}
	trace(t);
	print_interval(t);
	if (!t->o.folded)
		printf("Detaching...\n");
	fflush(stdout);
	report_losses(t);
	if (t->sema_pid)
		semaphores(&t->targets, t->sema_pid, -1);
	if (t->have_cmd) {
		/* tracing ended first (-D, a signal): end it, as perf record does */
		kill(t->cmd.pid, SIGTERM);
		waitpid(t->cmd.pid, &e, 0);
		t->cmd_status = sw_cmd_exit_code(e);
		t->have_cmd = false;
	}
	return t->o.command ? t->cmd_status : 0;
}

static void cleanup(struct tool *t)
{
	walker__free(t->w);
	if (t->have_cmd) {
		/* stopped early (Ctrl-C, an error): do not leave it waiting */
		if (t->cmd.go >= 0)
			kill(t->cmd.pid, SIGKILL);
		waitpid(t->cmd.pid, NULL, 0);
	}
	sideband__free(t->sb);
	symbolizer__free(t->sym);
	procs__free(t->procs);
	deltas__free(t->deltas);
	sw_targets_free(&t->targets);
	sw_pattern_free(&t->pat);
}

int main(int argc, char **argv)
{
	struct tool t = { .sigfd = -1, .cmd = { .go = -1, .status = -1 } };
	int rc;

	if (parse_args(argc, argv, &t.o))
		return 2;
	libbpf_set_print(t.o.debug ? libbpf_debug : libbpf_quiet);
	if (block_signals(&t))
		return die("cannot set up signal handling: %s", strerror(errno));
	rc = run(&t);
	cleanup(&t);
	return rc;
}
