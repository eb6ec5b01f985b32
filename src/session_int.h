/* SPDX-License-Identifier: MIT */
/*
 * What the session's parts share, and no one else: session.c (the run),
 * session_opts.c (the options), session_cmd.c (-- COMMAND and USDT
 * semaphores), session_unwind.c (the cfi walker's tables over a run,
 * through struct session_hooks), session_lost.c (what was lost, said at
 * the end).
 */
#ifndef SW_SESSION_INT_H
#define SW_SESSION_INT_H

#include <stdbool.h>
#include <sys/types.h>
#include "session.h"

#define die(s, ...) session_die((s)->o.tool, __VA_ARGS__)

/* A file refused (too big, not regular...), said once per path. */
void session_warn_skip(void *ctx, const char *what, const char *why);

/*
 * What a walker needs done over a run besides loading and attaching its
 * programs (the cfi walker: its unwind tables, session_unwind.c), at the
 * steps of session.c.  Each hook may be NULL.
 */
struct session_hooks {
	/* COMMAND is to be held at its exec until its loader has run */
	bool (*hold_at_exec)(const struct session *s);
	/*
	 * Beside the walker's load, in a thread of its own, with only w's
	 * early maps (walker_opts.beside_load); before it attaches if not:
	 * 0, or said
	 */
	int (*start)(struct session *s, const struct walker *w);
	/* attached, the sideband's thread stopped: mappings come here now */
	void (*started)(struct session *s);
	/* a process mapped code */
	void (*mapped)(struct session *s, pid_t pid);
	/* COMMAND about to run: 0, or said */
	int (*command)(struct session *s);
	/* COMMAND held at its first instruction (hold_at_exec) */
	void (*at_exec)(struct session *s);
	/* a child of the tool changed state (SIGCHLD) */
	void (*child)(struct session *s);
	/* the sideband drained: work that waited for it */
	void (*sync)(struct session *s);
	/* when sync is due again, on session_now_ms's clock; -1: no need */
	long long (*due)(const struct session *s);
	/* the run is over: what it did, said */
	void (*end)(struct session *s);
	void (*free)(struct session *s);
};

/* The hooks of walker kind, or NULL if it needs none. */
const struct session_hooks *session_hooks_of(enum sw_walker kind);

/*
 * Before the walker is chosen: the cfi walker's tables begun in a thread
 * of their own, if it may be the one (its start hook takes them).
 * session_tables_drop: none are wanted (any other walker), or the end.
 */
void session_tables_warm(struct session *s);
void session_tables_drop(struct session *s);
/* The rows map the warming made (walker_opts.rows_fd), or -1: none yet. */
int session_tables_rows(const struct session *s);
/* The warming done: it maps and unmaps no more memory from here on. */
void session_tables_settle(struct session *s);

void session_report_losses(struct session *s);

/* session_cmd.c: whether a target has a semaphore the kernel leaves to us */
bool session_needs_semaphores(const struct sw_targets *ts);
/* add delta to each semaphore of ts in pid, once each: 0 or -errno */
int session_semaphores(const struct sw_targets *ts, pid_t pid, int delta);
/* COMMAND forked, waiting for session_go: 0, or the exit status, said */
int session_spawn(struct session *s);
/* COMMAND, sent SIGTERM: its wait status once it ends */
int session_end_cmd(struct session *s);

#endif /* SW_SESSION_INT_H */
