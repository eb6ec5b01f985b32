// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include "cmd.h"

/*
 * The file execvp would run, found before the child starts: its search
 * would otherwise be traced as a string of failed execve calls.
 */
static int which(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;

	if (strchr(cmd, '/')) {
		snprintf(out, len, "%s", cmd);
		return access(out, X_OK) ? -errno : 0;
	}
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = end + !!*end) {
		end = strchrnul(p, ':');
		snprintf(out, len, "%.*s%s%s", (int)(end - p), p, end > p ? "/" : "", cmd);
		if (!access(out, X_OK))
			return 0;
		if (!*end)
			break;
	}
	return -ENOENT;
}

int cmd_spawn(struct sw_cmd *c, char *const argv[], const sigset_t *sigmask)
{
	int go[2], st[2], err;

	err = which(argv[0], c->path, sizeof(c->path));
	if (err)
		return err;

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
		/* a traced exec stops with SIGTRAP once the image is mapped */
		if (c->stop_at_exec && ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(127);
		execv(c->path, argv);
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

int cmd_go(struct sw_cmd *c)
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
	if (c->stop_at_exec) {
		int st;

		if (waitpid(c->pid, &st, 0) != c->pid || !WIFSTOPPED(st))
			return -ECHILD;
	}
	return 0;
}

int cmd_resume(struct sw_cmd *c)
{
	if (!c->stop_at_exec)
		return 0;
	c->stop_at_exec = false;
	return ptrace(PTRACE_DETACH, c->pid, NULL, NULL) ? -errno : 0;
}

int cmd_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}
