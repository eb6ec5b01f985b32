/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * What processes had mapped, kept after they exit so that their user frames
 * can still be named.  Processes are keyed by tgid; threads share it.
 *
 * Each exec (and each fork into a reused pid) starts a new generation.
 * Older mappings stay, but a lookup prefers the newest mapping containing
 * the address: the newest generation, and within it the latest mmap (perf
 * reports no munmap, so a later mapping over a range replaces the earlier).
 */
#ifndef PROCS_H
#define PROCS_H

#include <stdbool.h>
#include <stdint.h>

#define PROCS_COMM_LEN 16

struct procs;

struct proc_map {
	uint64_t start, end;	/* [start, end) in the process */
	uint64_t pgoff;		/* file offset of start */
	uint32_t maj, min;	/* device; 0:0 when unknown */
	uint64_t ino;		/* 0 when unknown */
	const char *path;	/* as the kernel printed it; owned by procs */
	uint32_t gen;
	bool exec;
};

/* The process of a thread, while it lives; the thread itself after. */
uint32_t procs_tgid_of(uint32_t tid);

int procs__new(struct procs **out);
void procs__free(struct procs *p);

/*
 * Snapshot /proc/PID/maps into pid's current generation (entries with a
 * path: files, and [vdso]-like names the symbolizer will skip).
 */
int procs__load(struct procs *p, uint32_t pid);

/*
 * Read /proc/PID/maps once for a process whose mappings were not all seen
 * from its start (it predates the sideband); a no-op otherwise.
 */
int procs__ensure(struct procs *p, uint32_t pid);
/* One new mapping; m->path is copied and m->gen ignored. */
int procs__mmap(struct procs *p, uint32_t pid, const struct proc_map *m);

/* pid replaced its image: a new generation, named comm. */
int procs__exec(struct procs *p, uint32_t pid, const char *comm);

/* A rename without exec (prctl(PR_SET_NAME) and the like). */
int procs__set_comm(struct procs *p, uint32_t pid, const char *comm);

/*
 * A new process (not a thread: those share their tgid's entry) that starts
 * with a copy of parent's current mappings and comm.
 */
int procs__fork(struct procs *p, uint32_t child, uint32_t parent);

/* The process is gone; everything about it is kept. */
void procs__exit(struct procs *p, uint32_t pid);

/*
 * The newest mapping of pid containing addr, or NULL.  The pointer holds
 * until the next change to pid's entry.
 */
const struct proc_map *procs__find(const struct procs *p, uint32_t pid,
				   uint64_t addr);

/* The last comm seen for pid, or NULL when pid is unknown. */
const char *procs__comm(const struct procs *p, uint32_t pid);

/*
 * pid's owner (effective uid) as last read from /proc (at its exec, or
 * when its maps were read), inherited over fork; 0 when never read.
 */
uint32_t procs__uid(const struct procs *p, uint32_t pid);

/* Whether pid is known and not seen exiting. */
bool procs__alive(const struct procs *p, uint32_t pid);

#endif /* PROCS_H */
