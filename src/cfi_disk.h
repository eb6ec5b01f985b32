/* SPDX-License-Identifier: MIT */
/*
 * Unwind tables kept on disk between runs (/var/cache/stackwalk), so
 * that a start does not build again what an earlier run built: reading a
 * table back takes a fraction of a millisecond where building it takes
 * milliseconds (a python3.11 process with libstdc++: 20 ms).
 *
 * Only a file that root alone can change, on a file system that is not
 * FUSE, is kept, and known by what changes whenever its bytes do: device,
 * inode, size, modification and change times.  Only a table from the
 * file's own sections is kept (not one from a separate debug file), and
 * it is written and read by this very build of the tool, in a directory
 * of root's alone (kept.h), and read only whole (a checksum).  At most
 * CFI_DISK_MAX bytes are kept, the oldest entries going first.
 */
#ifndef SW_CFI_DISK_H
#define SW_CFI_DISK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct cfi_disk;
struct cfi_table;

#define CFI_DISK_MAX	(64ull << 20)

/*
 * The cache at dir (NULL: as kept_open() finds it), or NULL in *out when
 * there is none to use: 0, or -ENOMEM.
 */
int cfi_disk_open(struct cfi_disk **out, const char *dir);
/* Trims what is kept to CFI_DISK_MAX if this run added to it. */
void cfi_disk_free(struct cfi_disk *d);
const char *cfi_disk_dir(const struct cfi_disk *d);

/*
 * The table of the file at path, whose stat is st, and its build-id (at
 * most idmax bytes into id, *idn of them), if kept and of at most
 * max_rows rows (more are not read: building it says it does not fit):
 * 0, else -ENOENT.
 */
int cfi_disk_load(struct cfi_disk *d, const char *path, const struct stat *st,
		  size_t max_rows, struct cfi_table **t, uint8_t *id,
		  size_t idmax, size_t *idn);
/* Keeps t (built from the file at path) if it may be kept. */
void cfi_disk_store(struct cfi_disk *d, const char *path, const struct stat *st,
		    const struct cfi_table *t, const uint8_t *id, size_t idn);

#endif
