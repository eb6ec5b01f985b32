// SPDX-License-Identifier: MIT
/*
 * The cfi walker's unwind tables over a run: built for what is traced at
 * the start, for COMMAND before it runs, for what processes map later,
 * and said (--debug, or what did not fit) at the start and the end.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "session_int.h"
#include "cfi.h"
#include "needed.h"
#include "procs.h"
#include "unwind.h"
#include "untrusted.h"

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
void session_unwind_report(struct session *s, bool debug, const char *what)
{
	struct unwind_stats st;
	char mib[32], shown[1024];

	unwind_stats(s->unwind, &st);
	/* at the end, only what did not fit since */
	if (!debug && s->unwind_said.cfi.no_room == st.cfi.no_room &&
	    s->unwind_said.cfi.too_big == st.cfi.too_big &&
	    s->unwind_said.procs_no_room == st.procs_no_room &&
	    s->unwind_said.maps_no_room == st.maps_no_room)
		return;
	s->unwind_said = st;
	if (debug)
		fprintf(s->out, "%s: %zu binaries, %zu rows, %zu of %llu "
			"bytes; %zu processes, %zu mappings; %.1f ms\n", what,
			st.cfi.tables, st.cfi.rows, st.cfi.bytes,
			(unsigned long long)s->wo.cfi_rows * sizeof(struct sw_cfi_row),
			st.procs, st.maps, st.ms);
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

/*
 * The cfi walker's tables for what is traced now: -p's process, or every
 * process (a -- COMMAND's come as its loader maps them, see session_go).
 */
int session_unwind_start(struct session *s)
{
	int rows, procs, files, e;

	if (walker_cfi_fds(s->w, &rows, &procs, &files))
		return 0;
	e = unwind_new(&s->unwind, s->wo.cfi_rows, rows, procs, files);
	if (e)
		return die(s, "cannot build unwind tables: %s", strerror(-e));
	unwind_on_skip(s->unwind, session_warn_skip, s);
	if (s->o.pid)
		e = unwind_add_proc(s->unwind, s->o.pid);
	else if (!s->o.command)
		e = unwind_add_all(s->unwind);
	if (e)
		return die(s, "cannot load unwind tables into the kernel: %s",
			   strerror(-e));
	return 0;
}

int session_unwind_rule(const struct session *s, __u32 tgid, __u64 addr,
			bool exact, bool entry, char *buf, size_t len)
{
	const struct proc_map *m = s->procs ?
				   procs_find(s->procs, tgid, addr - !exact) : NULL;
	const struct sw_cfi_row *r = s->unwind ?
				     unwind_row(s->unwind, tgid, addr, exact, m) : NULL;
	struct sw_cfi_row none = { .kind = SW_CFI_NONE };
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
 * Once COMMAND's loader is over (cmd_follow, then cmd_wait, hold it
 * meanwhile): the tables its start needed, for --debug, or what did not fit.
 */
void session_unwind_loaded(struct session *s)
{
	if (!s->unwind || s->unwind_loaded || !s->cmd.loaded)
		return;
	s->unwind_loaded = true;
	session_unwind_report(s, s->o.debug, "unwind tables");
}

void session_unwind_loader_mapped(void *ctx, pid_t pid)
{
	struct session *s = ctx;

	unwind_add_proc(s->unwind, pid);
}

static int preload(void *ctx, const char *path)
{
	struct session *s = ctx;

	return unwind_add_file(s->unwind, path);
}

/*
 * 5.17+: the tables of what COMMAND starts with, and of the programs its
 * arguments name, in the kernel before its first instruction: its walk
 * finds them from each PC's VMA, so nothing holds it (no ptrace:
 * debuggers, strace and job control work inside).  A program it runs
 * that none names has its table once the kernel reports its mapping.
 */
int session_unwind_preload(struct session *s)
{
	int e;

	if (!s->unwind || s->cmd.stop_at_exec)
		return 0;
	e = needed_closure(s->cmd.path, preload, s);
	if (!e)
		e = needed_args(s->o.command, preload, s);
	if (e)
		return die(s, "cannot build unwind tables: %s", strerror(-e));
	session_unwind_report(s, s->o.debug, "unwind tables");
	return 0;
}

/* Tables of libraries and processes that came after the start, said. */
void session_unwind_end(struct session *s)
{
	if (!s->unwind)
		return;
	unwind_flush(s->unwind, true);
	session_unwind_report(s, s->o.debug, "unwind tables at the end");
}
