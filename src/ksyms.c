// SPDX-License-Identifier: MIT
/*
 * /proc/kallsyms, kept small: the kernel has ~120,000 text symbols, and a
 * tracer that holds them as the file's text plus pointers spends ten
 * megabytes on names it will mostly never print.  Here a symbol is 16
 * bytes (address; name offset and padding; alias rank and line packed),
 * names live in one arena, modules as address ranges, a function's
 * padding is no symbol of its own (struct pending), and the struct ksym
 * callers get is made on first request and kept.
 */
#include "ksyms.h"
#include "htab.h"
#include "vec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct entry {
	uint64_t addr;
	/* offset in the arena << 4 | the padding before it, 16-byte units */
	uint32_t name;
	uint32_t order;		/* alias rank << 24 | line: lower wins */
};

/*
 * 6.x lists each function's padding (CONFIG_FUNCTION_PADDING: bytes the
 * kernel may patch) as "__pfx_NAME" just before NAME: half of its text
 * symbols.  Such a line is held back, and when the next is NAME, of the
 * same module, 16 to 240 bytes on, only NAME is kept, with the padding's
 * size; an address in the padding is still named __pfx_NAME (made()).
 */
struct pending {
	bool on;
	uint32_t line;
	char text[256];		/* the line as read */
};

struct module {
	uint64_t start, end;	/* its symbols' span */
	uint32_t name;
};

struct ksyms {
	char *names;
	size_t names_len, names_cap;
	struct pending pfx;
	struct entry *v;
	size_t nr, cap;
	struct module *mods;
	size_t nmods;
	uint64_t etext, sinit, einit;
	struct htab made;	/* handed-out symbols: struct made */
};

/* made()'s key for the padding before entry i's function */
#define PAD_KEY		(1u << 31)

/* Packed: 12 bytes a slot, not 16, as the table may come to hold many. */
struct made {
	struct ksym *k;		/* NULL: a free slot */
	uint32_t idx;		/* its entry */
} __attribute__((packed));

static size_t made_hash_idx(uint32_t idx)
{
	return idx * 2654435761u;
}

static size_t made_hash(const void *slot)
{
	return made_hash_idx(((const struct made *)slot)->idx);
}

static const struct htab_ops made_ops = {
	.size = sizeof(struct made), .min = 256, .hash = made_hash,
};

static bool made_is(const void *slot, const void *idx)
{
	return ((const struct made *)slot)->idx == *(const uint32_t *)idx;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * Of names at one address, a 64-bit entry point before the compat ones
 * that share its code (__x64_sys_getppid, not the __ia32_sys_getppid
 * kallsyms lists first on 6.12); then fewer leading underscores: a
 * function's own name beats linker markers ("_stext", "_sinittext") and
 * internal aliases; then globals beat statics.
 */
static uint32_t alias_rank(char type, const char *name)
{
	uint32_t underscores = 0;
	bool compat = !strncmp(name, "__ia32_", 7) || !strncmp(name, "__x32_", 6);

	while (name[underscores] == '_' && underscores < 63)
		underscores++;
	return (uint32_t)compat << 7 | underscores << 1 | (type >= 'a');
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static long intern(struct ksyms *ks, const char *s, size_t n)
{
	size_t off = ks->names_len;

	if (off >= 1u << 28)
		return -E2BIG;	/* see struct entry */
	if (vec_reserve(&ks->names, &ks->names_cap, ks->names_len, n + 1, 1,
			1 << 20))
		return -ENOMEM;
	memcpy(ks->names + off, s, n);
	ks->names[off + n] = '\0';
	ks->names_len += n + 1;
	return off;
}

#define PFX	"__pfx_"
#define PFX_LEN	(sizeof(PFX) - 1)

static const char *name_of(const struct ksyms *ks, size_t i)
{
	return ks->names + (ks->v[i].name >> 4);
}

/* The padding before the function at entry i's address, in bytes. */
static uint64_t pad_at(const struct ksyms *ks, size_t i)
{
	uint64_t pad = 0, addr = ks->v[i].addr;

	for (; i < ks->nr && ks->v[i].addr == addr; i++)
		if ((ks->v[i].name & 15) * 16 > pad)
			pad = (ks->v[i].name & 15) * 16;
	return pad;
}

/*
 * "ffffffff81000000 T _text" or "... t name\t[module]": a text symbol's
 * address, type and the rest of the line; false for any other line.
 */
static bool fields(char *p, uint64_t *addr, char *type, char **rest)
{
	int v;

	*addr = 0;
	while ((v = hexval(*p)) >= 0) {
		*addr = *addr << 4 | v;
		p++;
	}
	if (*p != ' ' || !p[1] || p[2] != ' ')
		return false;
	*type = p[1];
	if (*type != 't' && *type != 'T' && *type != 'w' && *type != 'W')
		return false;
	*rest = p + 3;
	return **rest && **rest != '\t';
}

/* A symbol kept: rest is "name" or "name\t[module]", pad in 16 bytes. */
static int add(struct ksyms *ks, uint64_t addr, char type, char *rest,
	       uint32_t line, unsigned pad)
{
	char *name = rest, *tab, *mod, *end;
	struct module *m;
	struct entry *e;
	long off;

	tab = strchr(name, '\t');
	if (tab)
		*tab = '\0';
	if (VEC_GROW(ks->v, ks->nr, ks->cap, 65536))
		return -ENOMEM;
	off = intern(ks, name, strlen(name));
	if (off < 0)
		return off;
	e = &ks->v[ks->nr++];
	e->addr = addr;
	e->name = (uint32_t)off << 4 | pad;
	e->order = alias_rank(type, name) << 24 | (line & 0xffffff);
	if (!strcmp(name, "_etext"))
		ks->etext = addr;
	else if (!strcmp(name, "_sinittext"))
		ks->sinit = addr;
	else if (!strcmp(name, "_einittext"))
		ks->einit = addr;
	if (!tab)
		return 0;
	/* a module's lines come together: extend its span, or start one */
	mod = tab + 1 + (tab[1] == '[');
	end = strchr(mod, ']');
	if (end)
		*end = '\0';
	m = ks->nmods ? &ks->mods[ks->nmods - 1] : NULL;
	if (!m || strcmp(ks->names + m->name, mod)) {
		m = realloc(ks->mods, (ks->nmods + 1) * sizeof(*m));
		if (!m)
			return -ENOMEM;
		ks->mods = m;
		m = &ks->mods[ks->nmods++];
		m->start = m->end = addr;
		off = intern(ks, mod, strlen(mod));
		if (off < 0)
			return off;
		m->name = off;
	}
	if (addr < m->start)
		m->start = addr;
	if (addr > m->end)
		m->end = addr;
	return 0;
}

/* A held __pfx_ line whose function did not follow: kept as it is. */
static int flush(struct ksyms *ks)
{
	uint64_t addr;
	char type, *rest;

	if (!ks->pfx.on)
		return 0;
	ks->pfx.on = false;
	if (!fields(ks->pfx.text, &addr, &type, &rest))
		return 0;
	return add(ks, addr, type, rest, ks->pfx.line, 0);
}

static int parse_line(struct ksyms *ks, char *p, uint32_t line)
{
	uint64_t addr, held;
	unsigned pad = 0;
	char type, *rest, *prest, htype;
	int err;

	if (!fields(p, &addr, &type, &rest))
		return 0;
	if (!strncmp(rest, PFX, PFX_LEN) && strlen(p) < sizeof(ks->pfx.text)) {
		err = flush(ks);
		strcpy(ks->pfx.text, p);
		ks->pfx.line = line;
		ks->pfx.on = true;
		return err;
	}
	if (ks->pfx.on && fields(ks->pfx.text, &held, &htype, &prest) &&
	    !strcmp(prest + PFX_LEN, rest) && addr > held &&
	    !((addr - held) % 16) && (addr - held) / 16 < 16) {
		pad = (addr - held) / 16;
		ks->pfx.on = false;
	}
	err = flush(ks);
	return err ? err : add(ks, addr, type, rest, line, pad);
}

/* Streamed: the file is read once, in chunks, never held whole. */
static int load(struct ksyms *ks, const char *path)
{
	char buf[65536];
	size_t have = 0;
	uint32_t line = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (!err && (n = read(fd, buf + have, sizeof(buf) - have - 1)) > 0) {
		char *p = buf, *nl;

		have += n;
		buf[have] = '\0';
		while (!err && (nl = memchr(p, '\n', have - (p - buf)))) {
			*nl = '\0';
			err = parse_line(ks, p, line++);
			p = nl + 1;
		}
		have -= p - buf;
		memmove(buf, p, have);
	}
	if (!err && have) {
		buf[have] = '\0';
		err = parse_line(ks, buf, line);
	}
	if (!err)
		err = flush(ks);
	close(fd);
	return err;
}

int ksyms_new(struct ksyms **out, const char *path)
{
	struct ksyms *ks;
	bool nonzero = false;
	int err;

	*out = NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	err = load(ks, path ? path : "/proc/kallsyms");
	if (err)
		goto fail;
	for (size_t i = 0; i < ks->nr && !nonzero; i++)
		nonzero = ks->v[i].addr != 0;
	err = -EPERM;
	if (ks->nr && !nonzero)
		goto fail;
	qsort(ks->v, ks->nr, sizeof(*ks->v), cmp_entry);
	*out = ks;
	return 0;
fail:
	ksyms_free(ks);
	return err;
}

void ksyms_free(struct ksyms *ks)
{
	struct made *m;

	if (!ks)
		return;
	m = ks->made.slots;
	for (size_t i = 0; i < ks->made.cap; i++)
		free(m[i].k);
	free(m);
	free(ks->v);
	free(ks->mods);
	free(ks->names);
	free(ks);
}

static const struct module *module_at(const struct ksyms *ks, uint64_t addr)
{
	for (size_t i = 0; i < ks->nmods; i++)
		if (addr >= ks->mods[i].start && addr <= ks->mods[i].end)
			return &ks->mods[i];
	return NULL;
}

/* Where entry i's symbol ends: see ksyms.h for the bounds. */
static uint64_t extent(const struct ksyms *ks, size_t i,
		       const struct module *mod)
{
	uint64_t addr = ks->v[i].addr, tail = addr + KSYMS_TAIL_MAX, end;
	size_t j = i;

	while (j < ks->nr && ks->v[j].addr == addr)
		j++;
	end = j < ks->nr ? ks->v[j].addr - pad_at(ks, j) : UINT64_MAX;
	if (mod) {
		if (j == ks->nr || module_at(ks, ks->v[j].addr) != mod)
			end = end < tail ? end : tail;
	} else if (addr == ks->etext || addr == ks->einit) {
		end = addr;
	} else if (addr < ks->etext) {
		end = end < ks->etext ? end : ks->etext;
	} else if (addr >= ks->sinit && addr < ks->einit) {
		end = end < ks->einit ? end : ks->einit;
	} else {
		end = end < tail ? end : tail;
	}
	return end;
}

/*
 * The struct ksym for entry i, or for the padding before its function
 * (key i | PAD_KEY), made once and kept: pointers stay valid.
 */
static const struct ksym *made(struct ksyms *ks, uint32_t key)
{
	uint32_t i = key & ~PAD_KEY;
	const char *name = name_of(ks, i);
	size_t n = key & PAD_KEY ? PFX_LEN + strlen(name) + 1 : 0;
	const struct module *mod;
	struct made *m;
	struct ksym *k;

	if (htab_reserve(&ks->made, &made_ops))
		return NULL;
	m = htab_find(&ks->made, &made_ops, made_hash_idx(key), made_is, &key);
	if (m->k)
		return m->k;
	k = malloc(sizeof(*k) + n);
	if (!k)
		return NULL;
	mod = module_at(ks, ks->v[i].addr);
	k->addr = ks->v[i].addr;
	k->end = extent(ks, i, mod);
	k->name = name;
	k->module = mod ? ks->names + mod->name : NULL;
	if (n) {
		char *s = (char *)(k + 1);

		memcpy(s, PFX, PFX_LEN);
		memcpy(s + PFX_LEN, name, n - PFX_LEN);
		k->end = k->addr;
		k->addr -= pad_at(ks, i);
		k->name = s;
	}
	m->k = k;
	m->idx = key;
	ks->made.nr++;
	return k;
}

const struct ksym *ksyms_find(struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->nr, i;
	const struct ksym *k;

	/* the last entry at or below addr; then the first alias there */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* in the padding before the next function: named after it */
	if (lo < ks->nr && addr >= ks->v[lo].addr - pad_at(ks, lo))
		return made(ks, lo | PAD_KEY);
	if (!lo)
		return NULL;
	i = lo - 1;
	while (i && ks->v[i - 1].addr == ks->v[i].addr)
		i--;
	k = made(ks, i);
	return k && addr < k->end ? k : NULL;
}

int ksyms_each(const struct ksyms *ks,
		int (*fn)(void *ctx, uint64_t addr, const char *name), void *ctx)
{
	int r = 0;

	for (size_t i = 0; i < ks->nr && !r; i++)
		r = fn(ctx, ks->v[i].addr, name_of(ks, i));
	return r;
}

const struct ksym *ksyms_get(struct ksyms *ks, const char *name)
{
	size_t found = ks->nr;

	/* core kernel first: modules may reuse a name */
	for (size_t i = 0; i < ks->nr; i++) {
		if (strcmp(name_of(ks, i), name))
			continue;
		if (!module_at(ks, ks->v[i].addr))
			return made(ks, i);
		if (found == ks->nr)
			found = i;
	}
	return found < ks->nr ? made(ks, found) : NULL;
}
