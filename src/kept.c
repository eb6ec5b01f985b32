// SPDX-License-Identifier: MIT
#include "kept.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct kept {
	int dirfd;
	char dir[256];
	uint8_t tool[KEPT_TOOL_MAX];
	size_t tooln;
};

uint64_t kept_sum(uint64_t h, const void *p, size_t len)
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
	struct kept *k = ctx;

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
			    n->n_descsz <= KEPT_TOOL_MAX) {
				memcpy(k->tool, p + sizeof(*n) + name, n->n_descsz);
				k->tooln = n->n_descsz;
				return 1;
			}
			p += sizeof(*n) + name + desc;
		}
	}
	return 1;	/* the main program only */
}

bool kept_roots(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

int kept_open(struct kept **out, const char *dir)
{
	struct kept *k;
	struct stat st;

	*out = NULL;
	if (!dir)
		dir = getenv("STACKWALK_CACHE_DIR");
	if (!dir)
		dir = KEPT_DIR;
	if (!*dir || strlen(dir) >= sizeof(k->dir) || geteuid())
		return 0;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	dl_iterate_phdr(own_build_id, k);
	if (!k->tooln || (mkdir(dir, 0700) && errno != EEXIST)) {
		free(k);
		return 0;
	}
	k->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (k->dirfd < 0 || fstat(k->dirfd, &st) || !kept_roots(&st)) {
		if (k->dirfd >= 0)
			close(k->dirfd);
		free(k);
		return 0;
	}
	strcpy(k->dir, dir);
	*out = k;
	return 0;
}

void kept_free(struct kept *k)
{
	if (!k)
		return;
	close(k->dirfd);
	free(k);
}

const char *kept_dir(const struct kept *k)
{
	return k->dir;
}

int kept_dirfd(const struct kept *k)
{
	return k->dirfd;
}

const uint8_t *kept_tool(const struct kept *k, size_t *n)
{
	*n = k->tooln;
	return k->tool;
}

int kept_read_open(const struct kept *k, const char *name, struct stat *st)
{
	int fd = openat(k->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || !kept_roots(st)) {
		close(fd);
		return -1;
	}
	return fd;
}

bool kept_read(int fd, void *buf, size_t len, off_t at)
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

static bool write_all(int fd, const void *buf, size_t len)
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

bool kept_write(const struct kept *k, const char *name, const struct iovec *v,
		int n)
{
	char tmp[300];
	bool ok = true;
	int fd;

	snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
	fd = openat(k->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	for (int i = 0; i < n && ok; i++)
		ok = write_all(fd, v[i].iov_base, v[i].iov_len);
	if (close(fd) || !ok || renameat(k->dirfd, tmp, k->dirfd, name)) {
		unlinkat(k->dirfd, tmp, 0);
		return false;
	}
	return true;
}

/* A blob's head: then its key, then its bytes. */
struct blob_head {
	char magic[8];
	uint8_t tool[KEPT_TOOL_MAX];
	uint64_t tooln, keylen, len, sum;
};

#define BLOB_KEY_MAX	4096
#define BLOB_MAX	(1u << 20)

static const char blob_magic[8] = { 's', 'w', 'b', 'l', 'o', 'b', 0, 1 };

static void blob_head(const struct kept *k, struct blob_head *h, const void *key,
		      size_t keylen, const void *buf, size_t len)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, blob_magic, sizeof(blob_magic));
	memcpy(h->tool, k->tool, k->tooln);
	h->tooln = k->tooln;
	h->keylen = keylen;
	h->len = len;
	h->sum = kept_sum(kept_sum(0, key, keylen), buf, len);
}

/* By the tool's build too: two builds in turn keep theirs apart. */
static void blob_name(const struct kept *k, const char *name, char *out,
		      size_t len)
{
	snprintf(out, len, "%016llx", (unsigned long long)
		 kept_sum(kept_sum(0, k->tool, k->tooln), name, strlen(name)));
}

bool kept_blob_load(const struct kept *k, const char *name, const void *key,
		    size_t keylen, void *buf, size_t len)
{
	struct blob_head h, want;
	uint8_t kept_key[BLOB_KEY_MAX];
	char file[32];
	struct stat st;
	bool ok;
	int fd;

	if (!k || keylen > BLOB_KEY_MAX || len > BLOB_MAX)
		return false;
	blob_name(k, name, file, sizeof(file));
	fd = kept_read_open(k, file, &st);
	if (fd < 0)
		return false;
	ok = (uint64_t)st.st_size == sizeof(h) + keylen + len &&
	     kept_read(fd, &h, sizeof(h), 0) &&
	     kept_read(fd, kept_key, keylen, sizeof(h)) &&
	     !memcmp(kept_key, key, keylen) &&
	     kept_read(fd, buf, len, sizeof(h) + keylen);
	close(fd);
	if (!ok)
		return false;
	blob_head(k, &want, key, keylen, buf, len);
	return !memcmp(&h, &want, sizeof(h));
}

bool kept_blob_store(const struct kept *k, const char *name, const void *key,
		     size_t keylen, const void *buf, size_t len)
{
	struct blob_head h;
	struct iovec v[3];
	char file[32];

	if (!k || keylen > BLOB_KEY_MAX || len > BLOB_MAX)
		return false;
	blob_head(k, &h, key, keylen, buf, len);
	v[0] = (struct iovec){ &h, sizeof(h) };
	v[1] = (struct iovec){ (void *)key, keylen };
	v[2] = (struct iovec){ (void *)buf, len };
	blob_name(k, name, file, sizeof(file));
	return kept_write(k, file, v, 3);
}
