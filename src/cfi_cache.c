// SPDX-License-Identifier: MIT OR GPL-2.0
#include "cfi_cache.h"
#include "cfi.h"
#include "elf_file.h"
#include "procs.h"
#include "untrusted.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* the vDSO is a page or two of code: more than this is not one */
#define VDSO_MAX	(1u << 20)
#define BUILD_ID_MAX	64

/* One binary: its rows in the store, or why it has none. */
struct bin {
	uint8_t id[BUILD_ID_MAX];	/* build-id, or a digest of a vDSO without */
	size_t idn;
	int err;		/* 0, or why there is no table: not tried again */
	uint32_t first, count;
	uint64_t base;
	struct cfi_seg *segs;
	size_t nr_segs;
};

/* (device, inode) of a file mapped somewhere: several may name one bin. */
struct ino_slot {
	uint64_t ino;
	uint32_t maj, min;
	size_t bin1;		/* bin index + 1; 0: a free slot */
};

struct cfi_cache {
	struct sw_cfi_row *rows;
	size_t nr_rows, cap_rows, max_rows;
	struct bin *bins;
	size_t nr_bins, cap_bins;
	/* open addressing, at most half full */
	struct ino_slot *by_ino;
	size_t *by_id;		/* bin index + 1 */
	size_t cap_index, nr_ino;
	size_t no_room_rows;
	cfi_skip_fn on_skip;
	void *on_skip_ctx;
};

int cfi_cache__new(struct cfi_cache **out, uint32_t max_rows)
{
	struct cfi_cache *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->max_rows = max_rows;
	c->cap_index = 64;
	c->by_ino = calloc(c->cap_index, sizeof(*c->by_ino));
	c->by_id = calloc(c->cap_index, sizeof(*c->by_id));
	if (!c->by_ino || !c->by_id) {
		cfi_cache__free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void cfi_cache__free(struct cfi_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_bins; i++)
		free(c->bins[i].segs);
	free(c->bins);
	free(c->rows);
	free(c->by_ino);
	free(c->by_id);
	free(c);
}

void cfi_cache__on_skip(struct cfi_cache *c, cfi_skip_fn fn, void *ctx)
{
	c->on_skip = fn;
	c->on_skip_ctx = ctx;
}

static size_t hash_ino(uint32_t maj, uint32_t min, uint64_t ino)
{
	return (ino * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)maj << 20 | min);
}

static size_t hash_id(const uint8_t *id, size_t n)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ id[i]) * 1099511628211ull;
	return h;
}

static struct ino_slot *ino_slot(struct ino_slot *tab, size_t cap, uint32_t maj,
				 uint32_t min, uint64_t ino)
{
	size_t i = hash_ino(maj, min, ino) & (cap - 1);

	while (tab[i].bin1 && !(tab[i].ino == ino && tab[i].maj == maj &&
				tab[i].min == min))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static size_t *id_slot(const struct cfi_cache *c, size_t *tab, size_t cap,
		       const uint8_t *id, size_t n)
{
	size_t i = hash_id(id, n) & (cap - 1);

	while (tab[i]) {
		const struct bin *b = &c->bins[tab[i] - 1];

		if (b->idn == n && !memcmp(b->id, id, n))
			break;
		i = (i + 1) & (cap - 1);
	}
	return &tab[i];
}

/* Room for one more key of each kind, both tables at most half full. */
static int grow_index(struct cfi_cache *c)
{
	size_t cap = c->cap_index * 2, i;
	struct ino_slot *ino;
	size_t *id;

	if (2 * (c->nr_ino + 1) <= c->cap_index &&
	    2 * (c->nr_bins + 1) <= c->cap_index)
		return 0;
	ino = calloc(cap, sizeof(*ino));
	id = calloc(cap, sizeof(*id));
	if (!ino || !id) {
		free(ino);
		free(id);
		return -ENOMEM;
	}
	for (i = 0; i < c->cap_index; i++) {
		const struct ino_slot *s = &c->by_ino[i];

		if (s->bin1)
			*ino_slot(ino, cap, s->maj, s->min, s->ino) = *s;
		if (c->by_id[i]) {
			const struct bin *b = &c->bins[c->by_id[i] - 1];

			*id_slot(c, id, cap, b->id, b->idn) = c->by_id[i];
		}
	}
	free(c->by_ino);
	free(c->by_id);
	c->by_ino = ino;
	c->by_id = id;
	c->cap_index = cap;
	return 0;
}

static int find_id(struct cfi_cache *c, const uint8_t *id, size_t n)
{
	size_t *s;

	if (!n)
		return -1;
	s = id_slot(c, c->by_id, c->cap_index, id, n);
	return *s ? (int)(*s - 1) : -1;
}

static int add_ino(struct cfi_cache *c, const struct proc_map *m, int bin)
{
	struct ino_slot *s;
	int err;

	if (!m || !m->ino)
		return 0;
	err = grow_index(c);
	if (err)
		return err;
	s = ino_slot(c->by_ino, c->cap_index, m->maj, m->min, m->ino);
	if (!s->bin1)
		c->nr_ino++;
	*s = (struct ino_slot){ m->ino, m->maj, m->min, (size_t)bin + 1 };
	return 0;
}

/*
 * A new bin for t (NULL: err says why there is none), known by id and,
 * when m names a file, by its inode.  Returns its index or -ENOMEM.
 */
static int add_bin(struct cfi_cache *c, const struct proc_map *m,
		   const uint8_t *id, size_t idn, struct cfi_table *t, int err)
{
	struct bin *b;
	void *p;
	int i;

	if (grow_index(c))
		return -ENOMEM;
	if (c->nr_bins == c->cap_bins) {
		size_t cap = c->cap_bins ? 2 * c->cap_bins : 16;

		p = realloc(c->bins, cap * sizeof(*c->bins));
		if (!p)
			return -ENOMEM;
		c->bins = p;
		c->cap_bins = cap;
	}
	b = &c->bins[c->nr_bins];
	memset(b, 0, sizeof(*b));
	b->idn = idn <= BUILD_ID_MAX ? idn : 0;
	memcpy(b->id, id, b->idn);
	b->err = err;
	if (t && t->nr_rows > c->max_rows - c->nr_rows) {
		b->err = -ENOSPC;
		c->no_room_rows += t->nr_rows;
	} else if (t) {
		if (c->nr_rows + t->nr_rows > c->cap_rows) {
			size_t cap = c->cap_rows ? c->cap_rows : 4096;

			while (cap < c->nr_rows + t->nr_rows)
				cap *= 2;
			p = realloc(c->rows, cap * sizeof(*c->rows));
			if (!p)
				return -ENOMEM;
			c->rows = p;
			c->cap_rows = cap;
		}
		memcpy(c->rows + c->nr_rows, t->rows, t->nr_rows * sizeof(*t->rows));
		b->first = c->nr_rows;
		b->count = t->nr_rows;
		b->base = t->base;
		b->segs = t->segs;
		b->nr_segs = t->nr_segs;
		t->segs = NULL;
		c->nr_rows += t->nr_rows;
	}
	i = (int)c->nr_bins++;
	if (b->idn)
		*id_slot(c, c->by_id, c->cap_index, b->id, b->idn) = i + 1;
	return add_ino(c, m, i) ? -ENOMEM : i;
}

/* Whether bin b holds exactly t: rows, base and segments. */
static bool same_table(const struct cfi_cache *c, const struct bin *b,
		       const struct cfi_table *t)
{
	return !b->err && b->count == t->nr_rows && b->base == t->base &&
	       b->nr_segs == t->nr_segs &&
	       !memcmp(b->segs, t->segs, t->nr_segs * sizeof(*t->segs)) &&
	       !memcmp(c->rows + b->first, t->rows, t->nr_rows * sizeof(*t->rows));
}

/*
 * The bin of an ELF file already open.  A build-id is anyone's to write:
 * a file claiming libc's must not lend its rows to libc.  So the table is
 * built, and shared with the bin of the same build-id only if it is the
 * same; else it gets a bin of its own, found by its inode alone.
 */
static int bin_of(struct cfi_cache *c, const struct proc_map *m,
		  struct elf_file *ef, const char *path, const uint8_t *id,
		  size_t idn)
{
	struct untrusted_skip sk = {};
	struct cfi_table *t = NULL;
	int i = find_id(c, id, idn), err;

	err = cfi_table__from_elf(&t, ef, path, &sk);
	if (sk.why && c->on_skip)
		c->on_skip(c->on_skip_ctx, sk.what, sk.why);
	if (i >= 0 && t && same_table(c, &c->bins[i], t))
		i = add_ino(c, m, i) ? -ENOMEM : i;
	else
		i = add_bin(c, m, i < 0 ? id : NULL, i < 0 ? idn : 0, t, err);
	cfi_table__free(t);
	return i;
}

/* A mapped file, through the process's root first (another mount ns). */
static int file_bin(struct cfi_cache *c, uint32_t pid, const struct proc_map *m)
{
	struct untrusted_skip sk = {};
	struct elf_file *ef = NULL;
	char root[4200];
	const char *paths[2] = { root, m->path }, *path = NULL;
	struct ino_slot *s;
	const uint8_t *id;
	size_t idn;
	int i;

	if (m->ino) {
		s = ino_slot(c->by_ino, c->cap_index, m->maj, m->min, m->ino);
		if (s->bin1)
			return (int)s->bin1 - 1;
	}
	snprintf(root, sizeof(root), "/proc/%u/root%s", pid, m->path);
	for (i = 0; i < 2 && !ef; i++) {
		struct stat st;

		/* the file at the path may no longer be the one mapped */
		if (m->ino && (stat(paths[i], &st) || st.st_ino != m->ino))
			continue;
		if (!elf_file__open(&ef, paths[i], &sk))
			path = paths[i];
	}
	if (sk.why && c->on_skip)
		c->on_skip(c->on_skip_ctx, sk.what, sk.why);
	if (!ef)
		return add_bin(c, m, NULL, 0, NULL, -ENOENT);
	idn = elf_file__build_id(ef, &id);
	i = bin_of(c, m, ef, path, id, idn);
	elf_file__free(ef);
	return i;
}

/* The vDSO as the process sees it: the kernel's, 64-bit or not. */
static int vdso_bin(struct cfi_cache *c, uint32_t pid, const struct proc_map *m)
{
	uint64_t len = m->end - m->start, digest;
	struct elf_file *ef;
	const uint8_t *id;
	char path[64];
	size_t idn;
	void *mem;
	ssize_t n;
	int fd, i;

	if (!len || len > VDSO_MAX)
		return -EFBIG;
	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	mem = malloc(len);
	n = mem ? pread(fd, mem, len, (off_t)m->start) : -1;
	close(fd);
	if (n != (ssize_t)len) {
		free(mem);
		return -EIO;
	}
	digest = hash_id(mem, len);
	if (elf_file__from_memory(&ef, mem, len))
		return add_bin(c, NULL, (const uint8_t *)&digest, sizeof(digest),
			       NULL, -ENOEXEC);
	idn = elf_file__build_id(ef, &id);
	if (!idn) {
		id = (const uint8_t *)&digest;
		idn = sizeof(digest);
	}
	i = bin_of(c, NULL, ef, NULL, id, idn);
	elf_file__free(ef);
	return i;
}

int cfi_cache__map(struct cfi_cache *c, uint32_t pid, const struct proc_map *m,
		   struct sw_cfi_map *out)
{
	struct cfi_table view = {};
	const struct bin *b;
	uint64_t bias;
	int i;

	if (!m->exec)
		return -ENOENT;
	if (!strcmp(m->path, "[vdso]"))
		i = vdso_bin(c, pid, m);
	else if (m->path[0] == '/')
		i = file_bin(c, pid, m);
	else
		return -ENOENT;
	if (i < 0)
		return i;
	b = &c->bins[i];
	if (b->err)
		return b->err;
	view.base = b->base;
	view.segs = b->segs;
	view.nr_segs = b->nr_segs;
	if (cfi_table__bias(&view, m->start, m->pgoff, &bias))
		return -ENOENT;
	*out = (struct sw_cfi_map){ m->start, m->end, bias, b->first, b->count };
	return 0;
}

int cfi_cache__proc(struct cfi_cache *c, uint32_t pid, struct sw_cfi_map *maps,
		    size_t max, size_t *nr, size_t *no_room)
{
	char path[64], *line = NULL;
	size_t len = 0;
	struct proc_map m;
	FILE *f;
	int err = 0;

	*nr = *no_room = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && getline(&line, &len, f) > 0) {
		struct sw_cfi_map e;
		int r;

		if (!procs_parse_maps_line(line, &m) || !m.exec)
			continue;
		r = cfi_cache__map(c, pid, &m, &e);
		if (r == -ENOMEM)
			err = r;
		else if (!r && *nr < max)
			maps[(*nr)++] = e;
		else if (!r)
			(*no_room)++;
	}
	free(line);
	fclose(f);
	return err;
}

const struct sw_cfi_row *cfi_cache__rows(const struct cfi_cache *c, size_t *n)
{
	*n = c->nr_rows;
	return c->rows;
}

void cfi_cache__stats(const struct cfi_cache *c, struct cfi_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < c->nr_bins; i++) {
		if (!c->bins[i].err)
			st->tables++;
		else if (c->bins[i].err == -ENOSPC)
			st->no_room++;
		else
			st->no_cfi++;
	}
	st->rows = c->nr_rows;
	st->bytes = c->nr_rows * sizeof(*c->rows);
	st->no_room_rows = c->no_room_rows;
}
