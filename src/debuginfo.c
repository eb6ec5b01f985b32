// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "debuginfo.h"

static const char *debug_dir(void)
{
	const char *d = getenv("STACKWALK_DEBUG_DIR");

	return d && *d ? d : "/usr/lib/debug";
}

static Elf_Scn *section(Elf *elf, const char *name, GElf_Shdr *sh)
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

static int add(struct debuginfo *d, Elf *elf, int fd, void *mem)
{
	for (int i = 0; i < DEBUGINFO_MAX; i++) {
		if (!d->elf[i]) {
			d->elf[i] = elf;
			d->fd[i] = fd;
			d->mem[i] = mem;
			return 0;
		}
	}
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(mem);
	return -ENOSPC;
}

/* An ELF file with a symbol table, kept open; crc checked when non-zero. */
static Elf *open_debug(const char *path, uint32_t crc, bool check_crc, int *fdp)
{
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (check_crc) {
		unsigned char buf[65536];
		uLong c = crc32(0, Z_NULL, 0);
		ssize_t n;

		while ((n = read(fd, buf, sizeof(buf))) > 0)
			c = crc32(c, buf, n);
		if (n < 0 || c != crc) {
			close(fd);
			return NULL;
		}
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return NULL;
	}
	*fdp = fd;
	return elf;
}

static int by_build_id(struct debuginfo *d, const uint8_t *id, size_t n)
{
	char path[4096];
	size_t len;
	Elf *elf;
	int fd;

	if (n < 2)
		return -ENOENT;
	len = snprintf(path, sizeof(path), "%s/.build-id/%02x/", debug_dir(), id[0]);
	for (size_t i = 1; i < n && len + 3 < sizeof(path); i++)
		len += snprintf(path + len, sizeof(path) - len, "%02x", id[i]);
	snprintf(path + len, sizeof(path) - len, ".debug");
	elf = open_debug(path, 0, false, &fd);
	return elf ? add(d, elf, fd, NULL) : -ENOENT;
}

/* .gnu_debuglink: a file name, padding to 4 bytes, then the file's CRC32. */
static int by_debuglink(struct debuginfo *d, const char *path, Elf *elf)
{
	char dir[4096], cand[8192];
	const char *slash = strrchr(path, '/');
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn = section(elf, ".gnu_debuglink", &sh);
	const char *name;
	uint32_t crc;
	size_t off;
	int fd;

	if (!scn || !(data = elf_getdata(scn, NULL)) || !data->d_size)
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
		e = open_debug(cand, crc, true, &fd);
		if (e)
			return add(d, e, fd, NULL);
	}
	return -ENOENT;
}

/* .gnu_debugdata: an xz stream of a small ELF with a .symtab. */
static int by_debugdata(struct debuginfo *d, Elf *elf)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = 0, len = 0;
	unsigned char *out = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	Elf_Scn *scn = section(elf, ".gnu_debugdata", &sh);
	lzma_ret r;
	Elf *mini;

	if (!scn || !(data = elf_getdata(scn, NULL)) || !data->d_size)
		return -ENOENT;
	if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = data->d_buf;
	strm.avail_in = data->d_size;
	do {
		if (len == cap) {
			unsigned char *p = realloc(out, cap = cap ? 2 * cap : 4 * data->d_size);

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
	if (r != LZMA_STREAM_END) {
		free(out);
		return -EINVAL;
	}
	mini = elf_memory((char *)out, len);
	if (!mini || elf_kind(mini) != ELF_K_ELF) {
		if (mini)
			elf_end(mini);
		free(out);
		return -EINVAL;
	}
	return add(d, mini, -1, out);
}

int debuginfo_find(struct debuginfo *d, const char *path, Elf *elf,
		   const uint8_t *build_id, size_t build_id_size)
{
	memset(d, 0, sizeof(*d));
	for (int i = 0; i < DEBUGINFO_MAX; i++)
		d->fd[i] = -1;
	/* a full debug file first; MiniDebugInfo adds to .dynsym alone */
	if (by_build_id(d, build_id, build_id_size) && by_debuglink(d, path, elf))
		by_debugdata(d, elf);
	return d->elf[0] ? 0 : -ENOENT;
}

void debuginfo_free(struct debuginfo *d)
{
	for (int i = 0; i < DEBUGINFO_MAX; i++) {
		if (d->elf[i])
			elf_end(d->elf[i]);
		if (d->fd[i] >= 0)
			close(d->fd[i]);
		free(d->mem[i]);
		d->elf[i] = NULL;
		d->fd[i] = -1;
		d->mem[i] = NULL;
	}
}
