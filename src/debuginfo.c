// SPDX-License-Identifier: MIT
#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "debuginfo.h"
#include "debuginfod.h"
#include "elf_image.h"
#include "untrusted.h"

static const char *debug_dir(void)
{
	const char *d = getenv("STACKWALK_DEBUG_DIR");

	return d && *d ? d : "/usr/lib/debug";
}

Elf_Scn *elf_section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t strndx;

	if (elf_getshdrstrndx(elf, &strndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, strndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/*
 * The bytes of the section called name, or NULL when it has none in the
 * file: an SHT_NOBITS section has a size but no bytes (d_buf is NULL).
 */
static Elf_Data *section_data(Elf *elf, const char *name)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_named(elf, name, &sh);
	Elf_Data *data;

	if (!scn || sh.sh_type == SHT_NOBITS || !(data = elf_getdata(scn, NULL)) ||
	    !data->d_buf || !data->d_size)
		return NULL;
	return data;
}

size_t elf_note_build_id(Elf_Data *data, const uint8_t **id)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)))
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)data->d_buf + name_off, "GNU", 4) &&
		    nh.n_descsz) {
			*id = (const uint8_t *)data->d_buf + desc_off;
			return nh.n_descsz;
		}
	return 0;
}

/* Whether a note section of elf says build-id id. */
static bool has_build_id(Elf *elf, const uint8_t *id, size_t n)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		const uint8_t *got;
		Elf_Data *data;
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    (data = elf_getdata(scn, NULL)) && data->d_buf &&
		    elf_note_build_id(data, &got) == n && !memcmp(got, id, n))
			return true;
	}
	return false;
}

static int add(struct debuginfo *d, Elf *elf, struct elf_image *img, void *mem)
{
	for (int i = 0; i < DEBUGINFO_MAX; i++) {
		if (!d->elf[i]) {
			d->elf[i] = elf;
			d->img[i] = img;
			d->mem[i] = mem;
			return 0;
		}
	}
	elf_end(elf);
	elf_image_free(img);
	free(mem);
	return -ENOSPC;
}

/* An ELF file with a symbol table; its CRC checked when asked. */
static Elf *open_debug(struct debuginfo *d, const char *path, uint32_t crc,
		       bool check_crc, struct elf_image **img,
		       struct untrusted_skip *sk)
{
	int err;
	Elf *elf = elf_image_open(path, check_crc ? ELF_IMAGE_CRC32 : 0, img,
				  &err, sk);

	d->cut |= err == -EDQUOT;
	if (!elf || !check_crc || elf_image_crc32(*img) == crc)
		return elf;
	elf_end(elf);
	elf_image_free(*img);
	*img = NULL;
	return NULL;
}

static int by_build_id(struct debuginfo *d, const uint8_t *id, size_t n,
		       struct untrusted_skip *sk)
{
	struct elf_image *img;
	char path[4096];
	size_t len;
	Elf *elf;

	if (n < 2)
		return -ENOENT;
	len = snprintf(path, sizeof(path), "%s/.build-id/%02x/", debug_dir(), id[0]);
	for (size_t i = 1; i < n && len + 3 < sizeof(path); i++)
		len += snprintf(path + len, sizeof(path) - len, "%02x", id[i]);
	snprintf(path + len, sizeof(path) - len, ".debug");
	elf = open_debug(d, path, 0, false, &img, sk);
	return elf ? add(d, elf, img, NULL) : -ENOENT;
}

/* .gnu_debuglink: a file name, padding to 4 bytes, then the file's CRC32. */
static int by_debuglink(struct debuginfo *d, const char *path, Elf *elf,
			struct untrusted_skip *sk)
{
	char dir[4096], cand[8192];
	const char *slash = strrchr(path, '/');
	Elf_Data *data = section_data(elf, ".gnu_debuglink");
	struct elf_image *img;
	const char *name;
	uint32_t crc;
	size_t off;

	if (!data)
		return -ENOENT;
	name = data->d_buf;
	off = (strnlen(name, data->d_size) + 4) & ~3UL;
	if (off + 4 > data->d_size)
		return -ENOENT;
	memcpy(&crc, (const char *)data->d_buf + off, 4);
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	for (int i = 0; i < 3; i++) {
		const char *fmt[] = { "%s/%s", "%s/.debug/%s", "%s%s/%s" };
		Elf *e;

		if (i < 2)
			snprintf(cand, sizeof(cand), fmt[i], dir, name);
		else
			snprintf(cand, sizeof(cand), fmt[i], debug_dir(), dir, name);
		if (!strcmp(cand, path))
			continue;	/* the link names the file itself */
		e = open_debug(d, cand, crc, true, &img, sk);
		if (e)
			return add(d, e, img, NULL);
	}
	return -ENOENT;
}

/*
 * .gnu_debugdata: an xz stream of a small ELF with a .symtab.  Real ones
 * hold a few MB at most; an xz stream of zeros grows 6000-fold, so what
 * it may grow to and what its decoder may take are both bounded.
 */
static int by_debugdata(struct debuginfo *d, const char *path, Elf *elf,
			struct untrusted_skip *sk)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = 0, len = 0;
	unsigned char *out = NULL;
	Elf_Data *data = section_data(elf, ".gnu_debugdata");
	lzma_ret r;
	Elf *mini;

	if (!data)
		return -ENOENT;
	if (lzma_stream_decoder(&strm, 2 * DEBUGDATA_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = data->d_buf;
	strm.avail_in = data->d_size;
	do {
		if (len == cap) {
			size_t want = cap ? 2 * cap : 4 * data->d_size;
			unsigned char *p;

			if (cap == DEBUGDATA_MAX) {
				r = LZMA_MEMLIMIT_ERROR;
				break;
			}
			cap = want < DEBUGDATA_MAX ? want : DEBUGDATA_MAX;
			p = realloc(out, cap);
			if (!p) {
				r = LZMA_MEM_ERROR;
				break;
			}
			out = p;
		}
		strm.next_out = out + len;
		strm.avail_out = cap - len;
		r = lzma_code(&strm, LZMA_FINISH);
		len = cap - strm.avail_out;
	} while (r == LZMA_OK);
	lzma_end(&strm);
	if (r == LZMA_MEMLIMIT_ERROR)
		untrusted_skip_set(sk, "it decompresses to more than 64 MiB, or "
				   "needs more to decompress", ".gnu_debugdata of %s",
				   path);
	if (r != LZMA_STREAM_END) {
		free(out);
		return r == LZMA_MEMLIMIT_ERROR ? -EFBIG : -EINVAL;
	}
	if (d->budget && !untrusted_charge(d->budget, len)) {
		d->cut = true;
		free(out);
		return -EDQUOT;
	}
	mini = elf_memory((char *)out, len);
	if (!mini || elf_kind(mini) != ELF_K_ELF) {
		if (mini)
			elf_end(mini);
		if (d->budget)
			untrusted_release(d->budget, len);
		free(out);
		return -EINVAL;
	}
	d->held += d->budget ? len : 0;
	return add(d, mini, NULL, out);
}

/*
 * From a debuginfod server, through its client's cache: a file that any
 * server could have sent, so one of another build is not taken.
 */
static int by_debuginfod(struct debuginfo *d, struct debuginfod *remote,
			 const char *path, const uint8_t *id, size_t n,
			 struct untrusted_skip *sk)
{
	struct elf_image *img;
	char cached[4096];
	Elf *elf;
	int err = debuginfod_fetch(remote, id, n, path, cached, sizeof(cached));

	if (err)
		return err;
	elf = open_debug(d, cached, 0, false, &img, sk);
	if (!elf)
		return -ENOENT;
	if (!has_build_id(elf, id, n)) {
		untrusted_skip_set(sk, "its build-id is not the one asked for",
				   "the debug file of %s from debuginfod", path);
		elf_end(elf);
		elf_image_free(img);
		return -ENOENT;
	}
	return add(d, elf, img, NULL);
}

int debuginfo_find(struct debuginfo *d, const char *path, Elf *elf,
		   const uint8_t *build_id, size_t build_id_size,
		   struct debuginfod *remote, struct untrusted_skip *sk)
{
	/* a full debug file first; MiniDebugInfo adds to .dynsym alone */
	if (by_build_id(d, build_id, build_id_size, sk) &&
	    by_debuglink(d, path, elf, sk) && by_debugdata(d, path, elf, sk) &&
	    remote)
		by_debuginfod(d, remote, path, build_id, build_id_size, sk);
	return d->elf[0] ? 0 : -ENOENT;
}

void debuginfo_free(struct debuginfo *d)
{
	for (int i = 0; i < DEBUGINFO_MAX; i++) {
		if (d->elf[i])
			elf_end(d->elf[i]);
		elf_image_free(d->img[i]);
		free(d->mem[i]);
		d->elf[i] = NULL;
		d->img[i] = NULL;
		d->mem[i] = NULL;
	}
	if (d->budget)
		untrusted_release(d->budget, d->held);
	d->held = 0;
}
