// SPDX-License-Identifier: MIT
#include "cfi_cache.h"
#include "cfi.h"
#include "cfi_disk.h"
#include "elf_file.h"
#include "htab.h"
#include "procs.h"
#include "untrusted.h"
#include "vec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* the vDSO is a page or two of code: more than this is not one */
/*
 * No user's binaries push out another's: a user other than root (the
 * owner of a file, or of a process for its vDSO) may hold at most a
 * OWNER_SHARE-th of the rows and OWNER_BINS binaries, and one vDSO that
 * is not the kernel's own (the kernel has one x86_64 vDSO; another is a
 * 32-bit one, without a table, or one its process rewrote).  Root's
 * vDSOs are counted the same.
 */
#define OWNER_SHARE	4
#define OWNER_BINS	4096
#define VDSO_PER_OWNER	1
#define BUILD_ID_MAX	64

/* One binary: its rows (numbered from first), or why it has none. */
struct bin {
	uint8_t id[BUILD_ID_MAX];	/* build-id, or a digest of a vDSO without */
	size_t idn;
	int err;		/* 0, or why there is no table: not tried again */
	uint32_t first, count;
	struct sw_cfi_row *rows;	/* its rows until released, else NULL */
	uint64_t base;
	struct cfi_seg *segs;
	size_t nr_segs;
	uint8_t *mem;		/* a vDSO's bytes: what it is known by */
	size_t mem_len;
	uint64_t mem_hash;
};

/*
 * What a user's binaries hold: the rows and binaries of files they own,
 * and the vDSOs of their processes but the kernel's own (one that was
 * rewritten, or a 32-bit one).
 */
struct owner_use {
	uint32_t uid;
	size_t rows, bins, vdsos;
};

/* (device, inode) of a file mapped somewhere: several may name one bin. */
struct ino_slot {
	size_t bin1;		/* bin index + 1; 0: a free slot */
	uint64_t ino;
	uint32_t maj, min;
	bool told;		/* handed to on_file */
};

/* A bin by its build-id, whose hash the slot keeps for rehashing. */
struct id_slot {
	size_t bin1;
	uint64_t hash;
};

struct cfi_cache {
	size_t nr_rows, max_rows;	/* rows given out; the room for them */
	struct bin *bins;
	size_t nr_bins, cap_bins;
	uint32_t *tabled;	/* the bins with rows, by first row */
	size_t nr_tabled, cap_tabled;
	cfi_read_fn read;	/* where released rows are */
	void *read_ctx;
	struct htab by_ino;	/* of struct ino_slot */
	struct htab by_id;	/* of struct id_slot */
	size_t no_room_rows, no_room_inflate;
	size_t too_big;
	char *too_big_name;	/* the first too big for a walk to search */
	struct owner_use *owners;
	size_t nr_owners, cap_owners;
	size_t *vdsos;		/* the bins of vDSOs: few, see OWNER_* */
	size_t nr_vdsos, cap_vdsos;
	uint8_t *own_vdso;	/* the kernel's vDSO, as this process has it */
	size_t own_vdso_len;
	bool own_vdso_read;
	bool vdso_told;		/* the kernel's, handed to on_file */
	cfi_skip_fn on_skip;
	void *on_skip_ctx;
	cfi_file_fn on_file;
	void *on_file_ctx;
	struct cfi_disk *disk;	/* tables kept between runs, or NULL */
	size_t from_disk;	/* tables read back from it */
};

static size_t hash_ino(uint32_t maj, uint32_t min, uint64_t ino)
{
	return (ino * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)maj << 20 | min);
}

static bool slot_used(const void *slot)
{
	return *(const size_t *)slot;	/* bin1, first in both */
}

static size_t ino_hash(const void *slot)
{
	const struct ino_slot *s = slot;

	return hash_ino(s->maj, s->min, s->ino);
}

static bool same_ino(const void *slot, const void *key)
{
	const struct ino_slot *s = slot;
	const struct proc_map *m = key;

	return s->ino == m->ino && s->maj == m->maj && s->min == m->min;
}

static size_t id_hash(const void *slot)
{
	return ((const struct id_slot *)slot)->hash;
}

struct id_key {
	const struct cfi_cache *c;
	const uint8_t *id;
	size_t n;
	uint64_t hash;
};

static bool same_id(const void *slot, const void *key)
{
	const struct id_slot *s = slot;
	const struct id_key *k = key;
	const struct bin *b = &k->c->bins[s->bin1 - 1];

	return s->hash == k->hash && b->idn == k->n && !memcmp(b->id, k->id, k->n);
}

static const struct htab_ops ino_ops = {
	.size = sizeof(struct ino_slot), .min = 64, .hash = ino_hash,
	.used = slot_used,
};

static const struct htab_ops id_ops = {
	.size = sizeof(struct id_slot), .min = 64, .hash = id_hash,
	.used = slot_used,
};

int cfi_cache_new(struct cfi_cache **out, uint32_t max_rows)
{
	struct cfi_cache *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->max_rows = max_rows;
	if (htab_init(&c->by_ino, &ino_ops, ino_ops.min) ||
	    htab_init(&c->by_id, &id_ops, id_ops.min)) {
		cfi_cache_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void cfi_cache_free(struct cfi_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_bins; i++) {
		free(c->bins[i].segs);
		free(c->bins[i].mem);
		free(c->bins[i].rows);
	}
	free(c->bins);
	free(c->tabled);
	free(c->too_big_name);
	free(c->owners);
	free(c->vdsos);
	free(c->own_vdso);
	free(c->by_ino.slots);
	free(c->by_id.slots);
	free(c);
}

void cfi_cache_on_skip(struct cfi_cache *c, cfi_skip_fn fn, void *ctx)
{
	c->on_skip = fn;
	c->on_skip_ctx = ctx;
}

void cfi_cache_on_file(struct cfi_cache *c, cfi_file_fn fn, void *ctx)
{
	c->on_file = fn;
	c->on_file_ctx = ctx;
}

void cfi_cache_on_read(struct cfi_cache *c, cfi_read_fn fn, void *ctx)
{
	c->read = fn;
	c->read_ctx = ctx;
}

static struct id_slot *id_slot(struct cfi_cache *c, const uint8_t *id, size_t n)
{
	struct id_key k = { c, id, n, htab_hash_bytes(id, n) };

	return htab_find(&c->by_id, &id_ops, k.hash, same_id, &k);
}

static struct ino_slot *ino_slot(struct cfi_cache *c, const struct proc_map *m)
{
	return htab_find(&c->by_ino, &ino_ops, hash_ino(m->maj, m->min, m->ino),
			 same_ino, m);
}

static int find_id(struct cfi_cache *c, const uint8_t *id, size_t n)
{
	struct id_slot *s;

	if (!n)
		return -1;
	s = id_slot(c, id, n);
	return s->bin1 ? (int)(s->bin1 - 1) : -1;
}

static int add_ino(struct cfi_cache *c, const struct proc_map *m, int bin)
{
	struct ino_slot *s;

	if (!m || !m->ino)
		return 0;
	if (htab_reserve(&c->by_ino, &ino_ops))
		return -ENOMEM;
	s = ino_slot(c, m);
	if (!s->bin1)
		c->by_ino.nr++;
	*s = (struct ino_slot){ (size_t)bin + 1, m->ino, m->maj, m->min, false };
	return 0;
}

/*
 * A new bin for t (NULL: err says why there is none), known by id and,
 * when m names a file, by its inode.  Returns its index or -ENOMEM.
 */
static struct owner_use *owner_use(struct cfi_cache *c, uint32_t uid)
{
	struct owner_use *u;

	for (size_t i = 0; i < c->nr_owners; i++)
		if (c->owners[i].uid == uid)
			return &c->owners[i];
	if (VEC_GROW(c->owners, c->nr_owners, c->cap_owners, 16))
		return NULL;
	u = &c->owners[c->nr_owners++];
	*u = (struct owner_use){ .uid = uid };
	return u;
}

/* The rows of t would take more than u's share (none: root's). */
static bool over_share(const struct cfi_cache *c, const struct owner_use *u,
		       const struct cfi_table *t)
{
	return u && t->nr_rows > c->max_rows / OWNER_SHARE - u->rows;
}

static int add_bin(struct cfi_cache *c, const struct proc_map *m,
		   const uint8_t *id, size_t idn, struct cfi_table *t, int err,
		   uint32_t owner)
{
	struct owner_use *u = NULL;
	struct bin *b;
	int i;

	if (owner && !(u = owner_use(c, owner)))
		return -ENOMEM;
	if (u && u->bins >= OWNER_BINS)
		return -EDQUOT;
	if (VEC_GROW(c->bins, c->nr_bins, c->cap_bins, 16) ||
	    VEC_GROW(c->tabled, c->nr_tabled, c->cap_tabled, 16) ||
	    htab_reserve(&c->by_id, &id_ops))
		return -ENOMEM;
	b = &c->bins[c->nr_bins];
	memset(b, 0, sizeof(*b));
	b->idn = idn <= BUILD_ID_MAX ? idn : 0;
	memcpy(b->id, id, b->idn);
	b->err = err;
	/* more rows than a search reaches, or a span past 32-bit row PCs */
	if (err == -E2BIG || err == -ERANGE) {
		c->too_big++;
		if (!c->too_big_name && m && m->path && m->path[0])
			c->too_big_name = strdup(m->path);
	}
	if (u)
		u->bins++;
	if (t && (t->nr_rows > c->max_rows - c->nr_rows ||
		  over_share(c, u, t))) {
		b->err = -ENOSPC;
		c->no_room_rows += t->nr_rows;
	} else if (t) {
		/* the table's rows are the bin's now: no copy */
		b->rows = t->rows;
		t->rows = NULL;
		b->first = c->nr_rows;
		b->count = t->nr_rows;
		if (b->count)	/* a bin_at search never lands on one without */
			c->tabled[c->nr_tabled++] = (uint32_t)c->nr_bins;
		b->base = t->base;
		b->segs = t->segs;
		b->nr_segs = t->nr_segs;
		t->segs = NULL;
		c->nr_rows += t->nr_rows;
		if (u)
			u->rows += t->nr_rows;
	}
	i = (int)c->nr_bins++;
	if (b->idn) {
		struct id_slot *s = id_slot(c, b->id, b->idn);

		if (!s->bin1)
			c->by_id.nr++;
		*s = (struct id_slot){ (size_t)i + 1, htab_hash_bytes(b->id, b->idn) };
	}
	return add_ino(c, m, i) ? -ENOMEM : i;
}

/* Whether b's rows, held or read back a block at a time, are rows. */
static bool same_rows(const struct cfi_cache *c, const struct bin *b,
		      const struct sw_cfi_row *rows)
{
	struct sw_cfi_row buf[1024];
	const size_t block = sizeof(buf) / sizeof(*buf);

	if (b->rows)
		return !memcmp(b->rows, rows, b->count * sizeof(*rows));
	if (!c->read)
		return false;
	for (size_t at = 0; at < b->count; at += block) {
		size_t n = b->count - at < block ? b->count - at : block;

		if (c->read(c->read_ctx, b->first + at, n, buf) ||
		    memcmp(buf, rows + at, n * sizeof(*buf)))
			return false;
	}
	return true;
}

/* Whether bin b holds exactly t: rows, base and segments. */
static bool same_table(const struct cfi_cache *c, const struct bin *b,
		       const struct cfi_table *t)
{
	return !b->err && b->count == t->nr_rows && b->base == t->base &&
	       b->nr_segs == t->nr_segs &&
	       !memcmp(b->segs, t->segs, t->nr_segs * sizeof(*t->segs)) &&
	       same_rows(c, b, t->rows);
}

/*
 * The bin of a file's table t (or of err).  A build-id is anyone's to
 * write: a file claiming libc's must not lend its rows to libc.  So the
 * table is shared with the bin of the same build-id only if it is the
 * same; else it gets a bin of its own, found by its inode alone.
 */
static int bin_with(struct cfi_cache *c, const struct proc_map *m,
		    struct cfi_table *t, int err, const uint8_t *id, size_t idn,
		    uint32_t owner)
{
	int i = find_id(c, id, idn);

	if (i >= 0 && t && same_table(c, &c->bins[i], t))
		i = add_ino(c, m, i) ? -ENOMEM : i;
	else
		i = add_bin(c, m, i < 0 ? id : NULL, i < 0 ? idn : 0, t, err,
			    owner);
	cfi_table_free(t);
	return i;
}

/* The bin of an ELF file already open (stat st): its table built, and kept. */
static int bin_of(struct cfi_cache *c, const struct proc_map *m,
		  struct elf_file *ef, const char *path, const struct stat *st)
{
	struct untrusted_skip sk = {};
	struct cfi_table *t = NULL;
	const uint8_t *id;
	size_t idn = elf_file_build_id(ef, &id), need;
	int err;

	/* CFI that inflates to more than the rows' room left cannot fit */
	err = cfi_table_from_elf_room(&t, ef, path, &sk, (c->max_rows -
				      c->nr_rows) * sizeof(struct sw_cfi_row),
				      &need);
	c->no_room_inflate += need;
	if (sk.why && c->on_skip)
		c->on_skip(c->on_skip_ctx, sk.what, sk.why);
	if (!err)
		cfi_disk_store(c->disk, path, st, t, id, idn);
	return bin_with(c, m, t, err, id, idn, st->st_uid);
}

/*
 * A mapped file: the one the process maps (deleted or replaced since, or
 * in another mount namespace), else through its root, else by its path.
 */
static int file_bin(struct cfi_cache *c, uint32_t pid, const struct proc_map *m)
{
	struct untrusted_skip sk = {};
	struct elf_file *ef = NULL;
	char mapped[96], root[4200];
	const char *paths[3] = { mapped, root, m->path }, *path = NULL;
	struct cfi_table *kept;
	struct ino_slot *s;
	uint8_t id[BUILD_ID_MAX];
	struct stat st;
	size_t idn;
	int i;

	if (m->ino) {
		s = ino_slot(c, m);
		if (s->bin1)
			return (int)s->bin1 - 1;
	}
	procs_map_file(pid, m, mapped, sizeof(mapped));
	snprintf(root, sizeof(root), "/proc/%u/root%s", pid, m->path);
	for (i = 0; i < 3 && !ef; i++) {
		/* the file at the path may no longer be the one mapped */
		if (stat(paths[i], &st) || (m->ino && st.st_ino != m->ino))
			continue;
		if (!cfi_disk_load(c->disk, paths[i], &st, c->max_rows - c->nr_rows,
				   &kept, id, sizeof(id), &idn)) {
			c->from_disk++;
			return bin_with(c, m, kept, 0, id, idn, st.st_uid);
		}
		if (!elf_file_open_own(&ef, paths[i], false, &sk))
			path = paths[i];
	}
	if (sk.why && c->on_skip)
		c->on_skip(c->on_skip_ctx, sk.what, sk.why);
	if (!ef)
		return add_bin(c, m, NULL, 0, NULL, -ENOENT, 0);
	i = bin_of(c, m, ef, path, &st);
	elf_file_free(ef);
	return i;
}

/* The process's real user, which the vDSO it rewrote is charged to. */
static int uid_of(uint32_t pid, uint32_t *uid)
{
	char path[64], line[256];
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u", uid) == 1)
			err = 0;
	fclose(f);
	return err;
}

/* The kernel's x86_64 vDSO, as this process has it: NULL if unread. */
static const uint8_t *own_vdso(struct cfi_cache *c)
{
	if (!c->own_vdso_read) {
		c->own_vdso_read = true;
		procs_own_vdso(&c->own_vdso, &c->own_vdso_len);
	}
	return c->own_vdso;
}

/* Whether mem is the kernel's x86_64 vDSO. */
static bool kernel_vdso(struct cfi_cache *c, const uint8_t *mem, size_t len)
{
	return own_vdso(c) && len == c->own_vdso_len &&
	       !memcmp(mem, c->own_vdso, len);
}

/*
 * The vDSO as the process sees it, known by its bytes: a process can
 * rewrite its own, so neither its build-id nor whose it is says what it
 * holds.  The kernel's is shared by all; another is charged to the
 * process's user (OWNER_* above).  -EDQUOT: that user has had theirs.
 */
static int vdso_bin(struct cfi_cache *c, uint32_t pid, const struct proc_map *m)
{
	uint64_t len = m->end - m->start, digest;
	struct cfi_table *t = NULL;
	struct owner_use *u = NULL;
	struct elf_file *ef;
	uint8_t *mem = NULL, *copy;
	uint32_t uid = 0;
	int i, err;
	size_t need;

	if (!len || len > PROCS_VDSO_MAX)
		return -EFBIG;
	err = procs_read_mem(pid, m->start, len, &mem);
	if (err)
		return err;
	/* not by_id: a file's build-id may be any bytes, a digest too */
	digest = htab_hash_bytes(mem, len);
	for (size_t k = 0; k < c->nr_vdsos; k++) {
		const struct bin *b = &c->bins[c->vdsos[k]];

		if (b->mem_hash == digest && b->mem_len == len &&
		    !memcmp(b->mem, mem, len)) {
			free(mem);
			return (int)c->vdsos[k];
		}
	}
	if (!kernel_vdso(c, mem, len)) {
		err = uid_of(pid, &uid);
		u = err ? NULL : owner_use(c, uid);
		if (!u || u->vdsos >= VDSO_PER_OWNER) {
			free(mem);
			return err ? err : u ? -EDQUOT : -ENOMEM;
		}
	}
	copy = malloc(len);
	if (!copy || VEC_GROW(c->vdsos, c->nr_vdsos, c->cap_vdsos, 4)) {
		free(copy);
		free(mem);
		return -ENOMEM;
	}
	memcpy(copy, mem, len);
	if (elf_file_from_memory(&ef, mem, len)) {
		ef = NULL;
		err = -ENOEXEC;
	} else {
		err = cfi_table_from_elf_room(&t, ef, NULL, NULL, (c->max_rows -
					      c->nr_rows) * sizeof(struct sw_cfi_row), &need);
		c->no_room_inflate += need;
	}
	i = add_bin(c, NULL, NULL, 0, t, err, uid);
	cfi_table_free(t);
	elf_file_free(ef);
	if (i < 0) {
		free(copy);
		return i;
	}
	c->bins[i].mem = copy;
	c->bins[i].mem_len = len;
	c->bins[i].mem_hash = digest;
	c->vdsos[c->nr_vdsos++] = (size_t)i;
	if (u)
		owner_use(c, uid)->vdsos++;
	return i;
}

/*
 * A file's table, the first time its inode is seen, to on_file; one
 * without (no CFI, or none that fits) with no rows, so that its frames
 * are known to take frame-pointer steps, not to wait for a table.
 */
static void tell_bin(struct cfi_cache *c, uint32_t pid, const struct proc_map *m,
		     const struct bin *b)
{
	struct sw_cfi_file f = { .first = b->first, .count = b->count };

	if (b->err)
		f.count = 0;
	for (size_t i = 0; f.count && i < b->nr_segs && f.nr < SW_CFI_FILE_SEGS;
	     i++, f.nr++) {
		const struct cfi_seg *g = &b->segs[i];

		f.seg[f.nr].lo = g->offset & ~4095ULL;
		f.seg[f.nr].end = g->offset + g->filesz;
		f.seg[f.nr].delta = g->offset - g->vaddr + b->base;
	}
	c->on_file(c->on_file_ctx, pid, m, &f);
}

static void tell_file(struct cfi_cache *c, uint32_t pid, const struct proc_map *m,
		      const struct bin *b)
{
	struct ino_slot *s = m->ino ? ino_slot(c, m) : NULL;

	if (!c->on_file || !s || !s->bin1 || s->told)
		return;
	s->told = true;
	tell_bin(c, pid, m, b);
}

/*
 * The kernel's vDSO, once, as the file of inode 0 on device 0: where a
 * list built in BPF from a process's VMAs finds its vDSO's table
 * (bpf/cfi.bpf.c).  One a process rewrote is its own: never told.
 */
static void tell_vdso(struct cfi_cache *c, uint32_t pid, const struct proc_map *m,
		      const struct bin *b)
{
	struct proc_map k = *m;

	if (!c->on_file || c->vdso_told || !kernel_vdso(c, b->mem, b->mem_len))
		return;
	c->vdso_told = true;
	k.ino = 0;
	k.maj = k.min = 0;
	tell_bin(c, pid, &k, b);
}

/* The entry for mapping m of bin b: 0, b's error, or -ENOENT. */
static int bin_map(const struct bin *b, const struct proc_map *m,
		   struct sw_cfi_map *out)
{
	struct cfi_table view = {};
	uint64_t bias;

	if (b->err)
		return b->err;
	view.base = b->base;
	view.segs = b->segs;
	view.nr_segs = b->nr_segs;
	if (cfi_table_bias(&view, m->start, m->pgoff, &bias))
		return -ENOENT;
	*out = (struct sw_cfi_map){ m->start, m->end, bias, b->first, b->count };
	return 0;
}

int cfi_cache_map(struct cfi_cache *c, uint32_t pid, const struct proc_map *m,
		   struct sw_cfi_map *out)
{
	const struct bin *b;
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
	if (m->path[0] == '/')
		tell_file(c, pid, m, b);
	else
		tell_vdso(c, pid, m, b);
	return bin_map(b, m, out);
}

int cfi_cache_known(struct cfi_cache *c, const struct proc_map *m,
		    struct sw_cfi_map *out)
{
	struct ino_slot *s = m->ino ? ino_slot(c, m) : NULL;

	if (!s || !s->bin1)
		return -ENOENT;
	return bin_map(&c->bins[s->bin1 - 1], m, out);
}

int cfi_cache_path(struct cfi_cache *c, const char *path)
{
	struct proc_map m = { .path = path, .exec = true };
	struct stat st;
	int i;

	if (stat(path, &st))
		return -errno;
	m.ino = st.st_ino;
	m.maj = major(st.st_dev);
	m.min = minor(st.st_dev);
	i = file_bin(c, 0, &m);
	if (i < 0)
		return i;
	tell_file(c, 0, &m, &c->bins[i]);
	return c->bins[i].err;
}

int cfi_cache_vdso(struct cfi_cache *c)
{
	struct proc_map m = { .path = "[vdso]", .exec = true };
	int i;

	m.start = getauxval(AT_SYSINFO_EHDR);
	if (!own_vdso(c) || !m.start)
		return -ENOENT;
	m.end = m.start + c->own_vdso_len;
	i = vdso_bin(c, (uint32_t)getpid(), &m);
	if (i < 0)
		return i;
	tell_vdso(c, 0, &m, &c->bins[i]);
	return c->bins[i].err;
}

/* Entries by start address. */
static int cmp_start(const void *a, const void *b)
{
	const struct sw_cfi_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Of the n entries in v (by address), max into out, as cfi_cache_proc
 * says: the main executable's (main[i]) first, then from the highest down.
 */
static size_t keep(const struct sw_cfi_map *v, const bool *main, size_t n,
		   struct sw_cfi_map *out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n && k < max; i++)
		if (main[i])
			out[k++] = v[i];
	for (size_t i = n; i-- > 0 && k < max;)
		if (!main[i])
			out[k++] = v[i];
	qsort(out, k, sizeof(*out), cmp_start);
	return k;
}

int cfi_cache_proc(struct cfi_cache *c, uint32_t pid, struct sw_cfi_map *maps,
		    size_t max, size_t *nr, size_t *no_room, size_t *lines)
{
	char path[64], *line = NULL;
	size_t len = 0, n = 0, cap = 0, cap_main = 0;
	struct sw_cfi_map *v = NULL;
	bool *main = NULL;
	struct proc_map m;
	struct stat exe;
	FILE *f;
	int err = 0;

	*nr = *no_room = *lines = 0;
	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	if (stat(path, &exe))
		exe.st_ino = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && getline(&line, &len, f) > 0) {
		struct sw_cfi_map e;
		int r;

		(*lines)++;
		if (!procs_parse_maps_line(line, &m) || !m.exec)
			continue;
		r = cfi_cache_map(c, pid, &m, &e);
		if (r == -ENOMEM)
			err = r;
		else if (r == -EDQUOT)
			(*no_room)++;	/* its user has had their share */
		else if (r)
			continue;
		else if (VEC_GROW(v, n, cap, 64) ||
			 VEC_GROW(main, n, cap_main, 64))
			err = -ENOMEM;
		else {
			/* its lowest: the kernel's, not a copy mapped later */
			main[n] = m.ino && m.ino == exe.st_ino &&
				  m.maj == major(exe.st_dev) &&
				  m.min == minor(exe.st_dev);
			exe.st_ino = main[n] ? 0 : exe.st_ino;
			v[n++] = e;
		}
	}
	free(line);
	fclose(f);
	if (!err) {
		*nr = keep(v, main, n, maps, max);
		*no_room += n - *nr;
	}
	free(v);
	free(main);
	return err;
}

size_t cfi_cache_nr_rows(const struct cfi_cache *c)
{
	return c->nr_rows;
}

/* The bin whose rows hold row i, or NULL. */
static const struct bin *bin_at(const struct cfi_cache *c, size_t i)
{
	size_t lo = 0, hi = c->nr_tabled;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->bins[c->tabled[mid]].first <= i)
			lo = mid;
		else
			hi = mid;
	}
	if (lo < c->nr_tabled) {
		const struct bin *b = &c->bins[c->tabled[lo]];

		if (i >= b->first && i - b->first < b->count)
			return b;
	}
	return NULL;
}

size_t cfi_cache_held(const struct cfi_cache *c, size_t at,
		      const struct sw_cfi_row **rows)
{
	const struct bin *b = bin_at(c, at);

	if (!b || !b->rows)
		return 0;
	*rows = b->rows + (at - b->first);
	return b->first + b->count - at;
}

void cfi_cache_release(struct cfi_cache *c, size_t upto)
{
	if (!c->read)
		return;
	for (size_t i = 0; i < c->nr_tabled; i++) {
		struct bin *b = &c->bins[c->tabled[i]];

		if (b->rows && b->first + b->count <= upto) {
			free(b->rows);
			b->rows = NULL;
		}
	}
}

int cfi_cache_row(const struct cfi_cache *c, size_t i, struct sw_cfi_row *out)
{
	const struct bin *b = bin_at(c, i);

	if (!b)
		return -ENOENT;
	if (b->rows) {
		*out = b->rows[i - b->first];
		return 0;
	}
	return c->read ? c->read(c->read_ctx, i, 1, out) : -ENOENT;
}

void cfi_cache_stats(const struct cfi_cache *c, struct cfi_stats *st)
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
	st->bytes = c->nr_rows * sizeof(struct sw_cfi_row);
	st->no_room_rows = c->no_room_rows;
	st->no_room_inflate = c->no_room_inflate;
	st->too_big = c->too_big;
	st->too_big_name = c->too_big_name;
	st->from_disk = c->from_disk;
}

void cfi_cache_on_disk(struct cfi_cache *c, struct cfi_disk *d)
{
	c->disk = d;
}
