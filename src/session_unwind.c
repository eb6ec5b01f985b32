// SPDX-License-Identifier: MIT
/*
 * The cfi walker's unwind tables over a run: built for what is traced at
 * the start, for COMMAND before it runs, for what processes map later,
 * and said (--debug, or what did not fit) at the start and the end.
 * session.c reaches them only through the hooks at the bottom, and
 * session_tables_warm/drop before the walker is chosen.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "session_int.h"
#include "cfi.h"
#include "cfi_disk.h"
#include "needed.h"
#include "procs.h"
#include "unwind.h"
#include "untrusted.h"

/* A file refused while warming: said once the tables are taken. */
struct warm_skip {
	char *what, *why;
};

struct session_walk {
	struct unwind *unwind;
	struct cfi_disk *disk;		/* tables kept between runs, or NULL */
	bool live;			/* sideband records reach it now */
	struct unwind_stats said;	/* what did not fit, as said */
	bool loaded;			/* said once COMMAND's loader was over */
	/* tables built while the kernel is probed (session_tables_warm) */
	bool warming;
	pthread_t warm;
	uint32_t warm_pid;		/* 0: every process */
	uint32_t warm_rows;		/* the rows map's size */
	atomic_bool warm_stop;
	atomic_int rows_fd;		/* the rows map it made; -1: none (yet) */
	struct warm_skip *skips;
	size_t nr_skips;
};

/* "" for none, else "N MiB" (rounded up) */
static const char *inflate_mib(size_t bytes, char *buf, size_t len)
{
	if (!bytes)
		return "";
	snprintf(buf, len, "%zu MiB", (bytes + (1u << 20) - 1) >> 20);
	return buf;
}

/*
 * --debug (what: "unwind tables", or "... at the end"), and a warning for
 * tables that did not fit: never silently.
 */
static void report(struct session *s, bool debug, const char *what)
{
	struct session_walk *sw = s->walk;
	struct unwind_stats st;
	char mib[32], shown[1024];

	unwind_stats(sw->unwind, &st);
	/* at the end, only what did not fit since */
	if (!debug && sw->said.cfi.no_room == st.cfi.no_room &&
	    sw->said.cfi.too_big == st.cfi.too_big &&
	    sw->said.procs_no_room == st.procs_no_room &&
	    sw->said.maps_no_room == st.maps_no_room)
		return;
	sw->said = st;
	if (debug)
		fprintf(s->out, "%s: %zu binaries, %zu rows, %zu of %llu "
			"bytes; %zu processes, %zu mappings; %.1f ms\n", what,
			st.cfi.tables, st.cfi.rows, st.cfi.bytes,
			(unsigned long long)cfi_rows_in(s->wo.unwind_mb) * sizeof(struct sw_cfi_row),
			st.procs, st.maps, st.ms);
	/*
	 * Each a list ours made stale, had it missed a mapping BPF added
	 * after we read the process's maps (src/unwind.c)
	 */
	if (debug && s->w && walker_builds_lists(s->w))
		fprintf(s->out, "%s: %zu lists built in BPF replaced by ours\n",
			what, st.replaced);
	if (debug && sw->disk)
		fprintf(s->out, "tables kept from earlier runs (%s): %zu of %zu\n",
			cfi_disk_dir(sw->disk), st.cfi.from_disk, st.cfi.tables);
	if (st.cfi.no_room)
		fprintf(stderr, "%s: the unwind tables of %zu binaries (%zu rows%s%s) "
			"did not fit in --unwind-memory %u MiB: their frames are "
			"found by frame pointers; give more\n", s->o.tool,
			st.cfi.no_room, st.cfi.no_room_rows,
			st.cfi.no_room_inflate ? ", CFI that inflates to " : "",
			inflate_mib(st.cfi.no_room_inflate, mib, sizeof(mib)),
			s->o.unwind_mb);
	if (st.cfi.too_big)
		fprintf(stderr, "%s: the unwind tables of %zu binaries%s%s%s are "
			"past what a walk can search (more than %u rows, or "
			"code spanning more than 4 GiB): their frames are found "
			"by frame pointers\n", s->o.tool, st.cfi.too_big,
			st.cfi.too_big_name ? " (" : "",
			st.cfi.too_big_name ? untrusted_escape(shown, sizeof(shown),
							      st.cfi.too_big_name) : "",
			st.cfi.too_big_name ? st.cfi.too_big > 1 ? ", ...)" : ")" : "",
			SW_CFI_TABLE_MAX);
	if (st.procs_no_room || st.maps_no_room)
		fprintf(stderr, "%s: %zu processes and %zu mappings had no room in "
			"the unwind maps: their frames are found by frame "
			"pointers\n", s->o.tool, st.procs_no_room, st.maps_no_room);
}

static void warm_skip(void *ctx, const char *what, const char *why)
{
	struct session_walk *sw = ctx;
	struct warm_skip k = { strdup(what), strdup(why) }, *v = NULL;

	if (k.what && k.why)
		v = realloc(sw->skips, (sw->nr_skips + 1) * sizeof(*v));
	if (!v) {
		free(k.what);
		free(k.why);
		return;
	}
	sw->skips = v;
	v[sw->nr_skips++] = k;
}

/*
 * The rows map as the cfi walker makes it (walker_cfi.c): mapped where
 * the kernel can (5.5+).  Made before the kernel is probed, it may fail
 * where a limit on locked memory is still to be raised (before 5.11):
 * the walker then makes its own.
 */
static int rows_create(uint32_t rows)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cfi_rows", sizeof(__u32),
				sizeof(struct sw_cfi_row), rows, &o);

	if (fd < 0 && errno == EINVAL) {
		o.map_flags = 0;
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cfi_rows", sizeof(__u32),
				    sizeof(struct sw_cfi_row), rows, &o);
	}
	return fd < 0 ? -1 : fd;
}

static void *warm_run(void *ctx)
{
	struct session_walk *sw = ctx;

	/* first: the kernel zeroes its megabytes (2 ms for 8 MiB) */
	atomic_store(&sw->rows_fd, rows_create(sw->warm_rows));
	unwind_warm(sw->unwind, sw->warm_pid, &sw->warm_stop);
	return NULL;
}

int session_tables_rows(const struct session *s)
{
	return s->walk && s->walk->warming ? atomic_load(&s->walk->rows_fd) : -1;
}

/* The warming over (stopped first if stop): what it refused said if say. */
static void warm_end(struct session *s, bool stop, bool say)
{
	struct session_walk *sw = s->walk;

	if (!sw || !sw->warming)
		return;
	if (stop)
		atomic_store(&sw->warm_stop, true);
	pthread_join(sw->warm, NULL);
	sw->warming = false;
	for (size_t i = 0; i < sw->nr_skips; i++) {
		if (say)
			session_warn_skip(s, sw->skips[i].what, sw->skips[i].why);
		free(sw->skips[i].what);
		free(sw->skips[i].why);
	}
	free(sw->skips);
	sw->skips = NULL;
	sw->nr_skips = 0;
	unwind_on_skip(sw->unwind, session_warn_skip, s);
}

void session_tables_settle(struct session *s)
{
	warm_end(s, false, true);
}

/* The cfi walk (4.9+) is possible on the running kernel. */
static bool kernel_may_walk(void)
{
	char release[128];
	__u32 v;

	return !kversion_running(&v, release, sizeof(release)) &&
	       v >= SW_KVERSION(4, 9, 0);
}

/*
 * The tables' builder, with the tables kept on disk between runs where
 * there are (STACKWALK_CACHE_DIR, "" for none, replaces the directory).
 */
static int tables_new(struct session_walk *sw, uint32_t rows, int rows_fd,
		      int procs_fd, int files_fd)
{
	int e = unwind_new(&sw->unwind, rows, rows_fd, procs_fd, files_fd);

	if (!e)
		e = cfi_disk_open(&sw->disk, NULL);
	if (!e)
		unwind_on_disk(sw->unwind, sw->disk);
	return e;
}

/* A walk's state, its tables not begun: no rows map of its own (-1, not fd 0). */
static struct session_walk *walk_new(void)
{
	struct session_walk *sw = calloc(1, sizeof(*sw));

	if (sw)
		atomic_init(&sw->rows_fd, -1);
	return sw;
}

/*
 * Building the tables takes most of a start-up (5-10 ms for a few
 * processes), and needs nothing the kernel is probed for: begun in a
 * thread of its own before the probes, it is mostly done when the
 * walker's maps exist.  Only where the cfi walker may be the one.
 */
void session_tables_warm(struct session *s)
{
	const struct session_opts *o = &s->o;
	struct session_walk *sw;

	if ((o->walker != SW_WALKER_AUTO && o->walker != SW_WALKER_CFI) ||
	    o->kernel_only || o->command || o->kernel_features || o->legacy ||
	    s->walk || !kernel_may_walk())
		return;
	sw = walk_new();
	if (!sw)
		return;
	sw->warm_rows = cfi_rows_in(o->unwind_mb);
	if (tables_new(sw, sw->warm_rows, -1, -1, -1)) {
		unwind_free(sw->unwind);
		free(sw);
		return;
	}
	unwind_on_skip(sw->unwind, warm_skip, sw);
	sw->warm_pid = o->pid > 0 ? (uint32_t)o->pid : 0;
	if (pthread_create(&sw->warm, NULL, warm_run, sw)) {
		unwind_free(sw->unwind);
		cfi_disk_free(sw->disk);
		free(sw);
		return;
	}
	sw->warming = true;
	s->walk = sw;
}

/*
 * The cfi walker's tables for what is traced now: -p's process, or every
 * process (a -- COMMAND's come before it runs, or as its loader maps them).
 */
static int start(struct session *s, const struct walker *w)
{
	struct session_walk *sw = s->walk;
	int rows, procs, files, e;

	if (walker_cfi_fds(w, &rows, &procs, &files))
		return 0;
	if (sw) {
		warm_end(s, false, true);
		unwind_bind(sw->unwind, rows, procs, files);
	} else {
		sw = walk_new();
		if (!sw)
			return die(s, "out of memory");
		s->walk = sw;
		e = tables_new(sw, cfi_rows_in(s->wo.unwind_mb), rows, procs,
			       files);
		if (e)
			return die(s, "cannot build unwind tables: %s", strerror(-e));
		unwind_on_skip(sw->unwind, session_warn_skip, s);
	}
	if (s->o.pid)
		e = unwind_add_proc(sw->unwind, s->o.pid);
	else if (!s->o.command)
		e = unwind_add_all(sw->unwind);
	if (e)
		return die(s, "cannot load unwind tables into the kernel: %s",
			   strerror(-e));
	return 0;
}

/* From here on, what processes map loads tables (the sideband's thread has stopped). */
static void started(struct session *s)
{
	if (!s->walk)
		return;
	s->walk->live = true;
	if (!s->o.command)
		report(s, s->o.debug, "unwind tables");
}

static void mapped(struct session *s, pid_t pid)
{
	if (s->walk && s->walk->live)
		unwind_mapped(s->walk->unwind, pid);
}

int session_unwind_rule(const struct session *s, __u32 tgid, __u64 addr,
			bool exact, bool entry, char *buf, size_t len)
{
	struct unwind *u = s->walk ? s->walk->unwind : NULL;
	const struct proc_map *m = s->procs ?
				   procs_find(s->procs, tgid, addr - !exact) : NULL;
	struct sw_cfi_row row, none = { .kind = SW_CFI_NONE };
	const struct sw_cfi_row *r =
		u && !unwind_row(u, tgid, addr, exact, m, &row) ? &row : NULL;
	/* what the walker does at a first instruction no CFI covers */
	struct sw_cfi_row at_entry = { .kind = SW_CFI_RSP, .cfa = 1 };
	int n;

	if ((!r || r->kind == SW_CFI_NONE) && entry) {
		n = cfi_row_explain(&at_entry, buf, len);
		return n + snprintf(buf + n, len > (size_t)n ? len - n : 0,
				    " (no CFI here, but a function's first "
				    "instruction needs none)");
	}
	return cfi_row_explain(r ? r : &none, buf, len);
}

/*
 * Once COMMAND's loader is over (at_exec's follow, then cmd_wait, hold it
 * meanwhile): the tables its start needed, for --debug, or what did not fit.
 */
static void child(struct session *s)
{
	if (!s->walk || s->walk->loaded || !s->cmd.loaded)
		return;
	s->walk->loaded = true;
	report(s, s->o.debug, "unwind tables");
}

static void loader_mapped(void *ctx, pid_t pid)
{
	struct session *s = ctx;

	unwind_add_proc(s->walk->unwind, pid);
}

/*
 * 4.18-5.16: COMMAND held at its first instruction, each library's table
 * loaded as its loader maps it (ptrace, cmd_follow).
 */
static void at_exec(struct session *s)
{
	int e;

	if (!s->walk)
		return;
	e = cmd_follow(&s->cmd, loader_mapped, s);
	if (e)
		fprintf(stderr, "%s: cannot follow the loader of %s: %s; its "
			"libraries' frames may be found by frame pointers\n",
			s->o.tool, s->o.command[0], strerror(-e));
	child(s);
}

/*
 * Where BPF cannot find a process's mappings from its VMAs (by
 * bpf_find_vma, a list built at exec, or the maple tree read), a walk
 * needs the process's list first: the frontend reads it while COMMAND is
 * held.
 */
static bool hold_at_exec(const struct session *s)
{
	return !s->f.helper_find_vma && !(s->w && walker_finds_vmas(s->w));
}

static int preload(void *ctx, const char *path)
{
	struct session *s = ctx;

	return unwind_add_file(s->walk->unwind, path);
}

/*
 * 5.17+, and 4.18-5.16 where BPF builds lists from the VMAs: the tables
 * of what COMMAND starts with, and of the programs its arguments name,
 * in the kernel before its first instruction: its walk finds them from
 * each PC's VMA (or its list, built at exec and at each mmap of code), so
 * nothing holds it (no ptrace: debuggers, strace and job control work
 * inside).  A program it runs that none names has its table once the
 * kernel reports its mapping.
 */
static int command(struct session *s)
{
	int e;

	if (!s->walk || s->cmd.stop_at_exec)
		return 0;
	/* a list built in BPF finds the vDSO's table under no file's key */
	e = s->w && walker_builds_lists(s->w) ? unwind_add_vdso(s->walk->unwind) : 0;
	if (!e)
		e = needed_closure(s->cmd.path, preload, s);
	if (!e)
		e = needed_args(s->o.command, preload, s);
	if (e)
		return die(s, "cannot build unwind tables: %s", strerror(-e));
	report(s, s->o.debug, "unwind tables");
	return 0;
}

/* Mappings the sideband brought: their tables, at a bounded rate. */
static void sync_tables(struct session *s)
{
	if (s->walk && s->walk->live)
		unwind_flush(s->walk->unwind, false);
}

/* A process's maps waiting to be read again. */
static long long due(const struct session *s)
{
	double d = s->walk && s->walk->live ? unwind_due(s->walk->unwind) : -1;

	return d < 0 ? -1 : (long long)d + 1;
}

/* Tables of libraries and processes that came after the start, said. */
static void end(struct session *s)
{
	if (!s->walk)
		return;
	unwind_flush(s->walk->unwind, true);
	report(s, s->o.debug, "unwind tables at the end");
}

void session_tables_drop(struct session *s)
{
	if (!s->walk)
		return;
	warm_end(s, true, false);
	if (atomic_load(&s->walk->rows_fd) >= 0)
		close(atomic_load(&s->walk->rows_fd));
	unwind_free(s->walk->unwind);
	cfi_disk_free(s->walk->disk);
	free(s->walk);
	s->walk = NULL;
}

static const struct session_hooks cfi_hooks = {
	.hold_at_exec = hold_at_exec,
	.start = start,
	.started = started,
	.mapped = mapped,
	.command = command,
	.at_exec = at_exec,
	.child = child,
	.sync = sync_tables,
	.due = due,
	.end = end,
	.free = session_tables_drop,
};

const struct session_hooks *session_hooks_of(enum sw_walker kind)
{
	return kind == SW_WALKER_CFI ? &cfi_hooks : NULL;
}
