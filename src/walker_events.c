// SPDX-License-Identifier: MIT
/*
 * stacksnoop's events, one by one: perf samples (4.4+) or trace_pipe
 * lines (4.1-4.3) decoded into the same struct sw_event, batched and
 * handed on in time order.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "walker_int.h"
#include "procs.h"
#include "tracepipe.h"
#include "fp_key.h"
#include "vec.h"

/* The frames of f into ev, the entry callers in place. */
static void event_frames(struct sw_event *ev, const struct key_frames *f)
{
	size_t n = 0, max = sizeof(ev->frames) / sizeof(ev->frames[0]);

	ev->stack.kip = ev->frames;
	for (size_t i = 0; i < f->nk && n < max; i++) {
		ev->frames[n++] = f->k[i];
		if (i == 0 && f->kcaller && n < max)
			ev->frames[n++] = f->kcaller;
	}
	ev->stack.nk = n;
	ev->stack.uip = ev->frames + n;
	for (size_t i = 0; i < f->nu && n < max; i++) {
		ev->frames[n++] = f->u[i];
		if (i == 0 && f->ucaller && n < max)
			ev->frames[n++] = f->ucaller;
	}
	ev->stack.nu = n - ev->stack.nk;
	walker_frames_how(&ev->stack, f);
}

/* An explain record holds one walk: the event's own side of the stack. */
static void explain_frames(struct sw_event *ev, const struct sw_fp_explain *x,
			   bool user)
{
	size_t n = walker_nframes(x->ret, SW_FP_XDEPTH);

	memcpy(ev->frames, x->ret, n * sizeof(__u64));
	ev->stack.kip = ev->stack.uip = ev->frames;
	ev->stack.nk = user ? 0 : n;
	ev->stack.nu = user ? n : 0;
	ev->explain = x;
}

/* The next event of the batch, its time, thread and CPU set; NULL: no memory. */
static struct sw_event *new_event(struct batch *b, __u64 ts, __u32 tid,
				  __u32 cpu)
{
	struct sw_event *ev;

	if (VEC_GROW(b->v, b->n, b->cap, 64)) {
		b->err = -ENOMEM;
		return NULL;
	}
	ev = &b->v[b->n];
	/* all but the frames, which event_frames() writes as far as it needs */
	memset(ev, 0, offsetof(struct sw_event, frames));
	ev->explain = NULL;
	ev->ts = ts;
	ev->tid = tid;
	ev->cpu = cpu;
	ev->stack.count = 1;
	return ev;
}

/* The process, comm and stop reasons of a key's (or explain record's) header. */
static void event_header(struct sw_event *ev, const struct sw_key_hdr *h)
{
	ev->stack.tgid = h->tgid;
	memcpy(ev->stack.comm, h->comm, SW_COMM_LEN);
	ev->stack.kstop = h->kstop;
	ev->stack.ustop = h->ustop;
}

static void key_event(struct sw_event *ev, const struct key_frames *f)
{
	event_header(ev, f->h);
	event_frames(ev, f);
}

/* A perf record (4.4+): a header, then the walker's key or explain record. */
static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct batch *b = ctx;
	const struct sw_event_hdr *e = data;
	struct key_frames f;	/* 2 KiB: on the stack, not a malloc an event */
	struct sw_event *ev;

	(void)cpu;
	if (size < sizeof(*e) || !(ev = new_event(b, e->ts, e->tid, e->cpu)))
		return;
	if (b->w->o.sink == SINK_EXPLAIN) {
		const struct sw_fp_explain *x = (const void *)(e + 1);
		struct sw_fp_explain *copy = malloc(sizeof(*copy));

		if (!copy || size < sizeof(*e) + sizeof(*x)) {
			free(copy);
			return;
		}
		memcpy(copy, x, sizeof(*copy));
		event_header(ev, &x->h);
		explain_frames(ev, copy, b->w->user_events);
	} else {
		walker_key_frames(b->w, e + 1, false, &f);
		key_event(ev, &f);
	}
	b->w->cut_events += walker_stack_cut(ev->stack.kstop) ||
			    walker_stack_cut(ev->stack.ustop);
	b->n++;
}

/* A trace_pipe event (4.1-4.3): its lines' frames, decoded as a key's are. */
static void on_trace_event(const struct tp_event *t, void *ctx)
{
	struct walker *w = ctx;
	struct sw_key_hdr h = {
		.kstop = t->kstop,
		.ustop = t->ustop,
		/* trace_pipe gives the thread: its process names the frames */
		.tgid = procs_tgid_of(t->tid),
	};
	struct key_frames f = {
		.h = &h, .k = t->k, .u = t->u,
		.nk = t->nk < SW_FP_KDEPTH ? t->nk : SW_FP_KDEPTH,
		.nu = t->nu < SW_FP_UDEPTH ? t->nu : SW_FP_UDEPTH,
	};
	struct sw_event *ev = new_event(&w->batch, t->ts, t->tid, t->cpu);

	if (!ev)
		return;
	memcpy(h.comm, t->comm, SW_COMM_LEN);
	walker_frames_fixup(&f);
	walker_frames_tagged(w, &f);
	key_event(ev, &f);
	w->cut_events += walker_stack_cut(h.kstop) || walker_stack_cut(h.ustop);
	w->batch.n++;
}

/* An event's place: its CPU, then where it came (its buffer's order). */
struct place {
	__u32 cpu;
	size_t at;
};

static int by_cpu(const void *a, const void *b)
{
	const struct place *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/*
 * The batch in time order, each CPU's events kept in the order its buffer
 * gave them: the CPUs' runs merged by their first events' times.  Sorting
 * by time alone trusted a clock that 4.7.4's bpf_ktime_get_ns() showed
 * going back on one CPU (its events printed out of order).  -ENOMEM: as
 * they came.
 */
static int order(struct batch *b)
{
	size_t n = b->n, runs = 0, *head = NULL, *end = NULL;
	struct sw_event *out = NULL;
	struct place *p = NULL;
	int err = -ENOMEM;

	if (n < 2)
		return 0;
	p = malloc(n * sizeof(*p));
	head = malloc(n * sizeof(*head));
	end = malloc(n * sizeof(*end));
	out = malloc(n * sizeof(*out));
	if (!p || !head || !end || !out)
		goto out;
	for (size_t i = 0; i < n; i++)
		p[i] = (struct place){ b->v[i].cpu, i };
	qsort(p, n, sizeof(*p), by_cpu);
	for (size_t i = 0; i < n; i++) {
		if (!i || p[i].cpu != p[i - 1].cpu)
			head[runs++] = i;
		end[runs - 1] = i + 1;
	}
	for (size_t k = 0; k < n; k++) {
		size_t best = runs;

		for (size_t r = 0; r < runs; r++)
			if (head[r] < end[r] &&
			    (best == runs ||
			     b->v[p[head[r]].at].ts < b->v[p[head[best]].at].ts))
				best = r;
		out[k] = b->v[p[head[best]++].at];
	}
	/* out is the batch now, as large as it holds */
	free(b->v);
	b->v = out;
	b->cap = n;
	out = NULL;
	err = 0;
out:
	free(p);
	free(head);
	free(end);
	free(out);
	return err;
}

int walker_events_open(struct walker *w, size_t pages, sw_event_fn fn,
			void *ctx)
{
	w->on_event = fn;
	w->on_event_ctx = ctx;
	if (w->o.sink == SINK_PRINTK)
		return tracepipe_open(&w->tp, w->f->tracefs, w->magic);
	w->pb = perf_buffer__new(bpf_map__fd(w->events), pages, on_sample,
				 NULL, &w->batch, NULL);
	return w->pb ? 0 : -errno;
}

int walker_events_fd(const struct walker *w)
{
	if (w->tp)
		return tracepipe_fd(w->tp);
	return w->pb ? perf_buffer__epoll_fd(w->pb) : -1;
}

/*
 * How long a perf event is held back (ns): one CPU's event may reach its
 * buffer after the reader passed that buffer, while a later event of
 * another CPU's was read (a thread that moved between them), so an event
 * goes only once every CPU's buffer has been read since it happened, and
 * this long more for the time between its stamp and its write (a whole
 * program's run, longer where a virtual CPU is not running).
 */
#define EVENTS_HOLD_NS	100000000ULL

static __u64 monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (__u64)t.tv_sec * 1000000000ULL + (__u64)t.tv_nsec;
}

/*
 * What the buffers hold now and what was held back, sorted by time, up
 * to the time that every CPU's buffer was read since (all: everything).
 * trace_pipe's lines come merged in time order already.
 */
int walker_events_poll(struct walker *w, bool all)
{
	struct batch *b = &w->batch;
	__u64 now = monotonic_ns(), upto;
	size_t i;
	int err;

	upto = all || w->tp ? ~0ULL : now > EVENTS_HOLD_NS ? now - EVENTS_HOLD_NS : 0;
	b->w = w;
	b->err = 0;
	if (w->tp)
		err = tracepipe_read(w->tp, on_trace_event, w);
	else
		err = perf_buffer__consume(w->pb);
	if (!err)
		err = b->err;
	if (!err)
		err = order(b);
	for (i = 0; i < b->n && b->v[i].ts <= upto; i++) {
		struct sw_event *ev = &b->v[i];

		/* the batch moved as it grew: frames point into their own event */
		ev->stack.kip = ev->frames;
		ev->stack.uip = ev->explain ? ev->frames : ev->frames + ev->stack.nk;
		w->on_event(ev, w->on_event_ctx);
		free((void *)b->v[i].explain);
	}
	memmove(b->v, b->v + i, (b->n - i) * sizeof(*b->v));
	b->n -= i;
	return err;
}

void walker_held_tgids(const struct walker *w, void (*fn)(void *ctx, __u32 tgid),
		       void *ctx)
{
	for (size_t i = 0; i < w->batch.n; i++)
		fn(ctx, w->batch.v[i].stack.tgid);
}

long long walker_events_due_ms(const struct walker *w)
{
	const struct batch *b = &w->batch;
	__u64 first = ~0ULL;

	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].ts < first)
			first = b->v[i].ts;
	return b->n ? (long long)((first + EVENTS_HOLD_NS) / 1000000) + 1 : -1;
}

__u64 walker_trace_lost(const struct walker *w)
{
	return w->tp ? tracepipe_lost(w->tp) : 0;
}
