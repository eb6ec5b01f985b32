// SPDX-License-Identifier: MIT
/*
 * Reading a walker's counts back: every key of its counts maps, decoded
 * by its descriptor into frames, as walker-neutral stacks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "vec.h"
#include "../compat/mapkeys.h"
#include "walker_int.h"

/*
 * Runs of the programs the kernel skipped: it runs one perf event's
 * program at a time on a CPU, and none while a BPF map syscall (perhaps
 * of a task preempted in it) holds that CPU, nor a tracing program
 * inside itself.  It counts them as the program's recursion_misses
 * (5.12+; kprobes' since 6.7, before which nothing says).  Those of the
 * targets' programs (target), or of those that follow processes.
 */
static int by_fd(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static __u64 skipped(const struct walker *w, bool target)
{
	int *fds = malloc((w->natt + 1) * sizeof(*fds));
	size_t n = 0;
	__u64 sum = 0;

	if (!fds)
		return 0;
	/* each program once, however many probes run it */
	for (size_t i = 0; i < w->natt; i++)
		if (w->att[i].target == target)
			fds[n++] = w->att[i].prog_fd;
	qsort(fds, n, sizeof(*fds), by_fd);
	for (size_t i = 0; i < n; i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		if (i && fds[i] == fds[i - 1])
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fds[i], &info, &len))
			sum += info.recursion_misses;
	}
	free(fds);
	return sum;
}

int walker_lost(struct walker *w, __u64 lost[SW_LOST_NR])
{
	for (__u32 i = 0; i < SW_LOST_NR; i++) {
		lost[i] = 0;
		if (i != SW_LOST_HOOKS_SKIPPED &&
		    bpf_map_lookup_elem(bpf_map__fd(w->lost), &i, &lost[i]))
			return -errno;
	}
	/* 4.1's cfi counts runs of its own the kernel skipped (bpf/cfi41.bpf.c) */
	lost[SW_LOST_SKIPPED] += skipped(w, true);
	lost[SW_LOST_HOOKS_SKIPPED] = skipped(w, false);
	return 0;
}

void walker_stacks_clear(struct sw_stacks *s)
{
	s->n = 0;
}

void walker_stacks_free(struct sw_stacks *s)
{
	free(s->v);
	free(s->frames);
	memset(s, 0, sizeof(*s));
}

/* Frames are stored as offsets into s->frames until the end, when it stops moving. */
static int push_stack(struct sw_stacks *s, const struct key_frames *f,
		      __u64 count, size_t *fused, size_t *fcap)
{
	const __u64 *k = f->k, *u = f->u;
	size_t nk = f->nk, nu = f->nu;
	__u64 kcaller = f->kcaller, ucaller = f->ucaller;
	const struct sw_key_hdr *h = f->h;
	size_t need = nk + nu + 2;
	struct sw_stack *st;

	if (VEC_GROW(s->v, s->n, s->cap, 256) ||
	    vec_reserve(&s->frames, fcap, *fused, need, sizeof(__u64), 4096))
		return -ENOMEM;
	st = &s->v[s->n++];
	memset(st, 0, sizeof(*st));
	st->tgid = h->tgid;
	memcpy(st->comm, h->comm, sizeof(st->comm));
	st->kstop = h->kstop;
	st->ustop = h->ustop;
	st->count = count;
	st->kip = (__u64 *)(uintptr_t)*fused;
	for (size_t i = 0; i < nk; i++) {
		s->frames[(*fused)++] = k[i];
		if (i == 0 && kcaller)
			s->frames[(*fused)++] = kcaller;
	}
	st->nk = *fused - (uintptr_t)st->kip;
	st->uip = (__u64 *)(uintptr_t)*fused;
	for (size_t i = 0; i < nu; i++) {
		s->frames[(*fused)++] = u[i];
		if (i == 0 && ucaller)
			s->frames[(*fused)++] = ucaller;
	}
	st->nu = *fused - (uintptr_t)st->uip;
	walker_frames_how(st, f);
	return 0;
}

size_t walker_nframes(const __u64 *v, size_t max)
{
	size_t n = 0;

	while (n < max && v[n])
		n++;
	return n;
}

size_t walker_stack_by_id(const struct walker *w, int id, __u64 *buf)
{
	memset(buf, 0, SW_MAX_FRAMES * sizeof(*buf));
	if (id < 0)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(w->stacks), &id, buf))
		return 0;
	return walker_nframes(buf, SW_MAX_FRAMES);
}

void walker_kside_by_id(struct walker *w, int kid, __u64 kcaller,
			const struct sw_key_hdr *h, struct key_frames *f)
{
	f->nk = walker_stack_by_id(w, kid, f->kbuf);
	f->k = f->kbuf;
	f->kcaller = kcaller;
	f->hbuf = *h;
	f->h = &f->hbuf;
	/* a side that fills what the kernel's unwinder gives may go on */
	if (f->nk >= walker_stack_full(w->f))
		f->hbuf.kstop = SW_STOP_DEPTH;
}

/*
 * Every key of map m and its 8-byte value, one after the other, in
 * *recs (to be freed).  A count's key is read before what it refers to
 * (stack map entries, chunks), which was stored before it: so that is
 * there when read after.
 */
int walker_snapshot(struct bpf_map *m, char **recs, size_t *n)
{
	size_t ks = bpf_map__key_size(m), rec = ks + sizeof(__u64), cap = 0;
	int fd = bpf_map__fd(m);
	char *key = malloc(ks), *v = NULL;
	bool first = true;

	*recs = NULL;
	*n = 0;
	if (!key)
		return -ENOMEM;
	/* the kernel reads the key before it writes the next: one buffer */
	while (!mapkeys_next(fd, first, key, key, ks, sizeof(__u64))) {
		first = false;
		if (vec_reserve(&v, &cap, *n, 1, rec, 256)) {
			free(v);
			free(key);
			return -ENOMEM;
		}
		if (bpf_map_lookup_elem(fd, key, v + *n * rec + ks))
			continue;	/* deleted meanwhile */
		memcpy(v + *n * rec, key, ks);
		(*n)++;
	}
	free(key);
	*recs = v;
	return 0;
}

void walker_key_frames(struct walker *w, const void *key, bool counted,
		       struct key_frames *f)
{
	f->kcaller = f->ucaller = 0;
	w->d->key_frames(w, key, counted, f);
	walker_frames_fixup(f);
	walker_frames_tagged(w, f);
}

void walker_frames_tagged(const struct walker *w, struct key_frames *f)
{
	f->uhow_set = w->o.kind == SW_WALKER_CFI;
	/* cfi's frames from the kernel's unwinder: each past the first a frame-pointer step */
	if (f->uhow_set && f->h->ustop == SW_STOP_NO_TABLE)
		for (size_t i = 1; i < f->nu; i++)
			sw_how_set(f->uhow, i, SW_HOW_FP);
}

void walker_frames_how(struct sw_stack *st, const struct key_frames *f)
{
	memcpy(st->uhow, f->uhow, sizeof(st->uhow));
	st->has_how = f->uhow_set;
}

void walker_frames_fixup(struct key_frames *f)
{
	/*
	 * Some kernels' unwinders (5.15's, at a tracepoint) give the frame
	 * where the event fired twice: once from the registers perf made up
	 * for it, once from the frame chain.  At a probe or a tracepoint,
	 * frame 0 is where the event fired and frame 1 a return into the
	 * caller: they are equal only when one frame was given twice.
	 */
	if (f->nk >= 2 && f->k[0] == f->k[1] && !f->kcaller) {
		f->k++;
		f->nk--;
	}
	/*
	 * A 0 return address is where a stack ends (bcc, bpftrace and gdb
	 * stop there): the kernel's frame-pointer unwinders store it and go
	 * on, and what they read after it is no frame.
	 */
	f->nk = walker_nframes(f->k, f->nk);
	f->nu = walker_nframes(f->u, f->nu);
	/* the cfi walker's tags of how a frame was found: out of the address */
	memset(f->uhow, 0, sizeof(f->uhow));
	f->uhow_set = false;
	for (size_t i = 0; i < f->nu; i++) {
		if (!(f->u[i] & SW_HOW_MASK))
			continue;
		if (f->u != f->ubuf) {
			memcpy(f->ubuf, f->u, f->nu * sizeof(*f->u));
			f->u = f->ubuf;
		}
		sw_how_set(f->uhow, i, (f->u[i] & SW_HOW_MASK) >> SW_HOW_SHIFT);
		f->ubuf[i] &= ~SW_HOW_MASK;
	}
}

/* Every stack counted in map m, appended to s. */
static int read_counts(struct walker *w, struct bpf_map *m, struct sw_stacks *s,
		       struct key_frames *f, size_t *fused, size_t *fcap)
{
	size_t ks = bpf_map__key_size(m), n;
	/* room for the largest key a header may claim */
	char *key = calloc(1, sizeof(struct sw_gs_key) > ks ? sizeof(struct sw_gs_key) : ks);
	char *recs = NULL;
	__u64 count;
	int err;

	if (!key)
		return -ENOMEM;
	err = walker_snapshot(m, &recs, &n);
	if (!err && w->d->read_begin)
		err = w->d->read_begin(w);
	for (size_t i = 0; i < n && !err; i++) {
		memcpy(key, recs + i * (ks + sizeof(count)), ks);
		memcpy(&count, recs + i * (ks + sizeof(count)) + ks, sizeof(count));
		walker_key_frames(w, key, true, f);
		err = push_stack(s, f, count, fused, fcap);
		if (walker_stack_cut(f->h->kstop) || walker_stack_cut(f->h->ustop))
			w->cut += count;
	}
	free(recs);
	free(key);
	return err;
}

int walker_counted_tgids(struct walker *w, void (*fn)(void *ctx, __u32 tgid),
			  void *ctx)
{
	for (int i = 0; i < w->ncounts; i++) {
		size_t ks = bpf_map__key_size(w->counts[i]);
		int fd = bpf_map__fd(w->counts[i]);
		char *key = malloc(ks);
		bool first = true;
		__u32 tgid;

		if (!key)
			return -ENOMEM;
		/* every walker's key starts with struct sw_key_hdr: keys suffice */
		while (!mapkeys_next(fd, first, key, key, ks, sizeof(__u64))) {
			first = false;
			memcpy(&tgid, key, sizeof(tgid));
			fn(ctx, tgid);
		}
		free(key);
	}
	return 0;
}

int walker_read(struct walker *w, struct sw_stacks *s)
{
	struct key_frames *f = malloc(sizeof(*f));
	size_t fused = 0, fcap = 0;
	int err = 0;

	if (!f)
		return -ENOMEM;
	free(s->frames);
	s->frames = NULL;
	s->n = 0;
	w->partial = 0;
	w->cut = 0;
	for (int i = 0; i < w->ncounts && !err; i++)
		err = read_counts(w, w->counts[i], s, f, &fused, &fcap);
	free(f);
	/* the frame store has stopped moving: offsets become pointers */
	for (size_t i = 0; i < s->n; i++) {
		s->v[i].kip = s->frames + (uintptr_t)s->v[i].kip;
		s->v[i].uip = s->frames + (uintptr_t)s->v[i].uip;
	}
	return err;
}

__u64 walker_partial(const struct walker *w)
{
	return w->partial;
}

__u64 walker_cut(const struct walker *w)
{
	return w->cut + w->cut_events;
}
