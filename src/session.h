/* SPDX-License-Identifier: MIT */
/*
 * One tracing session, the part stackcount and stacksnoop share: what the
 * kernel offers, the probe pattern and its targets, the walker, symbols,
 * the command it runs, signals, and the order of setting up and tearing
 * down.  The tools add their options and their output.
 */
#ifndef SW_SESSION_H
#define SW_SESSION_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include "cmd.h"
#include "probe.h"
#include "walker.h"

struct procs;
struct sideband;
struct symbolizer;
struct session_hooks;
struct session_walk;

struct session_opts {
	const char *tool;		/* for messages */
	const char *pattern;
	bool regexp;
	pid_t pid;
	int cpu;			/* -1: any */
	long duration;			/* seconds; 0: until stopped */
	bool perpid, kernel_only, user_only, debug, kernel_features;
	bool no_demangle;		/* C++ and Rust names as in the file */
	bool no_debuginfod;		/* DEBUGINFOD_URLS not asked */
	bool small_keys;		/* STACKWALK_SMALL_KEYS=1: as on 4.18-5.10 */
	bool no_find_vma;		/* STACKWALK_NO_FIND_VMA=1: as on 4.18-5.16 */
	bool no_links;			/* STACKWALK_NO_LINKS=1: every probe alone */
	bool no_vma_lists;		/* STACKWALK_NO_VMA_LISTS=1: see walker_cfi.c */
	int walk_state;			/* STACKWALK_WALK_STATE: 0 kernel's, 1 cpu, 2 task */
	unsigned sideband_pages;	/* STACKWALK_SIDEBAND_PAGES; 0: default */
	/* without -K/-U, only the side the event fires on (stacksnoop) */
	bool own_side;
	enum sw_walker walker;
	enum walker_sink sink;
	__u32 storage, legacy;
	__u32 unwind_mb;		/* --unwind-memory: the cfi walker's rows */
	__u32 file_mb;			/* --file-memory: other users' files */
	char **command;
};

struct session {
	struct session_opts o;
	struct sw_features f;
	struct sw_pattern pat;
	struct sw_targets targets;
	struct walker_opts wo;
	const char *why;		/* why this walker */
	struct walker_need need;	/* what the walker must do */
	bool walker_auto;		/* auto picked it: another may follow */
	struct walker *w;
	struct procs *procs;
	struct sideband *sb;
	struct symbolizer *sym;
	struct debuginfod *remote;	/* NULL: no debuginfod to ask */
	/* what the walker needs over the run besides its programs, or NULL */
	const struct session_hooks *hooks;
	struct session_walk *walk;	/* the hooks' state */
	/* the start hook ran beside the walker's load, and what it said */
	bool beside_ran;
	int beside_status;
	bool explain_rules;		/* --explain: the rule between frames */
	int task41_err;			/* 4.1: why the task was not found, -errno */
	size_t uframe_clashes;		/* probes uframe_rules gave no rule */
	struct sw_cmd cmd;
	bool have_cmd;
	int cmd_status;
	pid_t sema_pid;			/* where we set USDT semaphores */
	int sigfd;
	unsigned nr_signals;		/* SIGINT, SIGTERM, SIGHUP received */
	sigset_t oldmask;
	long long end_at;		/* -D deadline, ms; -1: none */
	/*
	 * Where the tools print (stdout): the first write error is kept,
	 * -EPIPE too when the reader of a pipe is seen gone.
	 */
	FILE *out;
	int out_err;
	bool out_watch;			/* stdout is a pipe or socket */
	int interrupted;		/* the signal that cut a step short; 0: none */
	size_t evict_at;		/* exited processes that set off eviction */
	char **skipped;			/* files warned about */
	size_t nr_skipped;
};

/* Long options both tools take; their codes, past any character. */
enum {
	OPT_DEBUG = 256, OPT_WALKER, OPT_STORAGE, OPT_LEGACY, OPT_FEATURES,
	OPT_NO_DEMANGLE, OPT_VERSION, OPT_UNWIND_MEMORY, OPT_FILE_MEMORY,
	OPT_NO_DEBUGINFOD,
	OPT_TOOL,			/* the first code free for a tool */
};

#define SESSION_LONGOPTS						\
	{ "pid", required_argument, NULL, 'p' },			\
	{ "cpu", required_argument, NULL, 'c' },			\
	{ "duration", required_argument, NULL, 'D' },			\
	{ "regexp", no_argument, NULL, 'r' },				\
	{ "kernel-stacks-only", no_argument, NULL, 'K' },		\
	{ "user-stacks-only", no_argument, NULL, 'U' },			\
	{ "debug", no_argument, NULL, OPT_DEBUG },			\
	{ "walker", required_argument, NULL, OPT_WALKER },		\
	{ "stack-storage-size", required_argument, NULL, OPT_STORAGE },	\
	{ "legacy", optional_argument, NULL, OPT_LEGACY },		\
	{ "kernel-features", no_argument, NULL, OPT_FEATURES },		\
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },		\
	{ "no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD },	\
	{ "version", no_argument, NULL, OPT_VERSION },			\
	{ "unwind-memory", required_argument, NULL, OPT_UNWIND_MEMORY },	\
	{ "file-memory", required_argument, NULL, OPT_FILE_MEMORY }

/* One line on stderr, "<tool>: ..."; returns 1, the exit status of errors. */
int session_die(const char *tool, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int session_parse_long(const char *s, long min, long max, long *v);

void session_opts_init(struct session_opts *o, const char *tool, char **argv,
		       int *argc);
/* An option both tools take: 0 taken, 1 not one of them, 2 bad (said). */
int session_option(struct session_opts *o, int c, const char *arg);
/* getopt's complaints and the positional pattern; 2 on error (said). */
int session_unknown(const struct session_opts *o, int c, char **argv);
int session_args_done(struct session_opts *o, int optind, int argc, char **argv);

int session_init(struct session *s);
/*
 * --explain with explain_rules: the unwind rule at user address addr of
 * tgid in words (exact: where the event fired or a signal interrupted,
 * else a return address; entry: the event fired at a function's first
 * instruction, where the walker needs no CFI), as snprintf returns.
 */
int session_unwind_rule(const struct session *s, __u32 tgid, __u64 addr,
			bool exact, bool entry, char *buf, size_t len);
/*
 * Everything up to the probes attached, COMMAND held at the door: returns
 * 0, or the exit status after saying what went wrong.
 */
int session_start(struct session *s);
/* Let COMMAND run (after the "Tracing..." line): 0 or an exit status. */
int session_go(struct session *s);

enum session_wake { WAKE_TIMEOUT, WAKE_END, WAKE_FD };
/*
 * Wait for: a signal, COMMAND's exit or -D's end (WAKE_END), fd readable
 * (WAKE_FD; -1: none), or the time at_ms (WAKE_TIMEOUT; -1: none).  Keeps
 * the process mappings current meanwhile.
 */
enum session_wake session_wait(struct session *s, long long at_ms, int fd);
long long session_now_ms(void);
/*
 * After reading stacks, before naming them: the mappings of every process
 * they are of (a process's fork and mmap records come before its events;
 * read before the stacks, a process forked in between would be named
 * from /proc, or not at all if it has ended, and its fork record then
 * taken for a COMMAND's).
 */
void session_sync(struct session *s);
/*
 * Whether a signal asks the tool to end now (recorded in s->interrupted):
 * asked by the steps that come before tracing and after it, where no
 * session_wait reads signals.
 */
bool session_interrupted(struct session *s);
/* Flush s->out: 0, or its first error (-EPIPE: the reader is gone). */
int session_flush(struct session *s);
/*
 * The exit status once stopped: status itself, unless the output failed
 * other than by its reader leaving (then said, and 1), or a signal cut it
 * short (said, and 128 + the signal).
 */
int session_end(struct session *s, int status);
/* Every loss the tools report, counted since the start. */
struct session_losses {
	__u64 lost[SW_LOST_NR];	/* by cause, as the kernel side counted */
	__u64 partial;		/* stacks read without some of their frames */
	__u64 cut;		/* events whose stack was cut at the depth limit */
	__u64 trace_lost;	/* trace_pipe lines overwritten unread */
	__u64 mappings;		/* process mapping records */
};
int session_losses(struct session *s, struct session_losses *l);
/*
 * The line on stderr that sums up the stacks (events) lost for want of
 * room, and what to do, into line; returns its length (0: none lost).
 */
size_t session_loss_line(const struct session *s, const struct session_losses *l,
			 char *line, size_t len);
/* Losses said, semaphores restored, COMMAND ended: the exit status. */
int session_stop(struct session *s);
void session_free(struct session *s);

#endif
