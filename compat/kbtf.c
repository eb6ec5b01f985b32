// SPDX-License-Identifier: MIT
#include "kbtf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/btf.h>

#define CHUNK (64 << 10)
#define NAME_MAX_LEN 64		/* of the names asked for; longer ones skipped */
#define NO_OFF ((uint32_t)-1)

/*
 * A section of the file front to back: all of it where the file could be
 * mapped (6.16+ maps the kernel's BTF, saving a thousand page-sized
 * reads), else read a chunk at a time.
 */
struct stream {
	int fd;
	uint64_t first;		/* file offset of the section */
	uint64_t at, end;	/* file offsets: next to read, the section's end */
	uint8_t *buf;		/* chunk, or the mapped section */
	size_t len, pos;	/* bytes in buf, and how far they are taken */
	uint8_t chunk[CHUNK + NAME_MAX_LEN];
};

/* map: the whole file mapped, or NULL */
static void stream_init(struct stream *s, int fd, const uint8_t *map,
			uint64_t first, uint64_t len)
{
	s->fd = fd;
	s->first = s->at = first;
	s->end = first + len;
	s->buf = s->chunk;
	s->len = s->pos = 0;
	if (map) {
		s->buf = (uint8_t *)map + first;
		s->len = len;
		s->at = s->end;
	}
}

/* At least want bytes at s->buf + s->pos, keeping those not taken; false at the end. */
static bool have(struct stream *s, size_t want)
{
	while (s->len - s->pos < want) {
		size_t keep = s->len - s->pos, room;
		ssize_t r;

		if (s->at >= s->end)
			return false;
		memmove(s->buf, s->buf + s->pos, keep);
		s->len = keep;
		s->pos = 0;
		room = sizeof(s->chunk) - keep;
		if (room > s->end - s->at)
			room = s->end - s->at;
		r = pread(s->fd, s->buf + keep, room, s->at);
		if (r <= 0)
			return false;
		s->len += r;
		s->at += r;
	}
	return true;
}

struct want {
	const char *name;
	size_t len;		/* strlen(name): most strings differ in it */
	uint32_t off;		/* in the string section; NO_OFF: not there */
};

/* The file: mapped whole, or read where needed. */
struct src {
	int fd;
	const uint8_t *map;	/* NULL: not mapped */
	uint64_t size;
	uint64_t str_first, str_len;	/* the string section */
};

static bool read_at(const struct src *f, uint64_t off, void *buf, size_t len)
{
	if (!f->map)
		return pread(f->fd, buf, len, off) == (ssize_t)len;
	if (off > f->size || len > f->size - off)
		return false;
	memcpy(buf, f->map + off, len);
	return true;
}

/*
 * Whether string off is w's name: by where pass 1 found it, or, in a
 * mapped file (which skips pass 1), compared in place.
 */
static bool is_name(const struct src *f, uint32_t off, const struct want *w)
{
	const char *p;

	if (w->off != NO_OFF || !f->map)
		return off == w->off;
	if (off >= f->str_len || f->str_len - off <= w->len)
		return false;
	p = (const char *)f->map + f->str_first + off;
	return !memcmp(p, w->name, w->len) && !p[w->len];
}

/* A string's length and first byte, as one of 512 bits: most are no name asked for. */
static unsigned int sieve_bit(const char *p, size_t len)
{
	return (unsigned int)(len * 37 + (unsigned char)p[0]) & 511;
}

/*
 * Pass 1: where in the string section each name asked for is (BTF keeps
 * one copy of each string, so an offset is a name).
 */
static void find_strings(struct stream *s, struct want *w, size_t n)
{
	uint64_t base = s->first, sieve[8] = { 0 };
	bool skipping = false;	/* inside a string too long to be asked for */
	bool maybe;		/* a string the sieve lets through */
	unsigned int b;

	for (size_t i = 0; i < n; i++) {
		b = sieve_bit(w[i].name, w[i].len);
		sieve[b / 64] |= 1ULL << (b % 64);
	}

	while (have(s, 1)) {
		const char *p = (const char *)s->buf + s->pos;
		size_t avail = s->len - s->pos, len = strnlen(p, avail);

		if (len == avail && !skipping && len < NAME_MAX_LEN &&
		    have(s, len + 1))
			continue;	/* whole in the buffer now */
		p = (const char *)s->buf + s->pos;
		avail = s->len - s->pos;
		if (len >= avail) {
			s->pos += avail;
			skipping = true;
			continue;
		}
		b = len ? sieve_bit(p, len) : 0;
		maybe = !skipping && len && (sieve[b / 64] >> (b % 64) & 1);
		for (size_t i = 0; i < n && maybe; i++)
			if (w[i].len == len && w[i].off == NO_OFF &&
			    !memcmp(w[i].name, p, len))
				w[i].off = (uint32_t)(s->at - s->len + s->pos - base);
		skipping = false;
		s->pos += len + 1;
	}
}

/* The bytes that follow a type's struct btf_type, by its kind. */
static long extra(uint32_t info)
{
	uint32_t kind = BTF_INFO_KIND(info), vlen = BTF_INFO_VLEN(info);

	switch (kind) {
	case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE: case BTF_KIND_CONST: case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC: case BTF_KIND_FLOAT: case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_DATASEC:
	case BTF_KIND_ENUM64:
		return 12L * vlen;
	case BTF_KIND_ENUM: case BTF_KIND_FUNC_PROTO:
		return 8L * vlen;
	default:
		return -1;	/* a kind newer than this reader */
	}
}

struct types {
	uint32_t *off;		/* by id - 1: the file offset of its record */
	size_t n, cap;
};

/*
 * Pass 2: every type's place in the file, and the id of the first struct
 * of each name asked for (names[i], a string offset) in ids[i].
 */
static int index_types(const struct src *f, struct stream *s, struct types *t,
		       const struct want *names, uint32_t *ids, size_t n)
{
	while (have(s, sizeof(struct btf_type))) {
		struct btf_type bt;
		long more;

		memcpy(&bt, s->buf + s->pos, sizeof(bt));
		more = extra(bt.info);
		if (more < 0)
			return -ENOTSUP;
		if (t->n == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 65536;
			uint32_t *v = realloc(t->off, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			t->off = v;
			t->cap = cap;
		}
		t->off[t->n++] = (uint32_t)(s->at - (s->len - s->pos));
		for (size_t i = 0; i < n && BTF_INFO_KIND(bt.info) == BTF_KIND_STRUCT; i++)
			if (!ids[i] && is_name(f, bt.name_off, &names[i]))
				ids[i] = (uint32_t)t->n;
		/* skip the record, which may run past what is buffered */
		more += sizeof(bt);
		while (more > 0) {
			size_t step = s->len - s->pos;

			if (!step && !have(s, 1))
				return -EINVAL;
			step = s->len - s->pos;
			if ((long)step > more)
				step = more;
			s->pos += step;
			more -= step;
		}
	}
	return s->at == s->end && s->pos == s->len ? 0 : -EINVAL;
}

static bool read_type(const struct src *f, const struct types *t, uint32_t id,
		      struct btf_type *bt)
{
	return id && id <= t->n && read_at(f, t->off[id - 1], bt, sizeof(*bt));
}

/* Through typedefs and qualifiers to what they name; 0 if it ends elsewhere. */
static uint32_t resolve(const struct src *f, const struct types *t, uint32_t id)
{
	struct btf_type bt;

	for (int i = 0; i < 32 && read_type(f, t, id, &bt); i++) {
		switch (BTF_INFO_KIND(bt.info)) {
		case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE: case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT: case BTF_KIND_TYPE_TAG:
			id = bt.type;
			continue;
		default:
			return id;
		}
	}
	return 0;
}

/* As libbpf's member walk: into anonymous members, depth bounded. */
static long member_off(const struct src *f, const struct types *t, uint32_t id,
		       const struct want *name, int depth)
{
	struct btf_type bt;
	struct btf_member *m;
	uint32_t kind, vlen;
	long found = -1;

	if (depth > 8 || !read_type(f, t, id, &bt))
		return -1;
	kind = BTF_INFO_KIND(bt.info);
	vlen = BTF_INFO_VLEN(bt.info);
	if ((kind != BTF_KIND_STRUCT && kind != BTF_KIND_UNION) || !vlen)
		return -1;
	m = malloc(vlen * sizeof(*m));
	if (!m || !read_at(f, t->off[id - 1] + sizeof(bt), m, vlen * sizeof(*m))) {
		free(m);
		return -1;
	}
	for (uint32_t i = 0; i < vlen && found < 0; i++) {
		long bits = BTF_INFO_KFLAG(bt.info) ? BTF_MEMBER_BIT_OFFSET(m[i].offset) :
			    m[i].offset, sub;

		if (m[i].name_off) {
			if (is_name(f, m[i].name_off, name))
				found = bits / 8;
			continue;
		}
		sub = member_off(f, t, resolve(f, t, m[i].type), name, depth + 1);
		if (sub >= 0)
			found = bits / 8 + sub;
	}
	free(m);
	return found;
}

static int read_all(int fd, struct kbtf_member *v, size_t n)
{
	struct btf_header h;
	struct stat st;
	struct stream *s;
	struct want *w;
	struct types t = {};
	struct src f = { .fd = fd };
	uint32_t *ids;
	uint8_t *map;
	int err = -EINVAL;

	if (fstat(fd, &st) || pread(fd, &h, sizeof(h), 0) != sizeof(h) ||
	    h.magic != BTF_MAGIC || h.hdr_len < sizeof(h) ||
	    (uint64_t)st.st_size < (uint64_t)h.hdr_len + h.type_off + h.type_len ||
	    (uint64_t)st.st_size < (uint64_t)h.hdr_len + h.str_off + h.str_len)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	w = calloc(2 * n, sizeof(*w));
	ids = calloc(n, sizeof(*ids));
	if (!s || !w || !ids) {
		free(s);
		free(w);
		free(ids);
		return -ENOMEM;
	}
	/* w: each struct's name, then its member's */
	for (size_t i = 0; i < n; i++) {
		w[i] = (struct want){ v[i].type, strlen(v[i].type), NO_OFF };
		w[n + i] = (struct want){ v[i].name, strlen(v[i].name), NO_OFF };
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	f.map = map == MAP_FAILED ? NULL : map;
	f.size = st.st_size;
	f.str_first = (uint64_t)h.hdr_len + h.str_off;
	f.str_len = h.str_len;
	/* mapped, names are compared in place: no pass over the strings */
	if (!f.map) {
		stream_init(s, fd, NULL, f.str_first, h.str_len);
		find_strings(s, w, 2 * n);
	}
	stream_init(s, fd, f.map, (uint64_t)h.hdr_len + h.type_off, h.type_len);
	err = index_types(&f, s, &t, w, ids, n);
	for (size_t i = 0; !err && i < n; i++)
		if (ids[i] && (f.map || w[n + i].off != NO_OFF))
			v[i].off = member_off(&f, &t, ids[i], &w[n + i], 0);
	if (f.map)
		munmap(map, st.st_size);
	free(t.off);
	free(ids);
	free(w);
	free(s);
	return err;
}

/*
 * Offset in bytes of member name in the struct or union of BTF type id,
 * looking into anonymous members (6.12's vm_area_struct keeps vm_start
 * in one); -1 if it has none.
 */
static long libbpf_member_off(const struct btf *btf, __u32 id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *m;

	if (!t || (!btf_is_struct(t) && !btf_is_union(t)))
		return -1;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *n = btf__name_by_offset(btf, m->name_off);
		long off = btf_member_bit_offset(t, i) / 8, sub;

		if (n && *n) {
			if (!strcmp(n, name))
				return off;
			continue;
		}
		sub = libbpf_member_off(btf, btf__resolve_type(btf, m->type), name);
		if (sub >= 0)
			return off + sub;
	}
	return -1;
}

static long libbpf_struct_member(const struct btf *btf, const char *type,
				 const char *name)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);

	return id > 0 ? libbpf_member_off(btf, id, name) : -1;
}

int kbtf_members_libbpf(const char *path, struct kbtf_member *v, size_t n)
{
	struct btf *btf = btf__parse_raw(path);
	int err = btf ? 0 : -errno;

	for (size_t i = 0; i < n; i++)
		v[i].off = btf ? libbpf_struct_member(btf, v[i].type, v[i].name) : -1;
	btf__free(btf);
	return err;
}

int kbtf_members(const char *path, struct kbtf_member *v, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	for (size_t i = 0; i < n; i++)
		v[i].off = -1;
	if (fd < 0)
		return -errno;
	err = read_all(fd, v, n);
	close(fd);
	/* a kind newer than this reader: libbpf's whole parse, if it knows it */
	if (err == -ENOTSUP)
		return kbtf_members_libbpf(path, v, n);
	if (err)
		for (size_t i = 0; i < n; i++)
			v[i].off = -1;
	return err;
}
