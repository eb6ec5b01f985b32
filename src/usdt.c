// SPDX-License-Identifier: MIT
#include "usdt.h"
#include "elf_file.h"
#include "vec.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define STAPSDT_TYPE 3

struct notes_ctx {
	Elf *elf;
	size_t word;		/* 4 or 8: addresses in the note are ELF words */
	bool have_base;
	uint64_t base_addr;	/* sh_addr of .stapsdt.base */
};

static uint64_t get_word(const char *p, size_t word)
{
	uint32_t w32;
	uint64_t w64;

	if (word == 4) {
		memcpy(&w32, p, 4);
		return w32;
	}
	memcpy(&w64, p, 8);
	return w64;
}

/* sh_offset + (addr - sh_addr) of the allocated section holding addr. */
static int section_offset(Elf *elf, uint64_t addr, uint64_t *off)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_type == SHT_NOBITS)
			continue;
		if (addr >= sh.sh_addr && addr - sh.sh_addr < sh.sh_size) {
			*off = sh.sh_offset + (addr - sh.sh_addr);
			return 0;
		}
	}
	return -ENOENT;
}

/* Splits the three strings after the addresses; false if malformed. */
static bool parse_strings(const char *p, size_t len, struct usdt_probe *pr)
{
	const char **dst[3] = { &pr->provider, &pr->name, &pr->args };
	size_t i;

	for (i = 0; i < 3; i++) {
		const char *nul = memchr(p, '\0', len);

		if (!nul)
			return false;
		*dst[i] = p;
		len -= nul + 1 - p;
		p = nul + 1;
	}
	return true;
}

static int parse_note(const struct elf_file *ef, const struct notes_ctx *c,
		      const char *desc, size_t len, struct usdt_probe *pr)
{
	size_t w = c->word;

	memset(pr, 0, sizeof(*pr));
	if (len < 3 * w || !parse_strings(desc + 3 * w, len - 3 * w, pr))
		return -EINVAL;
	pr->pc = get_word(desc, w);
	pr->base = get_word(desc + w, w);
	pr->semaphore = get_word(desc + 2 * w, w);
	/* prelink moves sections but not the notes' copies of addresses */
	if (c->have_base && pr->base) {
		uint64_t delta = c->base_addr - pr->base;

		pr->pc += delta;
		if (pr->semaphore)
			pr->semaphore += delta;
	}
	if (elf_file_vaddr_to_offset(ef, pr->pc, &pr->pc_offset))
		pr->pc_offset = 0;
	if (pr->semaphore &&
	    section_offset(c->elf, pr->semaphore, &pr->sem_offset))
		pr->sem_offset = 0;
	return 0;
}

static int grow(struct usdt_probe **v, size_t *cap, size_t n)
{
	return VEC_GROW(*v, n, *cap, 16);
}

static int scan_section(const struct elf_file *ef, const struct notes_ctx *c,
			Elf_Scn *scn, struct usdt_probe **v, size_t *cap,
			size_t *n)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	int err;

	if (!data)
		return 0;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off))) {
		const char *buf = data->d_buf;

		if (nh.n_type != STAPSDT_TYPE || nh.n_namesz != 8 ||
		    memcmp(buf + name_off, "stapsdt", 8))
			continue;
		err = grow(v, cap, *n);
		if (err)
			return err;
		/* skip malformed notes rather than lose the whole file */
		if (!parse_note(ef, c, buf + desc_off, nh.n_descsz, &(*v)[*n]))
			(*n)++;
	}
	return 0;
}

int usdt_probes(const struct elf_file *ef, struct usdt_probe **probes,
		 size_t *nr)
{
	struct notes_ctx c = { .elf = elf_file_elf(ef) };
	struct usdt_probe *v = NULL;
	size_t cap = 0, n = 0, shstrndx;
	Elf_Scn *scn = NULL;
	int err = 0;

	*probes = NULL;
	*nr = 0;
	c.word = gelf_getclass(c.elf) == ELFCLASS32 ? 4 : 8;
	if (elf_getshdrstrndx(c.elf, &shstrndx))
		return -EINVAL;

	while ((scn = elf_nextscn(c.elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(c.elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".stapsdt.base")) {
			c.have_base = true;
			c.base_addr = sh.sh_addr;
		}
	}
	while (!err && (scn = elf_nextscn(c.elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(c.elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".note.stapsdt"))
			err = scan_section(ef, &c, scn, &v, &cap, &n);
	}
	if (err || !n) {
		free(v);
		return err;
	}
	*probes = v;
	*nr = n;
	return 0;
}
