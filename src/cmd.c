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
#include "procs.h"

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

/* The child: wait for cmd_go's byte, then exec; never start without it. */
static void __attribute__((noreturn))
child(const struct sw_cmd *c, int go, int st, char *const argv[],
      const sigset_t *sigmask)
{
	ssize_t n;
	char b;

	sigprocmask(SIG_SETMASK, sigmask, NULL);
	signal(SIGPIPE, SIG_DFL);
	/*
	 * EOF without the byte: the tool is gone (killed, or it gave up), and
	 * the command was never let go.  The pipe, not a signal, tells it:
	 * nothing can be missed between a check and the wait.
	 */
	do {
		n = read(go, &b, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127);
	execv(c->path, argv);
	b = errno;
	if (write(st, &b, 1) < 0)
		_exit(127);
	_exit(127);
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
	if (c->pid == 0) {
		close(go[1]);
		close(st[0]);
		child(c, go[0], st[1], argv, sigmask);
	}
	err = c->pid < 0 ? -errno : 0;
	close(go[0]);
	close(st[1]);
	if (err) {
		close(go[1]);
		close(st[0]);
		return err;
	}
	c->go = go[1];
	c->status = st[0];
	return 0;
}

/*
 * The command let go, traced: its stops until its exec's (signals that
 * came meanwhile passed on), or its end.  0 or -errno.
 */
static int until_exec(struct sw_cmd *c)
{
	int ws;

	for (;;) {
		if (waitpid(c->pid, &ws, __WALL) != c->pid)
			return -errno;
		if (!WIFSTOPPED(ws)) {
			c->exited = true;
			c->exit_ws = ws;
			return 0;
		}
		if (ws >> 16 == PTRACE_EVENT_EXEC) {
			c->at_exec = true;
			return 0;
		}
		ptrace(PTRACE_CONT, c->pid, NULL,
		       (void *)(long)(ws >> 16 ? 0 : WSTOPSIG(ws)));
	}
}

int cmd_go(struct sw_cmd *c)
{
	unsigned char e;
	ssize_t n;
	int err = 0;

	/*
	 * Attached by the tool, not by the child (PTRACE_TRACEME would make
	 * whoever is its parent then its tracer: init, once the tool is
	 * dead), while it waits for the byte below.  An exec stops with
	 * PTRACE_EVENT_EXEC, no signal; the death of the tool detaches it,
	 * and it runs on.
	 */
	if (c->stop_at_exec &&
	    ptrace(PTRACE_SEIZE, c->pid, NULL, (void *)PTRACE_O_TRACEEXEC)) {
		err = -errno;
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &c->exit_ws, 0);
		c->exited = true;
		return err;
	}
	c->traced = c->stop_at_exec;
	/* no reader (it died): EPIPE, and the status pipe says the rest */
	n = write(c->go, "g", 1);
	(void)n;
	close(c->go);
	c->go = -1;
	/* traced, it may stop before its exec: wait for that, not the pipe */
	if (c->traced)
		err = until_exec(c);
	/* the status pipe closes on a successful exec (O_CLOEXEC) */
	do {
		n = read(c->status, &e, 1);
	} while (n < 0 && errno == EINTR);
	close(c->status);
	c->status = -1;
	if (n == 1) {
		if (!c->exited)
			waitpid(c->pid, NULL, __WALL);
		return -e;
	}
	return err;
}

int cmd_resume(struct sw_cmd *c)
{
	if (!c->at_exec)
		return 0;
	c->at_exec = false;
	c->traced = false;
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
			struct proc_map m;

			if (!procs_parse_maps_line(line, &m) || m.path[0] != '/')
				continue;
			if (!pass && addr >= m.start && addr < m.end) {
				snprintf(file, sizeof(file), "%s", m.path);
				*lo = m.start;
				*hi = m.end;
			} else if (pass && file[0] && !strcmp(m.path, file)) {
				*lo = m.start < *lo ? m.start : *lo;
				*hi = m.end > *hi ? m.end : *hi;
			}
		}
	}
	fclose(f);
	*is_exe = !strcmp(file, exe);
	return file[0] ? 0 : -ENOENT;
}

/*
 * Its loader is over (or it ended, or it execs anew): not held any more.
 */
static void held_drop(struct sw_cmd *c)
{
	c->holding = false;
	c->loaded = true;
}

/*
 * The command stopped at an exec: c->on_map hears of its image, and,
 * while its dynamic loader runs, it is held: stepped syscall by syscall
 * (see held_syscall).  A static program, or one whose loader cannot be
 * found, runs on.
 */
static void held_exec(struct sw_cmd *c)
{
	struct sw_held n = { .nr = -1 };
	struct user_regs_struct r;
	bool is_exe = true;

	if (!ptrace(PTRACE_GETREGS, c->pid, NULL, &r)) {
		c->on_map(c->ctx, c->pid);
		if (span_of(c->pid, r.rip, &n.lo, &n.hi, &is_exe))
			is_exe = true;
	}
	if (is_exe) {
		held_drop(c);
		return;
	}
	c->held = n;
	c->holding = true;
}

/*
 * The held command at a syscall stop: at an entry from other code than
 * the loader's, the loader is done and it runs on; at the end of an mmap
 * of code, c->on_map hears of it before any of that code can run.
 */
static void held_syscall(struct sw_cmd *c)
{
	struct sw_held *h = &c->held;
	struct user_regs_struct r;

	if (ptrace(PTRACE_GETREGS, c->pid, NULL, &r))
		return;
	/*
	 * x86_64 enters a syscall with -ENOSYS in %rax; counting stops
	 * would not do: after an exec event the first is execve's exit.
	 */
	if ((long long)r.rax == -ENOSYS) {
		if (r.rip < h->lo || r.rip >= h->hi) {
			held_drop(c);
			return;
		}
		h->nr = r.orig_rax;
		h->prot = r.rdx;
	} else if (h->nr == SYS_mmap && (h->prot & PROT_EXEC) &&
		   (long long)r.rax >= 0) {
		c->on_map(c->ctx, c->pid);
	}
}

/* The command running again: to its next syscall stop while held. */
static int cont(struct sw_cmd *c, int sig)
{
	return ptrace(c->holding ? PTRACE_SYSCALL : PTRACE_CONT, c->pid, NULL,
		      (void *)(long)sig) ? -errno : 0;
}

/* The command's ptrace stop ws dealt with, and the command running again. */
static void on_stop(struct sw_cmd *c, int ws)
{
	int sig = WSTOPSIG(ws), event = ws >> 16;

	if (event == PTRACE_EVENT_EXEC) {
		held_exec(c);
		sig = 0;
	} else if (event == PTRACE_EVENT_STOP && sig != SIGTRAP) {
		/*
		 * A group-stop (SIGSTOP, SIGTSTP, ...): stopped it stays, as it
		 * would untraced, until a SIGCONT brings another stop.
		 */
		ptrace(PTRACE_LISTEN, c->pid, NULL, NULL);
		return;
	} else if (sig == (SIGTRAP | 0x80)) {
		if (c->holding)
			held_syscall(c);
		sig = 0;
	} else if (event) {
		sig = 0;
	}
	/* a signal for it goes on to it */
	cont(c, sig);
}

int cmd_follow(struct sw_cmd *c, void (*fn)(void *ctx, pid_t pid), void *ctx)
{
	long opts = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXEC;

	if (!c->at_exec)
		return 0;
	/* not followed then: cmd_resume lets it go untraced */
	if (ptrace(PTRACE_SETOPTIONS, c->pid, NULL, (void *)opts))
		return -errno;
	c->on_map = fn;
	c->ctx = ctx;
	c->at_exec = false;
	held_exec(c);
	return cont(c, 0);
}

pid_t cmd_wait(struct sw_cmd *c, int *ws, int flags)
{
	pid_t r;

	for (;;) {
		if (c->exited) {
			*ws = c->exit_ws;
			return c->pid;
		}
		if (!c->traced)
			return waitpid(c->pid, ws, flags);
		r = waitpid(c->pid, ws, flags | __WALL);
		if (r <= 0)
			return r;
		if (WIFSTOPPED(*ws)) {
			on_stop(c, *ws);
			continue;
		}
		if (c->holding)
			held_drop(c);
		c->exited = true;
		c->exit_ws = *ws;
	}
}

int cmd_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}
