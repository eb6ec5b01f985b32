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
#include <stdint.h>
#include <sys/stat.h>

/*
 * At most this much of a file that a user other than root can write is
 * read (a file only root can change is mapped instead).
 */
#define UNTRUSTED_READ_MAX (256ULL << 20)

/*
 * Room in memory for what the files that users other than root can write
 * make the tool hold: the parts of them read, the symbols and perf map
 * entries taken from them.  One budget is shared by the readers of a run
 * (one thread); a charge past its limit is refused, and so is the file.
 */
#define UNTRUSTED_BUDGET_DEFAULT (64ULL << 20)
struct untrusted_budget {
	uint64_t limit;
	uint64_t held;
};

/* Take n bytes of b: false, with nothing taken, when they do not fit. */
bool untrusted_charge(struct untrusted_budget *b, uint64_t n);
void untrusted_release(struct untrusted_budget *b, uint64_t n);

/* The last component must not be a symbolic link (a perf map in /tmp). */
#define UNTRUSTED_NOFOLLOW 1

/* Something refused, for the one warning line the tool prints about it. */
struct untrusted_skip {
	const char *why;	/* NULL: nothing was refused */
	char what[4200];	/* the path, or which part of which file */
	/*
	 * Given by the caller: the room shared by the files read, or NULL
	 * for a file read and let go at once, which then has room of its
	 * own of UNTRUSTED_BUDGET_DEFAULT.
	 */
	struct untrusted_budget *budget;
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
/* The file at path is on no FUSE file system, whose server says what its files hold. */
bool untrusted_path_not_fuse(const char *path);

/*
 * Copy in to out (len bytes, NUL included) with every byte that is not
 * printable text written as \xNN: control bytes, DEL, malformed UTF-8, C1
 * controls, and the backslash itself, so that a name cannot drive the
 * terminal and every \x seen is ours.  Returns out; a name that does not
 * fit is cut at a whole character.
 */
char *untrusted_escape(char *out, size_t len, const char *in);

#endif
