/* SPDX-License-Identifier: MIT */
/*
 * Every binary's unwind table once, its rows numbered as the BPF map
 * "cfi_rows" will hold them (bpf/cfi.h).  A file is known by (device,
 * inode), so that processes mapping libc, by any path or from any mount
 * namespace, share one table without opening it again.  Another file with
 * the same build-id (libc in a container) shares it too, once its own
 * table has been built and found the same: a build-id can be forged.
 * The vDSO is read from the process that maps it and known by its bytes
 * (a process may rewrite its own), shared by every process with the same.
 *
 * There are at most max_rows rows: a table that does not fit is
 * refused with -ENOSPC and counted, never cut short.  So is one whose
 * compressed CFI would inflate to more than the room left, uninflated.
 * A user other than root may hold a quarter of the rows for the files
 * they own, and one vDSO other than the kernel's (cfi_cache.c's OWNER_*):
 * no user's binaries take another's room.
 */
#ifndef SW_CFI_CACHE_H
#define SW_CFI_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include "../bpf/cfi.h"

struct cfi_cache;
struct proc_map;

struct cfi_stats {
	size_t tables;		/* binaries with a table */
	size_t rows;		/* rows of those tables */
	size_t bytes;		/* of those rows, as the BPF map holds them */
	size_t no_cfi;		/* binaries without usable CFI */
	size_t no_room;		/* binaries whose table did not fit */
	size_t no_room_rows;	/* the rows those would have needed */
	size_t no_room_inflate;	/* bytes of compressed CFI of those, refused
				   uninflated: more than the room for rows */
	size_t too_big;		/* binaries whose table no walk can search
				   (bpf/cfi.h: rows, span) */
	const char *too_big_name; /* the first of those, NULL if unnamed */
	size_t from_disk;	/* tables read back from the disk (cfi_disk.h) */
};

int cfi_cache_new(struct cfi_cache **out, uint32_t max_rows);
void cfi_cache_free(struct cfi_cache *c);

/*
 * Called once for each file refused (untrusted.h), as the symbolizer's
 * on_skip: what and why last for the call only.
 */
typedef void (*cfi_skip_fn)(void *ctx, const char *what, const char *why);
void cfi_cache_on_skip(struct cfi_cache *c, cfi_skip_fn fn, void *ctx);

/*
 * Called once for each file (device and inode) whose table cfi_cache_map
 * found, with its entry for "cfi_files" (bpf/cfi.h; gen not known yet):
 * m is one of pid's mappings of it.
 */
typedef void (*cfi_file_fn)(void *ctx, uint32_t pid, const struct proc_map *m,
			    const struct sw_cfi_file *f);
void cfi_cache_on_file(struct cfi_cache *c, cfi_file_fn fn, void *ctx);

/*
 * The BPF mapping entry for m, an executable mapping of pid (a file, opened
 * through /proc/PID/root first, or "[vdso]").  Returns 0; -ENOENT for a
 * mapping without CFI (anonymous memory, a file without CFI or that could
 * not be opened); -ENOSPC when its table did not fit; -EDQUOT when its
 * user has had their share (not tried, not kept); -ENOTSUP for no x86_64
 * file; -E2BIG, -ERANGE for a table beyond bpf/cfi.h's limits.
 * A binary that failed once is not tried again.
 */
int cfi_cache_map(struct cfi_cache *c, uint32_t pid, const struct proc_map *m,
		   struct sw_cfi_map *out);

/*
 * The entries of every executable mapping of pid that has a table, from
 * /proc/PID/maps, by address: at most max into maps, *nr of them;
 * *no_room: how many were left out (past max, or -EDQUOT); *lines: how
 * many lines the file had (what reading it cost).  Returns 0 or a
 * negative errno.
 *
 * With more than max, those kept are the main executable's lowest (where
 * the kernel mapped it: a copy mapped later is no more than any other
 * mapping), then the others from the highest address down: the kernel
 * puts ld.so and the libraries a process loads first highest, below its
 * stack, and each later mapping lower (or in a gap between them), so the
 * mappings a process made last (a loop of mmap, a thousand plugins) are
 * the ones left out, not libc's.
 */
int cfi_cache_proc(struct cfi_cache *c, uint32_t pid, struct sw_cfi_map *maps,
		    size_t max, size_t *nr, size_t *no_room, size_t *lines);

/* As cfi_cache_map, of a file already met: never opens one. */
int cfi_cache_known(struct cfi_cache *c, const struct proc_map *m,
		    struct sw_cfi_map *out);

/*
 * The table of the file at path, before any process maps it (pid 0 to
 * on_file): 0, or as cfi_cache_map.
 */
int cfi_cache_path(struct cfi_cache *c, const char *path);

/*
 * The kernel's vDSO, as ours is: its table, told to on_file as the file
 * of inode 0 (where a list built in BPF finds it), as cfi_cache_path.
 */
int cfi_cache_vdso(struct cfi_cache *c);

/*
 * The rows: what "cfi_rows" gets, index for index, each table's rows held
 * from its build until released.  cfi_cache_nr_rows: how many there are;
 * cfi_cache_held: from index at, how many rows held in one run (*rows),
 * 0 when none are; cfi_cache_row: row i, held or read back.
 */
size_t cfi_cache_nr_rows(const struct cfi_cache *c);
size_t cfi_cache_held(const struct cfi_cache *c, size_t at,
		      const struct sw_cfi_row **rows);
int cfi_cache_row(const struct cfi_cache *c, size_t i, struct sw_cfi_row *out);

/*
 * Where rows let go are read back from (the rows map): rows first.. of n
 * into out, 0 or -errno.  Without it nothing is released.
 */
typedef int (*cfi_read_fn)(void *ctx, size_t first, size_t n,
			   struct sw_cfi_row *out);
void cfi_cache_on_read(struct cfi_cache *c, cfi_read_fn fn, void *ctx);
/*
 * The tables whose rows all lie below upto are in the map: their memory
 * goes.  A table found again under another file is compared with what
 * read gives back.
 */
void cfi_cache_release(struct cfi_cache *c, size_t upto);

void cfi_cache_stats(const struct cfi_cache *c, struct cfi_stats *st);

struct cfi_disk;
/* Tables are read from d where it keeps them, and kept there once built. */
void cfi_cache_on_disk(struct cfi_cache *c, struct cfi_disk *d);

#endif
