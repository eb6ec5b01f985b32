// SPDX-License-Identifier: MIT
#include "debuginfod.h"
#include "interrupt.h"
#include "untrusted.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;


struct debuginfod {
	const char *tool;
	char client[4096];	/* "": none found */
	char **env;		/* the client's: ours with its time bounds */
	int bound_s;		/* a fetch's, whole */
	char maxtime[40], timeout[40];	/* the client's, in env */
	bool ended;		/* asking is over for this run */
	char why[256];		/* why it ended, for the report */
	/* the binaries left unnamed since: their build-ids' first bytes */
	uint64_t *left;
	size_t nr_left, cap_left;
	char first[256];	/* the first of them, escaped */
};

/*
 * The client, from PATH as execvp would take it, but only a file that only
 * root can change: the tools run as root, and a PATH entry that another
 * user can write must not run that user's program.
 */
static void find_client(struct debuginfod *d)
{
	const char *path = getenv("PATH");
	const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";

	while (*p) {
		size_t n = strcspn(p, ":");
		struct stat st;

		snprintf(d->client, sizeof(d->client), "%.*s/debuginfod-find",
			 (int)n, p);
		if (d->client[0] == '/' && !stat(d->client, &st) &&
		    S_ISREG(st.st_mode) && st.st_uid == 0 &&
		    !(st.st_mode & (S_IWGRP | S_IWOTH)) && (st.st_mode & S_IXUSR))
			return;
		p += n + (p[n] == ':');
	}
	d->client[0] = 0;
}

/*
 * The environment minus the client's own bounds, then ours: set here, as
 * a child of a process with threads may call nothing that allocates.
 */
static int make_env(struct debuginfod *d)
{
	const char *user = getenv("DEBUGINFOD_TIMEOUT");
	char *end;
	long t = user ? strtol(user, &end, 10) : 0;
	static const char *const ours[] = {
		"DEBUGINFOD_MAXTIME=", "DEBUGINFOD_TIMEOUT=",
		"DEBUGINFOD_PROGRESS=", "DEBUGINFOD_VERBOSE=",
	};
	size_t n = 0, k = 0;

	/* the user's bound, where it is tighter than ours */
	d->bound_s = user && *user && !*end && t > 0 && t < DEBUGINFOD_FETCH_S ?
		     (int)t : DEBUGINFOD_FETCH_S;
	while (environ[n])
		n++;
	d->env = calloc(n + 3, sizeof(*d->env));
	if (!d->env)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		bool skip = false;

		for (size_t j = 0; j < sizeof(ours) / sizeof(ours[0]); j++)
			skip |= !strncmp(environ[i], ours[j], strlen(ours[j]));
		if (!skip)
			d->env[k++] = environ[i];
	}
	/* the whole fetch, and a stall of the connection, as we bound them */
	snprintf(d->maxtime, sizeof(d->maxtime), "DEBUGINFOD_MAXTIME=%d",
		 d->bound_s);
	snprintf(d->timeout, sizeof(d->timeout), "DEBUGINFOD_TIMEOUT=%d",
		 d->bound_s);
	d->env[k++] = d->maxtime;
	d->env[k++] = d->timeout;
	return 0;
}

int debuginfod_new(struct debuginfod **out, const char *tool)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	struct debuginfod *d;

	*out = NULL;
	if (!urls || !urls[strspn(urls, " \t")])
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d || make_env(d)) {
		free(d);
		return -ENOMEM;
	}
	d->tool = tool;
	find_client(d);
	if (!d->client[0]) {
		d->ended = true;
		snprintf(d->why, sizeof(d->why), "debuginfod-find, which asks "
			 "DEBUGINFOD_URLS, is not installed (Debian's debuginfod "
			 "package has it)");
	}
	*out = d;
	return 0;
}

void debuginfod_free(struct debuginfod *d)
{
	if (!d)
		return;
	free(d->env);
	free(d->left);
	free(d);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The child: only async-signal-safe calls from here to the exec. */
static void run_client(const struct debuginfod *d, int out, int err,
		       char *const argv[])
{
	sigset_t none;
	int null = open("/dev/null", O_RDONLY);

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		_exit(127);
	/* the tool's probes and maps are none of the client's business */
	if (syscall(SYS_close_range, 3, ~0U, 0))
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	execve(d->client, argv, d->env);
	_exit(127);
}

/* Appends what fd has to buf (at most len - 1 bytes kept); false at EOF. */
static bool drain(int fd, char *buf, size_t len, size_t *at)
{
	char junk[512];
	ssize_t r;

	if (*at + 1 < len)
		r = read(fd, buf + *at, len - 1 - *at);
	else
		r = read(fd, junk, sizeof(junk));
	if (r > 0 && *at + 1 < len)
		*at += r;
	buf[*at] = 0;
	return r > 0 || (r < 0 && errno == EINTR);
}

struct run {
	char out[4096], err[512];
	size_t nout, nerr;
	bool shown;		/* the progress line is on the terminal */
	bool timed_out, stopped;
};

/* Reads the client's answer until it closes both, the bound, or a Ctrl-C. */
static void wait_client(const struct debuginfod *d, pid_t pid, int out,
			int err, const char *what, struct run *r)
{
	/* the client's own bound, then ours: it may take a moment to exit */
	long long start = now_ms(), end = start + (d->bound_s + 2) * 1000LL;
	struct pollfd p[2] = { { out, POLLIN, 0 }, { err, POLLIN, 0 } };
	bool tty = isatty(STDERR_FILENO);

	while (p[0].fd >= 0 || p[1].fd >= 0) {
		long long t = now_ms();
		char shown[200];

		if (t >= end || interrupt_pending()) {
			r->timed_out = t >= end;
			r->stopped = !r->timed_out;
			kill(pid, SIGKILL);
			break;
		}
		if (tty && !r->shown && t - start >= DEBUGINFOD_PROGRESS_MS) {
			fprintf(stderr, "%s: fetching the debug file of %s from "
				"debuginfod...", d->tool,
				untrusted_escape(shown, sizeof(shown), what));
			fflush(stderr);
			r->shown = true;
		}
		if (poll(p, 2, 100) <= 0)
			continue;
		if (p[0].revents && !drain(out, r->out, sizeof(r->out), &r->nout))
			p[0].fd = -1;
		if (p[1].revents && !drain(err, r->err, sizeof(r->err), &r->nerr))
			p[1].fd = -1;
	}
	if (r->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
}

/* A binary left without its debug file because asking ended. */
static void left_unnamed(struct debuginfod *d, const uint8_t *id, size_t n,
			 const char *what)
{
	uint64_t key = 0;

	memcpy(&key, id, n < sizeof(key) ? n : sizeof(key));
	for (size_t i = 0; i < d->nr_left; i++)
		if (d->left[i] == key)
			return;
	if (d->nr_left == d->cap_left) {
		size_t cap = d->cap_left ? 2 * d->cap_left : 16;
		uint64_t *v = realloc(d->left, cap * sizeof(*v));

		if (!v)
			return;
		d->left = v;
		d->cap_left = cap;
	}
	if (!d->nr_left)
		untrusted_escape(d->first, sizeof(d->first), what);
	d->left[d->nr_left++] = key;
}

/* The asking ends: why, in the client's words or ours. */
static void end_asking(struct debuginfod *d, const struct run *r)
{
	char line[sizeof(r->err)];
	const char *msg = r->err;
	const char *tag = "Server query failed: ";

	d->ended = true;
	if (r->timed_out) {
		snprintf(d->why, sizeof(d->why), "a fetch took longer than %d s",
			 d->bound_s);
		return;
	}
	if (r->stopped) {
		snprintf(d->why, sizeof(d->why), "the tool was being stopped");
		return;
	}
	if (!strncmp(msg, tag, strlen(tag)))
		msg += strlen(tag);
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(msg, "\n"), msg);
	snprintf(d->why, sizeof(d->why), "the servers of DEBUGINFOD_URLS "
		 "could not be asked: %s", *line ? untrusted_escape(line,
		 sizeof(line), line) : "debuginfod-find failed");
}

int debuginfod_fetch(struct debuginfod *d, const uint8_t *id, size_t n,
		     const char *what, char *path, size_t len)
{
	char hex[2 * 64 + 1];
	char *argv[] = { "debuginfod-find", "debuginfo", hex, NULL };
	struct run r = {};
	int out[2], err[2], status = 0;
	pid_t pid;

	if (n < 2 || n > 64)
		return -ENOENT;
	if (d->ended) {
		left_unnamed(d, id, n, what);
		return -ECANCELED;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (pipe2(out, O_CLOEXEC))
		return -errno;
	if (pipe2(err, O_CLOEXEC)) {
		close(out[0]);
		close(out[1]);
		return -errno;
	}
	pid = fork();
	if (!pid)
		run_client(d, out[1], err[1], argv);
	close(out[1]);
	close(err[1]);
	if (pid > 0) {
		wait_client(d, pid, out[0], err[0], what, &r);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close(out[0]);
	close(err[0]);
	if (pid < 0)
		return -EAGAIN;
	r.out[strcspn(r.out, "\n")] = 0;
	if (!r.timed_out && !r.stopped && WIFEXITED(status) &&
	    !WEXITSTATUS(status) && r.out[0] == '/') {
		snprintf(path, len, "%s", r.out);
		return 0;
	}
	/* the servers answered and none has it: as for any binary, no names */
	if (!r.timed_out && !r.stopped && strstr(r.err, "No such file or directory"))
		return -ENOENT;
	end_asking(d, &r);
	left_unnamed(d, id, n, what);
	return -ECANCELED;
}

void debuginfod_report(const struct debuginfod *d, FILE *f)
{
	if (!d || !d->nr_left)
		return;
	fprintf(f, "%s: the debug symbols of %zu binar%s (%s%s) were not "
		"fetched, so %s frames may show as [unknown]: %s; fix that, or "
		"pass --no-debuginfod not to ask\n", d->tool, d->nr_left,
		d->nr_left == 1 ? "y" : "ies", d->first,
		d->nr_left > 1 ? ", ..." : "", d->nr_left == 1 ? "its" : "their",
		d->why);
}
