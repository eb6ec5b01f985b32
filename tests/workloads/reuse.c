// SPDX-License-Identifier: MIT
/*
 * reuse PROGRAM: a child execs PROGRAM, whose loader gives up (a library
 * gone: ld.so exits 127); once it is reaped, a second child is given its
 * pid (clone3's set_tid, root only) and says so.  Whether that second
 * child was stopped by then is said too (its parent asks before letting
 * it end): under a tracer that took it for the first, a stop it never
 * asked for.
 *
 *   loader: exit 127
 *   same pid: ran
 *   same pid: exit 0
 *
 * Exit 77 where clone3 or set_tid is not there (before 5.5, not root).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *s)
{
	if (write(STDOUT_FILENO, s, strlen(s)) < 0)
		_exit(1);
}

int main(int argc, char **argv)
{
	struct clone_args ca = { .exit_signal = SIGCHLD };
	int ran[2], go[2];
	pid_t a, b;
	char c;
	int ws;

	if (argc != 2 || pipe(ran) || pipe(go))
		return 2;
	a = fork();
	if (a == 0) {
		execv(argv[1], &argv[1]);
		_exit(126);
	}
	if (a < 0 || waitpid(a, &ws, 0) != a)
		return 1;
	printf("loader: exit %d\n", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
	fflush(stdout);
	ca.set_tid = (unsigned long)&a;
	ca.set_tid_size = 1;
	/* no CLONE_VM: a fork, which libc does not hear of; the child writes and exits */
	b = syscall(SYS_clone3, &ca, sizeof(ca));
	if (b == 0) {
		/* running its own code: a stop at its start would have come */
		say("same pid: ran\n");
		close(go[1]);
		if (write(ran[1], "r", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	if (b < 0) {
		fprintf(stderr, "clone3 with set_tid: %s\n", strerror(errno));
		return errno == ENOSYS || errno == EPERM ? 77 : 1;
	}
	if (b != a || read(ran[0], &c, 1) != 1)
		return 1;
	/* a stop is kept for its parent to see until it waits (or SIGCONT) */
	if (waitpid(b, &ws, WUNTRACED | WNOHANG) == b && WIFSTOPPED(ws)) {
		printf("same pid: stopped by signal %d\n", WSTOPSIG(ws));
		fflush(stdout);
		kill(b, SIGCONT);
	}
	close(go[1]);
	if (waitpid(b, &ws, 0) != b)
		return 1;
	printf("same pid: exit %d\n", WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
	return 0;
}
