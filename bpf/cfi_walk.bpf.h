/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * The user side of the cfi walker (5.3+): each frame's caller found from
 * the unwind tables the frontend loads (bpf/cfi.h says how they are laid
 * out and searched), falling back to one frame-pointer step where no row
 * covers a PC.  Included by getstack.bpf.c, whose keys and counts it
 * shares: only how the user frames are found differs.
 */
#ifndef SW_CFI_WALK_BPF_H
#define SW_CFI_WALK_BPF_H

#include "common.bpf.h"
#include "cfi.h"

#define SW_PT_REGS_SP	152
/* the end of x86_64 user space (47-bit), as gen/walker.py has it */
#define SW_CFI_USER_MAX	0x7ffffffff000ULL

/* sizes the frontend sets before loading (bpf_map__set_max_entries) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_cfi_row);
} cfi_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SW_CFI_PROCS_MAX);
	__type(key, __u32);
	__type(value, struct sw_cfi_proc);
} cfi_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SW_CFI_MAPS_MAX);
	__type(key, struct sw_cfi_map_key);
	__type(value, struct sw_cfi_map);
} cfi_maps SEC(".maps");

/* a <= b as 0 or 1, without a jump, for values below 2^63 (bpf/cfi.h) */
static __always_inline __u64 cfi_le(__u64 a, __u64 b)
{
	return ((b - a) >> 63) ^ 1;
}

/* The mapping of tgid that holds pc, or NULL: step 1 of bpf/cfi.h. */
static __always_inline struct sw_cfi_map *cfi_find_map(__u32 tgid, __u32 nr,
							__u64 pc)
{
	struct sw_cfi_map_key k = { .tgid = tgid };
	struct sw_cfi_map *m;
	__u32 lo = 0, n = nr, half;

	if (!nr)
		return NULL;
#pragma unroll
	for (int i = 0; i < SW_CFI_MAP_STEPS; i++) {
		half = n >> 1;
		k.idx = lo + half;
		m = bpf_map_lookup_elem(&cfi_maps, &k);
		if (!m)
			return NULL;
		lo += half & -(__u32)cfi_le(m->start, pc);
		n -= half;
	}
	k.idx = lo;
	m = bpf_map_lookup_elem(&cfi_maps, &k);
	if (!m || pc < m->start || pc >= m->end)
		return NULL;
	return m;
}

/* The row for rel in m's table, or NULL: step 3 of bpf/cfi.h. */
static __always_inline struct sw_cfi_row *cfi_find_row(const struct sw_cfi_map *m,
							__u64 rel)
{
	__u32 base = m->first, n = m->count, half, idx;
	struct sw_cfi_row *r;

	if (!n)
		return NULL;
#pragma unroll
	for (int i = 0; i < SW_CFI_STEPS; i++) {
		half = n >> 1;
		idx = base + half;
		r = bpf_map_lookup_elem(&cfi_rows, &idx);
		if (!r)
			return NULL;
		base += half & -(__u32)cfi_le(r->pc, rel);
		n -= half;
	}
	r = bpf_map_lookup_elem(&cfi_rows, &base);
	if (!r || r->pc > rel)
		return NULL;
	return r;
}

/* One user word, 0 if unreadable: *ok says which. */
static __always_inline __u64 cfi_read(__u64 addr, int *ok)
{
	__u64 v = 0;

	if (bpf_probe_read(&v, sizeof(v), (void *)addr))
		*ok = 0;
	return v;
}

/*
 * The user frames from (pc, sp, bp) into buf, each tagged with how it was
 * found (SW_HOW_*, bpf/stackwalk.h); their number.  *stop says why the
 * walk ended.  The bounded loop is why this needs 5.3.
 */
static __always_inline __u32 cfi_walk(__u32 tgid, __u64 pc, __u64 sp,
				      __u64 bp, __u64 *buf, __u8 *stop)
{
	struct sw_cfi_proc *proc = bpf_map_lookup_elem(&cfi_procs, &tgid);
	__u32 nr = proc ? proc->nr : 0, n = 0;
	__u64 how = SW_HOW_REGS, adj = 0, cfa, ra, kind, off, save;
	int bp_ok = 1, ok;
	struct sw_cfi_map *m;
	struct sw_cfi_row *r;

	*stop = SW_STOP_DEPTH;
	for (__u32 i = 0; i < SW_MAX_FRAMES; i++) {
		buf[sw_bound(i, SW_MAX_FRAMES - 1)] = pc | how << SW_HOW_SHIFT;
		n = i + 1;
		r = NULL;
		m = cfi_find_map(tgid, nr, pc - adj);
		if (m && pc - adj - m->bias < (1ULL << 32))
			r = cfi_find_row(m, pc - adj - m->bias);
		kind = r ? r->kind : SW_CFI_NONE;
		ok = 1;
		if (kind == SW_CFI_END) {
			*stop = SW_STOP_END;
			break;
		}
		if (kind == SW_CFI_SIGNAL) {
			/* the interrupted registers, in the ucontext at sp */
			pc = cfi_read(sp + SW_CFI_SIG_RIP, &ok);
			bp = cfi_read(sp + SW_CFI_SIG_RBP, &ok);
			sp = cfi_read(sp + SW_CFI_SIG_RSP, &ok);
			bp_ok = 1;
			adj = 0;
			how = SW_HOW_SIGNAL;
		} else if (kind == SW_CFI_RSP || kind == SW_CFI_PLT ||
			   (kind == SW_CFI_RBP && bp_ok)) {
			off = (__u64)r->cfa * 8;
			cfa = (kind == SW_CFI_RBP ? bp : sp) + off;
			if (kind == SW_CFI_PLT && (pc & 15) >= (__u64)(__u8)r->rbp)
				cfa += 8;
			ra = cfi_read(cfa - 8, &ok);
			if (kind != SW_CFI_PLT && r->rbp == SW_CFI_RBP_LOST) {
				bp_ok = 0;
			} else if (kind != SW_CFI_PLT && r->rbp < 0) {
				save = cfa + (__s64)r->rbp * 8;
				bp = cfi_read(save, &ok);
				bp_ok = 1;
			}
			sp = cfa;
			pc = ra;
			adj = 1;
			how = SW_HOW_CFI;
		} else if (bp_ok) {
			/* no rule here (or none we can use): one fp step */
			pc = cfi_read(bp + 8, &ok);
			sp = bp + 16;
			bp = cfi_read(bp, &ok);
			adj = 1;
			how = SW_HOW_FP;
		} else {
			*stop = SW_STOP_UNREADABLE;
			break;
		}
		if (!ok) {
			*stop = SW_STOP_UNREADABLE;
			break;
		}
		/* a 0 return address ends a stack (see walker_frames_fixup) */
		if (!pc || pc >= SW_CFI_USER_MAX) {
			*stop = pc ? SW_STOP_UNREADABLE : SW_STOP_END;
			break;
		}
	}
	return n;
}

/*
 * The user registers of the event: a uprobe's ctx, or those saved at the
 * top of the task's kernel stack (any address on that stack finds it) for
 * a kprobe or tracepoint.  0 when there are none (a kernel thread, an IRQ
 * stack, a 32-bit task).
 */
static __always_inline int cfi_user_regs(void *ctx, const struct sw_config *cfg,
					 const int user_ctx, __u64 kstack,
					 __u64 *pc, __u64 *sp, __u64 *bp)
{
	__u64 regs, cs = 0;
	int ok = 1;

	if (user_ctx) {
		struct pt_regs *r = ctx;

		if (sw_user_ia32(r))
			return 0;
		*pc = PT_REGS_IP(r);
		*sp = PT_REGS_SP(r);
		*bp = PT_REGS_FP(r);
		return 1;
	}
	regs = sw_user_regs(cfg, kstack);
	cs = cfi_read(regs + SW_PT_REGS_CS, &ok);
	if (!ok || cs != SW_USER_CS)
		return 0;
	*pc = cfi_read(regs + SW_PT_REGS_IP, &ok);
	*sp = cfi_read(regs + SW_PT_REGS_SP, &ok);
	*bp = cfi_read(regs + SW_PT_REGS_BP, &ok);
	return ok;
}

#endif /* SW_CFI_WALK_BPF_H */
