/* SPDX-License-Identifier: MIT */
/*
 * The cfi walker's unwind tables in the kernel: every executable mapping
 * of a process, its binary's table built once (cfi_cache.h), pushed into
 * the BPF maps bpf/cfi.h lays out.  A process is (re)loaded whole from
 * /proc/PID/maps whenever it may have mapped something new, at a bounded
 * rate.
 *
 * Nothing is dropped silently: a table or a process that does not fit is
 * counted in the stats, which --debug prints and stackcount reports.
 */
#ifndef SW_UNWIND_H
#define SW_UNWIND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cfi_cache.h"

struct proc_map;

struct unwind;

struct unwind_stats {
	struct cfi_stats cfi;
	size_t procs;		/* processes with mappings in the kernel */
	size_t replaced;	/* lists built in BPF that ours replaced */
	size_t maps;		/* their mappings with a table */
	size_t procs_no_room;	/* processes the maps had no room for */
	size_t maps_no_room;	/* mappings left out, each once: past
				   SW_CFI_PROC_MAPS a process, or a vDSO
				   past its user's (cfi_cache.c) */
	double ms;		/* spent building and loading, in all */
};

/*
 * max_rows: the size of the rows map; the fds: the walker's maps
 * (files_fd -1: none, before 5.17), or all -1 before they exist: then
 * only unwind_warm may be called until unwind_bind gives them.
 */
int unwind_new(struct unwind **out, uint32_t max_rows, int rows_fd,
		int procs_fd, int files_fd);
void unwind_bind(struct unwind *u, int rows_fd, int procs_fd, int files_fd);
/*
 * Unbound: the tables of pid's binaries (0: every process's) built now,
 * into memory only (at most a bounded number of rows), while the maps do
 * not exist yet; stops early once *stop is set.  unwind_add_proc and
 * unwind_add_all then find them built.  0 or -errno.
 */
int unwind_warm(struct unwind *u, uint32_t pid, const atomic_bool *stop);
void unwind_free(struct unwind *u);
void unwind_on_skip(struct unwind *u, cfi_skip_fn fn, void *ctx);
/* Tables kept between runs (cfi_disk.h; NULL: none). */
void unwind_on_disk(struct unwind *u, struct cfi_disk *d);

/* Load pid's mappings now: 0, or -errno (-ENOENT: the process is gone). */
int unwind_add_proc(struct unwind *u, uint32_t pid);
/*
 * 5.17+: the table of the file at path, for any process that maps it
 * later (one that has not started yet): 0 or -ENOMEM; a file without a
 * table is no error.
 */
int unwind_add_file(struct unwind *u, const char *path);

/* The kernel's vDSO's table, as unwind_add_file (src/cfi_cache.h). */
int unwind_add_vdso(struct unwind *u);
/* Every process there is now. */
int unwind_add_all(struct unwind *u);

/*
 * pid mapped code: its maps are read again now, or, when they were read
 * lately, once the wait after that read is over (unwind.c says how long):
 * unwind_flush does it then.
 */
int unwind_mapped(struct unwind *u, uint32_t pid);
/* When the next waiting read is due (now_ms's clock, ms), or -1: none. */
double unwind_due(const struct unwind *u);
/* The waiting reads that are due (all: every one): 0 or -ENOMEM. */
int unwind_flush(struct unwind *u, bool all);

/*
 * The row the walker used for address addr of pid: exact for the frame
 * where the event fired or one a signal interrupted, else a return
 * address (looked up one byte before).  file (may be NULL): the mapping
 * that holds it, as the process had it, for a process without a list
 * (5.17+).  Into *row: 0, or -ENOENT for no mapping or row there (the
 * walker then took a frame-pointer step).
 */
int unwind_row(const struct unwind *u, uint32_t pid, uint64_t addr,
	       bool exact, const struct proc_map *file, struct sw_cfi_row *row);

void unwind_stats(const struct unwind *u, struct unwind_stats *st);

#endif
