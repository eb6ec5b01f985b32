// SPDX-License-Identifier: MIT
/*
 * The session's -- COMMAND: run (held at its exec only where its USDT
 * semaphores or the walker ask), its semaphores set and taken back
 * (those of -p's process too), and ended once tracing has.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "session_int.h"
#include "procs.h"
#include "../compat/semaphore.h"

/* How long COMMAND has to end on SIGTERM before it gets SIGKILL. */
#define CMD_GRACE_MS 5000

bool session_needs_semaphores(const struct sw_targets *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		if (ts->v[i].semaphore)
			return true;
	return false;
}

/* Add delta to the semaphore at file offset off of path, as pid maps it. */
static int semaphore_at(pid_t pid, const char *path, uint64_t off, int delta)
{
	struct stat st;
	uint64_t addr;
	int err;

	if (stat(path, &st))
		return -errno;
	err = procs_writable_at(pid, st.st_ino, off, &addr);
	return err ? err : semaphore_add(pid, addr, delta);
}

/* Add delta to each USDT semaphore this kernel leaves to us, once each. */
int session_semaphores(const struct sw_targets *ts, pid_t pid, int delta)
{
	for (size_t i = 0; i < ts->n; i++) {
		const struct sw_target *tg = &ts->v[i];
		bool seen = false;
		int err;

		/* a tracepoint or kprobe has no semaphore, nor a path */
		if (!tg->semaphore)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = ts->v[j].semaphore == tg->semaphore &&
			       !strcmp(ts->v[j].spec.path, tg->spec.path);
		if (seen)
			continue;
		err = semaphore_at(pid, tg->spec.path, tg->semaphore, delta);
		if (err && delta > 0)
			return err;
	}
	return 0;
}

int session_spawn(struct session *s)
{
	int e;

	e = cmd_spawn(&s->cmd, s->o.command, &s->oldmask);
	if (e) {
		die(s, "cannot run %s: %s; check the command", s->o.command[0],
		    strerror(-e));
		return 127;
	}
	s->have_cmd = true;
	if (s->procs && procs_trace(s->procs, s->cmd.pid)) {
		die(s, "out of memory");
		return 1;
	}
	if (!walker_can_follow(&s->f)) {
		/* a 4.4 kernel hooks fork with a kretprobe; none here */
		fprintf(stderr, "%s: this kernel has %s to see forks with, so "
			"only %s itself is traced, not the processes it "
			"starts\n", s->o.tool, s->f.helper_pid ? "no kprobes" :
			"no bpf_get_current_pid_tgid (4.2+)", s->o.command[0]);
		s->wo.follow = false;
		s->wo.pid = s->cmd.pid;
	} else if (s->wo.kind == SW_WALKER_CFI && !walker_cfi_runs(&s->f) &&
		   !walker_cfi41_chained(&s->f) && s->need.kernel_event) {
		/* 4.1's kprobe programs of bpf/cfi41.bpf.c filter by process alone */
		fprintf(stderr, "%s: the cfi walker follows no forks from a kprobe "
			"without a CPU helper for kprobes (4.2+), so only %s "
			"itself is traced, not the processes it starts; --walker "
			"fp follows them\n", s->o.tool, s->o.command[0]);
		s->wo.follow = false;
		s->wo.pid = s->cmd.pid;
	}
	return 0;
}

int session_go(struct session *s)
{
	int e;

	if (!s->have_cmd)
		return 0;
	/*
	 * Held at its first instruction while its semaphores are set, and
	 * where the walker asks, until the loader has mapped its libraries.
	 */
	s->cmd.stop_at_exec = session_needs_semaphores(&s->targets) ||
			      (s->hooks && s->hooks->hold_at_exec &&
			       s->hooks->hold_at_exec(s));
	e = s->hooks && s->hooks->command ? s->hooks->command(s) : 0;
	if (e)
		return e;
	e = cmd_go(&s->cmd);
	if (!e && s->cmd.at_exec) {
		e = session_semaphores(&s->targets, s->cmd.pid, 1);
		if (e)
			die(s, "cannot set the USDT semaphores in %s: %s (only its "
			    "own image's, not libraries', can be set at its "
			    "start)", s->o.command[0], strerror(-e));
		if (s->hooks && s->hooks->at_exec)
			s->hooks->at_exec(s);
		cmd_resume(&s->cmd);
		e = 0;
	}
	if (e) {
		s->have_cmd = false;
		die(s, "cannot run %s: %s; check the command", s->o.command[0],
		    strerror(-e));
		return 127;
	}
	return 0;
}

/*
 * COMMAND has been sent SIGTERM: its wait status once it ends.  One that
 * ignores SIGTERM is killed after CMD_GRACE_MS, or at once on another
 * Ctrl-C, so that nothing it does can hold the tool.
 */
int session_end_cmd(struct session *s)
{
	long long kill_at = session_now_ms() + CMD_GRACE_MS;
	struct pollfd pfd = { .fd = s->sigfd, .events = POLLIN };
	struct signalfd_siginfo si;
	int ws, timeout;

	while (cmd_wait(&s->cmd, &ws, WNOHANG) == 0) {
		if (s->nr_signals < 2) {
			timeout = (int)(kill_at - session_now_ms());
			if (timeout > 0 && poll(&pfd, 1, timeout) != 0) {
				while (read(s->sigfd, &si, sizeof(si)) == sizeof(si))
					s->nr_signals += si.ssi_signo != SIGCHLD;
				continue;
			}
		}
		kill(s->cmd.pid, SIGKILL);
		if (s->nr_signals < 2)
			fprintf(stderr, "%s: %s did not end within %d s of SIGTERM: "
				"killed it (SIGKILL)\n", s->o.tool,
				s->o.command[0], CMD_GRACE_MS / 1000);
		else
			fprintf(stderr, "%s: %s had not ended on SIGTERM at the "
				"second signal: killed it (SIGKILL)\n", s->o.tool,
				s->o.command[0]);
		cmd_wait(&s->cmd, &ws, 0);
		break;
	}
	return ws;
}
