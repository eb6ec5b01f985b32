// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The cfi walker on 4.1-4.8: user frames of a kernel event (and from 4.3
 * of a uprobe) found from the binaries' unwind tables (bpf/cfi.h), where
 * 4.9+ take them by tail calls (bpf/cfi_walk.bpf.h), whose state and
 * kernel frames live in maps these kernels lack.  A program of at most
 * 4,096 instructions takes SW_CFI41_FRAMES callers by CFI; on 4.1, with
 * no tail calls, frame-pointer steps (gen/walker.py) follow in the same
 * program, and from 4.2 the links of a chain of tail calls take the
 * rest, SW_CFI41_FRAMES each (*_v42: 4.2's helpers; *_v43, *_v44: 4.3's
 * uprobes, 4.4's perf output).  Each frame is tagged with how it was
 * found.  No room is left there for a kernel walk, so other probes of the
 * same function run programs before and after a kprobe's:
 * cfi41_kprobe_bp first, which walks the kernel frames and finds the
 * user's %rbp where their chain ends, and last, where the user side hands
 * its frames on, cfi41_kprobe_k (-d), which counts both sides,
 * cfi41_kprobe_kp (stacksnoop, 4.1-4.3), which prints them, or
 * cfi41_kprobe_ke_v44, which sends them.  Its verifier reads memory only
 * through the stack and a checked map value at a constant offset, so a
 * process's mapping list and the rows are read with bpf_probe_read at
 * their addresses, taken as numbers.
 */
/* 4.2+: a child of fork walks with its parent's list from its first event */
#define SW_FORKED(child)	cfi_alias_fork(child)
#include "common.bpf.h"
#include "printk.bpf.h"
#include "fp_walk.h"
#include "task41.bpf.h"
/* 4.1 takes no map flags (bpf/cfi_maps.bpf.h) */
#define SW_CFI_PROCS_FLAGS	0
#include "cfi_alias.bpf.h"

/*
 * Search steps, fewer than 4.9+ take so that five frames fit: tables of
 * at most 2^16 rows (a program has a few thousand, Debian 12's libc
 * 28,000) and lists of at most 64 mappings.  A process or a table past
 * them has its frames found by frame pointers, as one without tables.
 */
#define CFI41_STEPS	16
#define CFI41_MAP_STEPS	6

/* 4.1's user sides (4.2+: counts_deep) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sw_fp_uside);
	__type(value, __u64);
} counts SEC(".maps");

/* -d: both sides, counted by cfi41_kprobe_k */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sw_fp_key);
	__type(value, __u64);
} counts_kd SEC(".maps");

/*
 * 4.1: each CPU's last user side, from cfi41_kprobe_uh to cfi41_kprobe_k
 * or cfi41_kprobe_kp, which 4.1 runs next for the same event (4.2+: in
 * cfi41_deep, below): a function's probes run newest first, and
 * src/walker_cfi41.c makes the user side's after theirs.  h.nk (no count
 * of an fp key) says it is one not taken yet.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_fp_uside);
} cfi41_hand SEC(".maps");

/*
 * 4.2+: each CPU's key as its chain walks it.  Counted alone, all of it
 * (counts_deep, by slot 0's program); handed on or sent, its first
 * SW_FP_UDEPTH frames, sw_fp_uside's (the chain stops there: fp_depth).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_cfi41_key);
} cfi41_deep SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sw_cfi41_key);
	__type(value, __u64);
} counts_deep SEC(".maps");

/*
 * The walk's registers and the mapping of the frame at hand, in map memory: the
 * BPF stack holds the key and little else, and the verifier knows nothing
 * of values read from a map, so each frame's code is checked as one path
 * and a few exits.  Indexed by CPU (thread_info.cpu): a kprobe's program
 * runs with preemption off and never nests.
 */
struct cfi41_state {
	__u64 pc, sp, bp, bp_ok;
	__u64 proc;		/* the process's list (cfi_procs), as a number; 0: none */
	__u64 rows;		/* cfi_rows' first row, as a number */
	__u64 m_start, m_len, m_bias, m_first, m_count;
	/* a mapping whose file has no table yet, or past the searches */
	__u64 no_table;
	/*
	 * From cfi41_kprobe_bp, which 4.1 runs first for the same event: the
	 * user's %rbp where the kernel chain left for user space (ubp_set:
	 * not taken yet by the user side), and the kernel frames (kip_set:
	 * not taken yet by the last program), walked once
	 */
	__u64 ubp, ubp_set, kstop, kip_set;
	__u64 kip[SW_FP_KDEPTH];
	/* 4.2-4.8's chain: its key is handed on at the end (else counted) */
	__u64 hand;
	/* and it ends at the fp key's depth: handed on, or sent */
	__u64 fp_depth;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cfi41_state);
} cfi41_state SEC(".maps");

/* 8 bytes at addr; 0 where unreadable (4.1's bpf_probe_read clears nothing) */
static __always_inline __u64 cfi41_read(__u64 addr, __u64 *tmp)
{
	*tmp = 0;
	bpf_probe_read(tmp, 8, (void *)addr);
	return *tmp;
}

#define CFI41_MAPS	__builtin_offsetof(struct sw_cfi_proc, maps)

/*
 * 8 bytes of a map's memory, which is always readable, through tmp: 4.1
 * hands a helper only stack it has seen written
 */
static __always_inline __u64 cfi41_peek(__u64 addr, __u64 *tmp)
{
	bpf_probe_read(tmp, 8, (void *)addr);
	return *tmp;
}

/*
 * The frame's code has no branch but those that end the walk: 4.1's
 * verifier prunes a path only where every register is as on one it saw,
 * so each branch that rejoins with a constant in a register would double
 * the paths through every frame after it.  So searches always run (a
 * process's list is searched for each frame) and their outcomes are
 * masks.
 */

/* all ones where v != 0 */
static __always_inline __u64 cfi41_set(__u64 v)
{
	return ~sw_mask_eq(v, 0);
}

/* st->m_*: the mapping that holds pc, or m_len 0 for none: step 1 */
static __always_inline void cfi41_map(struct cfi41_state *st, __u64 pc, __u64 *tmp)
{
	/* base: the address of the first mapping the search still holds */
	__u64 p = st->proc, base = p + CFI41_MAPS, n, half, a, start, ok, fc;

	n = cfi41_peek(p, tmp) & 0xffffffff;
	ok = cfi41_set(p) & cfi41_set(n);
	st->no_table |= ~sw_mask_lt(n, (1u << CFI41_MAP_STEPS) + 1) & ok & 1;
	ok &= sw_mask_lt(n, (1u << CFI41_MAP_STEPS) + 1);
	/* pc + 1 > a mapping's start, as a sign: it starts at or below pc */
	pc++;
#pragma unroll
	for (int i = 0; i < CFI41_MAP_STEPS; i++) {
		half = n >> 1;
		a = cfi41_peek(base + half * sizeof(struct sw_cfi_map), tmp);
		base += (half * sizeof(struct sw_cfi_map)) & sw_mask_lt(a, pc);
		n -= half;
	}
	pc--;
	start = cfi41_peek(base, tmp);
	ok &= ~sw_mask_lt(pc, start);
	a = cfi41_peek(base + 8, tmp);
	ok &= sw_mask_lt(pc, a);
	st->m_start = start;
	st->m_len = (a - start) & ok;
	st->m_bias = cfi41_peek(base + 16, tmp);
	fc = cfi41_peek(base + 24, tmp);
	st->m_first = fc & 0xffffffff;
	st->m_count = fc >> 32;
	st->no_table |= (sw_mask_eq(st->m_first, SW_CFI_UNTABLED) |
			 ~sw_mask_lt(st->m_count, (1u << CFI41_STEPS) + 1)) & ok & 1;
}

/* a row's first 4 bytes: its pc */
static __always_inline __u32 cfi41_peek_pc(__u64 addr, __u64 *tmp)
{
	bpf_probe_read(tmp, 4, (void *)addr);
	return *(__u32 *)tmp;
}

/*
 * The row for pc in st's mapping as its 8 bytes, or 0 (none, which is
 * SW_CFI_NONE's): step 3
 */
static __always_inline __u64 cfi41_row(const struct cfi41_state *st, __u64 pc,
				       __u64 *tmp)
{
	/* base: the address of the first row the search still holds */
	__u64 base = st->rows + st->m_first * sizeof(struct sw_cfi_row),
	      n = st->m_count, rel = pc - st->m_bias, half, r, ok;

	ok = ~sw_mask_lt(pc, st->m_start) &
	     sw_mask_lt(pc, st->m_start + st->m_len) &
	     sw_mask_eq(rel >> 32, 0) & cfi41_set(n) &
	     sw_mask_lt(n, (1u << CFI41_STEPS) + 1);
	/* rel + 1 > a row's pc, as a sign: the row is at or before rel */
	rel++;
#pragma unroll
	for (int i = 0; i < CFI41_STEPS; i++) {
		half = n >> 1;
		r = cfi41_peek_pc(base + half * sizeof(struct sw_cfi_row), tmp);
		base += (half * sizeof(struct sw_cfi_row)) & sw_mask_lt(r, rel);
		n -= half;
	}
	r = cfi41_peek(base, tmp);
	return r & ok & sw_mask_lt(r & 0xffffffff, rel);
}

/*
 * One frame, as cfi_step() takes it on 4.9+ (bpf/cfi.h, "Applying a
 * row"), but for signal frames, which end the walk here (cut).  st moves
 * to the caller, whose return address, tagged, goes to *out.  0 to go
 * on, else the SW_STOP_* that ends the walk.  adj: pc is a return
 * address (every frame but the first).  st->bp_ok is a mask.  entry: pc
 * is a function's first instruction (a uprobe's), whose rule holds where
 * no row covers it, as on 4.9+ (bpf/cfi_walk.bpf.h): CFA = %rsp + 8.
 */
static __always_inline int cfi41_step(struct cfi41_state *st, const int adj,
				      const int entry, __u64 *tmp, __u64 *out)
{
	__u64 pc = st->pc - adj, r, kind, off, cfa, ra, sp, bp, none,
	      from_bp, rbp, saved;
	long err;

	cfi41_map(st, pc, tmp);
	r = cfi41_row(st, pc, tmp);
	if (entry) {
		none = sw_mask_eq((r >> 48) & 0xff, SW_CFI_NONE);
		r = (r & ~none) | (((__u64)SW_CFI_RSP << 48 | 1ULL << 32) & none);
	}
	kind = (r >> 48) & 0xff;
	if (kind == SW_CFI_END)
		return SW_STOP_END;
	if (kind >= SW_CFI_SIGNAL)
		return SW_STOP_CUT;
	none = sw_mask_eq(kind, SW_CFI_NONE);
	from_bp = none | sw_mask_eq(kind, SW_CFI_RBP);
	sp = st->sp;
	bp = st->bp;
	if (from_bp & ~st->bp_ok)
		return SW_STOP_UNREADABLE;
	/* no rule: a frame-pointer step, where _start's 0 %rbp ends it */
	if (none & sw_mask_eq(bp, 0))
		return SW_STOP_END;
	/*
	 * The row's rbp, sign-extended.  No PLT rows: a kernel event's pc
	 * follows a syscall, and every other frame's a call, neither of
	 * which a PLT entry holds; SW_CFI_PLT is taken as SW_CFI_RSP.
	 */
	rbp = (__u64)(__s64)(__s8)(r >> 56) & ~sw_mask_eq(kind, SW_CFI_PLT);
	off = ((r >> 32) & 0xffff) * 8;
	off = (off & ~none) | (16 & none);
	rbp = (rbp & ~none) | (-2ULL & none);
	cfa = ((bp & from_bp) | (sp & ~from_bp)) + off;
	/* a caller's frame lies above its callee's (bpf/cfi.h) */
	if (cfa <= sp)
		return SW_STOP_CUT;
	if (bpf_probe_read(tmp, 8, (void *)(cfa - 8)))
		return SW_STOP_UNREADABLE;
	ra = *tmp;
	/* the caller's %rbp where this frame saved it (rbp < 0), or kept */
	saved = (__u64)((__s64)rbp >> 63);
	err = bpf_probe_read(tmp, 8, (void *)(cfa + rbp * 8));
	if (~sw_mask_ok(err) & saved)
		return SW_STOP_UNREADABLE;
	st->bp = (*tmp & saved) | (bp & ~saved);
	st->bp_ok = (st->bp_ok | saved) & ~sw_mask_eq(rbp, SW_CFI_RBP_LOST);
	st->sp = cfa;
	st->pc = ra;
	if (!ra)
		return SW_STOP_END;
	if (ra >= SW_USER_MAX)
		return SW_STOP_UNREADABLE;
	*out = ra | (none & ((__u64)SW_HOW_FP << SW_HOW_SHIFT)) |
	       (~none & ((__u64)SW_HOW_CFI << SW_HOW_SHIFT));
	return 0;
}

/*
 * The user's %rbp at kernel entry: where the kernel chain left for user
 * space, as cfi41_kprobe_bp found it for this event (the syscall fast
 * path leaves the saved one stale), else the saved one (bpf/task41.bpf.h's
 * fp_user_entry41).  *ok 0 where that program did not run (the kernel
 * skipped it): the walk goes on by rules that need no %rbp until a frame
 * restores it.
 */
static __always_inline __u64 cfi41_user_bp(struct cfi41_state *st, __u64 regs,
					   __u64 *tmp, __u64 *ok)
{
	__u64 ubp = st->ubp, m = ~sw_mask_eq(ubp, 0) & sw_mask_eq(ubp >> 47, 0);

	*ok = st->ubp_set & 1;
	st->ubp_set = 0;
	return (ubp & m) | (cfi41_read(regs + SW_PT_REGS_BP, tmp) & ~m);
}

/*
 * The config, where the filters (-c, -p, and from 4.2 -- COMMAND's
 * children) take the event: its process in *h and *id, its CPU in *cpu.
 * v42: by 4.2's helpers; else (4.1) from the task at the kernel stack's
 * base, the CPU its thread_info.cpu (where that was not found, one CPU:
 * src/walker_cfi41.c refuses more).  NULL: not traced.
 */
static __always_inline struct sw_config *
cfi41_event(struct pt_regs *ctx, struct sw_key_hdr *h, __u64 *id, __u64 *tmp,
	    __u32 *cpu, const int v42)
{
	struct sw_config *cfg = sw_filter(v42, v42 ? 0 : SW_LINEAR, id);

	if (!cfg)
		return NULL;
	if (v42) {
		sw_key_hdr(h, cfg, *id, 0);
		*cpu = bpf_get_smp_processor_id();
		return cfg;
	}
	*cpu = fp_cpu41(PT_REGS_SP(ctx), cfg->thread_size, cfg->ti_cpu_off, tmp) &
	       -(__u32)(cfg->ti_cpu_off != 0);
	if ((*cpu ^ cfg->cpu) & cfg->cpu_mask)
		return NULL;
	*id = fp_task41(cfg, PT_REGS_SP(ctx), h, tmp, 0);
	if (((*id >> 32) ^ cfg->tgid) & cfg->tgid_mask)
		return NULL;
	return cfg;
}

/* A map lookup's value as a number, 0 where there is none */
static __always_inline __u64 cfi41_number(void *v)
{
	return v ? sw_ptr_value(v) : 0;
}

/*
 * 4.2+: the list tgid's process walks with, as a number (0: none): its
 * own, or else the one it forked with (bpf/cfi_alias.bpf.h).  Without a
 * branch, which 4.4's verifier would follow into the walk twice.
 */
static __always_inline __u64 cfi41_list(__u32 tgid)
{
	struct cfi_alias_ref ref = {};
	struct cfi_alias_head h = {};
	__u64 own, its, ok;
	__u32 owner;

	own = cfi41_number(bpf_map_lookup_elem(&cfi_procs, &tgid));
	/* at 0 (no reference, no list) bpf_probe_read leaves zeros */
	bpf_probe_read(&ref, sizeof(ref),
		       (void *)cfi41_number(bpf_map_lookup_elem(&cfi_alias, &tgid)));
	owner = ref.tgid;
	its = cfi41_number(bpf_map_lookup_elem(&cfi_procs, &owner));
	bpf_probe_read(&h, sizeof(h), (void *)its);
	ok = sw_mask_eq(own, 0) & ~sw_mask_eq(h.nr, 0) &
	     sw_mask_eq(h.m.first, ref.first) & sw_mask_eq(h.m.start, ref.start);
	return own | (its & ok);
}

/* The walk's process (its mapping list) and rows, for st's first frame. */
static __always_inline void cfi41_begin(struct cfi41_state *st, __u32 tgid,
					const int v42)
{
	__u32 zero = 0;
	void *v;

	st->no_table = 0;
	if (v42) {
		st->proc = cfi41_list(tgid);
	} else {
		st->proc = 0;
		v = bpf_map_lookup_elem(&cfi_procs, &tgid);
		if (v)
			st->proc = sw_ptr_value(v);
	}
	st->rows = 0;
	v = bpf_map_lookup_elem(&cfi_rows, &zero);
	if (v)
		st->rows = sw_ptr_value(v);
}

/*
 * SW_CFI41_FRAMES frames by CFI into uip[first + 1 ...]; 0 to go on, else
 * the SW_STOP_* that ended the walk.  uip: a key's, on the stack or in a
 * map value.
 */
static __always_inline int cfi41_frames(struct cfi41_state *st, __u64 *uip,
					const int first, const int entry,
					__u64 *tmp)
{
	int stop;

#pragma unroll
	for (int i = 0; i < SW_CFI41_FRAMES; i++) {
		stop = cfi41_step(st, first + i > 0, entry && first + i == 0,
				  tmp, &uip[first + i + 1]);
		if (stop)
			return stop;
	}
	return 0;
}

/* a process or a file without tables: its frames by frame pointers */
static __always_inline void cfi41_tables(const struct cfi41_state *st,
					 struct sw_key_hdr *h)
{
	if (!st->proc || st->no_table) {
		h->ustop = SW_STOP_NO_TABLE;
		sw_lost(SW_LOST_NO_TABLE);
	}
}

/*
 * 4.1: the user frames from st's registers (pc, sp, bp, bp_ok) into key:
 * CFI frames, then frame-pointer steps.
 */
static __always_inline void cfi41_walk(struct cfi41_state *st, __u32 tgid,
				       struct sw_fp_uside *key, __u64 *tmp)
{
	int stop;

	cfi41_begin(st, tgid, 0);
	key->uip[0] = st->pc;
	stop = cfi41_frames(st, key->uip, 0, 0, tmp);
	if (stop)
		key->h.ustop = stop;
	else if (!st->bp_ok)
		key->h.ustop = SW_STOP_UNREADABLE;
	else
		sw_fp_uwalk_cfi41(key, st->bp, tmp);
	cfi41_tables(st, &key->h);
}

/*
 * 4.2-4.8: the walk goes on by tail calls, SW_CFI41_FRAMES frames by CFI
 * a program, in the CPU's cfi41_deep key: every frame of the key found by
 * its rule.  Link 0 is the event's own program; slot 0 holds the program
 * that counts a key a chain ended (cfi41_count_v42), loaded only where
 * the counts map is made, or sends it (cfi41_emit_v44), and slot
 * CFI41_LINKS the one that tells a full key's stack whole from one cut
 * (cfi41_link_end_v42), where a chain of the fp key's depth goes after
 * link CFI41_FP_LINKS - 1.
 */
#define CFI41_LINKS	((SW_CFI41_UDEPTH - 1) / SW_CFI41_FRAMES)
#define CFI41_FP_LINKS	((SW_FP_UDEPTH - 1) / SW_CFI41_FRAMES)
SW_PROG_ARRAY(cfi41_links, CFI41_LINKS + 1);

/* The slot after link j's */
static __always_inline __u32 cfi41_next(const struct cfi41_state *st, const int j)
{
	if (j + 1 == CFI41_FP_LINKS && st->fp_depth)
		return CFI41_LINKS;
	return j + 1;
}

/* A chain's key done: handed on to a kprobe's last program, or to slot 0's */
static __always_inline int cfi41_pass(void *ctx, struct sw_cfi41_key *u,
				      __u64 hand)
{
	if (hand) {
		u->h.nk = 1;
		return 0;
	}
	bpf_tail_call(ctx, &cfi41_links, 0);
	sw_lost(SW_LOST_TAILCALL);
	return 0;
}

/*
 * The end of a chain: stop (-1: the tail call failed) into the key at u,
 * which is handed on to the last program of a kprobe (st->hand), or else
 * counted or sent by slot 0's program.
 */
static __always_inline int cfi41_finish(void *ctx, const struct cfi41_state *st,
					struct sw_cfi41_key *u, int stop,
					__u64 hand)
{
	if (stop < 0) {
		/* handed on, the last program counts it as one it never got */
		if (!hand)
			sw_lost(SW_LOST_TAILCALL);
		return 0;
	}
	u->h.ustop = stop;
	cfi41_tables(st, &u->h);
	return cfi41_pass(ctx, u, hand);
}

/* slot 0: the CPU's key counted, copied to the stack (4.4 reads keys there) */
SEC("kprobe")
int cfi41_count_v42(struct pt_regs *ctx)
{
	struct sw_cfi41_key key = {};
	__u32 cpu = bpf_get_smp_processor_id();
	struct sw_cfi41_key *u = bpf_map_lookup_elem(&cfi41_deep, &cpu);

	if (!u)
		return 0;
	bpf_probe_read(&key, sizeof(key), (void *)sw_ptr_value(u));
	sw_count(&counts_deep, &key);
	return 0;
}

/*
 * stacksnoop, slot 0 in place of the counting program: a uprobe's event,
 * as the fp walker sends one
 */
SEC("kprobe")
int cfi41_emit_v44(struct pt_regs *ctx)
{
	struct sw_fp_record rec = {};
	__u32 cpu = bpf_get_smp_processor_id();
	struct sw_cfi41_key *u = bpf_map_lookup_elem(&cfi41_deep, &cpu);

	if (!u)
		return 0;
	/* the chain stopped at the fp key's depth (fp_depth) */
	bpf_probe_read(&rec.key.h, sizeof(rec.key.h), (void *)sw_ptr_value(u));
	bpf_probe_read(rec.key.uip, sizeof(rec.key.uip),
		       (void *)(sw_ptr_value(u) +
				__builtin_offsetof(struct sw_cfi41_key, uip)));
	sw_event_hdr(&rec.e);
	sw_emit(ctx, &rec, sizeof(rec));
	return 0;
}

/*
 * stacksnoop on 4.3 (no perf output), slot 0 in place of the counting
 * program: a uprobe's event printed to trace_pipe, a line a frame, as a
 * kprobe's user side is (cfi41_kp)
 */
SEC("kprobe")
int cfi41_print_v43(struct pt_regs *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0;
	struct sw_cfi41_key *u = bpf_map_lookup_elem(&cfi41_deep, &cpu);
	struct sw_config *cfg = bpf_map_lookup_elem(&config, &zero);
	struct sw_key_hdr h = {};
	volatile __u64 fmt[2];
	__u32 magic;
	__u64 v;

	if (!u || !cfg)
		return 0;
	magic = cfg->magic;
	h.kstop = u->h.kstop;
	h.ustop = u->h.ustop;
	fp_fmt(fmt, 'u');
#pragma unroll
	for (int i = 0; i < SW_FP_UDEPTH; i++) {
		v = u->uip[i];
		if (!v)
			break;
		bpf_trace_printk((const char *)fmt, SW_FMT_FRAME_LEN, magic, i, v);
	}
	fp_printk_end(&h, fmt, magic);
	return 0;
}

/*
 * The CPU's cfi41_deep key, h and no frames yet: written in place (too
 * large for link 0's stack)
 */
static __always_inline struct sw_cfi41_key *cfi41_deep_start(__u32 cpu,
							     const struct sw_key_hdr *h)
{
	struct sw_cfi41_key *u = bpf_map_lookup_elem(&cfi41_deep, &cpu);

	if (!u)
		return NULL;
	u->h = *h;
#pragma unroll
	for (int i = 0; i < SW_CFI41_UDEPTH; i++)
		u->uip[i] = 0;
	return u;
}

/* 4.2+: a kprobe's event without user frames, handed on or counted */
static __always_inline int cfi41_no_user(void *ctx, __u32 cpu,
					 const struct sw_key_hdr *h, const int hand)
{
	struct sw_cfi41_key *u = cfi41_deep_start(cpu, h);

	return u ? cfi41_pass(ctx, u, hand) : 0;
}

/*
 * Link 0: h set, the registers in st: the CPU's cfi41_deep key starts
 * with them, the first frames go into it, and the next link on.  count:
 * the key is counted (else sent, or with hand, handed on: to the fp
 * key's depth).
 */
static __always_inline int cfi41_chain(void *ctx, struct cfi41_state *st,
				       __u32 cpu, __u32 tgid,
				       const struct sw_key_hdr *h, const int entry,
				       const int hand, const int count, __u64 *tmp)
{
	struct sw_cfi41_key *u;
	int stop;

	cfi41_begin(st, tgid, 1);
	st->hand = hand;
	st->fp_depth = !count;
	u = cfi41_deep_start(cpu, h);
	if (!u)
		return 0;
	u->uip[0] = st->pc;
	stop = cfi41_frames(st, u->uip, 0, entry, tmp);
	if (!stop) {
		bpf_tail_call(ctx, &cfi41_links, cfi41_next(st, 0));
		stop = -1;
	}
	/* hand as a constant: 4.4 takes no pointer to st->hand, which clang may keep */
	return cfi41_finish(ctx, st, u, stop, hand);
}

/* Link j > 0: the next frames, on the CPU link 0 ran on */
static __always_inline int cfi41_link(void *ctx, const int j)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cfi41_state *st = bpf_map_lookup_elem(&cfi41_state, &cpu);
	struct sw_cfi41_key *u = bpf_map_lookup_elem(&cfi41_deep, &cpu);
	__u64 tmp = 0;
	int stop;

	if (!st || !u)
		return 0;
	stop = cfi41_frames(st, u->uip, j * SW_CFI41_FRAMES, 0, &tmp);
	if (!stop) {
		bpf_tail_call(ctx, &cfi41_links, cfi41_next(st, j));
		stop = -1;
	}
	return cfi41_finish(ctx, st, u, stop, st->hand);
}

/*
 * The key is full: one more step says whether the stack ended there
 * (_start's row, a 0 return address) or goes on, cut (SW_STOP_DEPTH)
 */
SEC("kprobe")
int cfi41_link_end_v42(struct pt_regs *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cfi41_state *st = bpf_map_lookup_elem(&cfi41_state, &cpu);
	struct sw_cfi41_key *u = bpf_map_lookup_elem(&cfi41_deep, &cpu);
	__u64 tmp = 0, next = 0;
	int stop;

	if (!st || !u)
		return 0;
	stop = cfi41_step(st, 1, 0, &tmp, &next);
	return cfi41_finish(ctx, st, u, stop ? stop : SW_STOP_DEPTH, st->hand);
}

SEC("kprobe") int cfi41_link1_v42(struct pt_regs *ctx) { return cfi41_link(ctx, 1); }
SEC("kprobe") int cfi41_link2_v42(struct pt_regs *ctx) { return cfi41_link(ctx, 2); }
SEC("kprobe") int cfi41_link3_v42(struct pt_regs *ctx) { return cfi41_link(ctx, 3); }
SEC("kprobe") int cfi41_link4_v42(struct pt_regs *ctx) { return cfi41_link(ctx, 4); }
SEC("kprobe") int cfi41_link5_v42(struct pt_regs *ctx) { return cfi41_link(ctx, 5); }
SEC("kprobe") int cfi41_link6_v42(struct pt_regs *ctx) { return cfi41_link(ctx, 6); }
SEC("kprobe") int cfi41_link7_v42(struct pt_regs *ctx) { return cfi41_link(ctx, 7); }
SEC("kprobe") int cfi41_link8_v42(struct pt_regs *ctx) { return cfi41_link(ctx, 8); }
SEC("kprobe") int cfi41_link9_v42(struct pt_regs *ctx) { return cfi41_link(ctx, 9); }
SEC("kprobe") int cfi41_link10_v42(struct pt_regs *ctx) { return cfi41_link(ctx, 10); }

/*
 * A kprobe's user frames: CFI frames, then frame-pointer steps (chain: by
 * CFI, link after link), counted (-U) or handed on (hand: -d,
 * stacksnoop).
 */
static __always_inline int cfi41_user(struct pt_regs *ctx, const int hand,
				      const int chain)
{
	__u64 id, regs, bp_ok = 0, bp, tmp = 0;
	struct sw_fp_uside key = {};
	struct cfi41_state *st;
	struct sw_config *cfg;
	__u32 cpu;

	cfg = cfi41_event(ctx, &key.h, &id, &tmp, &cpu, chain);
	if (!cfg)
		return 0;
	regs = sw_user_regs(cfg, PT_REGS_SP(ctx));
	if (cfi41_read(regs + SW_PT_REGS_CS, &tmp) != SW_USER_CS) {
		key.h.ustop = SW_STOP_NO_USER;
		if (chain)
			return cfi41_no_user(ctx, cpu, &key.h, hand);
		goto done;
	}
	st = bpf_map_lookup_elem(&cfi41_state, &cpu);
	if (!st)
		return 0;
	bp = cfi41_user_bp(st, regs, &tmp, &bp_ok);
	st->pc = cfi41_read(regs + SW_PT_REGS_IP, &tmp);
	st->sp = cfi41_read(regs + SW_PT_REGS_SP, &tmp);
	st->bp = bp;
	st->bp_ok = -bp_ok;
	if (chain)
		return cfi41_chain(ctx, st, cpu, id >> 32, &key.h, 0, hand, !hand, &tmp);
	cfi41_walk(st, id >> 32, &key, &tmp);
done:
	if (hand) {
		key.h.nk = 1;
		bpf_map_update_elem(&cfi41_hand, &cpu, &key, BPF_ANY);
	} else {
		sw_count(&counts, &key);
	}
	return 0;
}

SEC("kprobe") int cfi41_kprobe_u(struct pt_regs *ctx) { return cfi41_user(ctx, 0, 0); }
SEC("kprobe") int cfi41_kprobe_uh(struct pt_regs *ctx) { return cfi41_user(ctx, 1, 0); }
SEC("kprobe") int cfi41_kprobe_c_v42(struct pt_regs *ctx) { return cfi41_user(ctx, 0, 1); }
SEC("kprobe") int cfi41_kprobe_ch_v42(struct pt_regs *ctx) { return cfi41_user(ctx, 1, 1); }

/*
 * 4.3-4.8: a uprobe's or USDT probe's user frames, from the registers it
 * fired with, counted.  These kernels give its program the process, the
 * CPU and so -p, -c and -- COMMAND's children as 4.9+ do (4.2's helpers);
 * its links run on, by tail calls, with preemption off, so the CPU's
 * state is the walk's own throughout.
 */
static __always_inline int cfi41_uprobe(struct pt_regs *ctx, const int entry,
					const int count)
{
	struct sw_fp_uside key = {};
	struct cfi41_state *st;
	struct sw_config *cfg;
	__u64 id, tmp = 0;
	__u32 cpu;

	cfg = sw_filter(1, 0, &id);
	if (!cfg)
		return 0;
	sw_key_hdr(&key.h, cfg, id, 0);
	cpu = bpf_get_smp_processor_id();
	st = bpf_map_lookup_elem(&cfi41_state, &cpu);
	if (!st)
		return 0;
	st->pc = PT_REGS_IP(ctx);
	st->sp = PT_REGS_SP(ctx);
	st->bp = PT_REGS_FP(ctx);
	st->bp_ok = -1ULL;
	return cfi41_chain(ctx, st, cpu, id >> 32, &key.h, entry, 0, count, &tmp);
}

SEC("kprobe") int cfi41_uprobe_v43(struct pt_regs *ctx) { return cfi41_uprobe(ctx, 0, 1); }
SEC("kprobe") int cfi41_uprobe_entry_v43(struct pt_regs *ctx) { return cfi41_uprobe(ctx, 1, 1); }
/* stacksnoop: sent (4.4+) or printed (4.3) by slot 0's program */
SEC("kprobe") int cfi41_uprobe_e_v43(struct pt_regs *ctx) { return cfi41_uprobe(ctx, 0, 0); }
SEC("kprobe") int cfi41_uprobe_entry_e_v43(struct pt_regs *ctx) { return cfi41_uprobe(ctx, 1, 0); }

/*
 * The event's kernel frames into key, by the fp walker's kernel walk
 * (4.1's, without a branch), and its process; the user's %rbp where the
 * chain left the kernel into *ubp, and the CPU into *tmp.  0: not traced.
 */
static __always_inline int cfi41_kernel(struct pt_regs *ctx, struct sw_fp_key *key,
					__u64 *ubp, __u64 *tmp, const int v42)
{
	struct sw_config *cfg;
	__u64 id;
	__u32 cpu;

	cfg = cfi41_event(ctx, &key->h, &id, tmp, &cpu, v42);
	if (!cfg)
		return 0;
	/*
	 * The BPF stack has room for the key and little else: the CPU waits
	 * in the last user slot, which the user side fills later.
	 */
	key->uip[SW_FP_UDEPTH - 1] = cpu;
	sw_fp_kwalk_entry_m(cfg->root, key, PT_REGS_IP(ctx), PT_REGS_SP(ctx),
			    PT_REGS_FP(ctx), ubp, tmp);
	*tmp = key->uip[SW_FP_UDEPTH - 1];
	key->uip[SW_FP_UDEPTH - 1] = 0;
	return 1;
}

/*
 * First for each event: the kernel frames, for the last program, and the
 * user's %rbp where their chain ends, for cfi41_user (no room for this
 * walk beside its five frames).
 */
static __always_inline int cfi41_bp(struct pt_regs *ctx, const int v42)
{
	__u64 ubp = 0, tmp = 0;
	struct sw_fp_key key = {};
	struct cfi41_state *st;

	if (!cfi41_kernel(ctx, &key, &ubp, &tmp, v42))
		return 0;
	/* the array's 4-byte key from tmp (little-endian) */
	st = bpf_map_lookup_elem(&cfi41_state, &tmp);
	if (!st)
		return 0;
	st->ubp = ubp;
	st->ubp_set = 1;
#pragma unroll
	for (int i = 0; i < SW_FP_KDEPTH; i++)
		st->kip[i] = key.kip[i];
	st->kstop = key.h.kstop;
	st->kip_set = 1;
	return 0;
}

SEC("kprobe") int cfi41_kprobe_bp(struct pt_regs *ctx) { return cfi41_bp(ctx, 0); }
SEC("kprobe") int cfi41_kprobe_bp_v42(struct pt_regs *ctx) { return cfi41_bp(ctx, 1); }

/*
 * The kernel frames cfi41_kprobe_bp walked for this event, and the user
 * side cfi41_kprobe_uh handed on, for the last program; NULL where either
 * did not run for it (the kernel skipped it): the event is lost, counted.
 */
static __always_inline struct sw_fp_uside *
cfi41_sides(struct cfi41_state **st, __u32 *cpu, const int v42)
{
	/* 4.2+: the chain's key, whose start is a user side */
	struct sw_fp_uside *u = bpf_map_lookup_elem(v42 ? (void *)&cfi41_deep :
						    (void *)&cfi41_hand, cpu);

	*st = bpf_map_lookup_elem(&cfi41_state, cpu);
	if (!u || !*st)
		return NULL;
	if (!u->h.nk || !(*st)->kip_set) {
		u->h.nk = 0;
		(*st)->kip_set = 0;
		sw_lost(SW_LOST_SKIPPED);
		return NULL;
	}
	u->h.nk = 0;
	(*st)->kip_set = 0;
	return u;
}

/*
 * Both sides of the event into key: the kernel frames cfi41_kprobe_bp
 * walked, the user frames handed on; 0 where either was not left for it.
 * id and tmp: scratch words (an event's record has room for them).
 */
static __always_inline int cfi41_both(struct pt_regs *ctx, struct sw_fp_key *key,
				      __u64 *id, __u64 *tmp, const int v42)
{
	struct cfi41_state *st;
	struct sw_fp_uside *u;
	__u32 cpu;

	if (!cfi41_event(ctx, &key->h, id, tmp, &cpu, v42))
		return 0;
	u = cfi41_sides(&st, &cpu, v42);
	if (!u)
		return 0;
	key->h.kstop = st->kstop;
	key->h.ustop = u->h.ustop;
	bpf_probe_read(key->kip, sizeof(key->kip),
		       (void *)(sw_ptr_value(st) +
				__builtin_offsetof(struct cfi41_state, kip)));
	bpf_probe_read(key->uip, sizeof(key->uip),
		       (void *)(sw_ptr_value(u) +
				__builtin_offsetof(struct sw_fp_uside, uip)));
	return 1;
}

/*
 * -d, last for each event: the kernel frames beside the user side; both
 * counted.
 */
static __always_inline int cfi41_k(struct pt_regs *ctx, const int v42)
{
	struct sw_fp_key key = {};
	__u64 id, tmp = 0;

	if (cfi41_both(ctx, &key, &id, &tmp, v42))
		sw_count(&counts_kd, &key);
	return 0;
}

SEC("kprobe") int cfi41_kprobe_k(struct pt_regs *ctx) { return cfi41_k(ctx, 0); }
SEC("kprobe") int cfi41_kprobe_k_v42(struct pt_regs *ctx) { return cfi41_k(ctx, 1); }

/* stacksnoop (4.4+), last for each event: both sides sent */
SEC("kprobe")
int cfi41_kprobe_ke_v44(struct pt_regs *ctx)
{
	struct sw_fp_record rec = {};

	/* the BPF stack holds the record and little else: its header is scratch */
	if (!cfi41_both(ctx, &rec.key, &rec.e.ts, (__u64 *)&rec.e.tid, 1))
		return 0;
	sw_event_hdr(&rec.e);
	sw_emit(ctx, &rec, sizeof(rec));
	return 0;
}

/*
 * stacksnoop, last for each event: the kernel frames, then the user
 * side's, a trace_pipe line a frame (bpf/printk.bpf.h), tagged as
 * src/walker_cfi41.c tags a counted one's.  A frame-pointer step that
 * read a word above user space ends the user side there, unreadable, as
 * there too.
 */
static __always_inline int cfi41_kp(struct pt_regs *ctx, const int v42)
{
	struct sw_key_hdr h = {};
	volatile __u64 fmt[2];
	struct cfi41_state *st;
	struct sw_fp_uside *u;
	struct sw_config *cfg;
	__u64 id, tmp = 0, v;
	__u32 cpu, magic;

	cfg = cfi41_event(ctx, &h, &id, &tmp, &cpu, v42);
	if (!cfg)
		return 0;
	magic = cfg->magic;
	u = cfi41_sides(&st, &cpu, v42);
	if (!u)
		return 0;
	h.kstop = st->kstop;
	h.ustop = u->h.ustop;
	fp_fmt(fmt, 'k');
#pragma unroll
	for (int i = 0; i < SW_FP_KDEPTH; i++) {
		v = st->kip[i];
		if (!v)
			break;
		bpf_trace_printk((const char *)fmt, SW_FMT_FRAME_LEN, magic, i, v);
	}
	fp_fmt(fmt, 'u');
#pragma unroll
	for (int i = 0; i < SW_FP_UDEPTH; i++) {
		v = u->uip[i];
		if (!v)
			goto done;
		if (i > SW_CFI41_FRAMES && (v & ~SW_HOW_MASK) >= SW_USER_MAX) {
			h.ustop = SW_STOP_UNREADABLE;
			goto done;
		}
		/*
		 * past 4.1's CFI frames, each a frame-pointer step: tagged so
		 * (no branch that rejoins: see cfi41_map)
		 */
		if (i > SW_CFI41_FRAMES)
			v |= ((__u64)SW_HOW_FP << SW_HOW_SHIFT) &
			     sw_mask_eq(v & SW_HOW_MASK, 0);
		bpf_trace_printk((const char *)fmt, SW_FMT_FRAME_LEN, magic, i, v);
	}
done:
	fp_printk_end(&h, fmt, magic);
	return 0;
}

SEC("kprobe") int cfi41_kprobe_kp(struct pt_regs *ctx) { return cfi41_kp(ctx, 0); }
SEC("kprobe") int cfi41_kprobe_kp_v42(struct pt_regs *ctx) { return cfi41_kp(ctx, 1); }

/*
 * A process's list goes when it runs exec (setup_new_exec: its old image
 * is gone) or its main thread exits (do_exit), so that no image, nor a
 * later process given its pid, walks by another's tables: 4.1 has no
 * tracepoint programs, by which 4.9+ see both.  Either is its main thread
 * (exec makes the thread that runs it the main one).
 */
SEC("kprobe")
int cfi41_drop(struct pt_regs *ctx)
{
	struct sw_key_hdr h = {};
	struct sw_config *cfg;
	__u64 id, tmp = 0;
	__u32 tgid;

	cfg = sw_filter(0, SW_LINEAR, &id);
	if (!cfg)
		return 0;
	id = fp_task41(cfg, PT_REGS_SP(ctx), &h, &tmp, 0);
	tgid = id >> 32;
	if (tgid && tgid == (__u32)id)
		bpf_map_delete_elem(&cfi_procs, &tgid);
	return 0;
}

/*
 * the same, where 4.2's helper says whose exec or exit it is; and any
 * thread's reference to its parent's list (made at fork for a thread too)
 */
SEC("kprobe")
int cfi41_drop_v42(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = id;

	bpf_map_delete_elem(&cfi_alias, &tid);
	if (tgid && tgid == tid)
		bpf_map_delete_elem(&cfi_procs, &tgid);
	return 0;
}

SW_FOLLOW_PROGRAMS()
