// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include "cmd.h"

int sw_cmd_spawn(struct sw_cmd *c, char *const argv[], const sigset_t *sigmask)
{
	int go[2], st[2];

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(st, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	c->pid = fork();
	if (c->pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(st[0]);
		close(st[1]);
		return err;
	}
	if (c->pid == 0) {
		char b;

		close(go[1]);
		close(st[0]);
		sigprocmask(SIG_SETMASK, sigmask, NULL);
		signal(SIGPIPE, SIG_DFL);
		/* EOF on go: the tracer is ready (or gone) */
		while (read(go[0], &b, 1) < 0 && errno == EINTR)
			;
		execvp(argv[0], argv);
		b = errno;
		if (write(st[1], &b, 1) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(st[1]);
	c->go = go[1];
	c->status = st[0];
	return 0;
}

int sw_cmd_go(struct sw_cmd *c)
{
	unsigned char e;
	ssize_t n;

	close(c->go);
	c->go = -1;
	/* the status pipe closes on a successful exec (O_CLOEXEC) */
	do {
		n = read(c->status, &e, 1);
	} while (n < 0 && errno == EINTR);
	close(c->status);
	c->status = -1;
	if (n == 1) {
		waitpid(c->pid, NULL, 0);
		return -e;
	}
	return 0;
}

int sw_cmd_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}
