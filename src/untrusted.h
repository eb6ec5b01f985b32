/* SPDX-License-Identifier: MIT */
/*
 * Files and names that any local user may control, met by a tool that runs
 * as root: binaries and their debug files (a process's own, or through
 * /proc/PID/root), perf maps in /tmp, the symbol names inside them.
 *
 * Every reader of such a file opens it here, so that none can be made to
 * hang (a FIFO blocks open() and read(); the thread that reads files also
 * reads the signals), spin (a character device never ends), have a device
 * opened at all, or crash the tool (a mapping truncated behind its back
 * raises SIGBUS).
 */
#ifndef SW_UNTRUSTED_H
#define SW_UNTRUSTED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <libelf.h>

/*
 * At most this much of a file that a user other than root can write is
 * read into memory (a file only root can change is mapped instead).
 */
#define UNTRUSTED_READ_MAX (256ULL << 20)

/* The last component must not be a symbolic link (a perf map in /tmp). */
#define UNTRUSTED_NOFOLLOW 1

/* Something refused, for the one warning line the tool prints about it. */
struct untrusted_skip {
	const char *why;	/* NULL: nothing was refused */
	char what[4200];	/* the path, or which part of which file */
};

/*
 * Record a refusal; the first one wins, as a caller reports one per file.
 * what is a printf format.
 */
void untrusted_skip_set(struct untrusted_skip *sk, const char *why,
			const char *what, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Open path for reading: only a regular file, resolved without opening
 * anything else on the way, of at most UNTRUSTED_READ_MAX bytes unless only
 * root can change it.  Returns the fd (st filled) or a negative errno; a
 * refused file (as opposed to a missing or unreadable one) also sets
 * sk->why, when sk is not NULL.
 */
int untrusted_open(const char *path, int flags, struct stat *st,
		   struct untrusted_skip *sk);

/* What a file of this mode is when it is not a regular file; NULL if it is. */
const char *untrusted_not_regular(mode_t mode);

/* Whether only root can change the file: safe to map. */
bool untrusted_only_root(int fd, const struct stat *st);

/*
 * The ELF file at path, its fd already closed: mapped when only root can
 * change it, else read whole into memory (a mapping another user can
 * truncate would raise SIGBUS) that *mem holds, for free() after
 * elf_end().  NULL on failure, with *err set.
 */
Elf *untrusted_elf(const char *path, void **mem, int *err,
		   struct untrusted_skip *sk);

/*
 * Copy in to out (len bytes, NUL included) with every byte that is not
 * printable text written as \xNN: control bytes, DEL, malformed UTF-8, C1
 * controls, and the backslash itself, so that a name cannot drive the
 * terminal and every \x seen is ours.  Returns out; a name that does not
 * fit is cut at a whole character.
 */
char *untrusted_escape(char *out, size_t len, const char *in);

#endif
