// SPDX-License-Identifier: MIT OR GPL-2.0
#include "ksyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct entry {
	struct ksym k;
	uint32_t rank;	/* alias preference at one address: lower wins */
	uint32_t line;	/* keeps the sort stable */
};

struct ksyms {
	/* the file's text, cut into NUL-terminated names in place */
	char *arena;
	struct entry *syms;
	size_t nr;
};

/* /proc files have no size to ask for: read until EOF, doubling. */
static int slurp(const char *path, char **out, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap), *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t r;

	if (fd < 0 || !buf) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	for (;;) {
		if (cap - n < 65536) {
			p = realloc(buf, cap * 2);
			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			buf = p;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (!r)
			break;
		n += r;
	}
	buf[n] = '\0';
out:
	if (fd >= 0)
		close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*len = n;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * Of names at one address, fewer leading underscores first: a function's
 * own name beats linker markers ("_stext", "_sinittext") and internal
 * aliases; then globals beat statics.
 */
static uint32_t alias_rank(char type, const char *name)
{
	uint32_t underscores = 0;

	while (name[underscores] == '_' && underscores < 255)
		underscores++;
	return underscores << 1 | (type >= 'a');
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->k.addr != y->k.addr)
		return x->k.addr < y->k.addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * One line: "ffffffff81000000 T _text" or "... t name\t[module]".  Cuts the
 * name (and module) in place; false for lines that are not text symbols.
 */
static bool parse_line(char **pos, char **prev_mod, struct entry *e)
{
	char *p = *pos, *name, *eol;
	uint64_t addr = 0;
	char type;
	int v;

	eol = strchr(p, '\n');
	if (!eol)
		eol = p + strlen(p);
	*pos = *eol ? eol + 1 : eol;
	*eol = '\0';

	while ((v = hexval(*p)) >= 0) {
		addr = addr << 4 | v;
		p++;
	}
	if (*p != ' ' || !p[1] || p[2] != ' ')
		return false;
	type = p[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return false;
	name = p + 3;
	p = strchr(name, '\t');
	e->k.module = NULL;
	if (p) {
		char *mod = p + 1, *end;

		*p = '\0';
		if (*mod == '[')
			mod++;
		end = strchr(mod, ']');
		if (end)
			*end = '\0';
		/* lines of one module come together: share one string */
		if (*prev_mod && !strcmp(*prev_mod, mod))
			mod = *prev_mod;
		*prev_mod = mod;
		e->k.module = mod;
	}
	e->k.addr = addr;
	e->k.name = name;
	e->rank = alias_rank(type, name);
	return *name;
}

static bool same_module(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static void set_extents(struct ksyms *ks)
{
	uint64_t etext = 0, sinit = 0, einit = 0;
	const struct ksym *k;
	size_t i, j;

	k = ksyms__get(ks, "_etext");
	etext = k ? k->addr : 0;
	k = ksyms__get(ks, "_sinittext");
	sinit = k ? k->addr : 0;
	k = ksyms__get(ks, "_einittext");
	einit = k ? k->addr : 0;

	for (i = 0; i < ks->nr; i = j) {
		struct ksym *s = &ks->syms[i].k;
		uint64_t end, tail = s->addr + KSYMS_TAIL_MAX;
		const struct ksym *next;

		for (j = i; j < ks->nr && ks->syms[j].k.addr == s->addr; j++)
			;
		next = j < ks->nr ? &ks->syms[j].k : NULL;
		end = next ? next->addr : UINT64_MAX;

		if (s->module) {
			if (!next || !same_module(next->module, s->module))
				end = end < tail ? end : tail;
		} else if (s->addr == etext || s->addr == einit) {
			end = s->addr;
		} else if (s->addr < etext) {
			end = end < etext ? end : etext;
		} else if (s->addr >= sinit && s->addr < einit) {
			end = end < einit ? end : einit;
		} else {
			end = end < tail ? end : tail;
		}
		/* aliases share the extent */
		for (size_t a = i; a < j; a++)
			ks->syms[a].k.end = end;
	}
}

int ksyms__new(struct ksyms **out, const char *path)
{
	struct ksyms *ks;
	size_t len, cap, n = 0;
	char *pos, *prev_mod = NULL;
	bool nonzero = false;
	int err;

	*out = NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	err = slurp(path ? path : "/proc/kallsyms", &ks->arena, &len);
	if (err)
		goto fail;
	/* one entry per line at most: count them rather than guess */
	cap = 1;
	for (pos = ks->arena; (pos = memchr(pos, '\n', len - (pos - ks->arena)));
	     pos++)
		cap++;
	ks->syms = malloc(cap * sizeof(*ks->syms));
	err = -ENOMEM;
	if (!ks->syms)
		goto fail;

	pos = ks->arena;
	while (*pos && n < cap) {
		struct entry *e = &ks->syms[n];

		if (!parse_line(&pos, &prev_mod, e))
			continue;
		nonzero |= e->k.addr != 0;
		e->line = n++;
	}
	err = -EPERM;
	if (n && !nonzero)
		goto fail;
	ks->nr = n;
	qsort(ks->syms, n, sizeof(*ks->syms), cmp_entry);
	set_extents(ks);
	*out = ks;
	return 0;
fail:
	ksyms__free(ks);
	return err;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->arena);
	free(ks);
}

const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->nr;
	const struct ksym *k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].k.addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!hi)
		return NULL;
	/* the preferred alias sorts first among equal addresses */
	k = &ks->syms[hi - 1].k;
	while (hi > 1 && ks->syms[hi - 2].k.addr == k->addr)
		k = &ks->syms[--hi - 1].k;
	return addr < k->end ? k : NULL;
}

const struct ksym *ksyms__get(const struct ksyms *ks, const char *name)
{
	const struct ksym *found = NULL;
	size_t i;

	for (i = 0; i < ks->nr; i++) {
		const struct ksym *k = &ks->syms[i].k;

		if (strcmp(k->name, name))
			continue;
		if (!k->module)
			return k;
		if (!found)
			found = k;
	}
	return found;
}
