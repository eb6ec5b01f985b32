// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * The row elfutils' libdw calls for at an address: its frame there
 * (dwarf_cfi_addrframe), the CFA, %rip, %rbp and %rsp rules of it judged
 * by src/cfi.c's rules (bpf/cfi.h), from libdw's Dwarf_Op form of them
 * rather than from the bytes.  libdw runs the x86_64 ABI's initial rules
 * before a CIE's: %rbp is "same value" and %rsp the CFA (val_offset 0)
 * until the CFI says otherwise, which src/cfi.c's "unspecified" means too.
 *
 * Two rules would part them, and no binary compared has either: CFI that
 * itself says %rsp is the CFA (libdw cannot tell it from the ABI's rule;
 * src/cfi.c follows only an unspecified %rsp), and CFI silent about %rip
 * (libdw: undefined, the outermost frame; src/cfi.c: unknown).  So every
 * range must agree.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi_libdw.h"

#define REG_RBP	6
#define REG_RSP	7
#define REG_RIP	16

/* One file's ELF handle and, when it has them, its two kinds of CFI. */
struct dwfile {
	int fd;
	Elf *elf;
	Dwarf *dw;		/* owns .debug_frame's CFI */
};

struct oracle {
	struct dwfile main, dbg;
	Dwarf_CFI *eh, *df;
};

static int dwfile_open(struct dwfile *f, const char *path)
{
	f->dw = NULL;
	f->elf = NULL;
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return -errno;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	return f->elf ? 0 : -EINVAL;
}

static void dwfile_close(struct dwfile *f)
{
	if (f->dw)
		dwarf_end(f->dw);
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
}

/* A file without .eh_frame, or without DWARF, just lacks that CFI. */
static int oracle_open(struct oracle *o, const char *path, const char *dbg)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->main.fd = o->dbg.fd = -1;
	elf_version(EV_CURRENT);
	err = dwfile_open(&o->main, path);
	if (!err)
		err = dwfile_open(&o->dbg, dbg);
	if (err)
		return err;
	o->eh = dwarf_getcfi_elf(o->main.elf);
	o->dbg.dw = dwarf_begin_elf(o->dbg.elf, DWARF_C_READ, NULL);
	o->df = o->dbg.dw ? dwarf_getcfi(o->dbg.dw) : NULL;
	return 0;
}

static void oracle_close(struct oracle *o)
{
	if (o->eh)
		dwarf_cfi_end(o->eh);
	dwfile_close(&o->main);
	dwfile_close(&o->dbg);
}

/* The frame at pc (to free), .eh_frame's first; NULL where no FDE is. */
static Dwarf_Frame *frame_at(const struct oracle *o, uint64_t pc)
{
	Dwarf_Frame *f = NULL;

	if (o->eh && !dwarf_cfi_addrframe(o->eh, pc, &f))
		return f;
	if (o->df && !dwarf_cfi_addrframe(o->df, pc, &f))
		return f;
	return NULL;
}

/* ops[0, n) is exactly the listed atoms and numbers */
struct op {
	uint8_t atom;
	uint64_t number;
};

static bool ops_are(const Dwarf_Op *ops, size_t n, const struct op *want,
		    size_t nw)
{
	if (n != nw)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ops[i].atom != want[i].atom || ops[i].number != want[i].number)
			return false;
	return true;
}

/* A register's rule in libdw's terms. */
enum how { H_UNDEF, H_SAME, H_AT_CFA, H_VAL_CFA, H_OTHER, H_ERROR };

struct reg {
	enum how how;
	int64_t off;		/* H_AT_CFA, H_VAL_CFA: CFA + off */
	Dwarf_Op *ops;		/* H_OTHER: the expression, less the CFA */
	size_t n;
	bool val;		/* it is the value, not where it is */
};

static struct reg reg_rule(Dwarf_Frame *f, int regno, Dwarf_Op mem[3])
{
	struct reg r = { .how = H_OTHER };
	Dwarf_Op *ops;
	size_t n, k;
	bool val;

	if (dwarf_frame_register(f, regno, mem, &ops, &n))
		return (struct reg){ .how = H_ERROR };
	if (!n)
		return (struct reg){ .how = ops ? H_UNDEF : H_SAME };
	val = ops[n - 1].atom == DW_OP_stack_value;
	k = n - val;
	if (ops[0].atom == DW_OP_call_frame_cfa &&
	    (k == 1 || (k == 2 && ops[1].atom == DW_OP_plus_uconst))) {
		r.how = val ? H_VAL_CFA : H_AT_CFA;
		r.off = k == 2 ? (int64_t)ops[1].number : 0;
		return r;
	}
	/* an expression rule: libdw puts the CFA on the stack first */
	r.ops = ops[0].atom == DW_OP_call_frame_cfa ? ops + 1 : ops;
	r.n = k - (size_t)(r.ops - ops);
	r.val = val;
	return r;
}

/* The expression rule breg7 off: the register is saved at %rsp + off. */
static bool at_rsp(const struct reg *r, int64_t off)
{
	const struct op want[] = { { DW_OP_breg7, (uint64_t)off } };

	return r->how == H_OTHER && !r->val && ops_are(r->ops, r->n, want, 1);
}

/* An offset in bytes as a row's 8-byte units: false when it is none. */
static bool units(int64_t off, uint16_t *out)
{
	if (off < 0 || off % 8 || off / 8 > UINT16_MAX)
		return false;
	*out = off / 8;
	return true;
}

/* binutils' PLT CFA: %rsp + a + ((%rip & 15) >= t) * 8 */
static bool plt_cfa(const Dwarf_Op *ops, size_t n, int64_t *a, unsigned *t)
{
	struct op want[] = {
		{ DW_OP_breg7, 0 }, { DW_OP_breg16, 0 }, { DW_OP_lit15, 0 },
		{ DW_OP_and, 0 }, { DW_OP_lit0, 0 }, { DW_OP_ge, 0 },
		{ DW_OP_lit3, 0 }, { DW_OP_shl, 0 }, { DW_OP_plus, 0 },
	};

	if (n != 9 || ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15)
		return false;
	want[0].number = ops[0].number;
	want[4].atom = ops[4].atom;
	if (!ops_are(ops, n, want, 9))
		return false;
	*a = (int64_t)ops[0].number;
	*t = ops[4].atom - DW_OP_lit0;
	return true;
}

/* Where the caller's %rbp is, as a row says it (bpf/cfi.h). */
static int8_t rbp_units(const struct reg *bp)
{
	if (bp->how == H_SAME)
		return 0;
	if (bp->how == H_AT_CFA && bp->off < 0 && bp->off % 8 == 0 &&
	    bp->off >= -128 * 8)
		return bp->off / 8;
	return SW_CFI_RBP_LOST;
}

static struct sw_cfi_row libdw_row(Dwarf_Frame *f)
{
	struct sw_cfi_row row = { .kind = SW_CFI_UNKNOWN };
	const struct op sig_cfa[] = { { DW_OP_breg7, SW_CFI_SIG_RSP }, { DW_OP_deref, 0 } };
	Dwarf_Op m_ra[3], m_bp[3], m_sp[3], *cfa;
	struct reg ra = reg_rule(f, REG_RIP, m_ra);
	struct reg bp = reg_rule(f, REG_RBP, m_bp);
	struct reg sp = reg_rule(f, REG_RSP, m_sp);
	Dwarf_Addr start, end;
	bool signal = false;
	unsigned t;
	size_t n;
	int64_t a = 0;

	if (dwarf_frame_info(f, &start, &end, &signal) < 0 ||
	    dwarf_frame_cfa(f, &cfa, &n))
		return row;
	if (signal && ops_are(cfa, n, sig_cfa, 2) && at_rsp(&ra, SW_CFI_SIG_RIP) &&
	    at_rsp(&bp, SW_CFI_SIG_RBP)) {
		row.kind = SW_CFI_SIGNAL;
		return row;
	}
	if (ra.how == H_UNDEF) {
		row.kind = SW_CFI_END;
		return row;
	}
	/* %rsp: the ABI's rule, the CFA itself, or no row can hold it */
	if (sp.how != H_VAL_CFA || sp.off || ra.how != H_AT_CFA || ra.off != -8)
		return row;
	if (n == 1 && cfa[0].atom == DW_OP_bregx &&
	    (cfa[0].number == REG_RSP || cfa[0].number == REG_RBP)) {
		row.kind = cfa[0].number == REG_RSP ? SW_CFI_RSP : SW_CFI_RBP;
		a = (int64_t)cfa[0].number2;
	} else if (plt_cfa(cfa, n, &a, &t) && bp.how == H_SAME) {
		/* a PLT entry leaves %rbp alone: its row has no room to say */
		row.kind = SW_CFI_PLT;
		row.rbp = t;
	}
	if (row.kind == SW_CFI_UNKNOWN || !units(a, &row.cfa))
		return (struct sw_cfi_row){ .kind = SW_CFI_UNKNOWN };
	if (row.kind != SW_CFI_PLT)
		row.rbp = rbp_units(&bp);
	return row;
}

static bool same_row(const struct sw_cfi_row *a, const struct sw_cfi_row *b)
{
	return a->kind == b->kind && a->cfa == b->cfa && a->rbp == b->rbp;
}

/*
 * [pc, *next) under one rule on both sides: up to the end of libdw's row
 * at pc, or of ours (end); one address where libdw has no frame.  *why:
 * NULL, or why libdw's answer is no row at all.
 */
static struct sw_cfi_row expect_at(const struct oracle *o, uint64_t pc,
				   uint64_t end, uint64_t *next, bool *frame,
				   const char **why)
{
	struct sw_cfi_row row = { .kind = SW_CFI_NONE };
	Dwarf_Frame *f = frame_at(o, pc), *g;
	Dwarf_Addr s, e, s2, e2;
	bool sig;

	*next = pc + 1;
	*frame = f != NULL;
	*why = NULL;
	if (!f)
		return row;
	row = libdw_row(f);
	if (dwarf_frame_info(f, &s, &e, &sig) < 0 || s > pc || e <= pc) {
		*why = "a frame whose range misses it";
		free(f);
		return row;
	}
	*next = e < end ? e : end;
	free(f);
	/* the range's last address: in the same row of libdw's */
	g = *next - 1 > pc ? frame_at(o, *next - 1) : NULL;
	if (g && (dwarf_frame_info(g, &s2, &e2, &sig) < 0 || s2 != s || e2 != e))
		*why = "another row at the range's end";
	free(g);
	return row;
}

void cfi_libdw_compare(const struct cfi_table *t, const char *path,
		       const char *dbg, const char *label, FILE *log,
		       struct cfi_libdw_tally *out)
{
	struct oracle o;
	char a[128], b[128];

	memset(out, 0, sizeof(*out));
	out->err = oracle_open(&o, path, dbg);
	for (size_t i = 0; !out->err && i < t->nr_rows; i++) {
		const struct sw_cfi_row *r = &t->rows[i];
		uint64_t pc = t->base + r->pc, next;
		/* the last row ("none") stands for the address after the code */
		uint64_t end = i + 1 < t->nr_rows ? t->base + r[1].pc : pc + 1;

		for (; pc < end; pc = next) {
			const char *why;
			bool frame;
			struct sw_cfi_row e = expect_at(&o, pc, end, &next, &frame,
							&why);

			out->ranges++;
			out->bytes += next - pc;
			if (!why && same_row(r, &e))
				continue;
			out->differ++;
			out->frames += frame;
			if (out->differ > 5)
				continue;
			cfi_row_rule(r, a, sizeof(a));
			cfi_row_rule(&e, b, sizeof(b));
			fprintf(log, "  %s: %" PRIx64 "..%" PRIx64 " %s, libdw %s%s\n",
				label, pc, next, a, why ? why : b,
				frame ? "" : " (no frame)");
		}
	}
	oracle_close(&o);
}
