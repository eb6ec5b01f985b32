/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * The getstack walker's keys, counts and records, which the cfi walker
 * shares (bpf/getstack.bpf.c, bpf/cfi.bpf.c): the kernel's own unwinders
 * copy the raw frames into the key, so two stacks share a count only when
 * every frame is equal -- no stack ids, hence no id collisions.  Included
 * once per object, after common.bpf.h.
 */
#ifndef SW_GETSTACK_BPF_H
#define SW_GETSTACK_BPF_H

#define GS_COUNTS(n)							\
struct {								\
	__uint(type, BPF_MAP_TYPE_HASH);				\
	__uint(max_entries, 16384);					\
	__uint(map_flags, BPF_F_NO_PREALLOC);				\
	__uint(key_size, sizeof(struct sw_key_hdr) + 8 * (n));		\
	__uint(value_size, sizeof(__u64));				\
} counts_##n SEC(".maps")

/* the size classes of SW_GS_CLASS() */
GS_COUNTS(4);
GS_COUNTS(8);
GS_COUNTS(16);
GS_COUNTS(32);
GS_COUNTS(64);
GS_COUNTS(256);

/* the slots gs_clear() zeroes: those past the smaller classes */
#define GS_CLEAR	(SW_GS_FRAMES - SW_GS_CLASS(SW_GS_CLASSES - 2))

/* stacksnoop sends the key behind an event header */
struct sw_gs_record {
	struct sw_event_hdr e;
	struct sw_gs_key key;
	/* what gs_clear() zeroes past the key's end: never read */
	__u64 spill[GS_CLEAR];
	/* no key slot from here on holds a frame (see gs_clear()) */
	__u64 dirty;
};

/* gs_clear()'s zeroes */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[GS_CLEAR]);
} gs_zeros SEC(".maps");

/* The key is four times the BPF stack: build it in per-CPU memory. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_gs_record);
} scratch SEC(".maps");

/* GS_EMITS, GS_PER_TASK: of the SW_GS_* modes (bpf/stackwalk.h) */
#define GS_EMITS(mode)		((mode) == SW_GS_EMIT || (mode) == SW_GS_EMIT_T)
#define GS_PER_TASK(mode)	((mode) >= SW_GS_COUNT_T)

/*
 * A thread's walk: its record, and what a walker that takes more than one
 * program keeps between them (the cfi walker: GS_WALK_STATE, its state).
 */
struct gs_walk {
	struct sw_gs_record rec;
#ifdef GS_WALK_STATE
	GS_WALK_STATE st;
#endif
};

/* the _T modes' walk state, by thread id; an exiting thread's goes */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SW_WALK_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct gs_walk);
} walks SEC(".maps");

/* a new thread's entry starts as this, all zero */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gs_walk);
} walk_zero SEC(".maps");

/* This thread's walk state; made at its first event (create). */
static __always_inline struct gs_walk *gs_task_walk(const int create)
{
	__u32 tid = bpf_get_current_pid_tgid(), zero = 0;
	struct gs_walk *w = bpf_map_lookup_elem(&walks, &tid);
	void *blank;

	if (w || !create)
		return w;
	blank = bpf_map_lookup_elem(&walk_zero, &zero);
	if (!blank)
		return NULL;
	if (bpf_map_update_elem(&walks, &tid, blank, BPF_NOEXIST)) {
		sw_lost(SW_LOST_WALKS_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&walks, &tid);
}

/* The record a non-cfi program builds its key in. */
static __always_inline struct sw_gs_record *gs_record(const int mode)
{
	__u32 zero = 0;
	struct gs_walk *w;

	if (!GS_PER_TASK(mode))
		return bpf_map_lookup_elem(&scratch, &zero);
	w = gs_task_walk(1);
	return w ? &w->rec : NULL;
}

/*
 * Frames from the kernel's unwinder into buf; their number.  At a
 * function-entry probe where that unwinder skips the caller, unwind into
 * buf[1..] and put the caller, read from the stack pointer, after the
 * probed instruction.  The helper zeroes what it leaves of its size, so
 * the rest of a key's class is zero.  *stop: SW_STOP_DEPTH where the
 * unwinder gave all it gives (cfg->stack_full), so the side may be cut.
 */
static __always_inline __u32 gs_frames(void *ctx, __u64 *buf, __u64 flags,
				       int entry_sp, __u64 sp,
				       const struct sw_config *cfg, __u8 *stop)
{
	long n;

	*stop = SW_STOP_NONE;
	if (!entry_sp) {
		n = bpf_get_stack(ctx, buf, SW_MAX_FRAMES * 8, flags);
		if (n <= 0)
			return 0;
		if ((__u64)n / 8 >= cfg->stack_full)
			*stop = SW_STOP_DEPTH;
		return (__u64)n / 8;
	}
	n = bpf_get_stack(ctx, &buf[1], SW_MAX_FRAMES * 8, flags);
	if (n <= 0) {
		buf[0] = 0;
		return 0;
	}
	if ((__u64)n / 8 >= cfg->stack_full)
		*stop = SW_STOP_DEPTH;
	buf[0] = buf[1];
	bpf_probe_read(&buf[1], 8, (void *)sp);
	return (__u64)n / 8 + 1;
}

/*
 * The helpers zero only the rest of their own 127 slots, from where each
 * side starts: a key of the largest class, up to 256 slots, can still hold
 * frames of an earlier, deeper event past nk + 127, and two keys of one
 * stack would count apart.  The smaller classes end before slot 127, so
 * only the largest is cleared, and only when a frame was ever put past n
 * (rec->dirty): the usual event pays one compare.  One copy of zeroes
 * over GS_CLEAR slots from n (into spill past the key's end), not a loop
 * to the dirty end: the verifier walked such a loop slot by slot, three
 * quarters of a counting program's check (15 ms of a cfi caller's 20).
 * The emitting programs send only the frames there are and never get
 * here.
 */
static __always_inline void gs_clear(struct sw_gs_record *rec, __u64 n)
{
	__u32 zero = 0;
	void *z;

	if (rec->dirty <= n) {
		rec->dirty = n;
		return;
	}
	rec->dirty = n;
	z = bpf_map_lookup_elem(&gs_zeros, &zero);
	if (z)
		bpf_probe_read(&rec->key.ip[sw_bound(n, SW_GS_FRAMES)],
			       sizeof(rec->spill), z);
}

static __always_inline void gs_count(struct sw_gs_key *key, __u32 n)
{
	if (n <= 4)
		sw_count(&counts_4, key);
	else if (n <= 8)
		sw_count(&counts_8, key);
	else if (n <= 16)
		sw_count(&counts_16, key);
	else if (n <= 32)
		sw_count(&counts_32, key);
	else if (n <= 64)
		sw_count(&counts_64, key);
	else
		sw_count(&counts_256, key);
}

/* The key's frames are in: send it (emit, stacksnoop) or count it. */
static __always_inline void gs_done(void *ctx, struct sw_gs_record *rec,
				    __u64 nk, __u64 nu, const int emit)
{
	struct sw_gs_key *key = &rec->key;

	key->h.nk = nk;
	key->h.nu = nu;
	if (emit) {
		sw_event_hdr(&rec->e);
		/* the frames there are, not the whole key: each side <= 128 */
		sw_emit_frames(ctx, rec, sizeof(rec->e) + sizeof(key->h),
			       nk + nu, SW_GS_FRAMES);
	} else {
		if (nk + nu > SW_GS_CLASS(SW_GS_CLASSES - 2))
			gs_clear(rec, nk + nu);
		gs_count(key, nk + nu);
	}
}

/* emit: one record per event (stacksnoop); else count (stackcount) */
static __always_inline int gs_event(void *ctx, __u64 sp, const int kentry,
				    const int uentry, const int mode)
{
	struct sw_gs_record *rec;
	struct sw_config *cfg;
	__u64 id;
	struct sw_gs_key *key;
	__u64 nk = 0, nu = 0;

	cfg = sw_filter(1, SW_BRANCHY, &id);
	if (!cfg)
		return 0;
	rec = gs_record(mode);
	if (!rec)
		return 0;
	key = &rec->key;
	sw_key_hdr(&key->h, cfg, id, SW_BRANCHY);
	key->h.kstop = key->h.ustop = SW_STOP_NONE;
	if (cfg->flags & SW_CFG_KSTACK)
		nk = gs_frames(ctx, key->ip, 0,
			       kentry && (cfg->flags & SW_CFG_KENTRY), sp,
			       cfg, &key->h.kstop);
	/* the user frames' start, bounded for the verifier: 127 + a caller */
	nk = sw_bound(nk, SW_MAX_FRAMES + 1);
	if (cfg->flags & SW_CFG_USTACK)
		nu = gs_frames(ctx, &key->ip[nk], BPF_F_USER_STACK, uentry, sp,
			       cfg, &key->h.ustop);
	else
		key->ip[nk] = 0;
	gs_done(ctx, rec, nk, nu, GS_EMITS(mode));
	return 0;
}

/*
 * Small keys (4.18-5.10, where a hash key is at most 512 bytes): the
 * frames are interned as chunks (struct sw_gsc_chunk) and the counts are
 * keyed by the ids of each side's last chunk.  Only these programs use the
 * maps below, and only those of this mode's programs are loaded.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sw_gsc_key);
	__type(value, __u64);
} counts SEC(".maps");

/* chunk -> its id; ids are never reused, chunks never removed */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sw_gsc_chunk);
	__type(value, __u64);
} chunks SEC(".maps");

/*
 * A side's region: slot 0 is room for the first chunk's parent, the frames
 * follow from slot 1.  Chunk j's key starts at slot 63 * j, so writing its
 * parent overwrites the last frame of chunk j-1, which is then already
 * interned: no frame is copied.  The helper fills at most slots 1..128;
 * the slots after stay zero, the padding of the last chunk.
 */
#define GSC_REGION	(1 + SW_GSC_CHUNKS * SW_GSC_FRAMES)

struct gsc_scratch {
	__u64 k[GSC_REGION];
	__u64 u[GSC_REGION];
	struct sw_gsc_key key;
	/*
	 * Ids without an atomic fetch-and-add (5.12): a per-CPU counter under
	 * the CPU's number.  On the kernels that have small keys (4.18-5.10)
	 * a kprobe, uprobe or tracepoint program neither migrates, nor is
	 * preempted, nor nests with another on its CPU, so the counter needs
	 * no atomics, and the scratch space is the CPU's own meanwhile.
	 */
	__u64 next_id;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gsc_scratch);
} scratch_small SEC(".maps");

/*
 * Intern one chunk under *id (its parent's id) and leave its own id there.
 * Of two CPUs inserting the same chunk, the loser takes the winner's id.
 */
static __always_inline int gsc_chunk(struct gsc_scratch *s,
				     struct sw_gsc_chunk *c, __u64 *id)
{
	__u64 *have, fresh;
	long err;

	c->parent = *id;
	have = bpf_map_lookup_elem(&chunks, c);
	if (!have) {
		fresh = ((__u64)(bpf_get_smp_processor_id() + 1) << 40) |
			++s->next_id;
		err = bpf_map_update_elem(&chunks, c, &fresh, BPF_NOEXIST);
		if (!err) {
			*id = fresh;
			return 0;
		}
		if (err == -SW_EEXIST)
			have = bpf_map_lookup_elem(&chunks, c);
		if (!have) {
			sw_lost(SW_LOST_CHUNKS_FULL);
			return -1;
		}
	}
	*id = *have;
	return 0;
}

/* The id of n frames from region[1] on (0 for none), unrolled for 4.x. */
static __always_inline int gsc_side(struct gsc_scratch *s, __u64 *region,
				    __u64 n, __u64 *id)
{
	*id = 0;
	if (n > 0 && gsc_chunk(s, (void *)&region[0], id))
		return -1;
	if (n > SW_GSC_FRAMES &&
	    gsc_chunk(s, (void *)&region[SW_GSC_FRAMES], id))
		return -1;
	if (n > 2 * SW_GSC_FRAMES &&
	    gsc_chunk(s, (void *)&region[2 * SW_GSC_FRAMES], id))
		return -1;
	return 0;
}

/*
 * A side's frames into region[1..], as gs_frames() does.  Frame 127 is
 * written only when an entry caller is inserted: zero it before, or an
 * earlier event's would pad this chunk and give an equal stack a new id.
 */
static __always_inline __u64 gsc_frames(void *ctx, __u64 *region,
					__u64 flags, int entry_sp, __u64 sp,
					const struct sw_config *cfg, __u8 *stop)
{
	region[1 + SW_MAX_FRAMES] = 0;
	return gs_frames(ctx, &region[1], flags, entry_sp, sp, cfg, stop);
}

/* Both sides' frames are in: intern them and count. */
static __always_inline void gsc_done(struct gsc_scratch *s, __u64 nk, __u64 nu)
{
	if (gsc_side(s, s->k, nk, &s->key.kid) ||
	    gsc_side(s, s->u, nu, &s->key.uid))
		return;
	s->key.h.nk = nk;
	s->key.h.nu = nu;
	sw_count(&counts, &s->key);
}

static __always_inline int gsc_event(void *ctx, __u64 sp, const int kentry,
				     const int uentry, const int mode)
{
	struct gsc_scratch *s;
	struct sw_config *cfg;
	__u64 id, nk = 0, nu = 0;
	__u32 zero = 0;

	(void)mode;	/* counting only: stacksnoop sends frames, no keys */
	cfg = sw_filter(1, SW_BRANCHY, &id);
	if (!cfg)
		return 0;
	s = bpf_map_lookup_elem(&scratch_small, &zero);
	if (!s)
		return 0;
	sw_key_hdr(&s->key.h, cfg, id, SW_BRANCHY);
	s->key.h.kstop = s->key.h.ustop = SW_STOP_NONE;
	if (cfg->flags & SW_CFG_KSTACK)
		nk = gsc_frames(ctx, s->k, 0,
				kentry && (cfg->flags & SW_CFG_KENTRY), sp,
				cfg, &s->key.h.kstop);
	if (cfg->flags & SW_CFG_USTACK)
		nu = gsc_frames(ctx, s->u, BPF_F_USER_STACK, uentry, sp,
				cfg, &s->key.h.ustop);
	gsc_done(s, nk, nu);
	return 0;
}

/*
 * kprobe: always at a function's first instruction.  uprobe_entry: at a
 * function's entry where the kernel's unwinder drops the caller.  uprobe:
 * USDT, or where the kernel's unwinder already has the caller.  Each as a
 * counting program, suffixed _e an emitting one, suffixed _small a
 * counting one for small keys; _t and _et keep their state per thread.
 */
#define GS_UPROBE(sfx, event, mode)					\
SEC("kprobe") int gs_uprobe##sfx(struct pt_regs *ctx)			\
{									\
	return event(ctx, 0, 0, 0, mode);				\
}									\
/* %rbp still the caller's: its return address by its uframes rule */	\
SEC("kprobe") int gs_uprobe_shift##sfx(struct pt_regs *ctx)		\
{									\
	__u64 bp;							\
									\
	return event(ctx, sw_uframe_sp(ctx, &bp), 0, 1, mode);		\
}

#define GS_PROGRAMS(sfx, event, mode)					\
SEC("kprobe") int gs_kprobe##sfx(struct pt_regs *ctx)			\
{									\
	return event(ctx, PT_REGS_SP(ctx), 1, 0, mode);		\
}									\
SEC("kprobe") int gs_uprobe_entry##sfx(struct pt_regs *ctx)		\
{									\
	return event(ctx, PT_REGS_SP(ctx), 0, 1, mode);		\
}									\
GS_UPROBE(sfx, event, mode)						\
SEC("tracepoint") int gs_tp##sfx(void *ctx)				\
{									\
	return event(ctx, 0, 0, 0, mode);				\
}

/* The _T modes: an exiting thread's walk state goes with it. */
SEC("tracepoint") int gs_walk_exit(void *ctx)
{
	__u32 tid = bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&walks, &tid);
	return 0;
}

#endif
