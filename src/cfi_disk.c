// SPDX-License-Identifier: MIT
#include "cfi_disk.h"
#include "cfi.h"
#include "untrusted.h"
#include "vec.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* the format's name and version: another layout is another version */
static const char magic[8] = { 's', 'w', 'c', 'f', 'i', 0, 0, 1 };

/* t->source, as cfi.c names the sources a file's own sections give */
static const char *const sources[] = {
	".eh_frame", ".debug_frame", ".eh_frame and .debug_frame",
};

#define TOOL_ID_MAX	32
#define SEGS_MAX	64	/* executable segments of a file, at most */
#define ENTRIES_MAX	100000	/* read when trimming, at most */

/* An entry: this head, its segments, its rows. */
struct head {
	char magic[8];
	uint8_t tool[TOOL_ID_MAX];	/* the writer's build-id */
	uint32_t tooln;
	uint32_t source;		/* an index into sources */
	/* the file: what changes whenever its bytes do */
	uint64_t dev, ino, size;
	int64_t mtime, mtime_ns, ctime, ctime_ns;
	/* the table */
	uint64_t base, nr_rows, nr_segs, nr_fdes, nr_skipped, nr_overlaps;
	uint32_t idn, pad;
	uint8_t id[64];			/* the file's build-id */
	uint64_t sum;			/* of the segments and rows */
};

struct cfi_disk {
	int dirfd;
	char dir[256];
	uint8_t tool[TOOL_ID_MAX];
	size_t tooln;
	bool stored;			/* this run added an entry */
};

/* Not against an attacker (only root writes here): against a torn disk. */
static uint64_t sum_words(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t w;

	for (; len >= 8; b += 8, len -= 8) {
		memcpy(&w, b, sizeof(w));
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	for (; len; len--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/* The tool's own build-id, from its program headers: the main program is the first. */
static int own_build_id(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct cfi_disk *d = ctx;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			size_t name = (n->n_namesz + 3) & ~3u, desc = (n->n_descsz + 3) & ~3u;

			if ((size_t)(end - p) - sizeof(*n) < name + desc)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + sizeof(*n), "GNU", 4) &&
			    n->n_descsz <= TOOL_ID_MAX) {
				memcpy(d->tool, p + sizeof(*n) + name, n->n_descsz);
				d->tooln = n->n_descsz;
				return 1;
			}
			p += sizeof(*n) + name + desc;
		}
	}
	return 1;	/* the main program only */
}

/* Root's alone: its owner root, nobody else may write it. */
static bool roots(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int cfi_disk_open(struct cfi_disk **out, const char *dir)
{
	struct cfi_disk *d;
	struct stat st;

	*out = NULL;
	if (!dir || !*dir || strlen(dir) >= sizeof(d->dir) || geteuid())
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	dl_iterate_phdr(own_build_id, d);
	if (!d->tooln || (mkdir(dir, 0700) && errno != EEXIST)) {
		free(d);
		return 0;
	}
	d->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->dirfd < 0 || fstat(d->dirfd, &st) || !roots(&st)) {
		if (d->dirfd >= 0)
			close(d->dirfd);
		free(d);
		return 0;
	}
	strcpy(d->dir, dir);
	*out = d;
	return 0;
}

const char *cfi_disk_dir(const struct cfi_disk *d)
{
	return d->dir;
}

/* A file whose bytes only root can change, and whose times say when they did. */
static bool may_keep(const char *path, const struct stat *st)
{
	return S_ISREG(st->st_mode) && roots(st) && untrusted_path_not_fuse(path);
}

static void key(struct head *h, const struct stat *st)
{
	h->dev = st->st_dev;
	h->ino = st->st_ino;
	h->size = st->st_size;
	h->mtime = st->st_mtim.tv_sec;
	h->mtime_ns = st->st_mtim.tv_nsec;
	h->ctime = st->st_ctim.tv_sec;
	h->ctime_ns = st->st_ctim.tv_nsec;
}

/* By the file and the tool's build: two builds in turn keep theirs apart. */
static void entry_name(const struct cfi_disk *d, const struct head *h,
		       char *name, size_t len)
{
	snprintf(name, len, "%016llx", (unsigned long long)
		 sum_words(sum_words(0, d->tool, d->tooln), &h->dev,
			   offsetof(struct head, base) - offsetof(struct head, dev)));
}

static bool full_read(int fd, void *buf, size_t len, off_t at)
{
	while (len) {
		ssize_t r = pread(fd, buf, len, at);

		if (r <= 0)
			return false;
		buf = (char *)buf + r;
		len -= r;
		at += r;
	}
	return true;
}

static bool full_write(int fd, const void *buf, size_t len)
{
	while (len) {
		ssize_t r = write(fd, buf, len);

		if (r <= 0)
			return false;
		buf = (const char *)buf + r;
		len -= r;
	}
	return true;
}

/* What an entry's head says must be so, for the file of stat st. */
static bool head_ok(const struct cfi_disk *d, const struct head *h,
		    const struct head *want, const struct stat *est)
{
	return !memcmp(h->magic, magic, sizeof(magic)) && h->tooln == d->tooln &&
	       !memcmp(h->tool, d->tool, d->tooln) &&
	       !memcmp(&h->dev, &want->dev, offsetof(struct head, base) -
		       offsetof(struct head, dev)) &&
	       h->source < sizeof(sources) / sizeof(sources[0]) &&
	       h->nr_rows <= SW_CFI_TABLE_MAX && h->nr_segs <= SEGS_MAX &&
	       h->idn <= sizeof(h->id) &&
	       (uint64_t)est->st_size == sizeof(*h) + h->nr_segs *
		       sizeof(struct cfi_seg) + h->nr_rows * sizeof(struct sw_cfi_row);
}

int cfi_disk_load(struct cfi_disk *d, const char *path, const struct stat *st,
		  size_t max_rows, struct cfi_table **out, uint8_t *id,
		  size_t idmax, size_t *idn)
{
	struct head h, want = {};
	struct cfi_table *t = NULL;
	struct stat est;
	char name[32];
	int fd;

	if (!d || !may_keep(path, st))
		return -ENOENT;
	key(&want, st);
	entry_name(d, &want, name, sizeof(name));
	fd = openat(d->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &est) || !S_ISREG(est.st_mode) || !roots(&est) ||
	    !full_read(fd, &h, sizeof(h), 0) || !head_ok(d, &h, &want, &est) ||
	    h.idn > idmax || h.nr_rows > max_rows || !(t = calloc(1, sizeof(*t))))
		goto fail;
	t->segs = malloc(h.nr_segs * sizeof(*t->segs) + 1);
	t->rows = malloc(h.nr_rows * sizeof(*t->rows) + 1);
	if (!t->segs || !t->rows ||
	    !full_read(fd, t->segs, h.nr_segs * sizeof(*t->segs), sizeof(h)) ||
	    !full_read(fd, t->rows, h.nr_rows * sizeof(*t->rows),
		       sizeof(h) + h.nr_segs * sizeof(*t->segs)) ||
	    sum_words(sum_words(0, t->segs, h.nr_segs * sizeof(*t->segs)),
		      t->rows, h.nr_rows * sizeof(*t->rows)) != h.sum)
		goto fail;
	close(fd);
	t->nr_rows = h.nr_rows;
	t->nr_segs = h.nr_segs;
	t->base = h.base;
	t->nr_fdes = h.nr_fdes;
	t->nr_skipped = h.nr_skipped;
	t->nr_overlaps = h.nr_overlaps;
	t->source = sources[h.source];
	memcpy(id, h.id, h.idn);
	*idn = h.idn;
	*out = t;
	return 0;
fail:
	close(fd);
	cfi_table_free(t);
	return -ENOENT;
}

void cfi_disk_store(struct cfi_disk *d, const char *path, const struct stat *st,
		    const struct cfi_table *t, const uint8_t *id, size_t idn)
{
	struct head h = {};
	char name[32], tmp[64];
	size_t src;
	int fd;
	bool ok;

	if (!d || !t || idn > sizeof(h.id) || t->nr_segs > SEGS_MAX ||
	    !may_keep(path, st))
		return;
	/* a table from a separate debug file: that file is not in the key */
	for (src = 0; src < sizeof(sources) / sizeof(sources[0]); src++)
		if (!strcmp(t->source, sources[src]))
			break;
	if (src == sizeof(sources) / sizeof(sources[0]))
		return;
	memcpy(h.magic, magic, sizeof(magic));
	memcpy(h.tool, d->tool, d->tooln);
	h.tooln = d->tooln;
	h.source = src;
	key(&h, st);
	h.base = t->base;
	h.nr_rows = t->nr_rows;
	h.nr_segs = t->nr_segs;
	h.nr_fdes = t->nr_fdes;
	h.nr_skipped = t->nr_skipped;
	h.nr_overlaps = t->nr_overlaps;
	h.idn = idn;
	memcpy(h.id, id, idn);
	h.sum = sum_words(sum_words(0, t->segs, t->nr_segs * sizeof(*t->segs)),
			  t->rows, t->nr_rows * sizeof(*t->rows));
	entry_name(d, &h, name, sizeof(name));
	/* whole or not at all: written aside, then renamed into place */
	snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
	fd = openat(d->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ok = full_write(fd, &h, sizeof(h)) &&
	     full_write(fd, t->segs, t->nr_segs * sizeof(*t->segs)) &&
	     full_write(fd, t->rows, t->nr_rows * sizeof(*t->rows));
	if (close(fd) || !ok || renameat(d->dirfd, tmp, d->dirfd, name))
		unlinkat(d->dirfd, tmp, 0);
	else
		d->stored = true;
}

struct kept {
	char name[32];
	struct timespec mtime;
	off_t size;
};

static int cmp_older(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) - (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* The oldest entries go until what is kept is at most 3/4 of CFI_DISK_MAX. */
static void trim(struct cfi_disk *d)
{
	int fd = openat(d->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct kept *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *e;
	struct stat st;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while (n < ENTRIES_MAX && (e = readdir(dir))) {
		if (fstatat(d->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		/* one being written an hour ago is one a run left when it died */
		if (e->d_name[0] == '.' && st.st_mtim.tv_sec < time(NULL) - 3600)
			unlinkat(d->dirfd, e->d_name, 0);
		/* entries: 16 hex digits */
		if (strlen(e->d_name) != 16 ||
		    strspn(e->d_name, "0123456789abcdef") != 16 ||
		    VEC_GROW(v, n, cap, 64))
			continue;
		strcpy(v[n].name, e->d_name);
		v[n].mtime = st.st_mtim;
		v[n].size = st.st_size;
		total += st.st_size;
		n++;
	}
	closedir(dir);
	if (total > CFI_DISK_MAX) {
		qsort(v, n, sizeof(*v), cmp_older);
		for (size_t i = 0; i < n && total > CFI_DISK_MAX / 4 * 3; i++)
			if (!unlinkat(d->dirfd, v[i].name, 0))
				total -= v[i].size;
	}
	free(v);
}

void cfi_disk_free(struct cfi_disk *d)
{
	if (!d)
		return;
	if (d->stored)
		trim(d);
	close(d->dirfd);
	free(d);
}
