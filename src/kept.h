/* SPDX-License-Identifier: MIT */
/*
 * Files kept between runs (/var/cache/stackwalk): the unwind tables of
 * cfi_disk.h and the kernel's answers of kfeatures_probe.  The tool runs
 * as root, and what it reads here steers what it loads into the kernel,
 * so only a directory root alone may write is used (made 0700 if it is
 * missing), and only entries that are regular files of root's alone,
 * never through a symlink.  Every entry carries the build-id of the tool
 * that wrote it: another build's are not read.  An entry is written
 * aside and renamed into place, so a reader sees all of it or none.
 */
#ifndef SW_KEPT_H
#define SW_KEPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#define KEPT_DIR	"/var/cache/stackwalk"
#define KEPT_TOOL_MAX	32

struct kept;

/*
 * The directory dir, or STACKWALK_CACHE_DIR's if set ("" for none) when
 * dir is NULL; NULL in *out when there is none to use (not root, or not
 * root's alone): 0, or -ENOMEM.
 */
int kept_open(struct kept **out, const char *dir);
void kept_free(struct kept *k);
const char *kept_dir(const struct kept *k);
int kept_dirfd(const struct kept *k);
/* This build's id, as entries carry it. */
const uint8_t *kept_tool(const struct kept *k, size_t *n);

/* Root's alone: its owner root, nobody else may write it. */
bool kept_roots(const struct stat *st);
/* The entry name, for reading, if regular and root's alone (*st): else -1. */
int kept_read_open(const struct kept *k, const char *name, struct stat *st);
/* len bytes at offset at of fd, all of them. */
bool kept_read(int fd, void *buf, size_t len, off_t at);
/* Writes the entry name from n parts: true once it is in place. */
bool kept_write(const struct kept *k, const char *name, const struct iovec *v,
		int n);
/*
 * A small entry, one of its name for each build of the tool (named as
 * tables are, so trimmed with them once old): len bytes, good while what
 * key says holds (compared whole).  Loaded only if written by this
 * build, with the same key and length, and whole.
 */
bool kept_blob_load(const struct kept *k, const char *name, const void *key,
		    size_t keylen, void *buf, size_t len);
bool kept_blob_store(const struct kept *k, const char *name, const void *key,
		     size_t keylen, const void *buf, size_t len);
/* A checksum over len bytes, on from h: against a torn disk, not an attacker. */
uint64_t kept_sum(uint64_t h, const void *p, size_t len);

#endif
