// SPDX-License-Identifier: MIT
#include "libpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "procs.h"

#define LD_CACHE "/etc/ld.so.cache"
#define CACHE_MAGIC_OLD "ld.so-1.7.0"
#define CACHE_MAGIC_NEW "glibc-ld.so.cache1.1"
/* ldconfig's flags: FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 */
#define FLAG_X86_64_LIBC6 0x0303
#define FLAG_TYPE_MASK 0x00ff
#define FLAG_ELF_LIBC6 0x0003

/*
 * The layouts glibc's ldconfig writes (elf/cache.c, sysdeps dl-cache.h).
 * String offsets in new-format entries count from the new header.
 */
struct cache_old_hdr {
	char magic[sizeof(CACHE_MAGIC_OLD) - 1];
	uint32_t nlibs;
};

struct cache_old_entry {
	int32_t flags;
	uint32_t key, value;
};

struct cache_new_hdr {
	char magic[sizeof(CACHE_MAGIC_NEW) - 1];
	uint32_t nlibs;
	uint32_t len_strings;
	uint8_t flags;
	uint8_t pad[3];
	uint32_t extension_offset;
	uint32_t unused[3];
};

struct cache_new_entry {
	int32_t flags;
	uint32_t key, value;
	uint32_t osversion;
	uint64_t hwcap;
};

static const char *const lib_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
	"/usr/lib64", "/lib", "/usr/lib",
};

/* "c" -> "libc.so"; "libc" -> "libc.so"; "libc.so.6" stays. */
static int soname_prefix(const char *lib, char *buf, size_t size)
{
	int n;

	if (!strncmp(lib, "lib", 3) && strstr(lib, ".so"))
		n = snprintf(buf, size, "%s", lib);
	else if (!strncmp(lib, "lib", 3))
		n = snprintf(buf, size, "%s.so", lib);
	else
		n = snprintf(buf, size, "lib%s.so", lib);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* "libc.so" names "libc.so" and "libc.so.6", but not "libc.so_x". */
static bool name_matches(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(name, prefix, n) && (!name[n] || name[n] == '.');
}

static int put(char *buf, size_t size, const char *path)
{
	if (strlen(path) >= size)
		return -ENAMETOOLONG;
	strcpy(buf, path);
	return 0;
}

/* Symlinked library names become what /proc/PID/maps will show. */
static int put_real(char *buf, size_t size, const char *path)
{
	char real[PATH_MAX];

	if (!realpath(path, real))
		return -ENOENT;
	return put(buf, size, real);
}

static bool other_mount_ns(int pid)
{
	char path[64];
	struct stat self, other;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
	if (stat("/proc/self/ns/mnt", &self) || stat(path, &other))
		return false;
	return self.st_ino != other.st_ino || self.st_dev != other.st_dev;
}

static int from_maps(int pid, const char *prefix, char *buf, size_t size)
{
	char path[64], *line = NULL;
	size_t len = 0;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (err == -ENOENT && getline(&line, &len, f) > 0) {
		struct proc_map m;
		const char *file, *base;

		if (!procs_parse_maps_line(line, &m) || m.path[0] != '/')
			continue;
		file = m.path;
		base = strrchr(file, '/') + 1;
		if (strstr(file, " (deleted)") || !name_matches(base, prefix))
			continue;
		if (other_mount_ns(pid)) {
			char root[PATH_MAX];

			if (snprintf(root, sizeof(root), "/proc/%d/root%s",
				     pid, file) >= (int)sizeof(root))
				err = -ENAMETOOLONG;
			else
				err = put(buf, size, root);
		} else {
			err = put(buf, size, file);
		}
	}
	free(line);
	fclose(f);
	return err;
}

static char *read_file(const char *path, size_t *len)
{
	struct stat st;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && st.st_size > 0 && (buf = malloc(st.st_size)) &&
	    read(fd, buf, st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	close(fd);
	*len = buf ? (size_t)st.st_size : 0;
	return buf;
}

/* A NUL-terminated string at off within the cache, or NULL. */
static const char *cache_str(const char *base, size_t len, uint32_t off)
{
	if (off >= len || !memchr(base + off, '\0', len - off))
		return NULL;
	return base + off;
}

/*
 * The new format may follow an old-format table (glibc before 2.32 wrote
 * both by default); skip to it.  Returns its offset in the file or -1.
 */
static long new_format_start(const char *buf, size_t len)
{
	const struct cache_old_hdr *old = (const void *)buf;
	size_t off;

	if (len >= sizeof(CACHE_MAGIC_NEW) - 1 &&
	    !memcmp(buf, CACHE_MAGIC_NEW, sizeof(CACHE_MAGIC_NEW) - 1))
		return 0;
	if (len < sizeof(*old) ||
	    memcmp(buf, CACHE_MAGIC_OLD, sizeof(CACHE_MAGIC_OLD) - 1))
		return -1;
	off = sizeof(*old) + (size_t)old->nlibs * sizeof(struct cache_old_entry);
	off = (off + 7) & ~(size_t)7;	/* aligned for the new header */
	if (off + sizeof(CACHE_MAGIC_NEW) - 1 > len ||
	    memcmp(buf + off, CACHE_MAGIC_NEW, sizeof(CACHE_MAGIC_NEW) - 1))
		return -1;
	return off;
}

static int from_ld_cache(const char *prefix, char *buf, size_t size)
{
	const struct cache_new_hdr *h;
	const struct cache_new_entry *e;
	const char *base, *fallback = NULL;
	size_t len, rest, i;
	char *file = read_file(LD_CACHE, &len);
	long start;
	int err = -ENOENT;

	if (!file)
		return -ENOENT;
	start = new_format_start(file, len);
	if (start < 0 || len - start < sizeof(*h))
		goto out;
	base = file + start;
	rest = len - start;
	h = (const void *)base;
	e = (const void *)(h + 1);
	if (h->nlibs > (rest - sizeof(*h)) / sizeof(*e))
		goto out;
	for (i = 0; i < h->nlibs; i++) {
		const char *key = cache_str(base, rest, e[i].key);
		const char *value = cache_str(base, rest, e[i].value);

		if (!key || !value || !name_matches(key, prefix))
			continue;
		if (e[i].flags == FLAG_X86_64_LIBC6) {
			err = put_real(buf, size, value);
			if (err != -ENOENT)
				goto out;
		} else if (!fallback &&
			   (e[i].flags & FLAG_TYPE_MASK) == FLAG_ELF_LIBC6) {
			fallback = value;
		}
	}
	if (fallback)
		err = put_real(buf, size, fallback);
out:
	free(file);
	return err;
}

/*
 * Prefers a versioned name ("libz.so.1") to the bare development symlink
 * ("libz.so"), which may be a linker script; then the shortest, which is
 * the soname link rather than the fully versioned file.
 */
static bool better(const char *cand, const char *best, const char *prefix)
{
	size_t n = strlen(prefix), lc = strlen(cand), lb;

	if (!best)
		return true;
	lb = strlen(best);
	if ((lc == n) != (lb == n))
		return lb == n;
	if (lc != lb)
		return lc < lb;
	return strcmp(cand, best) < 0;
}

static int from_dirs(const char *prefix, char *buf, size_t size)
{
	size_t d;

	for (d = 0; d < sizeof(lib_dirs) / sizeof(lib_dirs[0]); d++) {
		char best[NAME_MAX + 1] = "", path[PATH_MAX];
		DIR *dir = opendir(lib_dirs[d]);
		struct dirent *de;

		if (!dir)
			continue;
		while ((de = readdir(dir)))
			if (name_matches(de->d_name, prefix) &&
			    better(de->d_name, best[0] ? best : NULL, prefix))
				snprintf(best, sizeof(best), "%s", de->d_name);
		closedir(dir);
		if (!best[0])
			continue;
		snprintf(path, sizeof(path), "%s/%s", lib_dirs[d], best);
		if (!put_real(buf, size, path))
			return 0;
	}
	return -ENOENT;
}

static int from_path_env(const char *name, char *buf, size_t size)
{
	const char *env = getenv("PATH"), *p, *end;

	if (!env || !*env)
		env = "/usr/local/bin:/usr/bin:/bin";
	for (p = env; *p; p = *end ? end + 1 : end) {
		char path[PATH_MAX];
		struct stat st;
		int n;

		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		n = snprintf(path, sizeof(path), "%.*s/%s", (int)(end - p), p,
			     name);
		if (end == p || n >= (int)sizeof(path))
			continue;
		if (!stat(path, &st) && S_ISREG(st.st_mode) &&
		    !access(path, X_OK))
			return put_real(buf, size, path);
	}
	return -ENOENT;
}

int libpath_resolve(const char *lib, int pid, char *buf, size_t size)
{
	char prefix[NAME_MAX + 1];
	int err;

	if (!*lib)
		return -ENOENT;
	if (strchr(lib, '/')) {
		char real[PATH_MAX];

		/* the caller says why this one path failed: keep the reason */
		if (!realpath(lib, real))
			return -errno;
		return put(buf, size, real);
	}
	err = soname_prefix(lib, prefix, sizeof(prefix));
	if (err)
		return err;
	if (pid > 0) {
		err = from_maps(pid, prefix, buf, size);
		if (err != -ENOENT)
			return err;
	}
	err = from_ld_cache(prefix, buf, size);
	if (err != -ENOENT)
		return err;
	err = from_dirs(prefix, buf, size);
	if (err != -ENOENT)
		return err;
	return from_path_env(lib, buf, size);
}
