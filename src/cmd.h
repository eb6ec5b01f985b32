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
 * Held at its first instruction: run it until its dynamic loader has
 * mapped the libraries it starts with, syscall by syscall while the
 * loader runs, and hold it again at its first syscall made from other
 * code.  fn hears of the first image and of each mapping of code the
 * loader makes, while the command waits.  A static program is held where
 * it was.  0, or -errno (it is then held wherever it got to).
 */
int cmd_run_loader(struct sw_cmd *c, void (*fn)(void *ctx, pid_t pid),
		   void *ctx);
/* Exit status as a shell reports it (128+N for signal N). */
int cmd_exit_code(int wstatus);

#endif
