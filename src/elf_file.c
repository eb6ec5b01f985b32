// SPDX-License-Identifier: MIT
#include "elf_file.h"
#include "debuginfo.h"
#include "elf_image.h"
#include "untrusted.h"
#include "vec.h"

#include <errno.h>
#include <inttypes.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	struct elf_sym sym;
	int rank;	/* alias preference: lower wins */
	/*
	 * Where its range ends: addr + size; for a symbol of size 0 (a label
	 * of hand-written assembly: ld.so's _dl_start_user, glibc's
	 * __restore_rt), its section's end until flatten() makes it the next
	 * symbol's start.
	 */
	uint64_t end;
};

struct range {
	uint64_t start, end;
	size_t sym;
};

struct load {
	uint64_t vaddr, offset, filesz;
	bool exec;
};

struct elf_file {
	Elf *elf;
	struct elf_image *img;	/* the file's, or NULL: mem */
	void *mem;		/* an image from memory (the vDSO) */
	int type;
	const char *image;	/* the whole file as libelf has it */
	size_t image_size;
	struct entry *syms;
	size_t nr_syms;
	/*
	 * Symbols may nest or overlap, so sym_at searches a flattened copy:
	 * disjoint ranges, each naming the innermost symbol over it.
	 */
	struct range *ranges;
	size_t nr_ranges;
	struct load *loads;
	size_t nr_loads;
	const uint8_t *build_id;
	size_t build_id_size;
	/* symbols found elsewhere: a debug file, MiniDebugInfo */
	struct debuginfo debug;
	bool cut;		/* some symbols did not fit in the budget */
	struct debuginfod *remote;	/* while it opens: where else to look */
	bool stripped;		/* no .symtab, its own or a debug file's */
	char *plt_names;	/* "func@plt\0...": the PLT entries' names */
};

/*
 * What the symbols of a table cost here, each: its entry with room to
 * grow, and its ranges (see flatten).  Charged to the file's budget.
 */
#define SYM_COST (2 * sizeof(struct entry) + 2 * sizeof(struct range) + \
		  sizeof(size_t))


/*
 * Of several names at one address, show what a programmer would call the
 * function: a global over a weak or local one, "malloc" over "__libc_malloc".
 */
static int alias_rank(unsigned char bind, const char *name)
{
	int underscores = 0;

	while (name[underscores] == '_')
		underscores++;
	return (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2) * 64 +
	       (underscores < 63 ? underscores : 63);
}

static int cmp_addr_name(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	c = strcmp(x->sym.name, y->sym.name);
	if (c)
		return c;
	return x->sym.size > y->sym.size ? -1 : x->sym.size < y->sym.size;
}

static int cmp_addr_pref(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	size_t lx, ly;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	/* a size says more than none */
	if (!x->sym.size != !y->sym.size)
		return x->sym.size ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	lx = strlen(x->sym.name);
	ly = strlen(y->sym.name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->sym.name, y->sym.name);
}

/*
 * v in order of address, stably: a radix sort, a byte of the address a
 * pass, as many as the largest has (3 for a library).  qsort took 1 ms
 * for libc's 10,000 symbols, half of opening it.
 */
static int sort_by_addr(struct entry *v, size_t n)
{
	struct entry *from = v, *to = malloc(n * sizeof(*v) + 1), *tmp = to;
	uint64_t all = 0;

	if (!to)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		all |= v[i].sym.addr;
	for (unsigned shift = 0; shift < 64 && all >> shift; shift += 8) {
		size_t at[257] = { 0 };
		struct entry *swap;

		for (size_t i = 0; i < n; i++)
			at[((from[i].sym.addr >> shift) & 0xff) + 1]++;
		for (int d = 0; d < 256; d++)
			at[d + 1] += at[d];
		for (size_t i = 0; i < n; i++)
			to[at[(from[i].sym.addr >> shift) & 0xff]++] = from[i];
		swap = from;
		from = to;
		to = swap;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
	return 0;
}

/*
 * v, in order of address, into cmp's order: each run of one address on
 * its own, so that names are compared only between aliases (a few at an
 * address, where a sort of them all compared names 10^5 times for libc).
 */
static void sort_runs(struct entry *v, size_t n, int (*cmp)(const void *, const void *))
{
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].sym.addr == v[i].sym.addr; j++)
			;
		if (j - i > 16) {
			qsort(v + i, j - i, sizeof(*v), cmp);
			continue;
		}
		for (size_t k = i + 1; k < j; k++) {
			struct entry e = v[k];
			size_t m = k;

			for (; m > i && cmp(&v[m - 1], &e) > 0; m--)
				v[m] = v[m - 1];
			v[m] = e;
		}
	}
}

static bool wanted(Elf *elf, const GElf_Sym *s)
{
	GElf_Shdr shdr;
	Elf_Scn *scn;

	if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
		return false;
	switch (GELF_ST_TYPE(s->st_info)) {
	case STT_FUNC:
	case STT_GNU_IFUNC:
		return true;
	case STT_NOTYPE:
		/* hand-written assembly often leaves out .type (and .size) */
		scn = elf_getscn(elf, s->st_shndx);
		return scn && gelf_getshdr(scn, &shdr) &&
		       (shdr.sh_flags & SHF_EXECINSTR);
	default:
		return false;
	}
}

/*
 * Symbols of one table of elf (ef's own, or a debug file's, img) into ef;
 * -EDQUOT when they do not fit in img's budget.
 */
static int add_table(struct elf_file *ef, Elf *elf, struct elf_image *img,
		     Elf_Scn *scn, const GElf_Shdr *sh, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, n;

	if (!data || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	if (img && !elf_image_charge(img, (uint64_t)n * SYM_COST))
		return -EDQUOT;
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		struct entry *e;

		GElf_Shdr in;
		Elf_Scn *sec;

		if (!gelf_getsym(data, i, &s) || !wanted(elf, &s))
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (VEC_GROW(ef->syms, ef->nr_syms, *cap, 256))
			return -ENOMEM;
		e = &ef->syms[ef->nr_syms++];
		e->sym.addr = s.st_value;
		e->sym.size = s.st_size;
		e->sym.name = name;
		e->rank = alias_rank(GELF_ST_BIND(s.st_info), name);
		e->end = s.st_value + (s.st_size ? s.st_size : 1);
		sec = s.st_size ? NULL : elf_getscn(elf, s.st_shndx);
		if (sec && gelf_getshdr(sec, &in) && s.st_value >= in.sh_addr &&
		    s.st_value < in.sh_addr + in.sh_size)
			e->end = in.sh_addr + in.sh_size;
	}
	return 0;
}

static void emit(struct elf_file *ef, uint64_t start, uint64_t end, size_t sym)
{
	struct range *last = ef->nr_ranges ? &ef->ranges[ef->nr_ranges - 1] :
			     NULL;

	if (start >= end)
		return;
	if (last && last->sym == sym && last->end == start) {
		last->end = end;
		return;
	}
	ef->ranges[ef->nr_ranges++] = (struct range){ start, end, sym };
}

/*
 * Paint [pos, to) with whatever is on top of the stack of open symbols,
 * closing those that end on the way.
 */
static uint64_t paint(struct elf_file *ef, size_t *stack, size_t *depth,
		      uint64_t pos, uint64_t to)
{
	while (*depth && pos < to) {
		size_t top = stack[*depth - 1];
		uint64_t end = ef->syms[top].end;

		if (end > pos) {
			uint64_t stop = end < to ? end : to;

			emit(ef, pos, stop, top);
			pos = stop;
		}
		if (end <= pos)
			(*depth)--;
	}
	return pos;
}

/* Whether a symbol of the stack still covers addr. */
static bool covered(const struct elf_file *ef, const size_t *stack,
		    size_t depth, uint64_t addr)
{
	for (size_t i = 0; i < depth; i++)
		if (ef->syms[stack[i]].end > addr)
			return true;
	return false;
}

/*
 * A sweep in address order: an open symbol stays below the ones that start
 * inside it; of aliases at one address the preferred one goes on top.  A
 * symbol of size 0 names, as gdb's minimal symbols do, from its address
 * to the next symbol's (or its section's end), and only where no symbol
 * with a size covers it: a label inside a function names nothing.
 */
static int flatten(struct elf_file *ef)
{
	size_t n = ef->nr_syms, depth = 0, i, j, *stack;
	uint64_t pos = 0;

	stack = malloc(n * sizeof(*stack));
	/* each symbol opens at most one range and uncovers at most one */
	ef->ranges = malloc(2 * n * sizeof(*ef->ranges));
	if (!stack || !ef->ranges) {
		free(stack);
		return -ENOMEM;
	}
	for (i = 0; i < n; i = j) {
		uint64_t addr = ef->syms[i].sym.addr;

		pos = paint(ef, stack, &depth, pos, addr);
		pos = addr;
		for (j = i; j < n && ef->syms[j].sym.addr == addr; j++)
			;
		for (size_t k = j; k-- > i;) {
			struct entry *e = &ef->syms[k];

			if (!e->sym.size) {
				if (covered(ef, stack, depth, addr) || e->end <= addr)
					continue;
				if (j < n && ef->syms[j].sym.addr < e->end)
					e->end = ef->syms[j].sym.addr;
			}
			stack[depth++] = k;
		}
	}
	paint(ef, stack, &depth, pos, UINT64_MAX);
	free(stack);
	return 0;
}

/* .symtab and .dynsym overlap; one entry per (address, name) remains. */
/* The symbol tables of elf into ef; *symtab tells whether one was .symtab. */
static int add_tables(struct elf_file *ef, Elf *elf, struct elf_image *img,
		      size_t *cap, bool *symtab)
{
	Elf_Scn *scn = NULL;
	int err;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		*symtab |= sh.sh_type == SHT_SYMTAB;
		err = add_table(ef, elf, img, scn, &sh, cap);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A relocated GOT slot and the dynamic symbol it is for; name NULL for an
 * IRELATIVE one, filled by the resolver at addend (an ifunc of the file's
 * own, such as glibc's calls of its own memcpy), which gdb names
 * *ABS*+0xADDEND@plt.
 */
struct slot {
	uint64_t addr;
	const char *name;
	uint64_t addend;
};

static int by_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* The GOT slots the dynamic relocations of elf fill with a function's address. */
static int got_slots(Elf *elf, struct slot **out, size_t *n)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh, sym_sh;
		Elf_Scn *syms;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)) ||
		    !(syms = elf_getscn(elf, sh.sh_link)) ||
		    !gelf_getshdr(syms, &sym_sh) || sym_sh.sh_type != SHT_DYNSYM)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			Elf_Data *sd = elf_getdata(syms, NULL);
			GElf_Rela r;
			GElf_Sym s;
			const char *name;
			unsigned type;

			if (!gelf_getrela(data, (int)i, &r))
				continue;
			type = GELF_R_TYPE(r.r_info);
			if (type == R_X86_64_IRELATIVE)
				name = NULL;
			else if ((type != R_X86_64_JUMP_SLOT &&
				  type != R_X86_64_GLOB_DAT) || !sd ||
				 !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &s) ||
				 !(name = elf_strptr(elf, sym_sh.sh_link, s.st_name)) ||
				 !*name)
				continue;
			if (VEC_GROW(*out, *n, cap, 64))
				return -ENOMEM;
			(*out)[(*n)++] = (struct slot){ r.r_offset, name, r.r_addend };
		}
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), by_slot);
	return 0;
}

/*
 * An entry's GOT slot: the target of its jmp *disp32(%rip) (ff 25, after
 * an endbr64 and a bnd prefix in an IBT entry); 0 if it has none (PLT0,
 * and a lazy .plt's entries where .plt.sec holds the jumps).
 */
static uint64_t entry_slot(const uint8_t *code, size_t len, uint64_t addr)
{
	for (size_t i = 0; i + 6 <= len && i <= 5; i++) {
		int32_t disp;

		if (code[i] != 0xff || code[i + 1] != 0x25)
			continue;
		memcpy(&disp, code + i + 2, 4);
		return addr + i + 6 + (int64_t)disp;
	}
	return 0;
}

/* A PLT entry found: where, how long, and the slot it jumps through. */
struct plt_entry {
	uint64_t addr, size;
	const struct slot *slot;
};

/* The PLT entries of ef whose GOT slot a relocation names, in *out. */
static int plt_entries(struct elf_file *ef, const struct slot *slots,
		       size_t nslots, struct plt_entry **out, size_t *n)
{
	Elf_Scn *scn = NULL;
	size_t shstr, cap = 0;

	*out = NULL;
	*n = 0;
	if (elf_getshdrstrndx(ef->elf, &shstr))
		return 0;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		const char *sec;
		Elf_Data *data;
		GElf_Shdr sh;
		uint64_t step;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sec = elf_strptr(ef->elf, shstr, sh.sh_name)) ||
		    (strcmp(sec, ".plt") && strcmp(sec, ".plt.sec") &&
		     strcmp(sec, ".plt.got")) ||
		    !(data = elf_getdata(scn, NULL)) || !data->d_buf)
			continue;
		step = sh.sh_entsize ? sh.sh_entsize : 16;
		for (uint64_t off = 0; off + step <= data->d_size; off += step) {
			struct slot key = {
				.addr = entry_slot((const uint8_t *)data->d_buf + off,
						   step, sh.sh_addr + off),
			};
			const struct slot *hit = bsearch(&key, slots, nslots,
							 sizeof(*slots), by_slot);

			if (!hit)
				continue;
			if (VEC_GROW(*out, *n, cap, 64))
				return -ENOMEM;
			(*out)[(*n)++] = (struct plt_entry){ sh.sh_addr + off, step,
							     hit };
		}
	}
	return 0;
}

/*
 * PLT entries named as gdb names them, func@plt, from the slot each jumps
 * through: .plt, .plt.sec (IBT) and .plt.got (functions bound at load).
 */
static int add_plt(struct elf_file *ef, size_t *cap)
{
	struct plt_entry *v = NULL;
	size_t nslots, n = 0, len = 0;
	struct slot *slots;
	int err = got_slots(ef->elf, &slots, &nslots);

	if (!err && nslots)
		err = plt_entries(ef, slots, nslots, &v, &n);
	for (size_t i = 0; i < n; i++)
		len += (v[i].slot->name ? strlen(v[i].slot->name) :
			sizeof("*ABS*+0x") + 16) + sizeof("@plt");
	if (!err && n && ef->img && !elf_image_charge(ef->img, n * SYM_COST + len))
		err = -EDQUOT;
	if (!err && n && !(ef->plt_names = malloc(len)))
		err = -ENOMEM;
	for (size_t i = 0, at = 0; !err && i < n; i++) {
		char *name = ef->plt_names + at;
		struct entry *e;

		if (VEC_GROW(ef->syms, ef->nr_syms, *cap, 256)) {
			err = -ENOMEM;
			break;
		}
		if (v[i].slot->name)
			at += sprintf(name, "%s@plt", v[i].slot->name) + 1;
		else
			at += sprintf(name, "*ABS*+0x%" PRIx64 "@plt",
				      v[i].slot->addend) + 1;
		e = &ef->syms[ef->nr_syms++];
		*e = (struct entry){
			.sym = { v[i].addr, v[i].size, name },
			.rank = alias_rank(STB_GLOBAL, name),
			.end = v[i].addr + v[i].size,
		};
	}
	free(v);
	free(slots);
	return err;
}

/*
 * A stripped file keeps only .dynsym: its other symbols may be in a debug
 * file (Debian's -dbgsym packages) or compressed inside it (MiniDebugInfo,
 * as Fedora ships).  Their addresses are the file's own.
 */
static int load_syms(struct elf_file *ef, const char *path,
		     struct untrusted_skip *sk)
{
	size_t cap = 0, i, n = 0;
	bool symtab = false, debug_symtab = false;
	int err;

	err = add_tables(ef, ef->elf, ef->img, &cap, &symtab);
	if (err)
		return err;
	err = add_plt(ef, &cap);
	if (err && err != -EDQUOT)
		return err;
	ef->cut = err == -EDQUOT;
	if (ef->img)
		ef->debug.budget = elf_image_budget(ef->img);
	if (!symtab && path && !debuginfo_find(&ef->debug, path, ef->elf,
					       ef->build_id, ef->build_id_size,
					       ef->remote, sk)) {
		for (i = 0; i < DEBUGINFO_MAX && ef->debug.elf[i]; i++) {
			/* MiniDebugInfo is the file's own, charged as it */
			err = add_tables(ef, ef->debug.elf[i], ef->debug.img[i] ?
					 ef->debug.img[i] : ef->img, &cap,
					 &debug_symtab);
			if (err == -EDQUOT)
				ef->debug.cut = true;
			else if (err)
				return err;
		}
	}
	ef->cut |= ef->debug.cut;
	ef->stripped = !symtab && !debug_symtab;
	if (!ef->nr_syms)
		return 0;

	err = sort_by_addr(ef->syms, ef->nr_syms);
	if (err)
		return err;
	sort_runs(ef->syms, ef->nr_syms, cmp_addr_name);
	for (i = 0; i < ef->nr_syms; i++) {
		struct entry *e = &ef->syms[i];

		if (n && e->sym.addr == ef->syms[n - 1].sym.addr &&
		    !strcmp(e->sym.name, ef->syms[n - 1].sym.name)) {
			if (e->rank < ef->syms[n - 1].rank)
				ef->syms[n - 1].rank = e->rank;
			continue;
		}
		ef->syms[n++] = *e;
	}
	ef->nr_syms = n;
	sort_runs(ef->syms, n, cmp_addr_pref);

	return flatten(ef);
}

static int load_phdrs(struct elf_file *ef)
{
	size_t n, i;

	if (elf_getphdrnum(ef->elf, &n))
		return -EINVAL;
	ef->loads = calloc(n ? n : 1, sizeof(*ef->loads));
	if (!ef->loads)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef->elf, i, &ph))
			continue;
		if (ph.p_type == PT_LOAD) {
			struct load *l = &ef->loads[ef->nr_loads++];

			l->vaddr = ph.p_vaddr;
			l->offset = ph.p_offset;
			l->filesz = ph.p_filesz;
			l->exec = ph.p_flags & PF_X;
		} else if (ph.p_type == PT_NOTE && !ef->build_id) {
			/* notes keep their alignment in the segment too */
			Elf_Data *d = elf_getdata_rawchunk(ef->elf, ph.p_offset,
					ph.p_filesz, ph.p_align == 8 ?
					ELF_T_NHDR8 : ELF_T_NHDR);
			if (d)
				ef->build_id_size = elf_note_build_id(d, &ef->build_id);
		}
	}
	return 0;
}

/* A stripped-down file may keep its note sections but lose PT_NOTE. */
static void find_build_id_in_sections(struct elf_file *ef)
{
	Elf_Scn *scn = NULL;

	while (!ef->build_id && (scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d)
			ef->build_id_size = elf_note_build_id(d, &ef->build_id);
	}
}

/*
 * Everything about ef->elf, once it is open; path: for its debug files.
 * syms: whether to read its symbols (the unwind tables and the loader's
 * closure want none, and a large binary's cost megabytes).
 */
static int load(struct elf_file *ef, const char *path, bool syms,
		struct untrusted_skip *sk)
{
	GElf_Ehdr eh;
	int err;

	if (!gelf_getehdr(ef->elf, &eh))
		return -ENOEXEC;
	ef->type = eh.e_type;
	ef->image = elf_rawfile(ef->elf, &ef->image_size);
	if (!ef->image)
		return -ENOEXEC;
	err = load_phdrs(ef);
	if (err)
		return err;
	find_build_id_in_sections(ef);
	return syms ? load_syms(ef, path, sk) : 0;
}

/*
 * debug: whether to look for its debug file (see load_syms); code: whether
 * elf_file_read is to read code (see elf_image.h).
 */
static int open_path(struct elf_file **out, const char *path, bool debug,
		     bool code, struct debuginfod *remote,
		     struct untrusted_skip *sk)
{
	struct elf_file *ef;
	int err;

	*out = NULL;
	ef = calloc(1, sizeof(*ef));
	if (!ef)
		return -ENOMEM;
	ef->remote = remote;
	ef->elf = elf_image_open(path, code ? ELF_IMAGE_CODE : 0, &ef->img,
				 &err, sk);
	if (ef->elf)
		err = load(ef, debug ? path : NULL, debug, sk);
	ef->remote = NULL;
	if (err) {
		elf_file_free(ef);
		return err;
	}
	*out = ef;
	return 0;
}

int elf_file_open(struct elf_file **out, const char *path,
		   struct debuginfod *remote, struct untrusted_skip *sk)
{
	return open_path(out, path, true, false, remote, sk);
}

int elf_file_open_code(struct elf_file **out, const char *path,
		       struct debuginfod *remote, struct untrusted_skip *sk)
{
	return open_path(out, path, true, true, remote, sk);
}

int elf_file_open_own(struct elf_file **out, const char *path, bool code,
		       struct untrusted_skip *sk)
{
	return open_path(out, path, false, code, NULL, sk);
}

int elf_file_from_memory(struct elf_file **out, void *mem, size_t size)
{
	struct elf_file *ef = calloc(1, sizeof(*ef));
	int err = -ENOEXEC;

	*out = NULL;
	if (!ef) {
		free(mem);
		return -ENOMEM;
	}
	ef->mem = mem;
	if (elf_version(EV_CURRENT) != EV_NONE)
		ef->elf = elf_memory(mem, size);
	if (ef->elf && elf_kind(ef->elf) == ELF_K_ELF)
		err = load(ef, NULL, true, NULL);
	if (err) {
		elf_file_free(ef);
		return err;
	}
	*out = ef;
	return 0;
}

int elf_file_new(struct elf_file **out, const char *path)
{
	return elf_file_open(out, path, NULL, NULL);
}

void elf_file_free(struct elf_file *ef)
{
	if (!ef)
		return;
	debuginfo_free(&ef->debug);
	if (ef->elf)
		elf_end(ef->elf);
	elf_image_free(ef->img);
	free(ef->mem);
	free(ef->syms);
	free(ef->plt_names);
	free(ef->ranges);
	free(ef->loads);
	free(ef);
}

int elf_file_type(const struct elf_file *ef)
{
	return ef->type;
}

size_t elf_file_build_id(const struct elf_file *ef, const uint8_t **id)
{
	*id = ef->build_id;
	return ef->build_id_size;
}

const struct elf_sym *elf_file_sym_at(const struct elf_file *ef,
				       uint64_t vaddr)
{
	size_t lo = 0, hi = ef->nr_ranges;

	/* hi: the first range starting above vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ef->ranges[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!hi || vaddr >= ef->ranges[hi - 1].end)
		return NULL;
	return &ef->syms[ef->ranges[hi - 1].sym].sym;
}

const struct elf_sym *elf_file_sym_by_name(const struct elf_file *ef,
					    const char *name)
{
	size_t i;

	for (i = 0; i < ef->nr_syms; i++)
		if (!strcmp(ef->syms[i].sym.name, name))
			return &ef->syms[i].sym;
	return NULL;
}

int elf_file_find_syms(const struct elf_file *ef, elf_sym_cb cb, void *ctx)
{
	size_t i;
	int ret;

	for (i = 0; i < ef->nr_syms; i++) {
		ret = cb(&ef->syms[i].sym, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int elf_file_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr,
			      uint64_t *offset)
{
	size_t i;

	for (i = 0; i < ef->nr_loads; i++) {
		const struct load *l = &ef->loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*offset = vaddr - l->vaddr + l->offset;
			return 0;
		}
	}
	return -ENOENT;
}

int elf_file_offset_to_vaddr(const struct elf_file *ef, uint64_t offset,
			      uint64_t *vaddr)
{
	int pass;
	size_t i;

	/*
	 * Code is what gets translated this way; should segments share file
	 * bytes (as with old page-overlapping layouts), the executable wins.
	 */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < ef->nr_loads; i++) {
			const struct load *l = &ef->loads[i];

			if (l->exec != !pass)
				continue;
			if (offset >= l->offset && offset - l->offset < l->filesz) {
				*vaddr = offset - l->offset + l->vaddr;
				return 0;
			}
		}
	}
	return -ENOENT;
}

bool elf_file_whole(const struct elf_file *ef, size_t *size)
{
	uint64_t n = ef->image_size;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;

	*size = n;
	if (!gelf_getehdr(ef->elf, &eh) ||
	    eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize > n ||
	    eh.e_shoff + (uint64_t)(eh.e_shnum ? eh.e_shnum : 1) *
			 (eh.e_shoff ? eh.e_shentsize : 0) > n)
		return false;
	while ((scn = elf_nextscn(ef->elf, scn)))
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > n))
			return false;
	return true;
}

ssize_t elf_file_read(const struct elf_file *ef, uint64_t offset, void *buf,
		       size_t len)
{
	if (ef->img)
		return elf_image_read(ef->img, offset, buf, len);
	if (offset >= ef->image_size)
		return offset == ef->image_size ? 0 : -ERANGE;
	if (len > ef->image_size - offset)
		len = ef->image_size - offset;
	memcpy(buf, ef->image + offset, len);
	return len;
}

bool elf_file_stripped(const struct elf_file *ef)
{
	return ef->stripped;
}

bool elf_file_cut(const struct elf_file *ef)
{
	return ef->cut;
}

struct Elf *elf_file_elf(const struct elf_file *ef)
{
	return ef->elf;
}
