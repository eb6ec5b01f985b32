// SPDX-License-Identifier: MIT
/*
 * Call frame information (DWARF 5, section 6.4; .eh_frame as the Linux
 * Standard Base describes it) run into bpf/cfi.h's rows.  Of all the
 * registers, only those that decide the caller's frame on x86_64 are
 * followed: the CFA, %rbp, %rsp and the return address.
 */
#include "cfi.h"
#include "debuginfo.h"
#include "elf_file.h"
#include "vec.h"

#include <errno.h>
#include <gelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DW_CFA_remember_state nesting; compilers use one or two levels */
#define CFI_STATE_DEPTH	32
/* distinct CIEs of a section; compilers emit a handful */
#define CFI_MAX_CIES	65536
/* a compressed .debug_frame is inflated to at most this, room or not */
#define CFI_SECTION_MAX	(64ULL << 20)

#define REG_RBP	6
#define REG_RSP	7
#define REG_RIP	16

/* DWARF expression opcodes the two recognised expressions are made of */
#define OP_DEREF	0x06
#define OP_AND		0x1a
#define OP_PLUS		0x22
#define OP_SHL		0x24
#define OP_GE		0x2a
#define OP_LIT0		0x30
#define OP_LIT3		0x33
#define OP_LIT15	0x3f
#define OP_BREG7	0x77	/* %rsp + offset */
#define OP_BREG16	0x80	/* %rip + offset */

/* A reader over one record: past its end, every read fails and says so. */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_uint(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

/* LEB128 of at most 10 bytes; *neg: its sign bit, for sleb. */
static uint64_t rd_leb(struct rd *r, bool *neg)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (!r->bad && r->p < r->end && shift < 70) {
		uint8_t b = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (neg)
				*neg = shift < 64 && (b & 0x40);
			return v;
		}
	}
	r->bad = true;
	return 0;
}

static uint64_t rd_uleb(struct rd *r)
{
	return rd_leb(r, NULL);
}

static int64_t rd_sleb(struct rd *r)
{
	const uint8_t *at = r->p;
	bool neg = false;
	uint64_t v = rd_leb(r, &neg);
	unsigned int bits = 7 * (unsigned int)(r->p - at);

	if (neg)
		v |= ~0ULL << bits;
	return (int64_t)v;
}

/* A block: a ULEB128 length, then that many bytes. */
static const uint8_t *rd_block(struct rd *r, size_t *len)
{
	uint64_t n = rd_uleb(r);
	const uint8_t *p = r->p;

	*len = 0;
	if (r->bad || n > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	*len = n;
	return p;
}

/* Where a section's bytes are in memory and in the ELF address space. */
struct place {
	const uint8_t *data;
	uint64_t addr;
};

/*
 * A pointer of encoding enc.  Only absolute and pc-relative values are
 * placed: x86_64 compilers emit nothing else in CIEs and FDEs, and no
 * unwinder agrees on a base for datarel or textrel there, so an FDE using
 * them is skipped rather than guessed.  Returns false then, or when the
 * bytes run out.
 */
static bool rd_ptr(struct rd *r, uint8_t enc, uint8_t addr_size,
		   const struct place *pl, uint64_t *out)
{
	uint64_t at = pl->addr + (uint64_t)(r->p - pl->data), v;

	switch (enc & 0x0f) {
	case 0x00: v = rd_uint(r, addr_size); break;		/* absptr */
	case 0x01: v = rd_uleb(r); break;
	case 0x02: v = rd_uint(r, 2); break;
	case 0x03: v = rd_uint(r, 4); break;
	case 0x04: v = rd_uint(r, 8); break;
	case 0x09: v = (uint64_t)rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_uint(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_uint(r, 4); break;
	case 0x0c: v = rd_uint(r, 8); break;
	default: return false;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += at; break;				/* pcrel */
	default: return false;
	}
	/* indirect: the value is where the pointer is, not the pointer */
	if (enc & 0x80)
		return false;
	*out = v;
	return !r->bad;
}

enum rule_how {
	R_UNSPEC,	/* no rule: callee-saved registers keep their value */
	R_SAME,
	R_UNDEF,
	R_OFFSET,	/* saved at CFA + off */
	R_VAL_OFFSET,
	R_REG,
	R_EXPR,
	R_VAL_EXPR,
};

struct rule {
	uint8_t how;
	int64_t off;
	const uint8_t *expr;
	size_t len;
};

enum { CFA_UNDEF, CFA_REG, CFA_EXPR };

struct state {
	uint8_t cfa_how;
	uint64_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr;
	size_t cfa_len;
	struct rule rbp, rsp, ra;
};

struct cie {
	uint64_t off;		/* in the section: what FDEs name */
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc, addr_size;
	bool z;			/* augmentation data follows in FDEs */
	bool signal;		/* 'S': a signal trampoline's frames */
	bool usable;		/* FDE ranges can be read */
	bool rules;		/* and its rules: x86_64's return column, valid */
	struct state init;	/* after its initial instructions */
};

/* One FDE's rows, in the build's row array. */
struct chunk {
	uint64_t start, end;
	uint32_t first, n;	/* the build holds under 2^32 rows: push_raw */
	uint32_t seq;		/* order found: ties keep it */
	int prio;		/* 0 .eh_frame, 1 .debug_frame: used where 0 is not */
};

struct build {
	struct sw_cfi_row *raw;	/* pc: from its FDE's start (FDEs are < 4 GiB) */
	size_t nr_raw, cap_raw;
	struct chunk *chunks;
	size_t nr_chunks, cap_chunks;
	size_t nr_fdes, nr_skipped, nr_overlaps;
	int err;		/* -ENOMEM, -E2BIG: the first one stays */
};

/*
 * Rows before merging across FDEs: each FDE adds at most one row (its end)
 * to the final table, so more than twice what a table holds cannot fit.
 */
static bool push_raw(struct build *b, uint32_t pc, const struct sw_cfi_row *r)
{
	if (b->err)
		return false;
	if (b->nr_raw >= 2 * (size_t)SW_CFI_TABLE_MAX) {
		b->err = -E2BIG;
		return false;
	}
	if (VEC_GROW(b->raw, b->nr_raw, b->cap_raw, 4096)) {
		b->err = -ENOMEM;
		return false;
	}
	b->raw[b->nr_raw] = *r;
	b->raw[b->nr_raw].pc = pc;
	b->nr_raw++;
	return true;
}

static bool same_rule(const struct sw_cfi_row *a, const struct sw_cfi_row *b)
{
	return a->kind == b->kind && a->cfa == b->cfa && a->rbp == b->rbp;
}

/* breg7 off [deref]: %rsp + off, or the word there. */
static bool is_rsp_expr(const uint8_t *e, size_t len, int64_t off, bool deref)
{
	struct rd r = { e, e + len, false };

	if (!e || rd_uint(&r, 1) != OP_BREG7 || rd_sleb(&r) != off ||
	    (deref && rd_uint(&r, 1) != OP_DEREF))
		return false;
	return !r.bad && r.p == r.end;
}

/*
 * The CFA of a PLT entry as binutils describes it:
 * breg7 A; breg16 0; lit15; and; litT; ge; lit3; shl; plus, that is
 * %rsp + A + ((%rip & 15) >= T) * 8: T is the offset of the entry's push.
 */
static bool is_plt_expr(const uint8_t *e, size_t len, int64_t *a, unsigned *t)
{
	struct rd r = { e, e + len, false };
	uint64_t lit;

	if (!e || rd_uint(&r, 1) != OP_BREG7)
		return false;
	*a = rd_sleb(&r);
	if (rd_uint(&r, 1) != OP_BREG16 || rd_sleb(&r) != 0 ||
	    rd_uint(&r, 1) != OP_LIT15 || rd_uint(&r, 1) != OP_AND)
		return false;
	lit = rd_uint(&r, 1);
	if (lit < OP_LIT0 || lit > OP_LIT15 || rd_uint(&r, 1) != OP_GE ||
	    rd_uint(&r, 1) != OP_LIT3 || rd_uint(&r, 1) != OP_SHL ||
	    rd_uint(&r, 1) != OP_PLUS)
		return false;
	*t = lit - OP_LIT0;
	return !r.bad && r.p == r.end;
}

/* An offset in bytes as a row's 8-byte units: false when it is none. */
static bool units(int64_t off, uint16_t *out)
{
	if (off < 0 || off % 8 || off / 8 > UINT16_MAX)
		return false;
	*out = off / 8;
	return true;
}

/*
 * The row for a state.  Only what a walker can follow with %rsp, %rbp and
 * memory reads becomes a rule; the rest is SW_CFI_UNKNOWN.
 */
static struct sw_cfi_row classify(const struct state *s, const struct cie *c)
{
	struct sw_cfi_row row = { .kind = SW_CFI_UNKNOWN };
	const struct rule *bp = &s->rbp;
	int64_t a;
	unsigned t;

	/* glibc's __restore_rt: every register from the ucontext at %rsp */
	if (c->signal && s->cfa_how == CFA_EXPR &&
	    is_rsp_expr(s->cfa_expr, s->cfa_len, SW_CFI_SIG_RSP, true) &&
	    s->ra.how == R_EXPR &&
	    is_rsp_expr(s->ra.expr, s->ra.len, SW_CFI_SIG_RIP, false) &&
	    bp->how == R_EXPR &&
	    is_rsp_expr(bp->expr, bp->len, SW_CFI_SIG_RBP, false)) {
		row.kind = SW_CFI_SIGNAL;
		return row;
	}
	if (s->ra.how == R_UNDEF) {
		row.kind = SW_CFI_END;
		return row;
	}
	/* the caller's %rsp is the CFA, unless a rule says otherwise */
	if (s->rsp.how != R_UNSPEC || s->ra.how != R_OFFSET || s->ra.off != -8)
		return row;
	if (s->cfa_how == CFA_REG && (s->cfa_reg == REG_RSP ||
				      s->cfa_reg == REG_RBP)) {
		if (!units(s->cfa_off, &row.cfa))
			return row;
		row.kind = s->cfa_reg == REG_RSP ? SW_CFI_RSP : SW_CFI_RBP;
	} else if (s->cfa_how == CFA_EXPR &&
		   is_plt_expr(s->cfa_expr, s->cfa_len, &a, &t)) {
		if (!units(a, &row.cfa) || (bp->how != R_UNSPEC &&
					    bp->how != R_SAME))
			return row;
		row.kind = SW_CFI_PLT;
		row.rbp = t;
		return row;
	} else {
		return row;
	}
	if (bp->how == R_UNSPEC || bp->how == R_SAME)
		row.rbp = 0;
	else if (bp->how == R_OFFSET && bp->off < 0 && bp->off % 8 == 0 &&
		 bp->off >= -128 * 8)
		row.rbp = bp->off / 8;
	else
		row.rbp = SW_CFI_RBP_LOST;
	return row;
}

/* The FDE being run: where its rows go. */
struct fde_out {
	struct build *b;
	size_t first;		/* its first row in b->raw */
	uint64_t start, end;
};

/* The rule from loc on; rows past the FDE's end are not its own. */
static void put(struct fde_out *o, uint64_t loc, struct sw_cfi_row row)
{
	struct build *b = o->b;
	size_t n = b->nr_raw - o->first;
	uint32_t at = (uint32_t)(loc - o->start);	/* start <= loc < end */

	if (loc >= o->end)
		return;
	if (n && b->raw[b->nr_raw - 1].pc == at) {
		/* an advance of 0: the later state wins */
		b->nr_raw--;
		n--;
	}
	if (n && same_rule(&b->raw[b->nr_raw - 1], &row))
		return;
	push_raw(b, at, &row);
}

static void emit(struct fde_out *o, uint64_t loc, const struct state *s,
		 const struct cie *c)
{
	put(o, loc, classify(s, c));
}

struct exec {
	const struct cie *cie;
	const struct state *init;	/* NULL while running the CIE's own */
	const struct place *pl;
	struct state stack[CFI_STATE_DEPTH];
	size_t depth;
};

/* Where a followed register's rule is in struct state; 0 for any other. */
static size_t rule_at(uint64_t reg)
{
	switch (reg) {
	case REG_RBP: return offsetof(struct state, rbp);
	case REG_RSP: return offsetof(struct state, rsp);
	case REG_RIP: return offsetof(struct state, ra);
	default: return 0;
	}
}

static struct rule *reg_rule(struct state *s, uint64_t reg)
{
	size_t at = rule_at(reg);

	return at ? (struct rule *)((char *)s + at) : NULL;
}

static void set_rule(struct state *s, uint64_t reg, uint8_t how, int64_t off,
		     const uint8_t *expr, size_t len)
{
	struct rule *r = reg_rule(s, reg);

	if (r)
		*r = (struct rule){ how, off, expr, len };
}

static int64_t factored(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align);
}

/*
 * Run instructions from r over *s; with o, each advance emits the state
 * reached.  Returns 0 at their end (or past the FDE's), -EINVAL at one
 * that is malformed, unknown or out of place.
 */
static int run(struct exec *x, struct state *s, struct rd *r, uint64_t *loc,
	       struct fde_out *o)
{
	const struct cie *c = x->cie;

	while (r->p < r->end) {
		uint8_t op = (uint8_t)rd_uint(r, 1);
		uint64_t reg = op & 0x3f, delta = 0, to;
		const uint8_t *e;
		size_t len;
		int64_t off;

		switch (op >> 6) {
		case 1:			/* DW_CFA_advance_loc */
			delta = reg;
			goto advance;
		case 2:			/* DW_CFA_offset */
			set_rule(s, reg, R_OFFSET, factored(rd_uleb(r), c->data_align),
				 NULL, 0);
			goto next;
		case 3:			/* DW_CFA_restore */
			goto restore;
		}
		switch (op) {
		case 0x00:		/* nop */
			break;
		case 0x01:		/* set_loc */
			if (!o || !rd_ptr(r, c->fde_enc, c->addr_size, x->pl, &to) ||
			    to < *loc)
				return -EINVAL;
			emit(o, *loc, s, c);
			*loc = to;
			if (to >= o->end)
				return 0;
			break;
		case 0x02: delta = rd_uint(r, 1); goto advance;
		case 0x03: delta = rd_uint(r, 2); goto advance;
		case 0x04: delta = rd_uint(r, 4); goto advance;
		case 0x05:		/* offset_extended */
			reg = rd_uleb(r);
			set_rule(s, reg, R_OFFSET, factored(rd_uleb(r), c->data_align),
				 NULL, 0);
			break;
		case 0x06:		/* restore_extended */
			reg = rd_uleb(r);
			goto restore;
		case 0x07:		/* undefined */
			set_rule(s, rd_uleb(r), R_UNDEF, 0, NULL, 0);
			break;
		case 0x08:		/* same_value */
			set_rule(s, rd_uleb(r), R_SAME, 0, NULL, 0);
			break;
		case 0x09:		/* register */
			reg = rd_uleb(r);
			set_rule(s, reg, R_REG, (int64_t)rd_uleb(r), NULL, 0);
			break;
		case 0x0a:		/* remember_state */
			if (x->depth == CFI_STATE_DEPTH)
				return -EINVAL;
			x->stack[x->depth++] = *s;
			break;
		case 0x0b:		/* restore_state: the CFA comes back too */
			if (!x->depth)
				return -EINVAL;
			*s = x->stack[--x->depth];
			break;
		case 0x0c:		/* def_cfa */
			s->cfa_how = CFA_REG;
			s->cfa_reg = rd_uleb(r);
			s->cfa_off = (int64_t)rd_uleb(r);
			break;
		case 0x0d:		/* def_cfa_register */
			if (s->cfa_how != CFA_REG)
				return -EINVAL;
			s->cfa_reg = rd_uleb(r);
			break;
		case 0x0e:		/* def_cfa_offset */
			if (s->cfa_how != CFA_REG)
				return -EINVAL;
			s->cfa_off = (int64_t)rd_uleb(r);
			break;
		case 0x0f:		/* def_cfa_expression */
			e = rd_block(r, &len);
			s->cfa_how = CFA_EXPR;
			s->cfa_expr = e;
			s->cfa_len = len;
			break;
		case 0x10:		/* expression */
		case 0x16:		/* val_expression */
			reg = rd_uleb(r);
			e = rd_block(r, &len);
			set_rule(s, reg, op == 0x10 ? R_EXPR : R_VAL_EXPR, 0, e, len);
			break;
		case 0x11:		/* offset_extended_sf */
		case 0x15:		/* val_offset_sf */
			reg = rd_uleb(r);
			off = factored((uint64_t)rd_sleb(r), c->data_align);
			set_rule(s, reg, op == 0x11 ? R_OFFSET : R_VAL_OFFSET, off,
				 NULL, 0);
			break;
		case 0x12:		/* def_cfa_sf */
			s->cfa_how = CFA_REG;
			s->cfa_reg = rd_uleb(r);
			s->cfa_off = factored((uint64_t)rd_sleb(r), c->data_align);
			break;
		case 0x13:		/* def_cfa_offset_sf */
			if (s->cfa_how != CFA_REG)
				return -EINVAL;
			s->cfa_off = factored((uint64_t)rd_sleb(r), c->data_align);
			break;
		case 0x14:		/* val_offset */
			reg = rd_uleb(r);
			set_rule(s, reg, R_VAL_OFFSET,
				 factored(rd_uleb(r), c->data_align), NULL, 0);
			break;
		case 0x2e:		/* GNU_args_size: no bearing on the CFA */
			rd_uleb(r);
			break;
		case 0x2f:		/* GNU_negative_offset_extended */
			reg = rd_uleb(r);
			/* negated unsigned: -INT64_MIN is no int64_t */
			set_rule(s, reg, R_OFFSET,
				 factored(-rd_uleb(r), c->data_align), NULL, 0);
			break;
		default:
			return -EINVAL;
		}
		goto next;
advance:
		if (!o || (c->code_align && delta > UINT64_MAX / c->code_align))
			return -EINVAL;
		delta *= c->code_align;
		if (r->bad || delta > UINT64_MAX - *loc)
			return -EINVAL;
		emit(o, *loc, s, c);
		*loc += delta;
		if (*loc >= o->end)
			return 0;
		goto next;
restore:
		if (!x->init)
			return -EINVAL;
		if (rule_at(reg))
			memcpy((char *)s + rule_at(reg), (const char *)x->init +
			       rule_at(reg), sizeof(struct rule));
next:
		if (r->bad)
			return -EINVAL;
	}
	return 0;
}

/* One CIE or FDE: its bytes after the length field. */
struct rec {
	const uint8_t *body, *end;
	bool dwarf64;
};

/*
 * The record at off: 1, or 0 at the section's end or terminator, or -1
 * when its length cannot be right (nothing after it can be found).
 */
static int read_rec(const struct cfi_input *in, size_t off, struct rec *rec)
{
	struct rd r = { in->data + off, in->data + in->size, false };
	uint64_t len;

	if (off >= in->size)
		return 0;
	len = rd_uint(&r, 4);
	if (r.bad || !len)
		return r.bad ? -1 : 0;
	rec->dwarf64 = len == 0xffffffff;
	if (rec->dwarf64)
		len = rd_uint(&r, 8);
	else if (len >= 0xfffffff0)
		return -1;
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return -1;
	rec->body = r.p;
	rec->end = r.p + len;
	return 1;
}

/* The CIE id or pointer; .eh_frame keeps it 4 bytes even in 64-bit records. */
static uint64_t rec_id(const struct cfi_input *in, const struct rec *rec,
		       struct rd *r)
{
	*r = (struct rd){ rec->body, rec->end, false };
	return rd_uint(r, !in->debug_frame || !rec->dwarf64 ? 4 : 8);
}

static bool is_cie_id(const struct cfi_input *in, const struct rec *rec,
		      uint64_t id)
{
	if (!in->debug_frame)
		return id == 0;
	return id == (rec->dwarf64 ? UINT64_MAX : 0xffffffffULL);
}

/* The augmentation: what FDEs carry, how their pointers are encoded. */
static bool read_augmentation(struct rd *r, const char *aug, struct cie *c,
			      const struct place *pl)
{
	const uint8_t *data_end;
	uint64_t skip;
	size_t len;

	c->fde_enc = 0;
	if (*aug != 'z') {
		/*
		 * Without 'z' nothing says how long the data is: only letters
		 * that have none can be passed over (GNU as writes "S" in
		 * .debug_frame); "eh" and the like are a layout of the past.
		 */
		c->signal = strchr(aug, 'S');
		return strspn(aug, "S") == strlen(aug);
	}
	c->z = true;
	rd_block(r, &len);
	if (r->bad)
		return false;
	data_end = r->p;
	r->p -= len;
	for (aug++; *aug; aug++) {
		uint8_t enc;

		switch (*aug) {
		case 'L':
			rd_uint(r, 1);
			break;
		case 'R':
			c->fde_enc = (uint8_t)rd_uint(r, 1);
			break;
		case 'P':
			enc = (uint8_t)rd_uint(r, 1);
			/* only its size matters: the routine is not called */
			if (!rd_ptr(r, enc & 0x0f, c->addr_size, pl, &skip))
				return false;
			break;
		case 'S':
			c->signal = true;
			break;
		case 'B':	/* AArch64 BTI: no data */
		case 'G':	/* AArch64 MTE: no data */
			break;
		default:
			return false;
		}
		if (r->bad || r->p > data_end)
			return false;
	}
	r->p = data_end;
	return true;
}

static void parse_cie(const struct cfi_input *in, const struct rec *rec,
		      struct cie *c)
{
	const struct place pl = { in->data, in->addr };
	struct exec *x;
	struct rd r;
	uint64_t version, ra, loc = 0;
	const char *aug;
	size_t alen;

	rec_id(in, rec, &r);
	version = rd_uint(&r, 1);
	if (version != 1 && version != 3 && !(in->debug_frame && version == 4))
		return;
	aug = (const char *)r.p;
	alen = strnlen(aug, r.end - r.p);
	if (alen == (size_t)(r.end - r.p))
		return;
	r.p += alen + 1;
	c->addr_size = 8;
	if (version == 4) {
		c->addr_size = (uint8_t)rd_uint(&r, 1);
		/* segmented addresses: not x86_64's */
		if (rd_uint(&r, 1) || (c->addr_size != 4 && c->addr_size != 8))
			return;
	}
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	ra = version == 1 ? rd_uint(&r, 1) : rd_uleb(&r);
	if (r.bad || !read_augmentation(&r, aug, c, &pl) || r.bad)
		return;
	c->usable = true;
	if (ra != REG_RIP)
		return;
	x = calloc(1, sizeof(*x));
	if (!x)
		return;
	x->cie = c;
	x->pl = &pl;
	c->rules = !run(x, &c->init, &r, &loc, NULL);
	free(x);
}

struct cies {
	struct cie *v;
	size_t n, cap;
};

/* Every CIE of the section, in order of offset. */
static int read_cies(const struct cfi_input *in, struct cies *cs)
{
	size_t off = 0;
	struct rec rec;

	while (read_rec(in, off, &rec) > 0) {
		struct rd r;
		struct cie *c;

		if (is_cie_id(in, &rec, rec_id(in, &rec, &r)) && !r.bad &&
		    cs->n < CFI_MAX_CIES) {
			if (VEC_GROW(cs->v, cs->n, cs->cap, 16))
				return -ENOMEM;
			c = &cs->v[cs->n++];
			memset(c, 0, sizeof(*c));
			c->off = off;
			parse_cie(in, &rec, c);
		}
		off = rec.end - in->data;
	}
	return 0;
}

static const struct cie *find_cie(const struct cies *cs, uint64_t off)
{
	size_t lo = 0, hi = cs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cs->v[mid].off == off)
			return &cs->v[mid];
		if (cs->v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool in_code(const struct cfi_input *in, uint64_t start, uint64_t end)
{
	if (!in->code)
		return true;
	for (size_t i = 0; i < in->nr_code; i++) {
		const struct cfi_seg *s = &in->code[i];

		if (start >= s->vaddr && end <= s->vaddr + s->memsz)
			return true;
	}
	return false;
}

/* One FDE: its range, then its rows from its CIE's state on. */
static void parse_fde(struct build *b, const struct cfi_input *in,
		      const struct cies *cs, struct exec *x, const struct rec *rec,
		      uint64_t id_at, uint64_t id, int prio)
{
	const struct place *pl = x->pl;
	const struct cie *c;
	struct fde_out o = { b, b->nr_raw, 0, 0 };
	uint64_t start, range, cie_off, loc;
	struct state s;
	struct chunk *ch;
	struct rd r;
	size_t len;
	int err;

	rec_id(in, rec, &r);
	if (in->debug_frame)
		cie_off = id;
	else if (id <= id_at)
		cie_off = id_at - id;
	else
		cie_off = UINT64_MAX;
	c = find_cie(cs, cie_off);
	if (!c || !c->usable ||
	    !rd_ptr(&r, c->fde_enc, c->addr_size, pl, &start) ||
	    !rd_ptr(&r, c->fde_enc & 0x0f, c->addr_size, pl, &range) ||
	    (c->z && !rd_block(&r, &len)) || range > UINT64_MAX - start) {
		b->nr_skipped++;
		return;
	}
	if (!range)
		return;		/* padding, or a function the linker dropped */
	if (!in_code(in, start, start + range)) {
		b->nr_skipped++;
		return;
	}
	if (range > UINT32_MAX) {
		b->err = -ERANGE;	/* no table's row PCs reach across it */
		return;
	}
	o.start = start;
	o.end = start + range;
	loc = start;
	s = c->init;
	err = -EINVAL;
	if (c->rules) {
		x->cie = c;
		x->init = &c->init;
		x->depth = 0;
		err = run(x, &s, &r, &loc, &o);
	}
	if (err)
		put(&o, loc, (struct sw_cfi_row){ .kind = SW_CFI_UNKNOWN });
	else
		emit(&o, loc, &s, c);
	if (b->err)
		return;
	if (VEC_GROW(b->chunks, b->nr_chunks, b->cap_chunks, 1024)) {
		b->err = -ENOMEM;
		return;
	}
	ch = &b->chunks[b->nr_chunks];
	*ch = (struct chunk){ start, o.end, (uint32_t)o.first,
			      (uint32_t)(b->nr_raw - o.first),
			      (uint32_t)b->nr_chunks, prio };
	b->nr_chunks++;
	b->nr_fdes++;
}

static int parse_section(struct build *b, const struct cfi_input *in, int prio)
{
	const struct place pl = { in->data, in->addr };
	struct cies cs = { NULL, 0, 0 };
	struct exec *x = calloc(1, sizeof(*x));
	size_t off = 0;
	struct rec rec;
	int err = x ? read_cies(in, &cs) : -ENOMEM;

	if (x)
		x->pl = &pl;
	while (!err && !b->err && read_rec(in, off, &rec) > 0) {
		struct rd r;
		uint64_t id = rec_id(in, &rec, &r);

		if (!r.bad && !is_cie_id(in, &rec, id))
			parse_fde(b, in, &cs, x, &rec, rec.body - in->data, id,
				  prio);
		off = rec.end - in->data;
	}
	free(x);
	free(cs.v);
	return err ? err : b->err;
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * A .debug_frame FDE is used only where no .eh_frame FDE is: an .eh_frame
 * one before it (by start) may reach into it, or one after may start
 * inside it.
 */
static void drop_shadowed(struct build *b)
{
	struct chunk *c = b->chunks;
	size_t n = b->nr_chunks, i;
	uint64_t reach = 0, next = UINT64_MAX;

	for (i = 0; i < n; i++) {
		if (!c[i].prio)
			reach = c[i].end > reach ? c[i].end : reach;
		else if (reach > c[i].start)
			c[i].n = 0;
	}
	for (i = n; i-- > 0;) {
		if (!c[i].prio)
			next = c[i].start;
		else if (next < c[i].end)
			c[i].n = 0;
	}
}

/* The rows being assembled: pc from base, which no row lies below. */
struct out {
	struct sw_cfi_row *v;
	size_t n, cap;
	uint64_t base;
};

static bool push_out(struct build *b, struct out *o, uint64_t pc,
		     const struct sw_cfi_row *r)
{
	if (b->err)
		return false;
	/* a table's row PCs are 32 bits from its first: code over 4 GiB is not */
	if (pc - o->base > UINT32_MAX) {
		b->err = -ERANGE;
		return false;
	}
	if (vec_reserve(&o->v, &o->cap, o->n, 1, sizeof(*o->v), 4096)) {
		b->err = -ENOMEM;
		return false;
	}
	o->v[o->n] = *r;
	o->v[o->n].pc = (uint32_t)(pc - o->base);
	o->n++;
	return true;
}

/*
 * The FDEs in address order, made one step function: a gap gets a
 * SW_CFI_NONE row, a range two FDEs claim SW_CFI_UNKNOWN (which one is
 * right cannot be told), equal neighbours one row.  Built in place as
 * the table's rows, 8 bytes each, from the first FDE's start.
 */
static int assemble(struct build *b, struct cfi_table *t)
{
	static const struct sw_cfi_row none = { .kind = SW_CFI_NONE };
	static const struct sw_cfi_row unknown = { .kind = SW_CFI_UNKNOWN };
	struct out o = { NULL, 0, 0, 0 };
	uint64_t covered = 0;
	bool have = false;
	size_t i, k;

	if (b->nr_chunks)
		qsort(b->chunks, b->nr_chunks, sizeof(*b->chunks), cmp_chunk);
	drop_shadowed(b);
	for (i = 0; i < b->nr_chunks && !b->err; i++) {
		const struct chunk *c = &b->chunks[i];
		const struct sw_cfi_row *rw = b->raw + c->first;

		if (!c->n)
			continue;
		if (!have || c->start >= covered) {
			if (!have)
				o.base = c->start;
			else if (c->start > covered)
				push_out(b, &o, covered, &none);
			for (k = 0; k < c->n; k++)
				push_out(b, &o, c->start + rw[k].pc, &rw[k]);
			covered = c->end;
			have = true;
			continue;
		}
		b->nr_overlaps++;
		while (o.n && o.v[o.n - 1].pc >= c->start - o.base)
			o.n--;
		push_out(b, &o, c->start, &unknown);
		if (c->end <= covered)
			continue;
		for (k = 0; k + 1 < c->n && c->start + rw[k + 1].pc <= covered; k++)
			;
		push_out(b, &o, covered, &rw[k]);
		for (k++; k < c->n; k++)
			push_out(b, &o, c->start + rw[k].pc, &rw[k]);
		covered = c->end;
	}
	if (have)
		push_out(b, &o, covered, &none);
	if (b->err) {
		free(o.v);
		return b->err;
	}

	/* one row per change of rule */
	for (i = 0, k = 0; i < o.n; i++) {
		if (k && o.v[k - 1].pc == o.v[i].pc)
			k--;
		if (k && same_rule(&o.v[k - 1], &o.v[i]))
			continue;
		o.v[k++] = o.v[i];
	}
	if (k > SW_CFI_TABLE_MAX) {
		free(o.v);
		return -E2BIG;
	}
	/* what is left over goes back: tables live as long as the run */
	t->rows = k ? realloc(o.v, k * sizeof(*o.v)) : NULL;
	if (!t->rows)
		t->rows = k ? o.v : calloc(1, sizeof(*t->rows));
	if (!k)
		free(o.v);
	if (!t->rows)
		return -ENOMEM;
	t->base = o.base;
	t->nr_rows = k;
	t->nr_fdes = b->nr_fdes;
	t->nr_skipped = b->nr_skipped;
	t->nr_overlaps = b->nr_overlaps;
	return 0;
}

static void build_free(struct build *b)
{
	free(b->raw);
	free(b->chunks);
}

void cfi_table_free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->segs);
	free(t);
}

/* Build from inputs (NULL data: absent); one table, or a negative errno. */
static int build_table(struct cfi_table **out, const struct cfi_input *eh,
		       const struct cfi_input *dbg)
{
	struct build b = {};
	struct cfi_table *t = calloc(1, sizeof(*t));
	int err = t ? 0 : -ENOMEM;

	*out = NULL;
	if (!err && eh && eh->data)
		err = parse_section(&b, eh, 0);
	if (!err && dbg && dbg->data)
		err = parse_section(&b, dbg, 1);
	if (!err)
		err = assemble(&b, t);
	build_free(&b);
	if (err) {
		cfi_table_free(t);
		return err;
	}
	*out = t;
	return 0;
}

int cfi_table_parse(struct cfi_table **out, const struct cfi_input *in)
{
	int err = build_table(out, in->debug_frame ? NULL : in,
			      in->debug_frame ? in : NULL);

	if (!err)
		(*out)->source = in->debug_frame ? ".debug_frame" : ".eh_frame";
	return err;
}

/*
 * The section's bytes: 1, or 0 when it has none.  A compressed one is
 * inflated only within room bytes: -ENOSPC when it would take more, with
 * *need the bytes it would.
 */
static int section_input(Elf *elf, const char *name, struct cfi_input *in,
			 size_t room, size_t *need)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_named(elf, name, &sh);
	Elf_Data *d;

	if (!scn || sh.sh_type == SHT_NOBITS)
		return 0;
	if (sh.sh_flags & SHF_COMPRESSED) {
		GElf_Chdr ch;

		if (!gelf_getchdr(scn, &ch))
			return 0;
		if (ch.ch_size > room || ch.ch_size > CFI_SECTION_MAX) {
			*need = ch.ch_size;
			return -ENOSPC;
		}
		if (elf_compress(scn, 0, 0) < 0)
			return 0;
	}
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return 0;
	in->data = d->d_buf;
	in->size = d->d_size;
	in->addr = sh.sh_addr;
	return 1;
}

/* The executable PT_LOAD segments: only code has frames. */
static int code_segs(Elf *elf, struct cfi_seg **segs, size_t *nr)
{
	size_t n, i;

	*nr = 0;
	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	*segs = calloc(n ? n : 1, sizeof(**segs));
	if (!*segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X))
			(*segs)[(*nr)++] = (struct cfi_seg){
				ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz };
	}
	return 0;
}

/* A table with no FDE is no table: -ENOENT, so the next source is tried. */
static int build_some(struct cfi_table **out, const struct cfi_input *eh,
		      const struct cfi_input *dbg)
{
	int err;

	if (!eh->data && !dbg->data)
		return -ENOENT;
	err = build_table(out, eh, dbg);
	if (!err && !(*out)->nr_fdes) {
		cfi_table_free(*out);
		*out = NULL;
		err = -ENOENT;
	}
	return err;
}

int cfi_table_from_elf(struct cfi_table **out, const struct elf_file *ef,
			const char *path, struct untrusted_skip *sk)
{
	size_t need;

	return cfi_table_from_elf_room(out, ef, path, sk, CFI_SECTION_MAX, &need);
}

int cfi_table_from_elf_room(struct cfi_table **out, const struct elf_file *ef,
			    const char *path, struct untrusted_skip *sk,
			    size_t room, size_t *need)
{
	struct cfi_input eh = {}, dbg = { .debug_frame = true };
	struct debuginfo di = {};
	Elf *elf = elf_file_elf(ef);
	const char *source = ".debug_frame";
	struct cfi_seg *segs;
	size_t nr_segs;
	GElf_Ehdr ehdr;
	int err, got;

	*out = NULL;
	*need = 0;
	if (!gelf_getehdr(elf, &ehdr) || ehdr.e_ident[EI_CLASS] != ELFCLASS64 ||
	    ehdr.e_machine != EM_X86_64)
		return -ENOTSUP;
	err = code_segs(elf, &segs, &nr_segs);
	if (err)
		return err;
	eh.code = dbg.code = segs;
	eh.nr_code = dbg.nr_code = nr_segs;
	got = section_input(elf, ".eh_frame", &eh, room, need);
	if (got > 0)
		source = ".eh_frame";
	if (got >= 0)
		got = section_input(elf, ".debug_frame", &dbg, room, need);
	if (got > 0 && eh.data)
		source = ".eh_frame and .debug_frame";
	err = got < 0 ? got : build_some(out, &eh, &dbg);
	if (err == -ENOENT && path && !dbg.data) {
		/* a stripped file's .debug_frame went with its debug info */
		const uint8_t *id;
		size_t idn = elf_file_build_id(ef, &id);

		got = 0;
		if (!debuginfo_find(&di, path, elf, id, idn, NULL, sk))
			for (int i = 0; i < DEBUGINFO_MAX && di.elf[i] && !got; i++)
				got = section_input(di.elf[i], ".debug_frame",
						    &dbg, room, need);
		source = "the debug file's .debug_frame";
		err = got < 0 ? got : build_some(out, &eh, &dbg);
	}
	debuginfo_free(&di);
	if (err) {
		free(segs);
		return err;
	}
	(*out)->segs = segs;
	(*out)->nr_segs = nr_segs;
	(*out)->source = source;
	return 0;
}

size_t cfi_rows_search(const struct sw_cfi_row *rows, size_t n, uint32_t rel)
{
	size_t base = 0, len = n;

	if (!n || n > SW_CFI_TABLE_MAX)
		return n;
	/* as bpf/cfi.h tells the walker: no branch on the data */
	for (int i = 0; i < SW_CFI_STEPS; i++) {
		size_t half = len >> 1;
		uint64_t le = (((uint64_t)rel - rows[base + half].pc) >> 63) ^ 1;

		base += half & -le;
		len -= half;
	}
	return rows[base].pc <= rel ? base : n;
}

const struct sw_cfi_row *cfi_table_find(const struct cfi_table *t,
					 uint64_t vaddr)
{
	size_t i;

	if (vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	i = cfi_rows_search(t->rows, t->nr_rows, vaddr - t->base);
	return i < t->nr_rows ? &t->rows[i] : NULL;
}

int cfi_table_bias(const struct cfi_table *t, uint64_t start, uint64_t pgoff,
		    uint64_t *bias)
{
	for (size_t i = 0; i < t->nr_segs; i++) {
		const struct cfi_seg *s = &t->segs[i];

		/* a segment's first page may start before its first byte */
		if (pgoff >= (s->offset & ~4095ULL) && pgoff < s->offset + s->filesz) {
			*bias = start - pgoff + s->offset - s->vaddr + t->base;
			return 0;
		}
	}
	return -ENOENT;
}

const char *cfi_kind_name(unsigned int kind)
{
	static const char *const names[SW_CFI_KIND_NR] = {
		[SW_CFI_NONE] = "none", [SW_CFI_RSP] = "rsp",
		[SW_CFI_RBP] = "rbp", [SW_CFI_PLT] = "plt",
		[SW_CFI_SIGNAL] = "signal", [SW_CFI_END] = "end",
		[SW_CFI_UNKNOWN] = "unknown",
	};

	return kind < SW_CFI_KIND_NR ? names[kind] : "?";
}

int cfi_row_rule(const struct sw_cfi_row *r, char *buf, size_t len)
{
	char rbp[32];

	switch (r->kind) {
	case SW_CFI_RSP:
	case SW_CFI_RBP:
		if (!r->rbp)
			snprintf(rbp, sizeof(rbp), "same");
		else if (r->rbp == SW_CFI_RBP_LOST)
			snprintf(rbp, sizeof(rbp), "lost");
		else
			snprintf(rbp, sizeof(rbp), "c%d", 8 * r->rbp);
		return snprintf(buf, len, "CFA=%s+%u rbp=%s ra=c-8",
				cfi_kind_name(r->kind), 8u * r->cfa, rbp);
	case SW_CFI_PLT:
		return snprintf(buf, len, "CFA=rsp+%u+8*((rip&15)>=%d) rbp=same ra=c-8",
				8u * r->cfa, r->rbp);
	case SW_CFI_SIGNAL:
		return snprintf(buf, len, "signal: rip=[rsp+%d] rsp=[rsp+%d] rbp=[rsp+%d]",
				SW_CFI_SIG_RIP, SW_CFI_SIG_RSP, SW_CFI_SIG_RBP);
	case SW_CFI_END:
		return snprintf(buf, len, "ra=undefined");
	case SW_CFI_NONE:
		return snprintf(buf, len, "no CFI");
	default:
		return snprintf(buf, len, "unknown");
	}
}

int cfi_row_explain(const struct sw_cfi_row *r, char *buf, size_t len)
{
	unsigned int cfa = 8u * r->cfa;
	char rbp[96];

	if (!r->rbp)
		snprintf(rbp, sizeof(rbp), "%%rbp still holds the caller's");
	else if (r->rbp == SW_CFI_RBP_LOST)
		snprintf(rbp, sizeof(rbp), "the caller's %%rbp cannot be found");
	else
		snprintf(rbp, sizeof(rbp), "the caller's %%rbp is saved at CFA%d",
			 8 * r->rbp);
	switch (r->kind) {
	case SW_CFI_RSP:
		if (cfa < 8)
			return snprintf(buf, len, "CFA = %%rsp+%u: not above "
					"%%rsp, so no return address lies "
					"below it: the walk ends here", cfa);
		if (cfa == 8)
			return snprintf(buf, len, "CFA = %%rsp+8: the return address "
					"is on top of the stack; %s", rbp);
		return snprintf(buf, len, "CFA = %%rsp+%u: the return address is "
				"at %%rsp+%u, above the %u bytes the function has "
				"pushed or reserved; %s", cfa, cfa - 8, cfa - 8, rbp);
	case SW_CFI_RBP:
		return snprintf(buf, len, "CFA = %%rbp+%u: the function keeps a "
				"frame pointer; the return address is at %%rbp+%u; %s",
				cfa, cfa - 8, rbp);
	case SW_CFI_PLT:
		return snprintf(buf, len, "a PLT entry: CFA = %%rsp+%u, or %%rsp+%u "
				"from byte %d of its 16 on, once it has pushed the "
				"entry's number; %%rbp still holds the caller's",
				cfa, cfa + 8, r->rbp);
	case SW_CFI_SIGNAL:
		return snprintf(buf, len, "a signal frame (__restore_rt): the "
				"kernel saved the interrupted registers in the "
				"ucontext at %%rsp: %%rip at +%d, %%rsp at +%d, %%rbp "
				"at +%d", SW_CFI_SIG_RIP, SW_CFI_SIG_RSP,
				SW_CFI_SIG_RBP);
	case SW_CFI_END:
		return snprintf(buf, len, "the return address is undefined: this "
				"is the outermost frame, the stack ends here");
	case SW_CFI_NONE:
		return snprintf(buf, len, "no CFI covers this address: only the "
				"frame pointer can lead on");
	default:
		return snprintf(buf, len, "the CFI here is a rule no row can hold "
				"(an expression, or a register other than %%rsp and "
				"%%rbp): the walk ends here rather than guess");
	}
}
