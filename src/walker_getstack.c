// SPDX-License-Identifier: MIT
/*
 * The getstack walker (4.18+): bpf_get_stack copies both sides' frames
 * into the key itself, so a count is keyed by its exact raw frames.  Where
 * hash keys are at most 512 bytes (before 5.11) the frames are interned in
 * chunks instead, and the key holds the chunk ids (bpf/getstack.bpf.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "walker_int.h"
#include "getstack.skel.h"

static bool gs_refuse(const struct sw_features *f, const struct walker_need *n,
		      char *msg, size_t len)
{
	return walkers_refuse_helper(&walker_getstack, f, n, f->helper_get_stack && f->map_percpu,
				     "this kernel has no bpf_get_stack (4.18+)", msg, len);
}

static const char *gs_why(const struct sw_features *f, const struct walker_need *n)
{
	(void)n;
	return f->map_big_keys ?
	       "bpf_get_stack is available (4.18+): exact raw-frame keys" :
	       "bpf_get_stack is available (4.18+), hash keys are at most 512 "
	       "bytes: exact interned chunks of frames";
}

int walker_gs_open(struct walker *w)
{
	const struct walker_gs_parts *g = &w->gs;

	/* one mode's maps: the other's may not exist on this kernel */
	w->small = !w->f->map_big_keys;
	/* small keys are 4.18-5.10's, whose uprobe programs are not preempted */
	w->per_task = w->f->walk_per_task && !w->small;
	bpf_map__set_autocreate(g->walks, w->per_task);
	bpf_map__set_autocreate(g->walk_zero, w->per_task);
	for (int i = 0; i < SW_GS_CLASSES; i++) {
		if (w->small)
			bpf_map__set_autocreate(g->classes[i], false);
		else
			w->counts[w->ncounts++] = g->classes[i];
	}
	if (w->small) {
		w->counts[w->ncounts++] = g->counts;
		w->chunks = g->chunks;
	} else {
		bpf_map__set_autocreate(g->counts, false);
		bpf_map__set_autocreate(g->chunks, false);
		bpf_map__set_autocreate(g->scratch_small, false);
	}
	return 0;
}

static int gs_open(struct walker *w)
{
	struct getstack_bpf *s = getstack_bpf__open();

	if (!s)
		return -errno;
	WALKER_COMMON(w, s);
	w->gs = WALKER_GS_PARTS(s);
	return walker_gs_open(w);
}

static void gs_destroy(struct walker *w)
{
	getstack_bpf__destroy(w->skel);
}

static struct bpf_program *gs_prog(const struct walker *w, enum sw_role role,
				   bool uentry)
{
	const struct getstack_bpf *s = w->skel;

	switch (role) {
	case SW_ROLE_KPROBE:
		return WALKER_GS_PROG(w, s, gs_kprobe);
	case SW_ROLE_TRACEPOINT:
		return WALKER_GS_PROG(w, s, gs_tp);
	case SW_ROLE_USHIFT:
		return WALKER_GS_PROG(w, s, gs_uprobe_shift);
	default:
		return uentry ? WALKER_GS_PROG(w, s, gs_uprobe_entry) :
				WALKER_GS_PROG(w, s, gs_uprobe);
	}
}

void walker_getstack_choose(struct walker *w)
{
	bool counting = bpf_map__autocreate(w->counts[0]);

	if (w->small)
		bpf_map__set_autocreate(w->gs.scratch_small, counting);
	if (w->chunks)
		bpf_map__set_autocreate(w->chunks, counting);
	walker_want_hook(w, w->gs.walk_exit, w->per_task);
}

/* Walk state per thread: a thread's goes when it exits. */
int walker_getstack_attach(struct walker *w)
{
	if (!w->per_task)
		return 0;
	return walker_attach_hook(w, w->gs.walk_exit, "sched_process_exit");
}

struct bpf_program *walker_getstack_calib_prog(const struct walker *w)
{
	return w->small ? w->gs.calib_small :
	       w->per_task ? w->gs.calib_t : w->gs.calib;
}

static int by_chunk_id(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The chunks map, whole, sorted by id: once per read. */
int walker_getstack_read_begin(struct walker *w)
{
	char *recs;
	int err;

	if (!w->small)
		return 0;
	free(w->chunk_tab);
	w->chunk_tab = NULL;
	/* struct chunk is a key and its value, as walker_snapshot() lays them out */
	err = walker_snapshot(w->chunks, &recs, &w->nchunks);
	if (err)
		return err;
	w->chunk_tab = (struct chunk *)recs;
	qsort(w->chunk_tab, w->nchunks, sizeof(*w->chunk_tab), by_chunk_id);
	return 0;
}

/*
 * The n frames of the side whose last chunk has this id, into buf; how
 * many were found.  Parents lead from the last chunk back to the first,
 * whose frames come first.  A chunk not in the map (not to happen: none
 * is removed) leaves its frames out, and *partial says so.
 */
static size_t chunk_frames(const struct walker *w, __u64 id, size_t n,
			   __u64 *buf, bool *partial)
{
	const struct sw_gsc_chunk *chain[SW_GSC_CHUNKS];
	size_t need = (n + SW_GSC_FRAMES - 1) / SW_GSC_FRAMES, have = 0, got = 0;
	struct chunk want = { .id = id };

	if (need > SW_GSC_CHUNKS) {
		need = SW_GSC_CHUNKS;
		*partial = true;
	}
	while (have < need && want.id) {
		const struct chunk *c = bsearch(&want, w->chunk_tab, w->nchunks,
						sizeof(*c), by_chunk_id);

		if (!c)
			break;
		chain[have++] = &c->c;
		want.id = c->c.parent;
	}
	if (have < need || want.id)
		*partial = true;
	/* chain[i] is chunk need - 1 - i: the first found is the last */
	for (size_t i = have; i-- > 0;) {
		size_t first = (need - 1 - i) * SW_GSC_FRAMES;
		size_t len = n - first < SW_GSC_FRAMES ? n - first : SW_GSC_FRAMES;

		memcpy(buf + got, chain[i]->ip, len * sizeof(*buf));
		got += len;
	}
	return got;
}

void walker_getstack_key_frames(struct walker *w, const void *key, bool counted,
				struct key_frames *f)
{
	if (w->small && counted) {
		const struct sw_gsc_key *k = key;
		bool partial = false;

		f->h = &k->h;
		f->nk = chunk_frames(w, k->kid, k->h.nk, f->kbuf, &partial);
		f->nu = chunk_frames(w, k->uid, k->h.nu, f->ubuf, &partial);
		f->k = f->kbuf;
		f->u = f->ubuf;
		w->partial += partial;
	} else {
		const struct sw_gs_key *k = key;

		f->h = &k->h;
		f->nk = k->h.nk;
		f->nu = k->h.nu;
		f->k = k->ip;
		f->u = k->ip + f->nk;
	}
}

const struct walker_desc walker_getstack = {
	.kind = SW_WALKER_GETSTACK,
	.name = "getstack",
	.uframes = SW_UFRAMES_RBP_KEPT,
	.refuse = gs_refuse,
	.why = gs_why,
	.open = gs_open,
	.destroy = gs_destroy,
	.prog = gs_prog,
	.choose = walker_getstack_choose,
	.attach = walker_getstack_attach,
	.calib_prog = walker_getstack_calib_prog,
	.read_begin = walker_getstack_read_begin,
	.key_frames = walker_getstack_key_frames,
};
