/* SPDX-License-Identifier: MIT */
/*
 * What the session's parts share, and no one else: session.c (the run),
 * session_opts.c (the options), session_unwind.c (the cfi walker's
 * tables over a run), session_lost.c (what was lost, said at the end).
 */
#ifndef SW_SESSION_INT_H
#define SW_SESSION_INT_H

#include <stdbool.h>
#include <sys/types.h>
#include "session.h"

#define die(s, ...) session_die((s)->o.tool, __VA_ARGS__)

/* A file refused (too big, not regular...), said once per path. */
void session_warn_skip(void *ctx, const char *what, const char *why);

/* The tables for what is traced at the start: 0, or said. */
int session_unwind_start(struct session *s);
/* COMMAND's (5.17+), before it runs: 0, or said. */
int session_unwind_preload(struct session *s);
/* A process held in its loader mapped code (4.18-5.16): its tables. */
void session_unwind_loader_mapped(void *ctx, pid_t pid);
/* COMMAND's loader is over: what its start needed, said. */
void session_unwind_loaded(struct session *s);
/* --debug's line (what names it), and a warning for what did not fit. */
void session_unwind_report(struct session *s, bool debug, const char *what);
void session_unwind_end(struct session *s);

void session_report_losses(struct session *s);

#endif /* SW_SESSION_INT_H */
