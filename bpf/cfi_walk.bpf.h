/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * The user side of the cfi walker (4.9+): each frame's caller found from
 * the unwind tables the frontend loads (bpf/cfi.h says how they are laid
 * out and searched), falling back to one frame-pointer step where no row
 * covers a PC.  Straight code, one frame at a time (cfi_step()): the
 * walk goes on through tail calls, a few frames a program, so that no
 * kernel needs to take a loop (5.3) and every program stays within 4.x's
 * 4096 instructions.  Included by cfi.bpf.c, which shares getstack's keys
 * and counts: only how the user frames are found differs.
 */
#ifndef SW_CFI_WALK_BPF_H
#define SW_CFI_WALK_BPF_H

#include "common.bpf.h"
#include "cfi.h"

/* the end of x86_64 user space (47-bit), as gen/walker.py has it */
#define SW_CFI_USER_MAX	0x7ffffffff000ULL

#include "cfi_maps.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SW_CFI_FILES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sw_cfi_file_key);
	__type(value, struct sw_cfi_file);
} cfi_files SEC(".maps");

/* a <= b as 0 or 1, without a jump, for values below 2^63 (bpf/cfi.h) */
static __always_inline __u64 cfi_le(__u64 a, __u64 b)
{
	return ((b - a) >> 63) ^ 1;
}

/*
 * &proc->maps[i], its offset added as one number: 4.9's verifier loses
 * the bounds of a map value's address a constant was added to first
 */
static __always_inline struct sw_cfi_map *cfi_map_at(struct sw_cfi_proc *proc,
						      __u32 i)
{
	__u64 off = sw_opaque((__u64)(i & (SW_CFI_PROC_MAPS - 1)) *
			      sizeof(struct sw_cfi_map));

	off = sw_opaque(off + __builtin_offsetof(struct sw_cfi_proc, maps));
	return (struct sw_cfi_map *)((char *)proc + off);
}

/*
 * The mapping of the process that holds pc, or NULL: step 1 of bpf/cfi.h.
 * fresh: proc looked up again, by tgid, as 4.9's verifier also loses the
 * bounds of a map value's address kept on the stack.
 */
static __always_inline struct sw_cfi_map *cfi_find_map(struct sw_cfi_proc *proc,
							__u64 pc, __u32 tgid,
							const int fresh)
{
	__u32 lo = 0, n, half;
	struct sw_cfi_map *m;

	if (fresh)
		proc = bpf_map_lookup_elem(&cfi_procs, &tgid);
	if (!proc)
		return NULL;
	n = proc->nr;
	if (!n || n > SW_CFI_PROC_MAPS)
		return NULL;
#pragma unroll
	for (int i = 0; i < SW_CFI_MAP_STEPS; i++) {
		half = n >> 1;
		m = cfi_map_at(proc, lo + half);
		lo += half & -(__u32)cfi_le(m->start, pc);
		n -= half;
	}
	m = cfi_map_at(proc, lo);
	if (pc < m->start || pc >= m->end)
		return NULL;
	return m;
}

/*
 * The row for rel in a table of count rows from first, or NULL: step 3.
 * *at: its index.
 */
static __always_inline struct sw_cfi_row *cfi_find_row(__u32 first, __u32 count,
							__u64 rel, __u32 *at)
{
	__u32 base = first, n = count, half, idx;
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
	*at = base;
	return r;
}

/*
 * The rows found for recent (table, address) pairs, so that the frames a
 * workload keeps walking through take one look-up, not SW_CFI_STEPS + 1
 * (bpf/cfi.h, "Hot rows").  Tables are only ever added to cfi_rows, never
 * moved or overwritten, so an entry is true for as long as the run lasts,
 * whichever walk wrote it; each is one 64-bit word, written whole, so a
 * walk reads an old entry or a new one, never half of each.  One array
 * for all CPUs: written only on a miss, read far more often, and made in
 * microseconds where 4,096 per-CPU entries took 1.7 ms of every start.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SW_CFI_HOT);
	__type(key, __u32);
	__type(value, __u64);
} cfi_hot SEC(".maps");

/*
 * 5.17+ (the looped walk): cfi_find_row() as a function of its own, which
 * the verifier checks once for any arguments, not once for each way a
 * frame reaches it.  The index of the row, or ~0 for none.  Not for the
 * unrolled walks of 4.18-5.16: before 5.10 a program that tail-calls may
 * not call functions.
 */
__attribute__((noinline)) __u32 cfi_search(__u32 first, __u32 count, __u64 rel)
{
	__u32 at = ~0u;

	if (!cfi_find_row(first, count, rel, &at))
		return ~0u;
	return at;
}

/*
 * cfi_find_row() through the hot rows.  Both ways end in one look-up of
 * the row by index, so that the verifier checks what follows once.
 * fresh: the hot row's slot looked up again after a search (4.14's
 * verifier forgets that a pointer kept across it was checked for NULL).
 */
static __always_inline struct sw_cfi_row *cfi_hot_row(__u32 first, __u32 count,
						       __u64 rel, const int vma,
						       const int fresh)
{
	__u32 slot = (rel ^ first) & (SW_CFI_HOT - 1), at = 0;
	__u64 tag = (__u64)first << 20 | rel >> SW_CFI_HOT_BITS, *e, v = 0;

	/* no select between a pointer and NULL: 4.19's verifier loses its type */
	e = bpf_map_lookup_elem(&cfi_hot, &slot);
	if (e)
		v = *e;
	if ((v & 1) && v >> 21 == tag && first < SW_CFI_HOT_FIRST_MAX) {
		at = first + (__u32)((v >> 1) & (SW_CFI_TABLE_MAX - 1));
	} else {
		if (vma)
			at = cfi_search(first, count, rel);
		else if (!cfi_find_row(first, count, rel, &at))
			at = ~0u;
		if (at == ~0u)
			return NULL;
		if (fresh)
			e = bpf_map_lookup_elem(&cfi_hot, &slot);
		if (e && first < SW_CFI_HOT_FIRST_MAX)
			*e = tag << 21 | (__u64)(at - first) << 1 | 1;
	}
	return bpf_map_lookup_elem(&cfi_rows, &at);
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
 * The walk's registers between frames, and the rule of the frame at
 * hand.  They live in map memory, not in BPF registers: the verifier then
 * knows nothing of their values, and the step below is straight code (a
 * frame-pointer step is the rule "CFA = %rbp+16, %rbp saved at CFA-16"),
 * so each frame costs the verifier a few paths, not one for every mix of
 * constants the frames before it set.
 */
/* a maple tree node: 256 bytes, aligned to them (6.1+, lib/maple_tree.c) */
#define CFI_MT_WORDS	32

struct cfi_state {
	__u64 n;		/* frames recorded so far */
	__u64 nk;		/* kernel frames before them in the key */
	__u32 tgid, pad;	/* the process: its mappings in cfi_procs */
	__u64 pc, sp, bp;
	__u64 adj;		/* 1: pc is a return address, look up pc - 1 */
	__u64 how;		/* how pc was found: SW_HOW_* */
	__u64 bp_ok;		/* bp holds the frame's %rbp ... */
	/*
	 * ... or, when not 0, where a callee saved it: read only for a frame
	 * that uses it, so that code that keeps no frame pointer costs one
	 * read a frame, not two
	 */
	__u64 bp_at;
	/*
	 * The event fired on a function's first instruction: where no row
	 * covers it (code without CFI, such as hand-written assembler), the
	 * rule there is still known: the return address is on top of the
	 * stack, and %rbp is the caller's.
	 */
	__u64 entry;
	/* the rule: CFA = (from_bp ? bp : sp) + off; rbp as sw_cfi_row.rbp */
	__u64 kind, from_bp, off;
	__s64 rbp;
	/*
	 * The mapping the last frame was in, as cfi_procs has it: the next
	 * frame is most often in it too, and then needs no search.  m_len 0:
	 * none yet.
	 */
	__u64 m_start, m_len, m_bias;
	__u32 m_first, m_count;
	/*
	 * A file without a table met (SW_CFG_VMA, or a list BPF built), a
	 * VMA not found as its map changed (SW_CFG_VMA: its lock taken, or a
	 * tree node being replaced)
	 */
	__u32 no_table, busy;
	/* the looped walk's end: SW_STOP_*, in map memory for its verifier */
	__u64 why;
	/* the maple tree node read last (cfi_vma_map_mt) */
	__u64 node[CFI_MT_WORDS];
	/*
	 * SW_GS_LEGACY: a kprobe's or uprobe's walk is carried on past the
	 * 32 tail calls of its chain by more probes of the function
	 * (bpf/cfi.bpf.c, gs_cfl_carry_kp).  cap: the user frames at most
	 * (0: as many as one chain reaches); carry: how many more probes may
	 * carry it on; carry_id, carry_sp, carry_ip: the thread and the %rsp
	 * and %rip its probe fired with, of the event whose walk waits for
	 * one (carry_id 0: none), and carry_next the program it goes on in;
	 * base: the frames interned as chunks so far (the key's frames
	 * follow them).
	 */
	__u64 cap, carry, carry_id, carry_sp, carry_ip, carry_next, base;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cfi_state);
} cfi_state SEC(".maps");

/* v ? a : b for v 0 or 1, without a jump */
static __always_inline __u64 cfi_pick(__u64 v, __u64 a, __u64 b)
{
	return b ^ ((a ^ b) & -v);
}

/*
 * Whether file offset fo is in one of f's segments, and that one's delta:
 * found without a jump, as a branch per test would give the verifier a
 * path for each outcome of each, through all of the walk after (file
 * offsets are below 2^63, as cfi_le needs).
 */
static __always_inline __u64 cfi_file_seg(const struct sw_cfi_file *f, __u64 fo,
					  __u64 *delta)
{
	__u64 found = 0, d = 0;

#pragma unroll
	for (int i = 0; i < SW_CFI_FILE_SEGS; i++) {
		__u64 hit = cfi_le(i + 1, f->nr) & cfi_le(f->seg[i].lo, fo) &
			    cfi_le(fo + 1, f->seg[i].end) & (found ^ 1);

		d |= f->seg[i].delta & -hit;
		found |= hit;
	}
	*delta = d;
	return found;
}

/* How a walk finds the VMA of a PC no process list holds (cfi_rule's vma) */
#define CFI_VMA_NONE	0
#define CFI_VMA_FIND	1	/* bpf_find_vma (5.17+, BTF) */
#define CFI_VMA_MT	2	/* the maple tree read (6.1+, no BTF) */

/* A VMA's range and file, as the walk needs them. */
struct cfi_vma {
	__u64 start, end, pgoff, ino;
	__u32 dev, gen, file, gen_ok;	/* gen_ok: gen read (its offset known) */
};

struct task_struct;
struct vm_area_struct;

/* The VMA at kernel address a, through the offsets in cfg->vma. */
static __always_inline void cfi_vma_read(const struct sw_config *cfg, __u64 a,
					 struct cfi_vma *v)
{
	__u64 f = 0, inode = 0, sb = 0;

	bpf_probe_read(&v->start, 8, (void *)(a + cfg->vma.vm_start));
	bpf_probe_read(&v->end, 8, (void *)(a + cfg->vma.vm_end));
	bpf_probe_read(&v->pgoff, 8, (void *)(a + cfg->vma.vm_pgoff));
	bpf_probe_read(&f, 8, (void *)(a + cfg->vma.vm_file));
	if (!f)
		return;
	bpf_probe_read(&inode, 8, (void *)(f + cfg->vma.f_inode));
	if (!inode)
		return;
	bpf_probe_read(&v->ino, 8, (void *)(inode + cfg->vma.i_ino));
	if (cfg->vma.i_generation) {
		bpf_probe_read(&v->gen, 4, (void *)(inode + cfg->vma.i_generation));
		v->gen_ok = 1;
	}
	bpf_probe_read(&sb, 8, (void *)(inode + cfg->vma.i_sb));
	if (sb)
		bpf_probe_read(&v->dev, 4, (void *)(sb + cfg->vma.s_dev));
	v->file = 1;
}

/* bpf_find_vma's callback: the fields of the VMA it found. */
static long cfi_vma_fields(struct task_struct *task, struct vm_area_struct *vma,
			   void *data)
{
	struct sw_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&config, &zero);
	if (cfg)
		cfi_vma_read(cfg, sw_ptr_value(vma), data);
	return 0;
}

/*
 * The mapping of the PC in VMA v into st's cached one: a file without a
 * table (not read yet, or none) is noted for the event's count.
 */
static __always_inline void cfi_vma_take(struct cfi_state *st, const struct cfi_vma *v)
{
	struct sw_cfi_file_key k = {};
	struct sw_cfi_file *f;
	__u64 fo, delta = 0;

	if (!v->file)
		return;
	k.ino = v->ino;
	k.dev = v->dev;
	f = bpf_map_lookup_elem(&cfi_files, &k);
	if (!f || (f->gen_known && v->gen_ok && f->gen != v->gen)) {
		st->no_table = 1;
		return;
	}
	/* a file known to have no table (no CFI, or it did not fit) */
	if (!f->count)
		return;
	fo = v->pgoff << 12;
	if (!cfi_file_seg(f, fo, &delta))
		return;
	st->m_start = v->start;
	st->m_len = v->end - v->start;
	st->m_bias = v->start - fo + delta;
	st->m_first = f->first;
	st->m_count = f->count;
}

/*
 * 5.17+: the mapping of pc from the file its VMA maps, into st's cached
 * one, whether or not the process has a list.  A VMA lock found taken is
 * noted for the event's count.
 */
__attribute__((noinline)) int cfi_vma_map(struct cfi_state *st, __u64 pc)
{
	struct cfi_vma v = {};

	if (!st)
		return 0;
	st->m_len = 0;
	if (bpf_find_vma(bpf_get_current_task_btf(), pc, cfi_vma_fields, &v, 0)) {
		st->busy |= 1;
		return 0;
	}
	cfi_vma_take(st, &v);
	return 0;
}

/*
 * 6.1+ without BTF, where bpf_find_vma cannot be called: the VMA of pc
 * found as the kernel's mtree_load() finds it in mm_struct's maple tree
 * (lib/maple_tree.c), with the offsets measured at start (src/vma_calib.c;
 * vma.mm_mmap is the tree's root there).  The tree is read as it is, no
 * lock taken: a node being replaced (its parent is itself), one that
 * cannot be read, and a VMA that does not hold pc (read while it
 * changed) are counted as a lock found taken.  Node types: 1 a leaf, 2 and 3 internal;
 * a pointer to a node carries its type in bits 3-6, the root also bit 1.
 */
#define CFI_MT_LEVELS	8	/* 10 to 16 children a node: 10^7 VMAs */
#define CFI_MT_LEAF	1
#define CFI_MT_RANGE	2
#define CFI_MT_ARANGE	3

__attribute__((noinline)) int cfi_vma_map_mt(struct cfi_state *st, __u64 pc)
{
	struct sw_config *cfg;
	struct cfi_vma v = {};
	__u64 mm, e, max = ~0ULL;
	__u32 zero = 0;
	int level;

	if (!st)
		return 0;
	st->m_len = 0;
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg)
		return 0;
	mm = 0;
	bpf_probe_read(&mm, 8, (void *)(bpf_get_current_task() + cfg->vma.task_mm));
	e = 0;
	if (mm)
		bpf_probe_read(&e, 8, (void *)(mm + cfg->vma.mm_mmap));
	/* a root that is no node: no VMA, or only one at address 0 */
	if ((e & 3) != 2 || e <= 4096)
		return 0;
	e &= ~2ULL;
	for (level = 0; level < CFI_MT_LEVELS; level++) {
		__u64 node = e & ~255ULL, type = (e >> 3) & 15, npiv, slot, end, off = 0;

		if (type == CFI_MT_ARANGE) {
			npiv = 9;
			slot = 10;
		} else if (type == CFI_MT_LEAF || type == CFI_MT_RANGE) {
			npiv = 15;
			slot = 16;
		} else {
			break;
		}
		if (bpf_probe_read(st->node, sizeof(st->node), (void *)node) ||
		    (st->node[0] & ~255ULL) == node)
			break;
		/* the slots in use: ma_data_end() (metadata byte, or pivots) */
		if (type == CFI_MT_ARANGE)
			end = st->node[30] & 255;
		else if (!st->node[15])
			end = st->node[31] & 255;
		else
			end = st->node[15] == max ? 14 : 15;
		/*
		 * The first pivot at or above pc, counted without a jump
		 * (pivots in use rise): each pivot below it adds one
		 */
#pragma unroll
		for (int i = 0; i < 15; i++) {
			__u64 p = st->node[1 + i];

			off += cfi_le(i + 1, end) & cfi_le(i + 1, npiv) &
			       ((p - pc) >> 63) & ((p >> 63) ^ 1);
		}
		if (off < end)
			max = st->node[(1 + off) & (CFI_MT_WORDS - 1)];
		e = st->node[(slot + off) & (CFI_MT_WORDS - 1)];
		if (type == CFI_MT_LEAF) {
			/* NULL: pc is in no mapping */
			if (!e)
				return 0;
			cfi_vma_read(cfg, e, &v);
			if (v.start <= pc && pc < v.end) {
				cfi_vma_take(st, &v);
				return 0;
			}
			break;
		}
	}
	st->busy |= 1;
	return 0;
}

/*
 * The rule for st->pc into st: SW_CFI_NONE where no row covers it.  vma:
 * a PC outside the process's list is looked up by its VMA (5.17+).
 */
static __always_inline void cfi_rule(struct sw_cfi_proc *proc, struct cfi_state *st,
				     const int vma, const int fresh)
{
	__u64 pc = st->pc - st->adj;
	struct sw_cfi_map *m;
	struct sw_cfi_row *r = NULL;

	st->kind = SW_CFI_NONE;
	if (pc - st->m_start >= st->m_len) {
		m = proc ? cfi_find_map(proc, pc, st->tgid, fresh) : NULL;
		if (m) {
			st->m_start = m->start;
			st->m_len = m->end - m->start;
			st->m_bias = m->bias;
			st->m_first = m->first;
			st->m_count = m->count;
			st->no_table |= m->first == SW_CFI_UNTABLED;
		} else if (vma == CFI_VMA_FIND) {
			cfi_vma_map(st, pc);
		} else if (vma == CFI_VMA_MT) {
			cfi_vma_map_mt(st, pc);
		} else {
			st->m_len = 0;
		}
	}
	if (pc - st->m_start < st->m_len && pc - st->m_bias < (1ULL << 32))
		r = cfi_hot_row(st->m_first, st->m_count, pc - st->m_bias, vma, fresh);
	if ((!r || r->kind == SW_CFI_NONE) && st->entry) {
		st->kind = SW_CFI_RSP;
		st->off = 8;
		st->rbp = 0;
		return;
	}
	if (!r)
		return;
	st->kind = r->kind;
	st->off = (__u64)r->cfa * 8;
	st->rbp = r->rbp;
}

/*
 * One frame: st moves to the caller.  Returns 0 to go on, else the
 * SW_STOP_* that ends the walk.
 */
static __always_inline int cfi_step(struct sw_cfi_proc *proc, struct cfi_state *st,
				    const int vma, const int fresh)
{
	__u64 sp = st->sp, bp, cfa, kind, lost, saved, ra = 0;
	long err = 0;

	cfi_rule(proc, st, vma, fresh);
	st->entry = 0;
	kind = st->kind;
	if (kind == SW_CFI_END)
		return SW_STOP_END;
	/*
	 * Reads go through the BPF stack: 4.9's bpf_probe_read writes
	 * nowhere else
	 */
	if (kind == SW_CFI_SIGNAL) {
		int ok = 1;

		/* the interrupted registers, in the ucontext at sp */
		st->pc = cfi_read(sp + SW_CFI_SIG_RIP, &ok);
		st->bp = cfi_read(sp + SW_CFI_SIG_RBP, &ok);
		st->sp = cfi_read(sp + SW_CFI_SIG_RSP, &ok);
		err = !ok;
		st->bp_ok = 1;
		st->bp_at = 0;
		st->adj = 0;
		st->how = SW_HOW_SIGNAL;
		return err ? SW_STOP_UNREADABLE : 0;
	}
	/* a CFA from %rbp, or a frame-pointer step: %rbp read now */
	if (st->bp_at && st->bp_ok && (kind == SW_CFI_RBP || kind == SW_CFI_NONE)) {
		int ok = 1;

		st->bp = cfi_read(st->bp_at, &ok);
		if (!ok)
			return SW_STOP_UNREADABLE;
		st->bp_at = 0;
	}
	bp = st->bp;
	if (kind == SW_CFI_RSP || kind == SW_CFI_PLT ||
	    (kind == SW_CFI_RBP && st->bp_ok)) {
		st->from_bp = kind == SW_CFI_RBP;
		/* a PLT entry past its push: one more word (bpf/cfi.h) */
		st->off += 8 & -(__u64)(kind == SW_CFI_PLT &&
					(st->pc & 15) >= (__u64)(__u8)st->rbp);
		if (kind == SW_CFI_PLT)
			st->rbp = 0;
		st->how = SW_HOW_CFI;
	} else if (kind == SW_CFI_UNKNOWN) {
		/*
		 * A rule the walk cannot follow (a CFA from %rbx, as in ld.so's
		 * _dl_runtime_resolve, or an expression): a frame-pointer step
		 * there would skip or invent callers
		 */
		return SW_STOP_CUT;
	} else if (st->bp_ok) {
		/*
		 * no rule here: a frame-pointer step, where a 0 %rbp marks
		 * the outermost frame (_start clears it)
		 */
		if (!bp)
			return SW_STOP_END;
		st->from_bp = 1;
		st->off = 16;
		st->rbp = -2;
		st->how = SW_HOW_FP;
	} else {
		return SW_STOP_UNREADABLE;
	}
	cfa = cfi_pick(st->from_bp, bp, sp) + st->off;
	/*
	 * A caller's frame lies above its callee's: a CFA at or below this
	 * frame's %rsp comes from a stale %rbp or a corrupt stack, and would
	 * lead to a wrong frame or a loop (a signal frame, above, may move
	 * anywhere: an alternate signal stack)
	 */
	if (cfa <= sp)
		return SW_STOP_CUT;
	if (st->rbp == -2) {
		/*
		 * %rbp pushed first, as every frame-pointer prologue does: the
		 * return address and the caller's %rbp in one read
		 */
		__u64 w[2] = {};

		err |= bpf_probe_read(w, sizeof(w), (void *)(cfa - 16));
		ra = w[1];
		st->bp = w[0];
		st->bp_at = 0;
		st->bp_ok = 1;
	} else {
		err |= bpf_probe_read(&ra, 8, (void *)(cfa - 8));
		/* the caller's %rbp: where it was saved (rbp < 0), or kept */
		saved = (__u64)st->rbp >> 63;
		lost = st->rbp == SW_CFI_RBP_LOST;
		st->bp_at = cfi_pick(saved, cfa + st->rbp * 8, st->bp_at);
		st->bp_ok = cfi_pick(lost, 0, cfi_pick(saved, 1, st->bp_ok));
	}
	st->sp = cfa;
	st->pc = ra;
	st->adj = 1;
	if (err)
		return SW_STOP_UNREADABLE;
	/* a 0 return address ends a stack (see walker_frames_fixup) */
	if (!ra)
		return SW_STOP_END;
	if (ra >= SW_CFI_USER_MAX)
		return SW_STOP_UNREADABLE;
	return 0;
}

/* cfi_user_regs(): what the event's user registers are */
#define CFI_REGS_NONE	0	/* a kernel thread, an IRQ stack */
#define CFI_REGS_64	1
#define CFI_REGS_IA32	2	/* a 32-bit task: its CFI is not ours to walk */

/*
 * The user registers of the event: a uprobe's ctx, or those saved at the
 * top of the task's kernel stack for a kprobe or tracepoint.  Any address
 * on that stack finds them: task_struct.stack where BTF says where that
 * is, else kstack (%rsp, or the program's frame pointer).
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
			return CFI_REGS_IA32;
		*pc = PT_REGS_IP(r);
		*sp = PT_REGS_SP(r);
		*bp = PT_REGS_FP(r);
		return CFI_REGS_64;
	}
	if (cfg->task_stack_off) {
		__u64 task = bpf_get_current_task();

		kstack = cfi_read(task + cfg->task_stack_off, &ok);
	}
	regs = sw_user_regs(cfg, kstack);
	/* the low 16 bits: FRED keeps more in the slot's upper bytes */
	cs = cfi_read(regs + SW_PT_REGS_CS, &ok) & 0xffff;
	if (ok && cs == SW_USER32_CS)
		return CFI_REGS_IA32;
	if (!ok || cs != SW_USER_CS)
		return CFI_REGS_NONE;
	*pc = cfi_read(regs + SW_PT_REGS_IP, &ok);
	*sp = cfi_read(regs + SW_PT_REGS_SP, &ok);
	*bp = cfi_read(regs + SW_PT_REGS_BP, &ok);
	return ok ? CFI_REGS_64 : CFI_REGS_NONE;
}

#endif /* SW_CFI_WALK_BPF_H */
