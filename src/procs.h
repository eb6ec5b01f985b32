/* SPDX-License-Identifier: MIT */
/*
 * What processes had mapped, kept after they exit so that their user frames
 * can still be named.  Processes are keyed by tgid; threads share it.
 *
 * Each exec (and each fork into a reused pid) starts a new generation.
 * Older mappings stay, but a lookup prefers the newest mapping containing
 * the address: the newest generation, and within it the latest mmap (perf
 * reports no munmap, so a later mapping over a range replaces the earlier).
 */
#ifndef SW_PROCS_H
#define SW_PROCS_H

#include <stdbool.h>
#include <stddef.h>
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
	/*
	 * The inode's generation (the kernel's mmap record has it): a file
	 * created later under a freed inode's number has another, so a cache
	 * by inode must not take one for the other.  igen_known: given.
	 */
	uint32_t igen;
	bool igen_known;
	bool exec;
	uint32_t prot;		/* rwxs as bits 0-3, as the kernel's VM_READ ... VM_SHARED */
};

/*
 * One line of /proc/PID/maps, "start-end perms offset maj:min inode path",
 * into *m (m->path points into line); false for a line with no path (m->end
 * is still set where the rest was read).
 */
bool procs_parse_maps_line(char *line, struct proc_map *m);

/*
 * Where file offset off of the file with inode ino is mapped writable in
 * pid (a data segment's private copy): 0, -ENOENT, or -errno.  By inode
 * alone, as a file seen through overlayfs has another device in the
 * process's maps than stat() gives.
 */
int procs_writable_at(uint32_t pid, uint64_t ino, uint64_t off, uint64_t *addr);

/* The process of a thread, while it lives; the thread itself after. */
uint32_t procs_tgid_of(uint32_t tid);

/*
 * /proc/PID/map_files/START-END for m: the very file pid maps there, while
 * pid lives, even deleted, replaced on disk or in another mount namespace
 * (root only).  Whoever opens it checks the inode is m's: pids are reused.
 */
void procs_map_file(uint32_t pid, const struct proc_map *m, char *buf,
		    size_t len);
/*
 * The generation of the inode at path, which must be number ino: 0, or
 * -errno (-ENOTTY where the file system keeps none, -ESTALE another inode).
 */
int procs_file_igen(const char *path, uint64_t ino, uint32_t *igen);
/* len bytes at start in pid's memory, in a new buffer: 0 or -errno. */
int procs_read_mem(uint32_t pid, uint64_t start, size_t len, uint8_t **out);
/* A vDSO larger than this is not read: the kernel's are a few pages. */
#define PROCS_VDSO_MAX	(1u << 20)
/* This process's vDSO, the kernel's own, in a new buffer: 0 or -errno. */
int procs_own_vdso(uint8_t **out, size_t *len);
/* Whether m's path is one the kernel marked as deleted since the mmap. */
bool procs_map_deleted(const struct proc_map *m);

int procs_new(struct procs **out);
void procs_free(struct procs *p);

/*
 * Which processes the mmap, exec, comm and fork news is kept for: every
 * one (the default), only those traced (procs_trace), or those and every
 * process they start.  News of any other process is dropped: a trace of
 * one process must not grow with all the system runs.
 */
enum procs_scope { PROCS_ALL, PROCS_ONE, PROCS_TREE };
void procs_set_scope(struct procs *p, enum procs_scope scope);
/* pid is traced from now on (a -p PID, a COMMAND); 0 or -ENOMEM. */
int procs_trace(struct procs *p, uint32_t pid);
/* Whether news of pid is kept. */
bool procs_wants(const struct procs *p, uint32_t pid);

/*
 * Snapshot /proc/PID/maps into pid's current generation (entries with a
 * path: files, and [vdso]-like names the symbolizer will skip).
 */
int procs_load(struct procs *p, uint32_t pid);

/*
 * Read /proc/PID/maps once for a process whose mappings were not all seen
 * from its start (it predates the sideband); a no-op otherwise.
 */
int procs_ensure(struct procs *p, uint32_t pid);
/* One new mapping; m->path is copied and m->gen ignored. */
int procs_mmap(struct procs *p, uint32_t pid, const struct proc_map *m);

/* pid replaced its image: a new generation, named comm. */
int procs_exec(struct procs *p, uint32_t pid, const char *comm);

/* A rename without exec (prctl(PR_SET_NAME) and the like). */
int procs_set_comm(struct procs *p, uint32_t pid, const char *comm);

/*
 * A new process (not a thread: those share their tgid's entry) that starts
 * with a copy of parent's current mappings and comm.
 */
int procs_fork(struct procs *p, uint32_t child, uint32_t parent);

/*
 * The process is gone; everything about it is kept until procs_evict
 * finds that no one needs it.
 */
void procs_exit(struct procs *p, uint32_t pid);

/*
 * Start the next round of news (one sideband drain).  A process seen
 * exiting in a round is evicted no sooner than the round after: its
 * children's fork records, written on other CPUs before it exited, may
 * only arrive with the next round.
 */
void procs_next_round(struct procs *p);
/* Processes seen exiting and not evicted yet. */
size_t procs_nr_dead(const struct procs *p);
/*
 * Forget every process that exited before this round and that keep (NULL:
 * none) does not claim: its frames will never be asked for again.  Returns
 * how many went, or -ENOMEM (then nothing went).
 */
typedef bool (*procs_keep_fn)(void *ctx, uint32_t pid);
long procs_evict(struct procs *p, procs_keep_fn keep, void *ctx);

/*
 * The newest mapping of pid containing addr, or NULL.  The pointer holds
 * until the next change to pid's entry.
 */
const struct proc_map *procs_find(const struct procs *p, uint32_t pid,
				   uint64_t addr);

/* The last comm seen for pid, or NULL when pid is unknown. */
const char *procs_comm(const struct procs *p, uint32_t pid);

/*
 * pid's owner (effective uid) as last read from /proc (at its exec, or
 * when its maps were read), inherited over fork; 0 when never read.
 */
uint32_t procs_uid(const struct procs *p, uint32_t pid);

/* Whether pid's last exec was heard of, and a mapping of its new image. */
bool procs_image_seen(const struct procs *p, uint32_t pid);

/* Whether pid is known and not seen exiting. */
bool procs_alive(const struct procs *p, uint32_t pid);

#endif /* SW_PROCS_H */
