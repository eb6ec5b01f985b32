// SPDX-License-Identifier: MIT
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elf_file.h"
#include "libpath.h"
#include "needed.h"

/* What is read of one file's dynamic section and strings, at most. */
#define DYN_MAX		(64 << 10)
#define STR_MAX		(256 << 10)

/* The files found so far, by real path; the next to read is [next]. */
struct closure {
	char *path[NEEDED_MAX];
	size_t n, next;
};

/* path, if new, as the next file: 0, or -ENOMEM. */
static int add(struct closure *c, const char *path)
{
	char *real = realpath(path, NULL);

	if (!real)
		return 0;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->path[i], real)) {
			free(real);
			return 0;
		}
	if (c->n == NEEDED_MAX) {
		free(real);
		return 0;
	}
	c->path[c->n++] = real;
	return 0;
}

/* The dynamic section's strings and the entries that name files. */
struct dyn {
	char *str;
	size_t strsz;
	uint64_t needed[64];
	size_t nr_needed;
	uint64_t rpath, runpath;	/* string offsets + 1; 0: none */
};

static const char *dyn_str(const struct dyn *d, uint64_t off)
{
	if (!d->str || off >= d->strsz || !memchr(d->str + off, 0, d->strsz - off))
		return NULL;
	return d->str + off;
}

static int read_dyn(const struct elf_file *ef, const GElf_Phdr *ph, struct dyn *d)
{
	size_t len = ph->p_filesz < DYN_MAX ? ph->p_filesz : DYN_MAX;
	Elf64_Dyn *v = malloc(len ? len : 1);
	uint64_t strtab = 0, off;
	ssize_t got;

	if (!v)
		return -ENOMEM;
	got = elf_file_read(ef, ph->p_offset, v, len);
	for (size_t i = 0; got > 0 && i < (size_t)got / sizeof(*v); i++) {
		if (v[i].d_tag == DT_NULL)
			break;
		if (v[i].d_tag == DT_NEEDED && d->nr_needed < 64)
			d->needed[d->nr_needed++] = v[i].d_un.d_val;
		else if (v[i].d_tag == DT_STRTAB)
			strtab = v[i].d_un.d_ptr;
		else if (v[i].d_tag == DT_STRSZ)
			d->strsz = v[i].d_un.d_val < STR_MAX ? v[i].d_un.d_val : STR_MAX;
		else if (v[i].d_tag == DT_RPATH)
			d->rpath = v[i].d_un.d_val + 1;
		else if (v[i].d_tag == DT_RUNPATH)
			d->runpath = v[i].d_un.d_val + 1;
	}
	free(v);
	if (!strtab || !d->strsz || elf_file_vaddr_to_offset(ef, strtab, &off))
		return 0;
	d->str = malloc(d->strsz);
	if (!d->str)
		return -ENOMEM;
	got = elf_file_read(ef, off, d->str, d->strsz);
	d->strsz = got > 0 ? (size_t)got : 0;
	return 0;
}

/* name in each directory of list (':'-separated, $ORIGIN as origin). */
static bool in_dirs(const char *list, const char *origin, const char *name,
		    char *out, size_t size)
{
	const char *p = list;

	while (p && *p) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char dir[PATH_MAX];
		int k;

		if (n >= 7 && !strncmp(p, "$ORIGIN", 7))
			k = snprintf(dir, sizeof(dir), "%s%.*s", origin,
				     (int)(n - 7), p + 7);
		else if (n >= 9 && !strncmp(p, "${ORIGIN}", 9))
			k = snprintf(dir, sizeof(dir), "%s%.*s", origin,
				     (int)(n - 9), p + 9);
		else
			k = snprintf(dir, sizeof(dir), "%.*s", (int)n, p);
		if (k > 0 && (size_t)k < sizeof(dir) &&
		    (size_t)snprintf(out, size, "%s/%s", dir, name) < size &&
		    !access(out, R_OK))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* Where the loader finds name, needed by the object in origin's directory. */
static bool find(const struct dyn *d, const char *origin, const char *name,
		 char *out, size_t size)
{
	const char *rpath = d->rpath && !d->runpath ? dyn_str(d, d->rpath - 1) : NULL;
	const char *runpath = d->runpath ? dyn_str(d, d->runpath - 1) : NULL;

	if (strchr(name, '/'))
		return (size_t)snprintf(out, size, "%s", name) < size;
	return in_dirs(rpath, origin, name, out, size) ||
	       in_dirs(getenv("LD_LIBRARY_PATH"), origin, name, out, size) ||
	       in_dirs(runpath, origin, name, out, size) ||
	       !libpath_resolve(name, 0, out, size);
}

/* The interpreter and the libraries of the file at c->path[i], into c. */
static int read_one(struct closure *c, size_t i)
{
	struct elf_file *ef = NULL;
	char origin[PATH_MAX], found[PATH_MAX], *slash;
	struct dyn d = {};
	size_t nph = 0;
	Elf *e;
	int err = 0;

	/* code: another user's program's .interp and .dynamic are read too */
	if (elf_file_open_own(&ef, c->path[i], true, NULL) || !(e = elf_file_elf(ef))) {
		elf_file_free(ef);
		return 0;
	}
	snprintf(origin, sizeof(origin), "%s", c->path[i]);
	slash = strrchr(origin, '/');
	if (slash)
		*slash = 0;
	if (elf_getphdrnum(e, &nph))
		nph = 0;
	for (size_t k = 0; !err && k < nph; k++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)k, &ph))
			continue;
		if (ph.p_type == PT_INTERP && ph.p_filesz < sizeof(found)) {
			ssize_t got = elf_file_read(ef, ph.p_offset, found, ph.p_filesz);

			if (got > 0) {
				found[got < (ssize_t)sizeof(found) ? got : 0] = 0;
				err = add(c, found);
			}
		} else if (ph.p_type == PT_DYNAMIC && !d.str) {
			err = read_dyn(ef, &ph, &d);
		}
	}
	for (size_t k = 0; !err && k < d.nr_needed; k++) {
		const char *name = dyn_str(&d, d.needed[k]);

		if (name && find(&d, origin, name, found, sizeof(found)))
			err = add(c, found);
	}
	free(d.str);
	elf_file_free(ef);
	return err;
}

int needed_closure(const char *program, needed_fn fn, void *ctx)
{
	struct closure c = {};
	int err = add(&c, program);

	while (!err && c.next < c.n) {
		err = read_one(&c, c.next);
		if (!err)
			err = fn(ctx, c.path[c.next]);
		c.next++;
	}
	for (size_t i = 0; i < c.n; i++)
		free(c.path[i]);
	return err;
}

/* Whether path is an executable regular file. */
static bool program(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

/* name on PATH into out, as execvp finds it. */
static bool on_path(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");

	if (!*name || strchr(name, '/'))
		return false;
	while (path && *path) {
		const char *end = strchr(path, ':');
		size_t n = end ? (size_t)(end - path) : strlen(path);

		if ((size_t)snprintf(out, size, "%.*s/%s", (int)n, path, name) < size &&
		    program(out))
			return true;
		path = end ? end + 1 : NULL;
	}
	return false;
}

int needed_args(char *const argv[], needed_fn fn, void *ctx)
{
	char found[PATH_MAX], word[PATH_MAX];
	int err = 0, n = 0;

	for (size_t i = 1; argv[i] && !err && n < NEEDED_ARGS; i++) {
		const char *p = argv[i];

		if (on_path(argv[i], found, sizeof(found))) {
			n++;
			err = needed_closure(found, fn, ctx);
			continue;
		}
		/* a program's path whole, whatever a shell would split it at */
		if (strchr(p, '/') && program(p)) {
			n++;
			err = needed_closure(p, fn, ctx);
			continue;
		}
		/* the words of a shell command line, a path among them */
		while (*p && !err && n < NEEDED_ARGS) {
			size_t len = strcspn(p, " \t\n;&|()<>'\"`=");

			if (len && len < sizeof(word)) {
				memcpy(word, p, len);
				word[len] = 0;
				if (strchr(word, '/') && program(word)) {
					n++;
					err = needed_closure(word, fn, ctx);
				}
			}
			p += len + !!p[len];
		}
	}
	return err;
}
