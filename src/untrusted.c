// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include "untrusted.h"

void untrusted_skip_set(struct untrusted_skip *sk, const char *why,
			const char *what, ...)
{
	va_list ap;

	if (!sk || sk->why)
		return;
	sk->why = why;
	va_start(ap, what);
	vsnprintf(sk->what, sizeof(sk->what), what, ap);
	va_end(ap);
}

const char *untrusted_not_regular(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return NULL;
	case S_IFIFO: return "a FIFO, not a regular file";
	case S_IFCHR: return "a character device, not a regular file";
	case S_IFBLK: return "a block device, not a regular file";
	case S_IFSOCK: return "a socket, not a regular file";
	case S_IFDIR: return "a directory, not a regular file";
	case S_IFLNK: return "a symbolic link, not a regular file";
	default: return "not a regular file";
	}
}

bool untrusted_only_root(int fd, const struct stat *st)
{
	struct statfs fs;

	/* a FUSE server answers for its files whatever their owner says */
	if (fstatfs(fd, &fs) || fs.f_type == FUSE_SUPER_MAGIC)
		return false;
	/* ACLs cap named users and groups at the group bits (their mask) */
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool untrusted_path_not_fuse(const char *path)
{
	struct statfs fs;

	return !statfs(path, &fs) && fs.f_type != FUSE_SUPER_MAGIC;
}

int untrusted_open(const char *path, int flags, struct stat *st,
		   struct untrusted_skip *sk)
{
	char self[64];
	struct stat now;
	const char *why;
	int pfd, fd, err;

	/*
	 * O_PATH opens nothing: a FIFO does not wait for a writer, a device's
	 * driver is not called.  What it resolved is then opened through the
	 * descriptor, so nothing can be swapped in between.
	 */
	pfd = open(path, O_PATH | O_CLOEXEC |
		   (flags & UNTRUSTED_NOFOLLOW ? O_NOFOLLOW : 0));
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st)) {
		err = -errno;
		close(pfd);
		return err;
	}
	why = untrusted_not_regular(st->st_mode);
	err = -EINVAL;
	if (!why && (uint64_t)st->st_size > UNTRUSTED_READ_MAX &&
	    !untrusted_only_root(pfd, st)) {
		why = "larger than 256 MiB, and users other than root can write it";
		err = -EFBIG;
	}
	if (why) {
		close(pfd);
		untrusted_skip_set(sk, why, "%s", path);
		return err;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	err = -errno;
	close(pfd);
	if (fd < 0)
		return err;
	if (fstat(fd, &now) || now.st_ino != st->st_ino || now.st_dev != st->st_dev) {
		close(fd);
		return -ESTALE;
	}
	*st = now;
	return fd;
}

bool untrusted_charge(struct untrusted_budget *b, uint64_t n)
{
	if (n > b->limit - b->held)
		return false;
	b->held += n;
	return true;
}

void untrusted_release(struct untrusted_budget *b, uint64_t n)
{
	b->held -= n < b->held ? n : b->held;
}

/* Bytes in the UTF-8 character at s (n left) worth printing as it is; 0: not. */
static size_t printable_utf8(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t c;

	if (s[0] >= 0x20 && s[0] < 0x7f && s[0] != '\\')
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond Unicode, C1 controls */
	if ((len == 3 && c < 0x800) || (len == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff ||
	    (c >= 0x80 && c < 0xa0))
		return 0;
	return len;
}

char *untrusted_escape(char *out, size_t len, const char *in)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t n = strlen(in), o = 0;

	if (!len)
		return out;
	for (size_t i = 0; i < n;) {
		size_t k = printable_utf8(s + i, n - i);

		if (k) {
			if (o + k >= len)
				break;
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		if (o + 4 >= len)
			break;
		snprintf(out + o, len - o, "\\x%02x", s[i]);
		o += 4;
		i++;
	}
	out[o] = '\0';
	return out;
}
