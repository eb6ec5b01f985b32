// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include "outfile.h"
#include "untrusted.h"

/* As the kernel's own limit on links followed in one path (ELOOP). */
#define LINKS_MAX 40

/* A link we follow: made by root or by us, not planted by another user. */
static bool ours(const struct stat *st)
{
	return !st->st_uid || st->st_uid == geteuid();
}

/*
 * The directory at path, resolved one component at a time: a symbolic
 * link on the way is followed only when ours(), so that another user
 * cannot send the file into a directory of their choosing (with
 * fs.protected_symlinks off, even in /tmp).  An O_PATH descriptor, or
 * -errno (*why set when a link was refused).
 */
static int open_dir(const char *path, const char **why)
{
	char *rest = strdup(path), *p = rest, *next, *slash, *joined;
	char target[PATH_MAX];
	unsigned links = 0;
	struct stat st;
	int fd, nfd, err = 0;
	ssize_t n;

	if (!rest)
		return -ENOMEM;
	fd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		err = -errno;
	while (!err && *p) {
		slash = strchr(p, '/');
		next = slash ? slash + 1 : p + strlen(p);
		if (slash)
			*slash = '\0';
		if (!*p || !strcmp(p, ".")) {
			p = next;
			continue;
		}
		/* O_PATH opens nothing: a FIFO or device is not waited on */
		nfd = openat(fd, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 || fstat(nfd, &st)) {
			err = -errno;
			if (nfd >= 0)
				close(nfd);
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			close(fd);
			fd = nfd;
			p = next;
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			err = -ENOTDIR;
		} else if (!ours(&st)) {
			*why = "a symbolic link of another user is on its way";
			err = -EPERM;
		} else if (++links > LINKS_MAX) {
			err = -ELOOP;
		} else if ((n = readlinkat(nfd, "", target, sizeof(target) - 1)) < 0) {
			err = -errno;
		} else {
			target[n] = '\0';
			/* what is left: the link's path, then the rest of ours */
			if (asprintf(&joined, "%s/%s", target, next) < 0) {
				err = -ENOMEM;
			} else {
				free(rest);
				p = rest = joined;
				if (target[0] == '/') {
					close(fd);
					fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
					if (fd < 0)
						err = -errno;
				}
			}
		}
		close(nfd);
	}
	free(rest);
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}

/* The target as it is now: 0 when absent or ours to replace. */
static int check_target(int dirfd, const char *name, const char **why)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	*why = untrusted_not_regular(st.st_mode);
	if (!*why && st.st_uid != geteuid())
		*why = "owned by another user";
	return *why ? -EPERM : 0;
}

ssize_t outfile_write_fd(int fd, int *err, const char *buf, size_t n)
{
	size_t done = 0;

	while (!*err && done < n) {
		ssize_t w = write(fd, buf + done, n - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			*err = w < 0 ? -errno : -EIO;
		else
			done += w;
	}
	return *err ? -1 : (ssize_t)n;
}

static ssize_t write_out(void *cookie, const char *buf, size_t n)
{
	struct outfile *o = cookie;

	return outfile_write_fd(o->fd, &o->err, buf, n);
}

/* Our file, named after the target: O_EXCL, so never one already there. */
static int create_tmp(struct outfile *o)
{
	struct timespec ts;

	for (int i = 0; i < 100; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		free(o->tmp);
		if (asprintf(&o->tmp, ".%.200s.%d.%lx", o->name, (int)getpid(),
			     (unsigned long)ts.tv_nsec + i) < 0) {
			o->tmp = NULL;
			return -ENOMEM;
		}
		o->fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL |
			       O_NOFOLLOW | O_CLOEXEC, 0600);
		if (o->fd >= 0)
			break;
		if (errno != EEXIST) {
			free(o->tmp);
			o->tmp = NULL;
			return -errno;
		}
	}
	if (o->fd < 0)
		return -EEXIST;
	/* readable as any file the user makes, whatever our umask */
	return fchmod(o->fd, 0644) ? -errno : 0;
}

int outfile_open(struct outfile *o, const char *path, const char **why)
{
	cookie_io_functions_t io = { .write = write_out };
	const char *base = strrchr(path, '/');
	char *dir;
	int e;

	*o = (struct outfile){ .dirfd = -1, .fd = -1 };
	*why = NULL;
	base = base ? base + 1 : path;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EISDIR;
	dir = base == path ? strdup(".") : strndup(path, base - path);
	o->name = strdup(base);
	if (!dir || !o->name) {
		free(dir);
		return -ENOMEM;
	}
	o->dirfd = open_dir(dir, why);
	free(dir);
	if (o->dirfd < 0)
		return o->dirfd;
	e = check_target(o->dirfd, o->name, why);
	if (!e)
		e = create_tmp(o);
	if (!e && !(o->f = fopencookie(o, "w", io)))
		e = -ENOMEM;
	return e;
}

int outfile_commit(struct outfile *o)
{
	const char *why;

	if (fflush(o->f) && !o->err)
		o->err = -EIO;
	/* a full disk may only say so here (delayed allocation) */
	if (!o->err && fsync(o->fd))
		o->err = -errno;
	fclose(o->f);
	o->f = NULL;
	o->fd = -1;
	/* what was planted there meanwhile is not replaced either */
	if (!o->err)
		o->err = check_target(o->dirfd, o->name, &why);
	if (!o->err && renameat(o->dirfd, o->tmp, o->dirfd, o->name))
		o->err = -errno;
	if (!o->err) {
		free(o->tmp);
		o->tmp = NULL;
	}
	return o->err;
}

void outfile_free(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	else if (o->fd >= 0)
		close(o->fd);
	if (o->tmp && o->dirfd >= 0)
		unlinkat(o->dirfd, o->tmp, 0);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->tmp);
	free(o->name);
	*o = (struct outfile){ .dirfd = -1, .fd = -1 };
}
