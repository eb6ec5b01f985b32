// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tracepipe.h"

#define TP_MAX_CPUS 1024

struct tracepipe {
	int fd;
	char tracefs[4096];
	unsigned long long overrun0;	/* the buffer's overruns when we began */
	char tag[3][16];		/* "k<magic> ", "u<magic> ", "e<magic> " */
	struct tp_event *pending[TP_MAX_CPUS];
	char buf[65536];
	size_t len;
};

/* Lines the kernel overwrote before anyone read them, all CPUs so far. */
static unsigned long long overruns(const char *tracefs)
{
	unsigned long long total = 0, n;
	char path[4200], line[128];

	for (int cpu = 0; cpu < TP_MAX_CPUS; cpu++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", tracefs, cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %llu", &n) == 1)
				total += n;
		fclose(f);
	}
	return total;
}

/*
 * Until tracing is first used the ring buffer is kept tiny ("7 (expanded:
 * 1408)"); bpf_trace_printk does not always grow it.  Grow it to the size
 * the kernel is configured for, as its first real use would.
 */
static void expand(const char *tracefs)
{
	char path[4200], buf[64];
	unsigned kb, want;
	FILE *f;

	snprintf(path, sizeof(path), "%s/buffer_size_kb", tracefs);
	f = fopen(path, "r+");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f) &&
	    sscanf(buf, "%u (expanded: %u)", &kb, &want) == 2 && want > kb) {
		rewind(f);
		fprintf(f, "%u\n", want);
	}
	fclose(f);
}

unsigned long long tracepipe_lost(const struct tracepipe *tp)
{
	return overruns(tp->tracefs) - tp->overrun0;
}

int tracepipe_open(struct tracepipe **out, const char *tracefs, __u32 magic)
{
	struct tracepipe *tp = calloc(1, sizeof(*tp));
	char path[4200];

	if (!tp)
		return -ENOMEM;
	for (int i = 0; i < 3; i++)
		snprintf(tp->tag[i], sizeof(tp->tag[i]), "%c%x ", "kue"[i], magic);
	snprintf(tp->tracefs, sizeof(tp->tracefs), "%s", tracefs);
	expand(tracefs);
	tp->overrun0 = overruns(tracefs);
	snprintf(path, sizeof(path), "%s/trace_pipe", tracefs);
	tp->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (tp->fd < 0) {
		int err = -errno;

		free(tp);
		return err;
	}
	*out = tp;
	return 0;
}

int tracepipe_fd(const struct tracepipe *tp)
{
	return tp->fd;
}

/*
 * "           paths-1234    [001] d..1  5678.123456: ..." -- the task name
 * may hold spaces and dashes, so the tid is what precedes " [" after the
 * last '-' before it; newer kernels put "(tgid)" or flags in between.
 */
static int parse_header(const char *line, struct tp_event *ev)
{
	const char *br = strstr(line, " ["), *dash, *p, *colon;
	unsigned long secs, usecs;
	size_t n;

	if (!br)
		return -EINVAL;
	ev->cpu = strtoul(br + 2, NULL, 10);
	for (dash = br; dash > line && *dash != '-'; dash--)
		;
	if (*dash != '-')
		return -EINVAL;
	ev->tid = strtoul(dash + 1, NULL, 10);
	for (p = line; *p == ' '; p++)
		;
	n = dash - p < SW_COMM_LEN - 1 ? (size_t)(dash - p) : SW_COMM_LEN - 1;
	memcpy(ev->comm, p, n);
	ev->comm[n] = 0;
	/* the timestamp is the word ending in ':' after the CPU */
	colon = strchr(strchr(br, ']'), ':');
	if (!colon)
		return -EINVAL;
	for (p = colon; p > br && p[-1] != ' '; p--)
		;
	if (sscanf(p, "%lu.%lu", &secs, &usecs) != 2)
		return -EINVAL;
	ev->ts = secs * 1000000000ULL + usecs * 1000ULL;
	return 0;
}

int tracepipe_line(struct tracepipe *tp, const char *line, tp_event_fn fn,
		    void *ctx)
{
	struct tp_event hdr = {}, *ev;
	unsigned long long addr;
	unsigned idx, stops;
	const char *m = NULL;
	int kind;

	for (kind = 0; kind < 3 && !m; kind++)
		m = strstr(line, tp->tag[kind]);
	if (!m || parse_header(line, &hdr) || hdr.cpu >= TP_MAX_CPUS)
		return 0;	/* not ours */
	kind--;
	m += strlen(tp->tag[kind]);
	ev = tp->pending[hdr.cpu];
	if (kind == 2) {		/* the end: deliver */
		if (!ev || sscanf(m, "%x", &stops) != 1)
			return 0;
		ev->kstop = stops & 0xff;
		ev->ustop = stops >> 8;
		fn(ev, ctx);
		free(ev);
		tp->pending[hdr.cpu] = NULL;
		return 1;
	}
	if (sscanf(m, "%u %llx", &idx, &addr) != 2)
		return 0;
	if (!ev) {
		ev = calloc(1, sizeof(*ev));
		if (!ev)
			return -ENOMEM;
		/* the event's time and task: its first line's */
		*ev = hdr;
		tp->pending[hdr.cpu] = ev;
	}
	/* 4.1's walk prints every slot, 0 once it has ended: no frame */
	if (kind == 0 && !addr)
		return 0;
	if (kind == 0 && ev->nk < TP_MAX_FRAMES)
		ev->k[ev->nk++] = addr;
	else if (kind == 1 && ev->nu < TP_MAX_FRAMES)
		ev->u[ev->nu++] = addr;
	return 0;
}

int tracepipe_read(struct tracepipe *tp, tp_event_fn fn, void *ctx)
{
	for (;;) {
		ssize_t n = read(tp->fd, tp->buf + tp->len, sizeof(tp->buf) - tp->len - 1);
		char *line, *nl;

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (n == 0)
			return 0;
		tp->len += n;
		tp->buf[tp->len] = 0;
		for (line = tp->buf; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = 0;
			tracepipe_line(tp, line, fn, ctx);
		}
		tp->len -= line - tp->buf;
		memmove(tp->buf, line, tp->len);
		if (tp->len == sizeof(tp->buf) - 1)
			tp->len = 0;	/* a line longer than the buffer: not ours */
	}
}

void tracepipe_free(struct tracepipe *tp)
{
	if (!tp)
		return;
	for (int i = 0; i < TP_MAX_CPUS; i++)
		free(tp->pending[i]);
	close(tp->fd);
	free(tp);
}
