// SPDX-License-Identifier: MIT
#include "cfi_disk.h"
#include "cfi.h"
#include "kept.h"
#include "untrusted.h"
#include "vec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

#define SEGS_MAX	64	/* executable segments of a file, at most */
#define ENTRIES_MAX	100000	/* read when trimming, at most */

/* An entry: this head, its segments, its rows. */
struct head {
	char magic[8];
	uint8_t tool[KEPT_TOOL_MAX];	/* the writer's build-id */
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
	struct kept *k;
	const uint8_t *tool;		/* the tool's build-id */
	size_t tooln;
	bool stored;			/* this run added an entry */
};

int cfi_disk_open(struct cfi_disk **out, const char *dir)
{
	struct cfi_disk *d;
	int e;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	e = kept_open(&d->k, dir);
	if (e || !d->k) {
		free(d);
		return e;
	}
	d->tool = kept_tool(d->k, &d->tooln);
	*out = d;
	return 0;
}

const char *cfi_disk_dir(const struct cfi_disk *d)
{
	return kept_dir(d->k);
}

/* A file whose bytes only root can change, and whose times say when they did. */
static bool may_keep(const char *path, const struct stat *st)
{
	return S_ISREG(st->st_mode) && kept_roots(st) && untrusted_path_not_fuse(path);
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
		 kept_sum(kept_sum(0, d->tool, d->tooln), &h->dev,
			   offsetof(struct head, base) - offsetof(struct head, dev)));
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
	fd = kept_read_open(d->k, name, &est);
	if (fd < 0)
		return -ENOENT;
	if (!kept_read(fd, &h, sizeof(h), 0) || !head_ok(d, &h, &want, &est) ||
	    h.idn > idmax || h.nr_rows > max_rows || !(t = calloc(1, sizeof(*t))))
		goto fail;
	t->segs = malloc(h.nr_segs * sizeof(*t->segs) + 1);
	t->rows = malloc(h.nr_rows * sizeof(*t->rows) + 1);
	if (!t->segs || !t->rows ||
	    !kept_read(fd, t->segs, h.nr_segs * sizeof(*t->segs), sizeof(h)) ||
	    !kept_read(fd, t->rows, h.nr_rows * sizeof(*t->rows),
		       sizeof(h) + h.nr_segs * sizeof(*t->segs)) ||
	    kept_sum(kept_sum(0, t->segs, h.nr_segs * sizeof(*t->segs)),
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
	struct iovec v[3];
	char name[32];
	size_t src;

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
	h.sum = kept_sum(kept_sum(0, t->segs, t->nr_segs * sizeof(*t->segs)),
			  t->rows, t->nr_rows * sizeof(*t->rows));
	entry_name(d, &h, name, sizeof(name));
	v[0] = (struct iovec){ &h, sizeof(h) };
	v[1] = (struct iovec){ t->segs, t->nr_segs * sizeof(*t->segs) };
	v[2] = (struct iovec){ t->rows, t->nr_rows * sizeof(*t->rows) };
	if (kept_write(d->k, name, v, 3))
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
	int dirfd = kept_dirfd(d->k);
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		/* one being written an hour ago is one a run left when it died */
		if (e->d_name[0] == '.' && st.st_mtim.tv_sec < time(NULL) - 3600)
			unlinkat(dirfd, e->d_name, 0);
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
			if (!unlinkat(dirfd, v[i].name, 0))
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
	kept_free(d->k);
	free(d);
}
