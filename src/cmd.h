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

struct sw_cmd {
	pid_t pid;
	int go;		/* write end: closing it lets the child exec */
	int status;	/* read end: the exec's errno, or EOF when it worked */
	char path[4096];	/* what runs: argv[0] found on PATH */
	bool stop_at_exec;	/* held stopped after its execve until resumed */
	/* cmd_follow: held at each exec while its loader runs */
	bool follow;
	void (*on_map)(void *ctx, pid_t pid);
	void *ctx;
	bool exited;		/* it has ended (seen by cmd_wait or while held) ... */
	int exit_ws;		/* ... with this status */
	pid_t *tracees;		/* cmd_follow: it and the processes it starts */
	size_t nr_tracees, cap_tracees;
};

/*
 * Find argv[0] on PATH (-ENOENT, -EACCES when it cannot run), then fork;
 * the child restores sigmask, waits for sw_cmd_go, then execs it.
 */
int cmd_spawn(struct sw_cmd *c, char *const argv[], const sigset_t *sigmask);
/*
 * Let it exec; -errno of a failed exec (the child has then exited).  With
 * stop_at_exec, it is then held stopped at its first instruction, its
 * image mapped, until sw_cmd_resume.
 */
int cmd_go(struct sw_cmd *c);
int cmd_resume(struct sw_cmd *c);
/*
 * Held at its first instruction: run it on, and at this exec and each one
 * it and the processes it starts make later (they are followed through
 * fork and vfork), hold the process while its dynamic loader maps the
 * libraries it starts with (syscall by syscall, ptrace), fn hearing of
 * the image and of each mapping of code before any of that code runs.
 * Its waits then go through cmd_wait, which keeps them all running.
 */
int cmd_follow(struct sw_cmd *c, void (*fn)(void *ctx, pid_t pid), void *ctx);
/*
 * waitpid for the command: the ptrace stops cmd_follow brings, its own
 * and its children's, are dealt with here (an exec's loader held, signals
 * passed on, the children's ends forgotten); returns as waitpid(pid)
 * would: its pid once it has ended, 0 (WNOHANG) while it runs.
 */
pid_t cmd_wait(struct sw_cmd *c, int *ws, int flags);
void cmd_free(struct sw_cmd *c);
/* Exit status as a shell reports it (128+N for signal N). */
int cmd_exit_code(int wstatus);

#endif
