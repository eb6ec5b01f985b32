// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The getstack walker (4.18+): the kernel's own unwinders copy the raw
 * frames into the key, so two stacks share a count only when every frame
 * is equal -- no stack ids, hence no id collisions.
 */
#include "common.bpf.h"

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

/* stacksnoop sends the key behind an event header */
struct sw_gs_record {
	struct sw_event_hdr e;
	struct sw_gs_key key;
};

/* The key is four times the BPF stack: build it in per-CPU memory. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_gs_record);
} scratch SEC(".maps");

/*
 * Frames from the kernel's unwinder into buf; their number.  At a
 * function-entry probe where that unwinder skips the caller, unwind into
 * buf[1..] and put the caller, read from the stack pointer, after the
 * probed instruction.  The helper zeroes what it leaves of its size, so
 * the rest of a key's class is zero.
 */
static __always_inline __u32 gs_frames(void *ctx, __u64 *buf, __u64 flags,
				       int entry_sp, __u64 sp)
{
	long n;

	if (!entry_sp) {
		n = bpf_get_stack(ctx, buf, SW_MAX_FRAMES * 8, flags);
		return n > 0 ? (__u64)n / 8 : 0;
	}
	n = bpf_get_stack(ctx, &buf[1], SW_MAX_FRAMES * 8, flags);
	if (n <= 0) {
		buf[0] = 0;
		return 0;
	}
	buf[0] = buf[1];
	bpf_probe_read(&buf[1], 8, (void *)sp);
	return (__u64)n / 8 + 1;
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

/* emit: one record per event (stacksnoop); else count (stackcount) */
static __always_inline int gs_event(void *ctx, __u64 sp, const int kentry,
				    const int uentry, const int emit)
{
	struct sw_gs_record *rec;
	struct sw_config *cfg;
	__u64 id;
	struct sw_gs_key *key;
	__u32 zero = 0;
	__u64 nk = 0, nu = 0;

	cfg = sw_filter(1, SW_BRANCHY, &id);
	if (!cfg)
		return 0;
	rec = bpf_map_lookup_elem(&scratch, &zero);
	if (!rec)
		return 0;
	key = &rec->key;
	sw_key_hdr(&key->h, cfg, id, SW_BRANCHY);
	if (cfg->flags & SW_CFG_KSTACK)
		nk = gs_frames(ctx, key->ip, 0,
			       kentry && (cfg->flags & SW_CFG_KENTRY), sp);
	/* the user frames' start, bounded for the verifier: 127 + a caller */
	nk = sw_bound(nk, SW_MAX_FRAMES + 1);
	if (cfg->flags & SW_CFG_USTACK)
		nu = gs_frames(ctx, &key->ip[nk], BPF_F_USER_STACK, uentry, sp);
	else
		key->ip[nk] = 0;
	key->h.nk = nk;
	key->h.nu = nu;
	if (emit) {
		sw_event_hdr(&rec->e);
		/* the frames there are, not the whole key */
		nu = sw_bound(nu, SW_MAX_FRAMES + 1);
		sw_emit(ctx, rec, sizeof(rec->e) + sizeof(key->h) + (nk + nu) * 8);
	} else {
		gs_count(key, nk + nu);
	}
	return 0;
}

/*
 * kprobe: always at a function's first instruction.  uprobe_entry: at a
 * function's entry where the kernel's unwinder drops the caller.  uprobe:
 * USDT, or where the kernel's unwinder already has the caller.  Each as a
 * counting program and, suffixed _e, an emitting one.
 */
#define GS_PROGRAMS(sfx, emit)						\
SEC("kprobe") int gs_kprobe##sfx(struct pt_regs *ctx)			\
{									\
	return gs_event(ctx, PT_REGS_SP(ctx), 1, 0, emit);		\
}									\
SEC("kprobe") int gs_uprobe_entry##sfx(struct pt_regs *ctx)		\
{									\
	return gs_event(ctx, PT_REGS_SP(ctx), 0, 1, emit);		\
}									\
SEC("kprobe") int gs_uprobe##sfx(struct pt_regs *ctx)			\
{									\
	return gs_event(ctx, 0, 0, 0, emit);				\
}									\
SEC("tracepoint") int gs_tp##sfx(void *ctx)				\
{									\
	return gs_event(ctx, 0, 0, 0, emit);				\
}

GS_PROGRAMS(, 0)
GS_PROGRAMS(_e, 1)

SW_FOLLOW_PROGRAMS()
