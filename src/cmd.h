/* SPDX-License-Identifier: MIT */
/*
 * stackcount PATTERN -- COMMAND: start COMMAND held at the door, so that
 * tracing is in place before its first instruction, then let it exec.
 */
#ifndef SW_CMD_H
#define SW_CMD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* The command held, stepped syscall by syscall, while its loader runs. */
struct sw_held {
	pid_t pid;
	unsigned long long lo, hi;	/* the loader's code */
	long nr, prot;			/* the syscall it is in, mmap's prot */
};

struct sw_cmd {
	pid_t pid;
	int go;		/* write end: a byte lets the child exec; EOF alone ends it */
	int status;	/* read end: the exec's errno, or EOF when it worked */
	char path[4096];	/* what runs: argv[0] found on PATH */
	bool stop_at_exec;	/* to be held stopped after its execve until resumed */
	bool traced;		/* ptrace-attached (PTRACE_SEIZE), not yet detached */
	bool at_exec;		/* stopped at its exec now, by cmd_go */
	bool exited;		/* it has ended (seen by cmd_wait or cmd_go) ... */
	int exit_ws;		/* ... with this status */
	/* cmd_follow: the command held at each exec while its loader runs */
	void (*on_map)(void *ctx, pid_t pid);
	void *ctx;
	struct sw_held held;
	bool holding;		/* in its loader now */
	bool loaded;		/* its own first loader is over (done, or it ended) */
};

/*
 * Find argv[0] on PATH (-ENOENT, -EACCES when it cannot run), then fork;
 * the child restores sigmask and waits for cmd_go, then execs it.  If the
 * tool ends first, however it ends, the child ends without running it.
 */
int cmd_spawn(struct sw_cmd *c, char *const argv[], const sigset_t *sigmask);
/*
 * Let it exec; -errno of a failed exec (the child has then exited).  With
 * stop_at_exec (set since cmd_spawn), the child is first ptrace-attached
 * (PTRACE_SEIZE): the tool is its tracer, so that when the tool dies the
 * kernel detaches it, and no other process can become its tracer.  It is
 * then held stopped (at_exec) at its first instruction, its image mapped,
 * until cmd_resume or cmd_follow; or it ended before (exited).  A seize
 * that fails ends it before its exec.
 */
int cmd_go(struct sw_cmd *c);
int cmd_resume(struct sw_cmd *c);
/*
 * Held at its first instruction: run it on, and at this exec and each one
 * it makes later, hold it while its dynamic loader maps the libraries it
 * starts with (syscall by syscall, ptrace), fn hearing of the image and
 * of each mapping of code before any of that code runs.  Only the command
 * itself: the processes it starts are never traced, so a tracer, a
 * debugger or a sanitizer it runs works as it would untraced, and what
 * they exec costs what it would.  Each stop is dealt with as cmd_wait
 * finds it, never waited for here: whatever it does (spin, block), the
 * tool goes on.
 */
int cmd_follow(struct sw_cmd *c, void (*fn)(void *ctx, pid_t pid), void *ctx);
/*
 * waitpid for the command: the ptrace stops cmd_follow brings are dealt
 * with here (an exec's loader held, signals passed on, group-stops kept);
 * returns as waitpid(pid) would: its pid once it has ended, 0 (WNOHANG)
 * while it runs.
 */
pid_t cmd_wait(struct sw_cmd *c, int *ws, int flags);
/* Exit status as a shell reports it (128+N for signal N). */
int cmd_exit_code(int wstatus);

#endif
