// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Unit test of the unwind tables (src/cfi.c, src/cfi_cache.c).  Every row
 * built from a binary is compared with what readelf --debug-dump=frames-interp
 * says for every PC, and with libdw's frame at every address
 * (tests/unit/cfi_libdw.c): Debian's libc, sort, libstdc++ and python3.11,
 * the workloads, the vDSO and this file's own fixtures.
 *
 * This one file is also the fixture: built with -DCFI_FIXTURE it becomes
 * build/tests/fx_cfi, whose hand-written CFI covers what compilers rarely
 * emit (and, with -DCFI_FIXTURE_DEBUG_FRAME, the same in .debug_frame).
 */

/* ---------------------------------------------------------------- fixture */
#if defined(CFI_FIXTURE)

#include <stdio.h>

/*
 * A PLT-like CFA expression with another threshold (5), a signal frame
 * and its twin without 'S', and one function that walks through every
 * rule the rows cannot hold: CFA offsets too large or not a multiple of 8,
 * %rbp saved far away or in a register, a return address not at CFA-8,
 * a rule for %rsp, a CFA in %r10 or an expression, an undefined %rip;
 * with personality and LSDA pointers ("zPLR") and advance_loc2 and 4.
 */
__asm__(
	"	.text\n"
#ifdef CFI_FIXTURE_DEBUG_FRAME
	"	.cfi_sections .debug_frame\n"
#endif
	"	.p2align 4\n"
	"	.type cfx_plt5, @function\n"
	"cfx_plt5:\n"
	"	.cfi_startproc\n"
	"	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x35, 0x2a, 0x33, 0x24, 0x22\n"
	"	.fill 32, 1, 0x90\n"
	"	.cfi_endproc\n"
	"	nop\n"
	"	.type cfx_sig, @function\n"
	"cfx_sig:\n"
	"	.cfi_startproc simple\n"
	"	.cfi_signal_frame\n"
	"	.cfi_escape 0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06\n"
	"	.cfi_escape 0x10, 0x10, 0x03, 0x77, 0xa8, 0x01\n"
	"	.cfi_escape 0x10, 0x06, 0x03, 0x77, 0xf8, 0x00\n"
	"	.cfi_escape 0x10, 0x07, 0x03, 0x77, 0xa0, 0x01\n"
	"	mov $15, %rax\n"
	"	syscall\n"
	"	.cfi_endproc\n"
	"	.type cfx_nosig, @function\n"
	"cfx_nosig:\n"
	"	.cfi_startproc simple\n"
	"	.cfi_escape 0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06\n"
	"	.cfi_escape 0x10, 0x10, 0x03, 0x77, 0xa8, 0x01\n"
	"	.cfi_escape 0x10, 0x06, 0x03, 0x77, 0xf8, 0x00\n"
	"	mov $15, %rax\n"
	"	syscall\n"
	"	.cfi_endproc\n"
	"	.type cfx_odd, @function\n"
	"cfx_odd:\n"
	"	.cfi_startproc\n"
	"	.cfi_personality 0x1b, cfx_pers\n"
	"	.cfi_lsda 0x1b, cfx_lsda\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	.cfi_remember_state\n"
	"	nop\n"
	"	.cfi_def_cfa %rsp, 12\n"
	"	nop\n"
	"	.cfi_def_cfa %rsp, 600000\n"
	"	nop\n"
	"	.cfi_def_cfa %rsp, 524280\n"
	"	nop\n"
	"	.cfi_offset %rbp, -2000\n"
	"	nop\n"
	"	.cfi_register %rbp, %rbx\n"
	"	nop\n"
	"	.cfi_val_offset %rbp, -24\n"
	"	nop\n"
	"	.cfi_offset %rbp, 8\n"
	"	nop\n"
	"	.cfi_same_value %rbp\n"
	"	nop\n"
	"	.cfi_offset %rbp, -1024\n"
	"	.cfi_escape 0x2e, 0x10\n"
	"	.skip 300, 0x90\n"
	"	.cfi_offset %rip, -16\n"
	"	nop\n"
	"	.cfi_offset %rip, -8\n"
	"	.cfi_offset %rsp, -24\n"
	"	.skip 70000, 0x90\n"
	"	.cfi_restore_state\n"
	"	nop\n"
	"	.cfi_restore %rbp\n"
	"	.cfi_def_cfa %r10, 0\n"
	"	nop\n"
	"	.cfi_escape 0x0f, 0x02, 0x76, 0x78\n"
	"	nop\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	.cfi_undefined %rip\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size cfx_odd, .-cfx_odd\n"
	"cfx_pers:\n"
	"	ret\n"
	"	.section .rodata\n"
	"cfx_lsda:\n"
	"	.long 0\n"
	"	.text\n");

/* Says it is ready, then waits for its stdin to close. */
int main(void)
{
	puts("ready");
	fflush(stdout);
	while (getchar() != EOF)
		;
	return 0;
}

#else
/* ------------------------------------------------------------------- test */

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gelf.h>

#include "cfi.h"
#include "cfi_cache.h"
#include "cfi_libdw.h"
#include "debuginfo.h"
#include "elf_file.h"
#include "libpath.h"
#include "procs.h"

#include "unit.h"

static bool same_row(const struct sw_cfi_row *a, const struct sw_cfi_row *b)
{
	return a->kind == b->kind && a->cfa == b->cfa && a->rbp == b->rbp;
}

/* ----------------------------------------------------- readelf's view */

/* One row as readelf prints it; a column it does not print is "". */
struct xrow {
	uint64_t loc;
	char cfa[48], rbp[48], rsp[48], ra[48];
};

/* One FDE: its range, rows, and what the raw listing tells of it. */
struct xfde {
	int sect;		/* 0 .eh_frame, 1 .debug_frame */
	unsigned long off, cie;
	uint64_t start, end;
	size_t first, n;	/* in xdump.rows */
	int exprs;		/* DW_CFA_def_cfa_expression seen */
	bool plt;		/* the one is binutils' PLT expression */
	int64_t plt_a;
	unsigned int plt_t;
	bool sig_cfa, sig_rip, sig_rbp;
};

struct xcie {
	int sect;
	unsigned long off;
	bool signal;		/* 'S' in its augmentation */
	bool has_row;
	struct xrow row;
};

struct xdump {
	struct xfde *fdes;
	size_t nf;
	struct xcie *cies;
	size_t nc;
	struct xrow *rows;
	size_t nr;
};

static void *more(void *p, size_t n, size_t size)
{
	/* powers of two from 64 on: grow when n reaches one */
	if (n >= 64 && (n & (n - 1)))
		return p;
	p = realloc(p, (n < 64 ? 64 : 2 * n) * size);
	if (!p)
		abort();
	return p;
}

static int section_of(const char *line, int cur)
{
	if (strncmp(line, "Contents of the ", 16))
		return cur;
	if (!strncmp(line + 16, ".eh_frame section", 17))
		return 0;
	if (!strncmp(line + 16, ".debug_frame section", 20))
		return 1;
	return -1;
}

static FILE *readelf(const char *what, const char *path)
{
	char cmd[PATH_MAX + 128];

	snprintf(cmd, sizeof(cmd), "LC_ALL=C readelf --debug-dump=no-follow-links,%s "
		 "'%s' 2>/dev/null", what, path);
	return popen(cmd, "r");
}

/* The raw listing: which FDE has which CFA expression. */
static void parse_raw(struct xdump *x, const char *path)
{
	FILE *f = readelf("frames", path);
	char line[1024];
	struct xfde *cur = NULL;
	int sect = -1;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long off, len, id, cie;
		uint64_t a, b;
		long pa;
		unsigned int pt;
		int n = 0;

		sect = section_of(line, sect);
		if (sscanf(line, "%lx %lx %lx FDE cie=%lx pc=%" SCNx64 "..%" SCNx64,
			   &off, &len, &id, &cie, &a, &b) == 6) {
			x->fdes = more(x->fdes, x->nf, sizeof(*x->fdes));
			cur = &x->fdes[x->nf++];
			memset(cur, 0, sizeof(*cur));
			cur->sect = sect;
			cur->off = off;
			continue;
		}
		if (strstr(line, " CIE") || !strncmp(line, "Contents", 8))
			cur = NULL;
		if (!cur)
			continue;
		if (!strncmp(line, "  DW_CFA_def_cfa_expression (", 29)) {
			cur->exprs++;
			if (sscanf(line, "  DW_CFA_def_cfa_expression (DW_OP_breg7 (rsp): %ld; "
				   "DW_OP_breg16 (rip): 0; DW_OP_lit15; DW_OP_and; "
				   "DW_OP_lit%u; DW_OP_ge; DW_OP_lit3; DW_OP_shl; "
				   "DW_OP_plus)%n", &pa, &pt, &n) == 2 && n &&
			    line[n] == '\n') {
				cur->plt = true;
				cur->plt_a = pa;
				cur->plt_t = pt;
			}
			cur->sig_cfa = !strcmp(line, "  DW_CFA_def_cfa_expression "
					       "(DW_OP_breg7 (rsp): 160; DW_OP_deref)\n");
		}
		if (!strcmp(line, "  DW_CFA_expression: r16 (rip) (DW_OP_breg7 (rsp): 168)\n"))
			cur->sig_rip = true;
		if (!strcmp(line, "  DW_CFA_expression: r6 (rbp) (DW_OP_breg7 (rsp): 120)\n"))
			cur->sig_rbp = true;
	}
	pclose(f);
}

/* "r9 (r9)" is one column: words in parentheses join the one before. */
static size_t columns(char *line, char **col, size_t max)
{
	size_t n = 0;

	for (char *t = strtok(line, " \n"); t; t = strtok(NULL, " \n")) {
		if (t[0] == '(' && n) {
			t[-1] = ' ';
			continue;
		}
		if (n < max)
			col[n++] = t;
	}
	return n;
}

static struct xfde *raw_fde(struct xdump *x, size_t *cursor, int sect,
			    unsigned long off)
{
	for (size_t i = 0; i < x->nf; i++) {
		struct xfde *f = &x->fdes[(*cursor + i) % x->nf];

		if (f->sect == sect && f->off == off && !f->end) {
			*cursor = (*cursor + i + 1) % x->nf;
			return f;
		}
	}
	return NULL;
}

/* The interpreted listing: each FDE's range and rows, each CIE's row. */
static void parse_interp(struct xdump *x, const char *path)
{
	FILE *f = readelf("frames-interp", path);
	char line[4096], *names[64] = { 0 }, hdr[4096] = "";
	struct xfde *fde = NULL;
	struct xcie *cie = NULL;
	size_t nnames = 0, cursor = 0;
	int sect = -1;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long off, len, id, cieoff;
		uint64_t a, b;
		char *col[64], *q;
		size_t n;

		sect = section_of(line, sect);
		if (sscanf(line, "%lx %lx %lx FDE cie=%lx pc=%" SCNx64 "..%" SCNx64,
			   &off, &len, &id, &cieoff, &a, &b) == 6) {
			cie = NULL;
			fde = raw_fde(x, &cursor, sect, off);
			if (fde) {
				fde->cie = cieoff;
				fde->start = a;
				fde->end = b;
				fde->first = x->nr;
			}
			continue;
		}
		if ((q = strstr(line, " CIE \"")) &&
		    sscanf(line, "%lx %lx %lx", &off, &len, &id) == 3) {
			fde = NULL;
			x->cies = more(x->cies, x->nc, sizeof(*x->cies));
			cie = &x->cies[x->nc++];
			memset(cie, 0, sizeof(*cie));
			cie->sect = sect;
			cie->off = off;
			q += 6;
			cie->signal = memchr(q, 'S', strcspn(q, "\"")) != NULL;
			continue;
		}
		if (!strncmp(line, "   LOC ", 7)) {
			snprintf(hdr, sizeof(hdr), "%s", line);
			nnames = columns(hdr, names, 64);
			continue;
		}
		if (strspn(line, "0123456789abcdef") != 16 || line[16] != ' ' ||
		    (!fde && !cie))
			continue;
		n = columns(line, col, 64);
		struct xrow r = { .loc = strtoull(col[0], NULL, 16) };

		for (size_t i = 1; i < n && i < nnames; i++) {
			char *dst = !strcmp(names[i], "CFA") ? r.cfa :
				    !strcmp(names[i], "rbp") ? r.rbp :
				    !strcmp(names[i], "rsp") ? r.rsp :
				    !strcmp(names[i], "ra") ? r.ra : NULL;

			if (dst)
				snprintf(dst, sizeof(r.cfa), "%s", col[i]);
		}
		if (cie) {
			cie->row = r;
			cie->has_row = true;
		} else {
			x->rows = more(x->rows, x->nr, sizeof(*x->rows));
			x->rows[x->nr++] = r;
			fde->n++;
		}
	}
	pclose(f);
}

static void xdump_free(struct xdump *x)
{
	free(x->fdes);
	free(x->cies);
	free(x->rows);
	memset(x, 0, sizeof(*x));
}

static bool full_long(const char *s, const char *fmt, long *v)
{
	int n = 0;

	return sscanf(s, fmt, v, &n) == 1 && n && !s[n];
}

/*
 * The row readelf's columns call for, under src/cfi.c's rules (see
 * bpf/cfi.h): derived again here from the text, not from the bytes.
 */
static struct sw_cfi_row expect(const struct xfde *f, const struct xrow *r,
				bool signal)
{
	struct sw_cfi_row e = { .kind = SW_CFI_UNKNOWN };
	bool rbp_same = !*r->rbp || !strcmp(r->rbp, "u") || !strcmp(r->rbp, "s");
	long v;

	if (signal && f->sig_cfa && f->sig_rip && f->sig_rbp && f->exprs == 1 &&
	    !strcmp(r->cfa, "exp") && !strcmp(r->ra, "exp") &&
	    !strcmp(r->rbp, "exp")) {
		e.kind = SW_CFI_SIGNAL;
		return e;
	}
	if (!strcmp(r->ra, "u")) {
		e.kind = SW_CFI_END;
		return e;
	}
	if ((*r->rsp && strcmp(r->rsp, "u")) || strcmp(r->ra, "c-8"))
		return e;
	if (full_long(r->cfa, "rsp+%ld%n", &v) || full_long(r->cfa, "rbp+%ld%n", &v)) {
		if (v < 0 || v % 8 || v / 8 > UINT16_MAX)
			return e;
		e.kind = r->cfa[1] == 's' ? SW_CFI_RSP : SW_CFI_RBP;
		e.cfa = v / 8;
	} else if (!strcmp(r->cfa, "exp") && f->plt && f->exprs == 1) {
		if (f->plt_a < 0 || f->plt_a % 8 || f->plt_a / 8 > UINT16_MAX ||
		    !rbp_same)
			return e;
		e.kind = SW_CFI_PLT;
		e.cfa = f->plt_a / 8;
		e.rbp = f->plt_t;
		return e;
	} else {
		return e;
	}
	if (rbp_same)
		e.rbp = 0;
	else if (full_long(r->rbp, "c%ld%n", &v) && v < 0 && v % 8 == 0 &&
		 v >= -1024)
		e.rbp = v / 8;
	else
		e.rbp = SW_CFI_RBP_LOST;
	return e;
}

struct xrule {
	uint64_t pc;
	struct sw_cfi_row r;
};

struct xtable {
	struct xrule *v;
	size_t n;
};

static void xput(struct xtable *t, uint64_t pc, struct sw_cfi_row r)
{
	if (t->n && t->v[t->n - 1].pc == pc)
		t->n--;
	if (t->n && same_row(&t->v[t->n - 1].r, &r))
		return;
	t->v = more(t->v, t->n, sizeof(*t->v));
	t->v[t->n++] = (struct xrule){ pc, r };
}

static const struct xcie *find_xcie(const struct xdump *x, int sect,
				    unsigned long off)
{
	for (size_t i = 0; i < x->nc; i++)
		if (x->cies[i].sect == sect && x->cies[i].off == off)
			return &x->cies[i];
	return NULL;
}

static int cmp_xfde(const void *a, const void *b)
{
	const struct xfde *const *x = a, *const *y = b;

	if ((*x)->start != (*y)->start)
		return (*x)->start < (*y)->start ? -1 : 1;
	return (*x)->sect - (*y)->sect;
}

/*
 * The whole table readelf's listing calls for: FDEs by address, a .debug_frame
 * one only where no .eh_frame one is, a "none" row in every gap and after
 * the last.  *nfdes: the FDEs used; *overlaps: FDEs that overlap (none in
 * a sound file).
 */
static void expected_table(struct xdump *x, struct xtable *t, size_t *nfdes,
			   size_t *overlaps)
{
	struct xfde **v = calloc(x->nf + 1, sizeof(*v));
	uint64_t covered = 0;
	size_t n = 0;

	*nfdes = *overlaps = 0;
	for (size_t i = 0; i < x->nf; i++) {
		struct xfde *f = &x->fdes[i];
		bool shadowed = false;

		if (f->start >= f->end)
			continue;
		for (size_t j = 0; f->sect == 1 && j < x->nf; j++)
			shadowed |= x->fdes[j].sect == 0 &&
				    x->fdes[j].start < x->fdes[j].end &&
				    x->fdes[j].start < f->end && f->start < x->fdes[j].end;
		if (!shadowed)
			v[n++] = f;
	}
	qsort(v, n, sizeof(*v), cmp_xfde);
	for (size_t i = 0; i < n; i++) {
		const struct xfde *f = v[i];
		const struct xcie *c = find_xcie(x, f->sect, f->cie);
		bool signal = c && c->signal;

		if (i && f->start < covered)
			(*overlaps)++;
		if (i && f->start > covered)
			xput(t, covered, (struct sw_cfi_row){ .kind = SW_CFI_NONE });
		if (!f->n) {
			struct xrow r = c && c->has_row ? c->row : (struct xrow){};

			xput(t, f->start, expect(f, &r, signal));
		}
		for (size_t k = 0; k < f->n; k++) {
			const struct xrow *r = &x->rows[f->first + k];

			if (r->loc < f->end)
				xput(t, r->loc, expect(f, r, signal));
		}
		covered = f->end;
		(*nfdes)++;
	}
	if (n)
		xput(t, covered, (struct sw_cfi_row){ .kind = SW_CFI_NONE });
	free(v);
}

/*
 * table against readelf's listing of file (path, or the file whose
 * sections it came from): every row, exactly.
 */
static void compare(const char *label, const struct cfi_table *t,
		    const char *listing)
{
	struct xdump x = {};
	struct xtable e = {};
	size_t nfdes, overlaps, bad = 0;
	char a[128], b[128];

	parse_raw(&x, listing);
	parse_interp(&x, listing);
	expected_table(&x, &e, &nfdes, &overlaps);
	CHECK(nfdes > 0, "%s: readelf lists no FDE", label);
	CHECK(!overlaps, "%s: %zu overlapping FDEs", label, overlaps);
	CHECK(t->nr_fdes == nfdes && !t->nr_skipped && !t->nr_overlaps,
	      "%s: %zu FDEs used, %zu skipped, %zu overlapping; readelf: %zu",
	      label, t->nr_fdes, t->nr_skipped, t->nr_overlaps, nfdes);
	CHECK(t->nr_rows == e.n, "%s: %zu rows, readelf's say %zu", label,
	      t->nr_rows, e.n);
	for (size_t i = 0; i < t->nr_rows && i < e.n; i++) {
		const struct sw_cfi_row *r = &t->rows[i];

		if (t->base + r->pc == e.v[i].pc && same_row(r, &e.v[i].r))
			continue;
		if (bad++ < 5) {
			cfi_row_rule(r, a, sizeof(a));
			cfi_row_rule(&e.v[i].r, b, sizeof(b));
			printf("  %s row %zu: %" PRIx64 " %s, readelf %" PRIx64 " %s\n",
			       label, i, t->base + r->pc, a, e.v[i].pc, b);
		}
	}
	CHECK(!bad, "%s: %zu of %zu rows differ from readelf's", label, bad,
	      t->nr_rows);
	printf("%s: %zu rows from %zu FDEs (%s) match readelf\n", label,
	       t->nr_rows, t->nr_fdes, t->source);
	free(e.v);
	xdump_free(&x);
}

static struct cfi_table *table_of(const char *path, int want_err)
{
	struct elf_file *ef;
	struct cfi_table *t = NULL;
	int err = elf_file_new(&ef, path);

	CHECK(!err, "open %s: %d", path, err);
	if (err)
		return NULL;
	err = cfi_table_from_elf(&t, ef, path, NULL);
	CHECK(err == want_err, "%s: table: %d, want %d", path, err, want_err);
	elf_file_free(ef);
	return t;
}

/* every address of the table against libdw's frame there: the same row */
static void compare_libdw(const char *path, const struct cfi_table *t,
			  const char *dbg)
{
	struct cfi_libdw_tally d;

	cfi_libdw_compare(t, path, dbg, path, stdout, &d);
	CHECK(!d.err, "%s: libdw: %s", path, strerror(-d.err));
	CHECK(!d.differ, "%s: %zu of %zu ranges differ from libdw's (%zu where it has a frame)",
	      path, d.differ, d.ranges, d.frames);
	printf("%s: %zu ranges, %zu bytes match libdw\n", path, d.ranges, d.bytes);
}

static void compare_file(const char *path, const char *listing)
{
	struct cfi_table *t = table_of(path, 0);

	if (t) {
		compare(path, t, listing ? listing : path);
		compare_libdw(path, t, listing ? listing : path);
	}
	cfi_table_free(t);
}

/* --------------------------------------------------------- the binaries */

static bool exists(const char *path)
{
	return access(path, R_OK) == 0;
}

static void test_system(void)
{
	static const char *const libs[] = { "c", "stdc++" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(libs) / sizeof(*libs); i++) {
		CHECK(!libpath_resolve(libs[i], 0, path, sizeof(path)),
		      "find lib%s", libs[i]);
		compare_file(path, NULL);
	}
	compare_file("/usr/bin/sort", NULL);
	if (exists("/usr/bin/python3.11"))
		compare_file("/usr/bin/python3.11", NULL);
	else
		printf("python3.11 is not installed: not compared\n");
}

static bool is_elf64(const char *path)
{
	unsigned char id[EI_NIDENT] = { 0 };
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fread(id, 1, sizeof(id), f) == sizeof(id) &&
	     !memcmp(id, ELFMAG, SELFMAG) && id[EI_CLASS] == ELFCLASS64;
	fclose(f);
	return ok;
}

/* Every 64-bit workload; the 32-bit one is refused. */
static void test_workloads(const char *dir)
{
	char wl[PATH_MAX + 16], path[PATH_MAX + 300];
	struct dirent *d;
	size_t n = 0;
	DIR *dp;

	snprintf(wl, sizeof(wl), "%s/workloads", dir);
	dp = opendir(wl);
	CHECK(dp != NULL, "%s: %s", wl, strerror(errno));
	if (!dp)
		return;
	while ((d = readdir(dp))) {
		snprintf(path, sizeof(path), "%s/%s", wl, d->d_name);
		if (d->d_type != DT_REG)
			continue;
		if (!strcmp(d->d_name, "ia32")) {
			cfi_table_free(table_of(path, -ENOTSUP));
			continue;
		}
		/* its code spans 8 GiB: no 32-bit row PC reaches it all */
		if (!strcmp(d->d_name, "farcode")) {
			cfi_table_free(table_of(path, -ERANGE));
			continue;
		}
		if (is_elf64(path)) {
			compare_file(path, NULL);
			n++;
		}
	}
	closedir(dp);
	CHECK(n >= 10, "%zu workloads compared", n);
}

/* The vDSO's [start, end) in this process. */
static bool vdso_range(pid_t pid, uint64_t *start, uint64_t *end)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, "[vdso]") &&
			sscanf(line, "%" SCNx64 "-%" SCNx64, start, end) == 2;
	if (f)
		fclose(f);
	return found;
}

/* Ours, written to a file for readelf: every process has the same one. */
static void test_vdso(const char *tmp)
{
	uint64_t start, end;
	FILE *f;

	CHECK(vdso_range(getpid(), &start, &end), "a [vdso] mapping");
	CHECK(getauxval(AT_SYSINFO_EHDR) == start, "AT_SYSINFO_EHDR is it");
	f = fopen(tmp, "we");
	CHECK(f && fwrite((void *)start, 1, end - start, f) == end - start,
	      "write %s", tmp);
	if (f)
		fclose(f);
	compare_file(tmp, NULL);
}

/*
 * .eh_frame with .debug_frame (the fixture built without asynchronous
 * unwind tables: crt's code in one, its own in the other), and the same
 * stripped of both: the debug file's compressed .debug_frame.
 */
static void test_fixtures(const char *dir)
{
	char p[PATH_MAX + 64], d[PATH_MAX + 64];
	struct cfi_table *t;

	snprintf(p, sizeof(p), "%s/fx_cfi", dir);
	compare_file(p, NULL);
	snprintf(p, sizeof(p), "%s/fx_cfi_dbg", dir);
	compare_file(p, NULL);
	t = table_of(p, 0);
	CHECK(t && !strcmp(t->source, ".eh_frame and .debug_frame"),
	      "source: %s", t ? t->source : "-");
	cfi_table_free(t);
	snprintf(p, sizeof(p), "%s/fx_cfi_dbg.stripped", dir);
	snprintf(d, sizeof(d), "%s/fx_cfi_dbg.debug", dir);
	compare_file(p, d);
	t = table_of(p, 0);
	CHECK(t && !strcmp(t->source, "the debug file's .debug_frame"),
	      "source: %s", t ? t->source : "-");
	cfi_table_free(t);
}

/* -------------------------------------------------- hand-made sections */

struct bytes {
	uint8_t b[1024];
	size_t n;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_u32(struct bytes *b, uint32_t v)
{
	put(b, &v, 4);
}

/* Its length, once the record is whole (padded to 4 bytes). */
static void close_rec(struct bytes *b, size_t at)
{
	uint32_t len;

	while ((b->n - at) % 4)
		b->b[b->n++] = 0;
	len = b->n - at - 4;
	memcpy(b->b + at, &len, 4);
}

/* A CIE: version 1, code 1, data -8, return column ra, "zR" enc. */
static size_t cie_enc(struct bytes *b, uint8_t ra, uint8_t enc, const char *ins,
		      size_t nins)
{
	size_t at = b->n;
	const uint8_t head[] = { 1, 'z', 'R', 0, 1, 0x78, ra, 1, enc };

	put_u32(b, 0);
	put_u32(b, 0);
	put(b, head, sizeof(head));
	put(b, ins, nins);
	close_rec(b, at);
	return at;
}


/* An FDE of [start, start + len), its CIE's udata4 pointers. */
static void fde(struct bytes *b, size_t cie_at, uint32_t start, uint32_t len,
		const char *ins, size_t nins)
{
	size_t at = b->n;

	put_u32(b, 0);
	put_u32(b, at + 4 - cie_at);
	put_u32(b, start);
	put_u32(b, len);
	b->b[b->n++] = 0;	/* no augmentation data */
	put(b, ins, nins);
	close_rec(b, at);
}

/* The rows of a section, as "pc kind cfa rbp;" for exact comparison. */
static const char *rows_of(const struct bytes *b, bool debug_frame, char *out,
			   size_t len, size_t *skipped)
{
	struct cfi_input in = { b->b, b->n, 0, debug_frame, NULL, 0 };
	struct cfi_table *t;
	size_t o = 0;
	int err = cfi_table_parse(&t, &in);

	*out = '\0';
	if (err) {
		snprintf(out, len, "error %d", err);
		return out;
	}
	for (size_t i = 0; i < t->nr_rows; i++) {
		const struct sw_cfi_row *r = &t->rows[i];

		o += snprintf(out + o, len - o, "%" PRIx64 " %s %u %d;",
			      t->base + r->pc, cfi_kind_name(r->kind), 8 * r->cfa,
			      r->rbp);
	}
	if (skipped)
		*skipped = t->nr_skipped;
	cfi_table_free(t);
	return out;
}

/* CFA = rsp+8, return address at CFA-8: what every x86_64 CIE says */
#define CIE_INIT "\x0c\x07\x08\x90\x01"

/* One CIE and its FDEs, and the rows they must give. */
struct synth {
	const char *what;
	uint8_t ra, enc;
	struct {
		uint32_t start, len;
		const char *ins;
		size_t nins;
	} fde[3];
	const char *want;
	size_t skipped;
};

static const struct synth synths[] = {
	{ "a gap between FDEs, and one FDE over another's range", 16, 0x03,
	  { { 0x1000, 0x10, "\x44\x0e\x10", 3 },	/* +4: rsp+16 */
	    { 0x1020, 0x10, "", 0 },
	    { 0x1028, 0x10, "\x0e\x18", 2 } },		/* rsp+24 */
	  "1000 rsp 8 0;1004 rsp 16 0;1010 none 0 0;1020 rsp 8 0;"
	  "1028 unknown 0 0;1030 rsp 24 0;1038 none 0 0;", 0 },
	{ "one FDE inside another: unknown to the outer one's end", 16, 0x03,
	  { { 0x1000, 0x40, "", 0 }, { 0x1010, 0x10, "", 0 } },
	  "1000 rsp 8 0;1010 unknown 0 0;1040 none 0 0;", 0 },
	/*
	 * remember, an undefined %rbp (lost), restore; an unknown opcode makes
	 * the rest of its FDE unknown; so does restore_state with nothing
	 * remembered
	 */
	{ "remember and restore state, an unknown opcode", 16, 0x03,
	  { { 0x2000, 0x20, "\x41\x0e\x10\x86\x02\x41\x0a\x07\x06\x41\x0b\x41"
			    "\x3f\x41", 14 },
	    { 0x3000, 0x10, "\x41\x0b", 2 } },
	  "2000 rsp 8 0;2001 rsp 16 -2;2002 rsp 16 1;2003 rsp 16 -2;"
	  "2004 unknown 0 0;2020 none 0 0;3000 rsp 8 0;3001 unknown 0 0;"
	  "3010 none 0 0;", 0 },
	{ "set_loc, advance_loc4, rows past the FDE's end dropped", 16, 0x03,
	  { { 0x4000, 0x10, "\x01\x08\x40\x00\x00\x0e\x20\x04\x00\x01\x00\x00"
			    "\x0e\x28", 14 } },
	  "4000 rsp 8 0;4008 rsp 32 0;4010 none 0 0;", 0 },
	{ "a CIE whose return column is not %rip", 15, 0x03,
	  { { 0x5000, 0x10, "", 0 } }, "5000 unknown 0 0;5010 none 0 0;", 0 },
	{ "datarel FDE pointers: skipped, not guessed", 16, 0x33,
	  { { 0x6000, 0x10, "", 0 } }, "", 1 },
};

static void test_synthetic(void)
{
	char got[1024];
	struct bytes b = {};
	size_t skipped;

	for (size_t i = 0; i < sizeof(synths) / sizeof(*synths); i++) {
		const struct synth *t = &synths[i];
		size_t c;

		b.n = 0;
		c = cie_enc(&b, t->ra, t->enc, CIE_INIT, 5);
		for (size_t k = 0; k < 3 && t->fde[k].len; k++)
			fde(&b, c, t->fde[k].start, t->fde[k].len, t->fde[k].ins,
			    t->fde[k].nins);
		put_u32(&b, 0);
		skipped = SIZE_MAX;
		rows_of(&b, false, got, sizeof(got), &skipped);
		CHECK(!strcmp(got, t->want) && skipped == t->skipped,
		      "%s: %s (%zu skipped)", t->what, got, skipped);
	}

	b.n = 0;
	/*
	 * .debug_frame in the 64-bit format: 12-byte lengths, 8-byte CIE
	 * ids and pointers, absolute 8-byte addresses
	 */
	b.n = 0;
	{
		const uint8_t c64[] = {
			0xff, 0xff, 0xff, 0xff, 21, 0, 0, 0, 0, 0, 0, 0,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			1, 0, 1, 0x78, 16, 0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0, 0,
		};
		const uint8_t f64[] = {
			0xff, 0xff, 0xff, 0xff, 27, 0, 0, 0, 0, 0, 0, 0,
			0, 0, 0, 0, 0, 0, 0, 0,
			0, 0x70, 0, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0,
			0x42, 0x0e, 0x10,
		};

		put(&b, c64, sizeof(c64));
		put(&b, f64, sizeof(f64));
	}
	CHECK(!strcmp(rows_of(&b, true, got, sizeof(got), NULL),
		      "7000 rsp 8 0;7002 rsp 16 0;7020 none 0 0;"), "dwarf64: %s", got);
}

/*
 * Random damage, and every cut, of a real section: whatever parses has
 * sound rows (known kinds, strictly rising, merged, a "none" last).
 */
static void check_sound(const uint8_t *data, size_t size, size_t *ok,
			size_t *unsound)
{
	struct cfi_input in = { data, size, 0, false, NULL, 0 };
	struct cfi_table *t;
	bool sound;

	if (cfi_table_parse(&t, &in))
		return;
	sound = !t->nr_rows || t->rows[t->nr_rows - 1].kind == SW_CFI_NONE;
	for (size_t i = 0; i < t->nr_rows; i++)
		sound &= t->rows[i].kind < SW_CFI_KIND_NR &&
			 (!i || (t->rows[i].pc > t->rows[i - 1].pc &&
				 !same_row(&t->rows[i], &t->rows[i - 1])));
	*unsound += !sound;
	(*ok)++;
	cfi_table_free(t);
}

static void test_damage(const char *dir)
{
	char p[PATH_MAX + 64];
	struct elf_file *ef;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *d;
	uint8_t *copy;
	uint64_t seed = 88172645463325252ull;
	size_t ok = 0, unsound = 0;

	snprintf(p, sizeof(p), "%s/fx_cfi", dir);
	if (elf_file_new(&ef, p)) {
		CHECK(0, "open %s", p);
		return;
	}
	scn = elf_section_named(elf_file_elf(ef), ".eh_frame", &sh);
	d = scn ? elf_getdata(scn, NULL) : NULL;
	CHECK(d && d->d_size, "fx_cfi has .eh_frame");
	if (!d || !d->d_size) {
		elf_file_free(ef);
		return;
	}
	copy = malloc(d->d_size);
	for (size_t cut = 0; cut <= d->d_size; cut++) {
		memcpy(copy, d->d_buf, cut);
		check_sound(copy, cut, &ok, &unsound);
	}
	for (int round = 0; round < 20000; round++) {
		memcpy(copy, d->d_buf, d->d_size);
		for (int k = 0; k < 1 + round % 4; k++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			copy[seed % d->d_size] = seed >> 32;
		}
		check_sound(copy, d->d_size, &ok, &unsound);
	}
	CHECK(!unsound, "%zu damaged sections gave unsound rows", unsound);
	printf("damaged sections: %zu of %d parsed, %zu with unsound rows\n",
	       ok, 20000 + (int)d->d_size + 1, unsound);
	free(copy);
	elf_file_free(ef);
}

/* The fixed-step search finds what a plain scan finds, for every address. */
static void test_search(void)
{
	struct sw_cfi_row rows[300];
	size_t bad = 0;

	for (size_t n = 0; n <= 300; n += (n < 20 ? 1 : 37)) {
		for (size_t i = 0; i < n; i++)
			rows[i] = (struct sw_cfi_row){ .pc = 10 + 3 * i };
		for (uint32_t rel = 0; rel < 10 + 3 * n + 5; rel++) {
			size_t want = n;

			for (size_t i = 0; i < n; i++)
				if (rows[i].pc <= rel)
					want = i;
			bad += cfi_rows_search(rows, n, rel) != want;
		}
	}
	CHECK(!bad, "%zu searches differ from a scan", bad);
}

/* ------------------------------------------------------------ the cache */

/* A fixture, once it says it is ready: everything is mapped. */
static pid_t spawn(const char *path, int *in)
{
	char line[16];
	FILE *out;
	pid_t pid = unit_spawn(path, in, &out);

	if (pid > 0 && !fgets(line, sizeof(line), out))
		pid = -1;
	if (out)
		fclose(out);
	return pid;
}

static void reap(pid_t pid, int in)
{
	if (in >= 0)
		close(in);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* pid's executable mapping of a path ending in suffix. */
static bool mapping(pid_t pid, const char *suffix, struct proc_map *m,
		    char *buf, size_t len)
{
	char path[64];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	while (f && !found && fgets(buf, len, f)) {
		size_t n;

		found = procs_parse_maps_line(buf, m) && m->exec &&
			(n = strlen(m->path)) >= strlen(suffix) &&
			!strcmp(m->path + n - strlen(suffix), suffix);
	}
	if (f)
		fclose(f);
	return found;
}

static const struct sw_cfi_map *entry_at(const struct sw_cfi_map *v, size_t n,
					 uint64_t start)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].start == start)
			return &v[i];
	return NULL;
}

/*
 * Through the cache's rows and an entry, every row start of the table (and the
 * byte before it) finds the row the table itself has there.
 */
static void check_entry(const char *label, struct cfi_cache *c,
			const struct sw_cfi_map *e, const struct proc_map *m,
			const struct cfi_table *t)
{
	const struct sw_cfi_row *rows = NULL;
	size_t held = e ? cfi_cache_held(c, e->first, &rows) : 0, bad = 0;

	CHECK(e && e->count == t->nr_rows && e->count <= held,
	      "%s: entry of %u rows, table %zu, %zu held", label,
	      e ? e->count : 0, t->nr_rows, held);
	if (!e || e->count != t->nr_rows || e->count > held)
		return;
	for (size_t i = 0; i < t->nr_rows; i++) {
		uint64_t vaddr = t->base + t->rows[i].pc;

		for (int back = 0; back < 2 && vaddr >= (uint64_t)back; back++) {
			const struct sw_cfi_row *want = cfi_table_find(t, vaddr - back);
			uint64_t addr = 0, rel;
			size_t k;

			for (size_t s = 0; s < t->nr_segs; s++)
				if (vaddr - back >= t->segs[s].vaddr &&
				    vaddr - back < t->segs[s].vaddr + t->segs[s].memsz)
					addr = m->start - m->pgoff + vaddr - back -
					       t->segs[s].vaddr + t->segs[s].offset;
			if (!addr || addr < m->start || addr >= m->end)
				continue;
			rel = addr - e->bias;
			k = rel > UINT32_MAX ? e->count :
			    cfi_rows_search(rows, e->count, rel);
			bad += !want ? k != e->count :
			       k == e->count || !same_row(&rows[k], want);
		}
	}
	CHECK(!bad, "%s: %zu addresses find another row through the entry",
	      label, bad);
}

static void test_cache(const char *dir, const char *vdso_copy)
{
	char fx[PATH_MAX + 64], libc[PATH_MAX], buf[PATH_MAX + 256];
	struct sw_cfi_map maps[2][SW_CFI_PROC_MAPS];
	struct cfi_stats st1, st2;
	struct cfi_table *tl, *tv;
	struct cfi_cache *c;
	struct proc_map m;
	size_t nr[2], room[2], lines;
	int in[2] = { -1, -1 };
	pid_t pid[2];

	snprintf(fx, sizeof(fx), "%s/fx_cfi", dir);
	pid[0] = spawn(fx, &in[0]);
	pid[1] = spawn(fx, &in[1]);
	CHECK(pid[0] > 0 && pid[1] > 0, "two fixtures running");
	CHECK(!libpath_resolve("c", 0, libc, sizeof(libc)), "find libc");
	tl = table_of(libc, 0);
	tv = table_of(vdso_copy, 0);
	if (pid[0] <= 0 || pid[1] <= 0 || !tl || !tv ||
	    cfi_cache_new(&c, SW_CFI_ROWS_DEFAULT))
		goto out;

	CHECK(!cfi_cache_proc(c, pid[0], maps[0], SW_CFI_PROC_MAPS, &nr[0], &room[0],
			       &lines),
	      "first process");
	cfi_cache_stats(c, &st1);
	CHECK(!cfi_cache_proc(c, pid[1], maps[1], SW_CFI_PROC_MAPS, &nr[1], &room[1],
			       &lines),
	      "second process");
	cfi_cache_stats(c, &st2);
	/* fx_cfi, libc, ld.so, the vDSO: each once, shared by the second */
	CHECK(nr[0] == 4 && nr[1] == 4 && !room[0] && !room[1],
	      "%zu and %zu mappings", nr[0], nr[1]);
	CHECK(st1.tables == 4 && st2.tables == 4 && st1.rows == st2.rows &&
	      st2.bytes == st2.rows * sizeof(struct sw_cfi_row) && !st2.no_room,
	      "tables %zu then %zu, rows %zu then %zu", st1.tables, st2.tables,
	      st1.rows, st2.rows);
	for (size_t i = 0; i < nr[0] && i < nr[1]; i++)
		CHECK(maps[0][i].first == maps[1][i].first &&
		      maps[0][i].count == maps[1][i].count &&
		      (!i || maps[0][i].start > maps[0][i - 1].start),
		      "mapping %zu shared, in address order", i);

	for (int p = 0; p < 2; p++) {
		if (mapping(pid[p], "/libc.so.6", &m, buf, sizeof(buf)))
			check_entry("libc", c, entry_at(maps[p], nr[p], m.start), &m, tl);
		else
			CHECK(0, "libc mapped");
		if (mapping(pid[p], "[vdso]", &m, buf, sizeof(buf)))
			check_entry("vdso", c, entry_at(maps[p], nr[p], m.start), &m, tv);
		else
			CHECK(0, "vdso mapped");
	}
	cfi_cache_free(c);

	/* a cache one row too small for libc: refused whole, and counted */
	if (!cfi_cache_new(&c, tl->nr_rows - 1)) {
		struct sw_cfi_map e;

		CHECK(mapping(pid[0], "/libc.so.6", &m, buf, sizeof(buf)) &&
		      cfi_cache_map(c, pid[0], &m, &e) == -ENOSPC, "libc does not fit");
		CHECK(mapping(pid[0], "[vdso]", &m, buf, sizeof(buf)) &&
		      !cfi_cache_map(c, pid[0], &m, &e), "the vDSO does");
		cfi_cache_stats(c, &st1);
		CHECK(st1.tables == 1 && st1.rows == tv->nr_rows && st1.no_room == 1 &&
		      st1.no_room_rows == tl->nr_rows && !st1.no_cfi,
		      "tables %zu rows %zu refused %zu (%zu rows)", st1.tables,
		      st1.rows, st1.no_room, st1.no_room_rows);
		cfi_cache_free(c);
	}
out:
	cfi_table_free(tl);
	cfi_table_free(tv);
	reap(pid[0], in[0]);
	reap(pid[1], in[1]);
}

/* A copy of src at dst, with patch (when not NULL) over every find. */
static bool copy_patched(const char *src, const char *dst, const char *find,
			 const char *patch, size_t n)
{
	FILE *f = fopen(src, "re");
	char *buf = malloc(1 << 24), *at;
	size_t len = f && buf ? fread(buf, 1, 1 << 24, f) : 0;
	bool ok = len > 0;

	if (f)
		fclose(f);
	if (ok && patch) {
		ok = false;
		for (at = buf; (at = memmem(at, len - (at - buf), find, n)); at += n) {
			memcpy(at, patch, n);
			ok = true;
		}
	}
	f = ok ? fopen(dst, "we") : NULL;
	ok = f && fwrite(buf, 1, len, f) == len;
	if (f)
		ok &= !fclose(f);
	free(buf);
	return ok;
}

/* A mapping of path's code (at file offset pgoff) made up at start. */
static int map_file(struct cfi_cache *c, const char *path, uint64_t pgoff,
		    uint64_t start, struct sw_cfi_map *e)
{
	struct stat st;
	struct proc_map m = { .start = start, .end = start + (1 << 20),
			      .pgoff = pgoff, .path = path, .exec = true };

	if (stat(path, &st))
		return -errno;
	m.ino = st.st_ino;
	m.maj = major(st.st_dev);
	m.min = minor(st.st_dev);
	return cfi_cache_map(c, getpid(), &m, e);
}

/*
 * Two files with fx_cfi's build-id: an exact copy shares its table, one
 * whose CIEs say another data alignment (so other rows) does not.
 */
static void test_forged_build_id(const char *dir)
{
	char fx[PATH_MAX + 64], same[] = "/tmp/test_cfi_same.XXXXXX",
	     forged[] = "/tmp/test_cfi_forged.XXXXXX";
	struct sw_cfi_map e0, e1, e2, again;
	struct cfi_table *t;
	struct cfi_stats st;
	struct cfi_cache *c;
	uint64_t pg = 0;
	int fd;

	snprintf(fx, sizeof(fx), "%s/fx_cfi", dir);
	if ((fd = mkstemp(same)) >= 0)
		close(fd);
	if ((fd = mkstemp(forged)) >= 0)
		close(fd);
	/* "zR", code alignment 1, data alignment -8, return column 16 */
	CHECK(copy_patched(fx, same, NULL, NULL, 0) &&
	      copy_patched(fx, forged, "zR\0\x01\x78\x10", "zR\0\x01\x70\x10", 6),
	      "copies of %s", fx);
	t = table_of(fx, 0);
	if (t && t->nr_segs)
		pg = t->segs[0].offset & ~4095ULL;
	cfi_table_free(t);
	if (cfi_cache_new(&c, SW_CFI_ROWS_DEFAULT))
		goto out;
	CHECK(!map_file(c, fx, pg, 0x10000000, &e0) &&
	      !map_file(c, same, pg, 0x20000000, &e1) &&
	      !map_file(c, forged, pg, 0x30000000, &e2) &&
	      !map_file(c, same, pg, 0x40000000, &again), "all four mapped");
	cfi_cache_stats(c, &st);
	CHECK(e1.first == e0.first && e1.count == e0.count &&
	      again.first == e0.first, "the copy shares the table");
	CHECK(e2.first == e0.first + e0.count && st.tables == 2 &&
	      st.rows == (size_t)e0.count + e2.count, "the forged one has its "
	      "own: %zu tables, %zu rows", st.tables, st.rows);
	CHECK(e0.bias - 0x10000000 == e1.bias - 0x20000000, "the same bias");
	cfi_cache_free(c);
out:
	unlink(same);
	unlink(forged);
}

/* ------------------------------------------------------------ the words */

static void test_words(void)
{
	const struct sw_cfi_row rsp8 = { .kind = SW_CFI_RSP, .cfa = 1 };
	const struct sw_cfi_row rbp = { .kind = SW_CFI_RBP, .cfa = 2, .rbp = -2 };
	char w[512];

	cfi_row_explain(&rsp8, w, sizeof(w));
	CHECK(!strcmp(w, "CFA = %rsp+8: the return address is on top of the "
		      "stack; %rbp still holds the caller's"), "%s", w);
	cfi_row_explain(&rbp, w, sizeof(w));
	CHECK(!strcmp(w, "CFA = %rbp+16: the function keeps a frame pointer; "
		      "the return address is at %rbp+8; the caller's %rbp is "
		      "saved at CFA-16"), "%s", w);
	cfi_row_rule(&rbp, w, sizeof(w));
	CHECK(!strcmp(w, "CFA=rbp+16 rbp=c-16 ra=c-8"), "%s", w);
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], tmp[] = "/tmp/test_cfi_vdso.XXXXXX";
	ssize_t n;
	int fd;

	/* the fixtures and workloads sit next to this binary unless given */
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	dir[n > 0 ? n : 0] = '\0';
	*strrchr(dir, '/') = '\0';
	if (argc > 1)
		snprintf(dir, sizeof(dir), "%s", argv[1]);
	signal(SIGPIPE, SIG_IGN);
	fd = mkstemp(tmp);
	if (fd >= 0)
		close(fd);

	test_search();
	test_words();
	test_synthetic();
	test_fixtures(dir);
	test_vdso(tmp);
	test_system();
	test_workloads(dir);
	test_cache(dir, tmp);
	test_forged_build_id(dir);
	test_damage(dir);
	unlink(tmp);

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif
