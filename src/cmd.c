// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include "cmd.h"
#include "vec.h"

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

/*
 * The span of the file mapped at addr in pid, over all its mappings
 * (the loader has several segments); whether that file is the program
 * itself (no loader: a static program).
 */
static int span_of(pid_t pid, unsigned long long addr, unsigned long long *lo,
		   unsigned long long *hi, bool *is_exe)
{
	char path[64], line[4400], file[4096] = "", exe[4096];
	unsigned long long s, e;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* first the file that holds addr, then every mapping of it */
	for (int pass = 0; pass < 2; pass++) {
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			char *name = strchr(line, '/');

			if (!name || sscanf(line, "%llx-%llx", &s, &e) != 2)
				continue;
			name[strcspn(name, "\n")] = 0;
			if (!pass && addr >= s && addr < e) {
				snprintf(file, sizeof(file), "%s", name);
				*lo = s;
				*hi = e;
			} else if (pass && file[0] && !strcmp(name, file)) {
				*lo = s < *lo ? s : *lo;
				*hi = e > *hi ? e : *hi;
			}
		}
	}
	fclose(f);
	*is_exe = !strcmp(file, exe);
	return file[0] ? 0 : -ENOENT;
}

/*
 * Tracee pid stopped at an exec: step it syscall by syscall while its
 * dynamic loader runs, c->on_map hearing of the image and of each mapping
 * of code, and leave it stopped at its first syscall from other code (a
 * static program: where it is).  1 if it ended meanwhile (the command's
 * status kept for cmd_wait), 0, or -errno.
 */
static int run_loader(struct sw_cmd *c, pid_t pid)
{
	unsigned long long lo = 0, hi = 0;
	struct user_regs_struct r;
	long nr = -1, prot = 0;
	int st, sig = 0, err;
	bool is_exe;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
		return -errno;
	c->on_map(c->ctx, pid);
	err = span_of(pid, r.rip, &lo, &hi, &is_exe);
	if (err || is_exe)
		return err;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig))
			return -errno;
		sig = 0;
		if (waitpid(pid, &st, __WALL) != pid)
			return -errno;
		if (!WIFSTOPPED(st)) {
			if (pid == c->pid) {
				c->exited = true;	/* say so when asked */
				c->exit_ws = st;
			}
			return 1;
		}
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(st);	/* a signal: pass it on */
			continue;
		}
		if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
			return -errno;
		/*
		 * x86_64 enters a syscall with -ENOSYS in %rax; counting stops
		 * would not do: after an exec event the first is execve's exit.
		 */
		if ((long long)r.rax == -ENOSYS) {
			/* the loader is done: other code makes a syscall */
			if (r.rip < lo || r.rip >= hi)
				return 0;
			nr = r.orig_rax;
			prot = r.rdx;
		} else if (nr == SYS_mmap && (prot & PROT_EXEC) &&
			   (long long)r.rax >= 0) {
			c->on_map(c->ctx, pid);
		}
	}
}

/* Whether pid is a tracee seen before; if not, it is from now on. */
static bool seen(struct sw_cmd *c, pid_t pid)
{
	for (size_t i = 0; i < c->nr_tracees; i++)
		if (c->tracees[i] == pid)
			return true;
	if (!VEC_GROW(c->tracees, c->nr_tracees, c->cap_tracees, 16))
		c->tracees[c->nr_tracees++] = pid;
	return false;
}

static void forget(struct sw_cmd *c, pid_t pid)
{
	for (size_t i = 0; i < c->nr_tracees; i++)
		if (c->tracees[i] == pid)
			c->tracees[i] = c->tracees[--c->nr_tracees];
}

/* Tracee pid's ptrace stop ws dealt with, and pid running again. */
static void on_stop(struct sw_cmd *c, pid_t pid, int ws)
{
	int sig = WSTOPSIG(ws), event = ws >> 16;
	siginfo_t si;

	if (!seen(c, pid) && sig == SIGSTOP) {
		sig = 0;	/* a new child's first stop, ptrace's own */
	} else if (event == PTRACE_EVENT_EXEC) {
		/* a new image: its loader runs held */
		if (run_loader(c, pid) == 1)
			return;
		sig = 0;
	} else if (event || sig == (SIGTRAP | 0x80) ||
		   ptrace(PTRACE_GETSIGINFO, pid, NULL, &si)) {
		sig = 0;	/* a fork, a stray syscall stop, a group-stop */
	}
	/* a signal for it goes on to it */
	ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
}

int cmd_follow(struct sw_cmd *c, void (*fn)(void *ctx, pid_t pid), void *ctx)
{
	long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC |
		    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	int err;

	if (!c->stop_at_exec)
		return 0;
	c->on_map = fn;
	c->ctx = ctx;
	if (ptrace(PTRACE_SETOPTIONS, c->pid, NULL, (void *)opts))
		return -errno;
	c->stop_at_exec = false;
	c->follow = true;
	seen(c, c->pid);
	err = run_loader(c, c->pid);
	if (err == 1)
		return 0;
	if (ptrace(PTRACE_CONT, c->pid, NULL, NULL) && !err)
		err = -errno;
	return err;
}

pid_t cmd_wait(struct sw_cmd *c, int *ws, int flags)
{
	pid_t r;

	if (!c->follow && !c->exited)
		return waitpid(c->pid, ws, flags);
	for (;;) {
		if (c->exited) {
			*ws = c->exit_ws;
			return c->pid;
		}
		/* every tracee's stops come here, the command's own and its children's */
		r = waitpid(-1, ws, flags | __WALL);
		if (r <= 0)
			return r;
		if (WIFSTOPPED(*ws)) {
			on_stop(c, r, *ws);
		} else if (r == c->pid) {
			c->exited = true;
			c->exit_ws = *ws;
		} else {
			forget(c, r);
		}
	}
}

void cmd_free(struct sw_cmd *c)
{
	free(c->tracees);
	c->tracees = NULL;
	c->nr_tracees = c->cap_tracees = 0;
}

int cmd_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}
