// SPDX-License-Identifier: MIT
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "session_int.h"
#include "debuginfod.h"
#include "interrupt.h"
#include "kept.h"
#include "ksyms.h"
#include "outfile.h"
#include "procs.h"
#include "sideband.h"
#include "symbolize.h"
#include "uframe.h"
#include "output.h"
#include "untrusted.h"
#include "version.h"
#include "vec.h"


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

bool session_interrupted(struct session *s)
{
	if (!s->interrupted)
		s->interrupted = interrupt_pending();
	return s->interrupted;
}

/* How often a write that waits for room looks for a signal. */
#define ROOM_POLL_MS 100

/*
 * Until stdout has room for PIPE_BUF bytes: a reader that reads no more
 * (a full pipe, a stopped terminal) must not hold the tool past a signal,
 * which is blocked, so does not interrupt a write.
 */
static void wait_room(struct session *s)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };
	int r;

	while ((r = poll(&p, 1, ROOM_POLL_MS)) <= 0) {
		if (r < 0 && errno != EINTR)
			return;		/* the write says what is wrong */
		if (session_interrupted(s)) {
			s->out_err = -EINTR;
			return;
		}
	}
}

/* Output goes through this, so that the first error is known exactly. */
static ssize_t out_write(void *cookie, const char *buf, size_t n)
{
	struct session *s = cookie;

	for (size_t done = 0, k; !s->out_err && done < n; done += k) {
		k = n - done < PIPE_BUF ? n - done : PIPE_BUF;
		wait_room(s);
		if (!s->out_err)
			outfile_write_fd(STDOUT_FILENO, &s->out_err, buf + done, k);
	}
	return s->out_err ? -1 : (ssize_t)n;
}

int session_flush(struct session *s)
{
	if (fflush(s->out) && !s->out_err)
		s->out_err = -EIO;
	return s->out_err;
}

static const char *signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP";
}

int session_end(struct session *s, int status)
{
	int e = session_flush(s);

	if (s->interrupted) {
		fprintf(stderr, "%s: stopped by %s before the output was complete\n",
			s->o.tool, signal_name(s->interrupted));
		return 128 + s->interrupted;
	}

	/* the reader has all it wanted: as if it had all there was */
	if (!e || e == -EPIPE)
		return status;
	return die(s, "cannot write the output: %s", strerror(-e));
}

/* Each file refused is said once, however many frames it would name. */
void session_warn_skip(void *ctx, const char *what, const char *why)
{
	struct session *s = ctx;
	char shown[1024], **v;

	for (size_t i = 0; i < s->nr_skipped; i++)
		if (!strcmp(s->skipped[i], what))
			return;
	v = realloc(s->skipped, (s->nr_skipped + 1) * sizeof(*v));
	if (v) {
		s->skipped = v;
		v[s->nr_skipped] = strdup(what);
		if (v[s->nr_skipped])
			s->nr_skipped++;
	}
	fprintf(stderr, "%s: skipping %s: %s\n", s->o.tool,
		untrusted_escape(shown, sizeof(shown), what), why);
}

int session_init(struct session *s)
{
	cookie_io_functions_t io = { .write = out_write };
	struct stat st;
	sigset_t set;

	/*
	 * Blocks of 64 KB and over (the unwind tables' scratch, file images)
	 * are mapped and given back whole when freed.  glibc would otherwise
	 * raise that threshold to the largest block freed so far, and carve
	 * later blocks from a heap it never shrinks: a run that built one
	 * large table would keep its scratch's peak for good.
	 */
	mallopt(M_MMAP_THRESHOLD, 64 << 10);
	s->out = fopencookie(s, "w", io);
	if (!s->out)
		return session_die(s->o.tool, "out of memory");
	/* a pipe or socket tells when its reader has gone: stop then */
	s->out_watch = !fstat(STDOUT_FILENO, &st) &&
		       (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));

	s->sigfd = -1;
	s->cmd.go = s->cmd.status = -1;
	s->end_at = -1;
	libbpf_set_print(s->o.debug ? libbpf_debug : libbpf_quiet);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, &s->oldmask))
		return die(s, "cannot set up signal handling: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0)
		return die(s, "cannot set up signal handling: %s", strerror(errno));
	return 0;
}

/* A quarter of MemTotal in bytes, the most the maps may take; 0: unknown. */
static __u64 map_limit(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	unsigned long long kb = 0;
	char line[128];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024 / 4;
}

static struct ksyms *kernel_symbols(void *ctx);

static bool is_kernel_probe(const struct sw_pattern *p)
{
	return p->type == SW_PAT_KPROBE || p->type == SW_PAT_TRACEPOINT;
}

/*
 * Decide the walker and what it records; refuse what the kernel cannot do
 * (1), and options that cannot go with the pattern (2, a usage error).
 */
static int plan(struct session *s)
{
	const struct session_opts *o = &s->o;
	const struct sw_features *f = &s->f;
	struct walker_opts *wo = &s->wo;
	bool kprobe = is_kernel_probe(&s->pat);
	enum sw_walker kind = o->walker;
	const struct walker_desc *d;
	struct walker_need need = {};
	char err[512] = "";
	bool no_user = false, stand_in;

	/* what the kernel cannot probe at all is the first thing to say */
	if (probe_pattern_check(&s->pat, f, err, sizeof(err)))
		return die(s, "%s", err);
	s->why = "chosen with --walker";
	if (o->sink == SINK_EXPLAIN) {
		int e = walkers_explain(f, kind, kprobe, &kind, &s->why, err,
					sizeof(err));

		if (e)
			return die(s, "%s", err) + (e == 2);
		/* a walker that sends frames and the rules between them */
		s->explain_rules = kind != SW_WALKER_FP;
	}
	memset(wo, 0, sizeof(*wo));
	wo->rows_fd = -1;
	wo->sink = s->explain_rules ? SINK_EMIT : o->sink;
	wo->kstack = !o->user_only && (kprobe || !o->own_side);
	wo->ustack = !o->kernel_only && (!kprobe || !o->own_side || o->user_only);
	if (wo->sink == SINK_EMIT && (!f->helper_output || !f->map_perf_array))
		wo->sink = SINK_PRINTK;	/* 4.1-4.3: trace_printk */
	wo->pid = o->pid;
	wo->cpu = o->cpu;
	wo->follow = o->command != NULL;
	wo->storage = o->storage;
	wo->unwind_mb = o->unwind_mb;
	wo->map_limit = map_limit();
	/* for the tests: tests/outfiles.bats signals a start half done */
	if (getenv("STACKWALK_ATTACH_STOP"))
		wo->stop_after = (unsigned)strtoul(getenv("STACKWALK_ATTACH_STOP"), NULL, 10);
	wo->kernel_symbols = kernel_symbols;
	wo->ksyms_ctx = s;
	if (o->sink == SINK_EXPLAIN) {
		/* one walk: where the event fired */
		wo->kstack = kprobe;
		wo->ustack = !kprobe;
	}
	/* the cfi walker's stand-in (4.1-4.8) may walk this run's user frames */
	stand_in = wo->ustack && !walker_cfi_runs(f) &&
		   (kind == SW_WALKER_AUTO || kind == SW_WALKER_CFI);
	if (!f->helper_pid) {
		/* 4.1: the walker's one program finds the process itself */
		int e = -EOPNOTSUPP;

		if (kprobe && (o->pid || o->perpid || o->command || wo->ustack ||
			       o->cpu >= 0))
			e = task_calib(f, &wo->task41);
		if (e && (o->pid || o->perpid || o->command || o->user_only))
			return die(s, "%s needs the process of each event, which "
				   "this kernel (no bpf_get_current_pid_tgid, 4.2+) "
				   "gives BPF only through the task at its kernel "
				   "stack's base, not found here: %s; trace "
				   "system-wide, without it", o->pid ? "-p" :
				   o->perpid ? "-P" : o->command ? "-- COMMAND" :
				   "-U", strerror(-e));
		/* not silently (said once the run is sure to go on) */
		no_user = wo->ustack && wo->kstack && e;
		if (no_user)
			wo->ustack = false;
		s->task41_err = e;
	} else if (kprobe && stand_in && !walker_cfi41_chained(f)) {
		/* no CPU helper: the cfi walker's stand-in finds them as 4.1 does */
		need.no_task = task_calib(f, &wo->task41) != 0;
	} else if ((wo->follow || (stand_in && walker_cfi41_chained(f))) &&
		   !f->prog_tracepoint) {
		/*
		 * 4.2-4.6: a fork's child is seen by its task (src/walker.c),
		 * by -- COMMAND and by the cfi walker's lists
		 */
		task_calib(f, &wo->task41);
	}
	/* 4.1: the CPU from the thread_info, if it was found */
	if (o->cpu >= 0 && !f->helper_cpu && !wo->task41.cpu)
		return die(s, "-c needs bpf_get_smp_processor_id, which this "
			   "kernel lacks (4.2+), or the CPU in the thread_info "
			   "at the kernel stack's base, not found here (it is "
			   "measured on two CPUs); trace every CPU, without -c");
	need.kernel_event = kprobe;
	need.tracepoint = s->pat.type == SW_PAT_TRACEPOINT;
	need.syscall_tp = need.tracepoint && s->pat.category &&
			  !strcmp(s->pat.category, "syscalls");
	need.kstack = wo->kstack;
	need.ustack = wo->ustack;
	need.explain = o->sink == SINK_EXPLAIN;
	need.events = o->sink != SINK_COUNT;
	/* the CPU as programs without a CPU helper find it (4.1's) */
	need.no_cpu = !wo->task41.cpu && libbpf_num_possible_cpus() > 1;
	if (kind == SW_WALKER_AUTO) {
		d = walkers_pick(f, &need, NULL, &s->why, err, sizeof(err));
		if (!d)
			return die(s, "%s", err);
	} else {
		d = walkers_get(f, kind);
		if (d->refuse(f, &need, err, sizeof(err)))
			return die(s, "%s", err);
	}
	wo->kind = d->kind;
	s->hooks = session_hooks_of(d->kind);
	s->need = need;
	s->walker_auto = kind == SW_WALKER_AUTO;
	if (o->kernel_only && !kprobe)
		return die(s, "-K keeps kernel stacks only, and the events of user "
			   "functions and USDT probes have none; drop -K") + 1;
	wo->per_process = o->perpid || wo->ustack || o->sink != SINK_COUNT;
	if (o->debug)
		fprintf(s->out, "walker: %s (%s)\n", d->name, s->why);
	if (o->debug && wo->task41.pid)
		fprintf(s->out, "the task at a kernel stack's base: "
			"task_struct.stack +%u, pid +%u, comm +%u; "
			"thread_info.cpu +%u (measured on our threads)\n",
			wo->task41.stack, wo->task41.pid, wo->task41.comm,
			wo->task41.cpu);
	if (no_user)
		fprintf(stderr, "%s: user frames are not recorded: this kernel "
			"has no bpf_get_current_pid_tgid (4.2+) to say whose "
			"they are, and the task at its kernel stack's base was "
			"not found: %s; kernel frames only (-K: the same, "
			"without this line)\n", o->tool, strerror(-s->task41_err));
	return 0;
}

/*
 * The initial PID namespace's inode is fixed (PROC_PID_INIT_INO, 3.8+):
 * any other is a child, whose process ids BPF does not see.
 */
static bool in_child_pidns(void)
{
	struct stat st;

	return !stat("/proc/self/ns/pid", &st) && st.st_ino != 0xeffffffcu;
}

/* The kernel's table, then the walker auto picks in general, and why. */
static void print_features(struct session *s)
{
	const struct walker_desc *d, *u;
	const char *why = NULL;
	char no[512];
	struct walker_need user = { .kernel_event = true, .ustack = true },
			   uprobe = { .ustack = true };

	kfeatures_print(&s->f, s->out);
	d = walkers_pick(&s->f, NULL, NULL, &why, no, sizeof(no));
	fprintf(s->out, "%-34s %s: %s\n", "walker", d ? d->name : "none",
		d ? why : no);
	/* 4.1-4.8: a kprobe's user frames take another walker, and 4.3-4.8 a uprobe's */
	u = walkers_pick(&s->f, &user, NULL, &why, no, sizeof(no));
	if (d && u && u != d)
		fprintf(s->out, "%-34s %s: %s\n", "walker, a kprobe's user frames", u->name,
			why);
	u = walkers_pick(&s->f, &uprobe, NULL, &why, no, sizeof(no));
	if (d && u && u != d)
		fprintf(s->out, "%-34s %s: %s\n", "walker, a uprobe's stacks", u->name,
			why);
}

/* Exited processes kept before the first eviction, and added before each next. */
#define EVICT_MIN 256

/* A process mapped code: open its file while it can be seen; the hooks'. */
static void on_map(void *ctx, uint32_t pid, const struct proc_map *m)
{
	struct session *s = ctx;

	symbolizer_prefetch(s->sym, pid, m);
	if (s->hooks && s->hooks->mapped)
		s->hooks->mapped(s, pid);
}

/* The symbol sources, empty yet: kallsyms is read when first asked for. */
static int open_symbols(struct session *s)
{
	int err = procs_new(&s->procs);

	if (!err)
		err = symbolizer_new(&s->sym, s->procs);
	if (!err && s->o.no_demangle)
		symbolizer_set_demangle(s->sym, false);
	if (!err)
		symbolizer_set_budget(s->sym, (uint64_t)s->o.file_mb << 20);
	if (!err)
		symbolizer_on_skip(s->sym, session_warn_skip, s);
	if (!err && !s->o.no_debuginfod)
		err = debuginfod_new(&s->remote, s->o.tool);
	if (!err)
		symbolizer_set_debuginfod(s->sym, s->remote);
	return err;
}

/* kallsyms, read once, for whoever asks: see symbolizer_kernel_symbols */
static struct ksyms *kernel_symbols(void *ctx)
{
	struct session *s = ctx;
	struct ksyms *ks;

	return symbolizer_kernel_symbols(s->sym, &ks) ? NULL : ks;
}

static bool has_kernel_symbol(void *ctx, const char *name)
{
	struct ksyms *ks = kernel_symbols(ctx);

	return ks && ksyms_get(ks, name);
}

static int setup_symbols(struct session *s)
{
	int err = 0;

	if (!s->wo.ustack)
		return err;
	/* what is not traced need not be named: -p's process, COMMAND's tree */
	if (s->o.pid)
		procs_set_scope(s->procs, PROCS_ONE);
	else if (s->o.command)
		procs_set_scope(s->procs, PROCS_TREE);
	s->evict_at = EVICT_MIN;
	/* processes that start from now on are followed from the kernel */
	if (sideband_open(s->procs, &s->sb, s->o.sideband_pages))
		s->sb = NULL;	/* fall back to /proc at print time */
	else
		sideband_on_map(s->sb, on_map, s);
	if (s->o.pid && procs_trace(s->procs, s->o.pid))
		return -ENOMEM;
	if (s->o.pid)
		procs_load(s->procs, s->o.pid);
	/* the binaries probed are ours to open, by whatever path they run */
	for (size_t i = 0; i < s->targets.n; i++)
		if (s->targets.v[i].spec.path && (!i ||
		    strcmp(s->targets.v[i].spec.path, s->targets.v[i - 1].spec.path)))
			symbolizer_add_file(s->sym, s->targets.v[i].spec.path);
	return 0;
}

/* A target as an error line names it: what it is, and where. */
static const char *target_desc(const struct session *s,
			       const struct sw_target *tg, char *buf, size_t len)
{
	char name[256], path[256];

	untrusted_escape(name, sizeof(name), tg->name);
	switch (s->pat.type) {
	case SW_PAT_KPROBE:
		snprintf(buf, len, "kernel function %s", name);
		break;
	case SW_PAT_TRACEPOINT:
		snprintf(buf, len, "tracepoint %s", name);
		break;
	default:
		untrusted_escape(path, sizeof(path), tg->spec.path);
		snprintf(buf, len, "%s%s in %s", s->pat.type == SW_PAT_USDT ?
			 "USDT probe " : "", name, path);
		break;
	}
	return buf;
}

/* Whether tg is the first refused target of its name, none of which attached. */
static bool name_skipped(const struct sw_targets *t, size_t i)
{
	for (size_t j = 0; j < t->n; j++)
		if (j != i && !strcmp(t->v[j].name, t->v[i].name) &&
		    (!t->v[j].attach_err || j < i))
			return false;
	return true;
}

/* A target refused before attaching (insn.h): "[its ]first instruction [is ]..." */
static const char *refused_why(const struct sw_target *tg, bool sentence,
			       char *buf, size_t len)
{
	snprintf(buf, len, "%s%sinstruction %s%s", sentence ? "its " : "",
		 tg->role == SW_ROLE_UENTRY ? "first " : "",
		 sentence ? "is " : "", insn_why(tg->refused));
	return buf;
}

/* A skipped target, keyed by why: those of one why are named together. */
struct skipped {
	enum insn_verdict refused;
	enum sw_role role;
	int err;
	size_t i;
};

static int cmp_skipped(const void *pa, const void *pb)
{
	const struct skipped *a = pa, *b = pb;

	if (a->refused != b->refused)
		return a->refused < b->refused ? -1 : 1;
	if (a->role != b->role)
		return a->role < b->role ? -1 : 1;
	if (a->err != b->err)
		return a->err < b->err ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static bool same_why(const struct skipped *a, const struct skipped *b)
{
	return a->refused == b->refused && a->role == b->role && a->err == b->err;
}

/* Names given for each why at most: a hostile binary may have many. */
#define SKIPPED_NAMES 50

/*
 * What a wildcard left out, on one line however many: the count, then
 * each name, grouped by why.  "Tracing N" then counts what is traced.
 */
static void session_warn_skipped_targets(struct session *s)
{
	struct sw_targets *t = &s->targets;
	const char *noun = s->pat.type == SW_PAT_TRACEPOINT ? "tracepoints" :
			   s->pat.type == SW_PAT_USDT ? "USDT probes" : "functions";
	struct skipped *v = malloc(t->n * sizeof(*v));
	char name[128], why[256], *line = NULL;
	size_t n = 0, named = 0, len = 0;
	FILE *f;

	for (size_t i = 0; i < t->n; i++) {
		if (!t->v[i].attach_err || !name_skipped(t, i))
			continue;
		if (v)
			v[named++] = (struct skipped){ t->v[i].refused, t->v[i].role,
						       t->v[i].attach_err, i };
		n++;
	}
	/* short of memory, the line is written as it goes, or only counts */
	f = n ? open_memstream(&line, &len) : NULL;
	if (n && !f)
		f = stderr;
	if (f)
		fprintf(f, "%s: skipped %zu of %u %s that cannot be probed:",
			s->o.tool, n, t->matched, noun);
	if (v)
		qsort(v, named, sizeof(*v), cmp_skipped);
	for (size_t g = 0, j; g < named; g = j) {
		const struct sw_target *tg = &t->v[v[g].i];

		for (j = g; j < named && same_why(&v[g], &v[j]); j++)
			if (j - g < SKIPPED_NAMES)
				fprintf(f, "%s %s", j > g ? "," : g ? ";" : "",
					untrusted_escape(name, sizeof(name),
							 t->v[v[j].i].name));
		if (j - g > SKIPPED_NAMES)
			fprintf(f, " and %zu more", j - g - SKIPPED_NAMES);
		fprintf(f, " (%s)", tg->refused ?
			refused_why(tg, false, why, sizeof(why)) :
			attach_why(tg->spec.kind, tg->attach_err, true));
	}
	if (f == stderr)
		fputc('\n', stderr);
	else if (f && !fclose(f))
		fprintf(stderr, "%s\n", line);
	free(line);
	free(v);
	t->matched -= n;
}

/*
 * Every target refused before attaching (insn.h): said of the first, as
 * the kernel's own refusal of a single target is, before anything runs.
 */
static int refuse_all(struct session *s)
{
	const struct sw_target *tg = s->targets.v;
	char what[600], why[256];

	if (!s->targets.n)
		return 0;
	for (size_t i = 0; i < s->targets.n; i++)
		if (!s->targets.v[i].refused)
			return 0;
	return die(s, "cannot attach to %s: %s", target_desc(s, tg, what,
		   sizeof(what)), refused_why(tg, true, why, sizeof(why)));
}

/* How the targets were attached: --debug, and the tests, tell links apart. */
static void debug_attached(struct session *s)
{
	size_t links, linked, ok = 0;

	walker_links(s->w, &links, &linked);
	for (size_t i = 0; i < s->targets.n; i++)
		ok += !s->targets.v[i].attach_err;
	fprintf(s->out, "attached %zu of %zu probes: %zu through %zu multi-probe "
		"links, %zu one by one\n", ok, s->targets.n, linked, links,
		ok - linked);
}

/* auto's next walker after *d, said with why *d was passed over; false: none */
static bool next_walker(struct session *s, const struct walker_desc **d,
			const char *why)
{
	const struct walker_desc *next;
	char no[512];

	next = walkers_pick(&s->f, &s->need, *d, &s->why, no, sizeof(no));
	if (!next)
		return false;
	fprintf(stderr, "%s: %s; using the %s walker\n", s->o.tool, why,
		next->name);
	*d = next;
	s->wo.kind = next->kind;
	s->hooks = session_hooks_of(next->kind);
	return true;
}

/*
 * The walker loaded; where auto picked it, the next of auto's list in its
 * place, said in one line, when the kernel refused it (a verifier's
 * limit, say).
 * STACKWALK_REFUSE_WALKER=NAME, for the tests, has the kernel refuse that
 * walker as a verifier would.
 */
/* walker_opts.beside_load: the walker's start hook, beside its load */
static int start_beside(void *ctx, const struct walker *w)
{
	struct session *s = ctx;

	s->beside_status = s->hooks->start(s, w);
	s->beside_ran = true;
	return 0;
}

static int open_walker(struct session *s, __u64 *need)
{
	const char *refuse = getenv("STACKWALK_REFUSE_WALKER");
	const struct walker_desc *d = walkers_get(&s->f, s->wo.kind);
	char why[256];
	int e;

	for (;;) {
		/* the callers the %rbp chain misses, for a walker without CFI */
		if (d->uframes != SW_UFRAMES_NONE && s->wo.ustack)
			s->uframe_clashes = uframe_rules(&s->targets);
		s->wo.beside_load = s->hooks && s->hooks->start ? start_beside : NULL;
		s->wo.beside_ctx = s;
		s->beside_ran = false;
		if (refuse && !strcmp(refuse, d->name))
			e = -EACCES;
		else
			e = walker_open(&s->w, &s->f, &s->wo, &s->targets, need);
		/* what the start hook did for a walker that did not load goes */
		if (e && s->hooks && s->hooks->free)
			s->hooks->free(s);
		if (!e || !s->walker_auto || e == -ENOMEM ||
		    (e == -E2BIG && s->wo.map_limit && *need > s->wo.map_limit))
			return e;
		snprintf(why, sizeof(why), "the kernel refused the %s walker (%s)",
			 d->name, e == -E2BIG ? "too complex for its verifier" :
			 e == -EACCES ? "its verifier rejected a program" :
			 strerror(-e));
		if (!next_walker(s, &d, why))
			return e;
	}
}

/* The walker loaded, following COMMAND, attached: 0 or said. */
static int start_walker(struct session *s)
{
	const struct sw_target *bad;
	char what[600];
	__u64 need;
	int e;

	e = open_walker(s, &need);
	if (e == -E2BIG && s->wo.map_limit && need > s->wo.map_limit)
		return die(s, "--stack-storage-size %u: the maps for that many "
			   "stacks can take %llu bytes, more than a quarter of "
			   "this machine's memory (%llu bytes); give a smaller "
			   "size", s->o.storage, (unsigned long long)need,
			   (unsigned long long)s->wo.map_limit) + 1;
	if (e) {
		if (e == -EPERM && !s->f.memlock_ok)
			return die(s, "the kernel refused the BPF program: "
				   "RLIMIT_MEMLOCK could not be raised; run as "
				   "root or raise it (ulimit -l unlimited)");
		if (e == -E2BIG)
			return die(s, "the kernel's verifier found the %s walker's "
				   "program too complex to check (E2BIG); try "
				   "another --walker", walkers_name(s->wo.kind));
		return die(s, "cannot load the %s walker: %s; try --debug, or "
			   "another --walker", walkers_name(s->wo.kind),
			   strerror(-e));
	}
	if (s->o.debug) {
		fprintf(s->out, "%s\n", walker_source(s->w));
		walker_print_lists(s->w, s->out);
	}
	if (s->hooks && s->hooks->start)
		e = s->beside_ran ? s->beside_status : s->hooks->start(s, s->w);
	if (e)
		return e;
	e = s->have_cmd ? walker_follow(s->w, s->cmd.pid) : 0;
	if (e)
		return die(s, "cannot follow %s: %s", s->o.command[0], strerror(-e));
	e = walker_attach(s->w, &s->targets, &bad);
	if (e == -EINTR && session_interrupted(s))
		return 128 + s->interrupted;
	if (e && bad)
		return die(s, "cannot attach to %s: %s", target_desc(s, bad, what,
			   sizeof(what)), attach_why(bad->spec.kind, e, false));
	if (e)
		return die(s, "cannot attach to \"%s\": %s", s->o.pattern, strerror(-e));
	if (s->o.debug)
		debug_attached(s);
	return 0;
}

/* Between the steps of the start: 128 + a signal that asks to end, or 0. */
static int stopped(struct session *s)
{
	return session_interrupted(s) ? 128 + s->interrupted : 0;
}

static bool features_load(void *ctx, const void *key, size_t keylen, void *buf,
			  size_t len)
{
	return kept_blob_load(ctx, "features", key, keylen, buf, len);
}

static void features_store(void *ctx, const void *key, size_t keylen,
			   const void *buf, size_t len)
{
	kept_blob_store(ctx, "features", key, keylen, buf, len);
}

/* The kernel's features, those that hold for the boot as a run kept them (kept.h). */
static int probe_kernel(struct session *s)
{
	struct kept *k;
	struct sw_keep keep = { .load = features_load, .store = features_store };
	int e = kept_open(&k, NULL);

	if (e)
		return e;
	keep.ctx = k;
	e = kfeatures_probe(&s->f, s->o.legacy, has_kernel_symbol, s,
			    k ? &keep : NULL);
	kept_free(k);
	return e;
}

int session_start(struct session *s)
{
	char err[512] = "";
	int e;

	session_tables_warm(s);
	if (open_symbols(s))
		return die(s, "out of memory");
	e = probe_kernel(s);
	if (e)
		return die(s, "cannot tell what this kernel offers: %s", strerror(-e));
	if (s->o.small_keys)
		kfeatures_force_small_keys(&s->f);
	if (s->o.no_find_vma)
		kfeatures_force_no_find_vma(&s->f);
	if (s->o.no_links)
		kfeatures_force_no_links(&s->f);
	if (s->o.no_vma_lists)
		kfeatures_force_no_vma_lists(&s->f);
	if (s->o.walk_state)
		kfeatures_force_walk_state(&s->f, s->o.walk_state == 2);
	if (s->o.kernel_features) {
		print_features(s);
		return 0;
	}
	if (!s->f.bpf)
		return die(s, "this kernel refuses BPF programs; run as root on "
			   "a kernel with CONFIG_BPF_SYSCALL and CONFIG_BPF_EVENTS");
	if (in_child_pidns())
		return die(s, "this is a PID namespace of its own, and BPF sees "
			   "the host's process ids, which do not name processes "
			   "here; run it in the host's (e.g. nsenter -t 1 -p -m)");
	/* probing changed nothing; tracing may: no tracefs is no error here */
	kfeatures_prepare(&s->f);
	if ((s->o.legacy || !s->f.pmu_kprobe) && s->f.tracefs[0])
		tracefs_remove_stale(s->f.tracefs);
	if (probe_pattern_parse(s->o.pattern, s->o.regexp, &s->pat, err, sizeof(err)))
		return die(s, "%s", err) + 1;	/* a usage error */
	e = plan(s);
	if (e)
		return e;
	if (!s->hooks)
		session_tables_drop(s);
	if (s->o.pid && kill(s->o.pid, 0) && errno == ESRCH)
		return die(s, "no process with PID %d; check the PID (ps -e)", s->o.pid);
	/* the kernel side filters on the process: a thread id matches nothing */
	if (s->o.pid && (pid_t)procs_tgid_of(s->o.pid) != s->o.pid) {
		pid_t tgid = procs_tgid_of(s->o.pid);

		fprintf(stderr, "%s: -p %d is a thread of process %d: tracing %d\n",
			s->o.tool, s->o.pid, tgid, tgid);
		s->o.pid = s->wo.pid = tgid;
	}
	e = probe_targets_resolve(&s->pat, &s->f, s->pat.type == SW_PAT_KPROBE ?
			       kernel_symbols(s) : NULL, s->remote, s->o.pid,
			       &s->targets, err, sizeof(err));
	if (stopped(s))
		return stopped(s);
	if (e)
		return die(s, "%s", err) + s->targets.malformed;
	if (s->targets.replaced) {
		char shown[512];

		fprintf(stderr, "%s: process %d runs %s as it was before it was "
			"deleted or replaced on disk: probing that copy (%s)\n",
			s->o.tool, s->o.pid, untrusted_escape(shown, sizeof(shown),
			s->targets.replaced), s->pat.libpath);
	}
	e = refuse_all(s);
	if (e)
		return e;
	if (session_needs_semaphores(&s->targets) && !s->o.pid && !s->o.command)
		return die(s, "USDT probes of \"%s\" have semaphores, which this "
			   "kernel does not set (4.20+ does); give -p PID or -- "
			   "COMMAND so that %s sets them", s->o.pattern, s->o.tool);
	if (setup_symbols(s))
		return die(s, "out of memory");
	if (stopped(s))
		return stopped(s);
	if (s->o.command && (e = session_spawn(s)))
		return e;
	/*
	 * Loading and attaching can take seconds (a large stack map, many
	 * probes), while a busy system fills the buffers: drain them meanwhile.
	 */
	if (s->sb && sideband_background(s->sb))
		fprintf(stderr, "%s: cannot read process mapping records while "
			"starting: user frames of processes started meanwhile may "
			"show as [unknown]\n", s->o.tool);
	s->wo.rows_fd = session_tables_rows(s);
	/*
	 * Without the VMA offsets from BTF, the cfi walker measures them on
	 * this process (src/vma_calib.c), against its own maps: the tables'
	 * thread must not map or unmap memory meanwhile.  It ran on
	 * meanwhile once the kernel's features were kept (0.2 ms, not 4).
	 */
	if (s->wo.kind == SW_WALKER_CFI && !s->f.helper_find_vma &&
	    !s->f.vma_list_ok)
		session_tables_settle(s);
	e = start_walker(s);
	if (s->sb)
		sideband_background_stop(s->sb);
	if (e)
		return e;
	/* the drain thread has stopped: from now on mappings reach the hooks */
	if (s->hooks && s->hooks->started)
		s->hooks->started(s);
	session_warn_skipped_targets(s);
	if (s->uframe_clashes)
		fprintf(stderr, "%s: %zu probes inside functions share their "
			"offset in a page with one whose CFI row differs, and get "
			"no caller rule: where the %%rbp chain skips their callers, "
			"those are lost; trace them in separate runs\n", s->o.tool,
			s->uframe_clashes);
	if (s->o.pid && session_needs_semaphores(&s->targets)) {
		e = session_semaphores(&s->targets, s->o.pid, 1);
		if (e)
			return die(s, "cannot set the USDT semaphores in PID %d: %s",
				   s->o.pid, strerror(-e));
		s->sema_pid = s->o.pid;
	}
	if (s->wo.kstack)
		symbolizer_preload_kernel(s->sym);
	if (s->o.duration)
		s->end_at = session_now_ms() + s->o.duration * 1000;
	return stopped(s);
}

long long session_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Returns true when tracing should end. */
static bool handle_signals(struct session *s)
{
	struct signalfd_siginfo si;
	bool end = false;
	int ws;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGCHLD) {
			s->nr_signals++;
			end = true;
			continue;
		}
		if (s->have_cmd && cmd_wait(&s->cmd, &ws, WNOHANG) == s->cmd.pid) {
			s->cmd_status = cmd_exit_code(ws);
			s->have_cmd = false;
			end = true;
		}
		if (s->hooks && s->hooks->child)
			s->hooks->child(s);
	}
	return end;
}

/* The tgids of counted stacks, sorted, to tell who may be forgotten. */
struct tgids {
	__u32 *v;
	size_t n, cap;
	int err;
	pid_t cmd;
};

static void add_tgid(void *ctx, __u32 tgid)
{
	struct tgids *t = ctx;

	if (VEC_GROW(t->v, t->n, t->cap, 256)) {
		t->err = -ENOMEM;
		return;
	}
	t->v[t->n++] = tgid;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static bool still_needed(void *ctx, uint32_t pid)
{
	const struct tgids *t = ctx;

	/* COMMAND's own entry says at the end whether its start was heard */
	return (t->cmd > 0 && pid == (uint32_t)t->cmd) ||
	       bsearch(&pid, t->v, t->n, sizeof(*t->v), cmp_u32);
}

/*
 * Forget the processes that exited and whose frames will never be asked
 * for: stackcount's no counted stack is of; stacksnoop's have had their
 * events printed (they came before the exit), but for those held back.
 */
static void evict(struct session *s)
{
	struct tgids t = { .cmd = s->o.command ? s->cmd.pid : 0 };
	size_t scan = 0;

	if (s->o.sink == SINK_COUNT) {
		if (walker_counted_tgids(s->w, add_tgid, &t) || t.err)
			goto out;
		scan = t.n;
		qsort(t.v, t.n, sizeof(*t.v), cmp_u32);
	} else if (walker_events_fd(s->w) >= 0) {
		walker_events_poll(s->w, false);
		walker_held_tgids(s->w, add_tgid, &t);
		if (t.err)
			goto out;
		qsort(t.v, t.n, sizeof(*t.v), cmp_u32);
	}
	procs_evict(s->procs, still_needed, &t);
out:
	/* the next key scan waits for a quarter as many exits as it reads */
	s->evict_at = procs_nr_dead(s->procs) +
		      (scan / 4 > EVICT_MIN ? scan / 4 : EVICT_MIN);
	free(t.v);
}

void session_sync(struct session *s)
{
	if (!s->sb)
		return;
	sideband_drain(s->sb);
	if (s->hooks && s->hooks->sync)
		s->hooks->sync(s);
	if (s->w && procs_nr_dead(s->procs) >= s->evict_at)
		evict(s);
}

enum session_wake session_wait(struct session *s, long long at_ms, int fd)
{
	const int *sbfds = NULL;
	int nsb = s->sb ? sideband_fds(s->sb, &sbfds) : 0, n = 0, ifd = -1;
	int ofd = -1;
	/* one per CPU's sideband buffer, however many CPUs: none unpolled */
	struct pollfd pfd[3 + (nsb > 0 ? nsb : 0)];

	pfd[n++] = (struct pollfd){ .fd = s->sigfd, .events = POLLIN };
	if (fd >= 0) {
		ifd = n;
		pfd[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	if (s->out_watch) {
		/* no events asked: POLLERR (pipe) or POLLHUP (socket) still come */
		ofd = n;
		pfd[n++] = (struct pollfd){ .fd = STDOUT_FILENO };
	}
	for (int i = 0; i < nsb; i++)
		pfd[n++] = (struct pollfd){ .fd = sbfds[i], .events = POLLIN };
	for (;;) {
		long long now = session_now_ms(), wake = at_ms;
		int timeout;

		if (s->end_at >= 0 && now >= s->end_at)
			return WAKE_END;
		if (at_ms >= 0 && now >= at_ms)
			return WAKE_TIMEOUT;
		if (s->end_at >= 0 && (wake < 0 || s->end_at < wake))
			wake = s->end_at;
		/* the hooks' work waiting for its time */
		if (s->hooks && s->hooks->due) {
			long long due = s->hooks->due(s);

			if (due >= 0 && (wake < 0 || due < wake))
				wake = due;
		}
		/* records the sideband held to keep their order */
		if (s->sb && sideband_holding(s->sb) &&
		    (wake < 0 || now + SIDEBAND_HOLD_MS < wake))
			wake = now + SIDEBAND_HOLD_MS;
		timeout = wake < 0 ? -1 : wake > now ? (int)(wake - now) : 0;
		if (poll(pfd, n, timeout) < 0 && errno != EINTR)
			return WAKE_END;
		if (pfd[0].revents && handle_signals(s))
			return WAKE_END;
		if (ofd >= 0 && pfd[ofd].revents) {
			if (!s->out_err)
				s->out_err = -EPIPE;
			return WAKE_END;
		}
		session_sync(s);
		if (ifd >= 0 && pfd[ifd].revents)
			return WAKE_FD;
	}
}

int session_stop(struct session *s)
{
	session_report_losses(s);
	/* the counts are read: let the kernel detach without us waiting */
	walker_detach_async(s->w);
	if (s->sema_pid)
		session_semaphores(&s->targets, s->sema_pid, -1);
	if (s->have_cmd) {
		/*
		 * Tracing ended first (-D, a signal): end it, as perf record
		 * does, the counts shown meanwhile, however long it takes.
		 */
		session_flush(s);
		kill(s->cmd.pid, SIGTERM);
		s->cmd_status = cmd_exit_code(session_end_cmd(s));
		s->have_cmd = false;
	}
	return s->o.command ? s->cmd_status : 0;
}

void session_free(struct session *s)
{
	int ws;

	/* an error after attaching exits as promptly as a run that ended */
	walker_detach_async(s->w);
	walker_free(s->w);
	if (s->have_cmd) {
		/* stopped early (an error): do not leave it waiting */
		if (s->cmd.go >= 0)
			kill(s->cmd.pid, SIGKILL);
		cmd_wait(&s->cmd, &ws, 0);
	}
	sideband_free(s->sb);
	if (s->hooks && s->hooks->free)
		s->hooks->free(s);
	session_tables_drop(s);	/* begun for a walker that did not come */
	symbolizer_free(s->sym);
	debuginfod_free(s->remote);
	procs_free(s->procs);
	probe_targets_free(&s->targets);
	probe_pattern_free(&s->pat);
	if (s->sigfd >= 0)
		close(s->sigfd);
	if (s->out)
		fclose(s->out);
	for (size_t i = 0; i < s->nr_skipped; i++)
		free(s->skipped[i]);
	free(s->skipped);
}
