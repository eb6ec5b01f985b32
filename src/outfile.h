/* SPDX-License-Identifier: MIT */
/*
 * A file the tool writes for the user (--pprof, --svg), as root, in
 * directories other users may write.  Nothing is opened through a symbolic
 * link another user owns, nothing is opened that could block (a FIFO),
 * and the target is never written through: the output goes to a file of
 * our own, created beside it, renamed over it once complete.  A failed run
 * leaves the target as it was.
 */
#ifndef SW_OUTFILE_H
#define SW_OUTFILE_H

#include <stdio.h>
#include <sys/types.h>

struct outfile {
	int dirfd;		/* the target's directory; -1: none open */
	char *name;		/* the target's name in it */
	char *tmp;		/* our file's name in it, until renamed */
	FILE *f;		/* writes to it; the first error is kept */
	int fd;
	int err;
};

/*
 * Create the file that will become path (mode 0644, whatever the umask):
 * 0, or -errno with *why set when the target was refused (a symbolic
 * link, not a regular file, another user's).
 */
int outfile_open(struct outfile *o, const char *path, const char **why);
/*
 * Complete it (flushed, synced) and rename it over the target: 0, or
 * -errno, the first write error if any (then nothing is renamed).
 */
int outfile_commit(struct outfile *o);
/*
 * A stdio cookie's write to fd: all of buf, or -1 with the first error
 * kept exactly in *err (stdio keeps only a flag, and errno is long gone).
 */
ssize_t outfile_write_fd(int fd, int *err, const char *buf, size_t n);
/* Remove what outfile_open created, if it is still there. */
void outfile_free(struct outfile *o);

#endif
