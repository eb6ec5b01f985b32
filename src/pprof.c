// SPDX-License-Identifier: MIT
/*
 * stackcount --pprof: the counts as a gzipped profile.proto, the format of
 * pprof, Parca and Pyroscope.  The protobuf is written by hand: it is a
 * dozen fields of varints and nested bytes, write-only, which a generated
 * codec and its runtime would not make shorter or safer.
 *
 * Every table of the profile (strings, functions, mappings, locations) is
 * built the same way: collect every entry the stacks need, sort, drop the
 * repeats; an entry's id is then its index, found again by bsearch.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "formats.h"
#include "frame.h"

/* A growing protobuf message; err keeps the first failure. */
struct pb {
	uint8_t *p;
	size_t len, cap;
	int err;
};

enum { VARINT = 0, BYTES = 2 };

static void pb_put(struct pb *b, const void *data, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = (b->len + n) * 2 + 64;
		uint8_t *p = realloc(b->p, cap);

		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t out[10];
	size_t n = 0;

	do {
		out[n] = v & 0x7f;
		v >>= 7;
		out[n++] |= v ? 0x80 : 0;
	} while (v);
	pb_put(b, out, n);
}

static void pb_tag(struct pb *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* A number field; 0 is the default, and not written. */
static void pb_num(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_tag(b, field, VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, unsigned field, const void *data, size_t n)
{
	pb_tag(b, field, BYTES);
	pb_varint(b, n);
	pb_put(b, data, n);
}

/* sub as field of b; sub is emptied for the next message. */
static void pb_msg(struct pb *b, unsigned field, struct pb *sub)
{
	if (sub->err && !b->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->p, sub->len);
	sub->len = 0;
}

/* profile.proto's field numbers, those we write. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING,
	PROFILE_LOCATION, PROFILE_FUNCTION, PROFILE_STRING_TABLE,
	PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS, PROFILE_PERIOD_TYPE,
	PROFILE_PERIOD, PROFILE_COMMENT,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE, SAMPLE_LABEL,
	LABEL_KEY = 1, LABEL_STR, LABEL_NUM,
	MAPPING_ID = 1, MAPPING_START, MAPPING_LIMIT, MAPPING_OFFSET,
	MAPPING_FILENAME, MAPPING_BUILD_ID, MAPPING_HAS_FUNCTIONS,
	LOCATION_ID = 1, LOCATION_MAPPING_ID, LOCATION_ADDRESS, LOCATION_LINE,
	LINE_FUNCTION_ID = 1,
	FUNCTION_ID = 1, FUNCTION_NAME, FUNCTION_SYSTEM_NAME,
};

/* The kernel as one mapping: its half of the address space, on any host. */
#define KERNEL_START		0xffff800000000000ull
#define KERNEL_LIMIT		0xffffffffffffffffull
#define KERNEL_FILE		"[kernel.kallsyms]"

struct mapping {
	const char *file;
	char *build_id;		/* hex; NULL: none */
	uint64_t start, limit, offset;
};

struct location {
	uint64_t mapping, addr;
	const char *fn;
};

struct stack {
	const struct sw_stack *st;
	struct sw_frame *f;
	size_t n;
	char comm[4 * SW_COMM_LEN + 1];		/* as printed */
};

struct profile {
	struct stack *stacks;
	size_t nstacks;
	const char **str;		/* the string table, "" first */
	size_t nstr;
	const char **fn;		/* function names; id = index + 1 */
	size_t nfn;
	struct mapping *map;		/* user mappings; id = index + 1 */
	size_t nmap;
	struct location *loc;		/* id = index + 1 */
	size_t nloc;
	char *kernel_build_id;
	bool kernel;			/* a kernel frame is in some stack */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_nstr(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

/*
 * pprof takes the first mapping for the program: a file that is neither a
 * library nor the kernel's name for memory ("[vdso]", "//anon").
 */
static bool library(const char *file)
{
	const char *base = strrchr(file, '/'), *so;

	base = base ? base + 1 : file;
	so = strstr(base, ".so");
	return file[0] != '/' || file[1] == '/' || *base == '[' ||
	       (so && (!so[3] || so[3] == '.'));
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;
	int c = library(x->file) - library(y->file);

	if (!c)
		c = strcmp(x->file, y->file);

	if (!c)
		c = cmp_nstr(x->build_id, y->build_id);
	if (!c)
		c = cmp_u64(x->start, y->start);
	if (!c)
		c = cmp_u64(x->limit, y->limit);
	return c ? c : cmp_u64(x->offset, y->offset);
}

static int cmp_location(const void *a, const void *b)
{
	const struct location *x = a, *y = b;
	int c = cmp_u64(x->mapping, y->mapping);

	if (!c)
		c = cmp_u64(x->addr, y->addr);
	return c ? c : strcmp(x->fn, y->fn);
}

/* Sort n entries of size sz and drop the repeats; returns how many stay. */
static size_t uniq(void *v, size_t n, size_t sz,
		   int (*cmp)(const void *, const void *))
{
	char *p = v;
	size_t m = 0;

	if (!n)
		return 0;
	qsort(v, n, sz, cmp);
	for (size_t i = 1; i < n; i++)
		if (cmp(p + m * sz, p + i * sz))
			memmove(p + ++m * sz, p + i * sz, sz);
	return m + 1;
}

static size_t find(const void *key, const void *v, size_t n, size_t sz,
		   int (*cmp)(const void *, const void *))
{
	const char *hit = bsearch(key, v, n, sz, cmp);

	return hit ? (size_t)(hit - (const char *)v) / sz : 0;
}

static size_t str_id(const struct profile *p, const char *s)
{
	return find(&s, p->str, p->nstr, sizeof(*p->str), cmp_str);
}

static char *hex(const uint8_t *id, size_t n)
{
	char *s = malloc(2 * n + 1);

	for (size_t i = 0; s && i < n; i++)
		sprintf(s + 2 * i, "%02x", id[i]);
	if (s)
		s[2 * n] = 0;
	return s;
}

/* The running kernel's build-id, from its notes; NULL when not told. */
static char *kernel_build_id(void)
{
	uint8_t buf[4096];
	FILE *f = fopen("/sys/kernel/notes", "re");
	size_t len = f ? fread(buf, 1, sizeof(buf), f) : 0, at = 0;

	if (f)
		fclose(f);
	while (at + 12 <= len) {
		uint32_t nh[3];	/* namesz, descsz, type */
		size_t name, desc;

		memcpy(nh, buf + at, sizeof(nh));
		name = at + 12;
		desc = name + ((nh[0] + 3) & ~3u);
		if (desc + nh[1] > len)
			break;
		if (nh[2] == 3 /* NT_GNU_BUILD_ID */ && nh[0] == 4 &&
		    !memcmp(buf + name, "GNU", 4))
			return hex(buf + desc, nh[1]);
		at = desc + ((nh[1] + 3) & ~3u);
	}
	return NULL;
}

static bool has_mapping(const struct sw_frame *f)
{
	return !f->kernel && f->path && f->map_end;
}

/* The user mapping's id of a frame: 0 when none holds it. */
static uint64_t mapping_id(const struct profile *p, const struct sw_frame *f)
{
	struct mapping key = {
		.file = f->path, .start = f->map_start, .limit = f->map_end,
		.offset = f->map_pgoff,
	};
	char *id;
	size_t i;

	if (f->kernel)
		return p->nmap + 1;	/* after the user's */
	if (!has_mapping(f))
		return 0;
	id = f->build_id_size ? hex(f->build_id, f->build_id_size) : NULL;
	key.build_id = id;
	i = find(&key, p->map, p->nmap, sizeof(*p->map), cmp_mapping);
	free(id);
	return i + 1;
}

/* Frames named as the text output names them: "name [module]" in the kernel. */
static int gather(struct profile *p, const struct sw_stacks *s,
		  struct symbolizer *sym, const struct sw_format *fmt)
{
	int err = 0;

	p->stacks = calloc(s->n ? s->n : 1, sizeof(*p->stacks));
	if (!p->stacks)
		return -ENOMEM;
	for (size_t i = 0; i < s->n && !err; i++) {
		struct stack *k = &p->stacks[p->nstacks];

		if (!s->v[i].count)
			continue;
		k->st = &s->v[i];
		output_comm(k->st->comm, k->comm, sizeof(k->comm));
		err = frame_list_get(sym, k->st, fmt, &k->f, &k->n);
		if (err)
			break;
		p->nstacks++;
		for (size_t j = 0; j < k->n && !err; j++) {
			struct sw_frame *f = &k->f[j];
			char *name;

			p->kernel |= f->kernel;
			if (!f->kernel || !f->named || !f->module)
				continue;
			if (asprintf(&name, "%s [%s]", f->name, f->module) < 0)
				err = -ENOMEM;
			else {
				free(f->name);
				f->name = name;
			}
		}
	}
	return err;
}

static size_t nframes(const struct profile *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nstacks; i++)
		n += p->stacks[i].n;
	return n;
}

static int tables(struct profile *p, const struct sw_run *run, char *header)
{
	size_t nf = nframes(p), n = 0;

	p->map = calloc(nf + 1, sizeof(*p->map));
	p->fn = calloc(nf + 1, sizeof(*p->fn));
	if (!p->map || !p->fn)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++)
		for (size_t j = 0; j < p->stacks[i].n; j++) {
			const struct sw_frame *f = &p->stacks[i].f[j];

			p->fn[p->nfn++] = f->name;
			if (!has_mapping(f))
				continue;
			p->map[p->nmap] = (struct mapping){
				.file = f->path, .start = f->map_start,
				.limit = f->map_end, .offset = f->map_pgoff,
			};
			if (f->build_id_size &&
			    !(p->map[p->nmap].build_id = hex(f->build_id,
							     f->build_id_size)))
				return -ENOMEM;
			p->nmap++;
		}
	p->nfn = uniq(p->fn, p->nfn, sizeof(*p->fn), cmp_str);
	/* the repeats' build-ids go with them */
	qsort(p->map, p->nmap, sizeof(*p->map), cmp_mapping);
	for (size_t i = 0; i < p->nmap; i++) {
		if (n && !cmp_mapping(&p->map[n - 1], &p->map[i]))
			free(p->map[i].build_id);
		else
			p->map[n++] = p->map[i];
	}
	p->nmap = n;
	if (p->kernel)
		p->kernel_build_id = kernel_build_id();

	/* every string the profile names, "" first (the smallest) */
	p->str = calloc(nf + 2 * p->nmap + 3 * p->nstacks + 16, sizeof(*p->str));
	if (!p->str)
		return -ENOMEM;
	n = 0;
	p->str[n++] = "";
	p->str[n++] = "events";
	p->str[n++] = "count";
	p->str[n++] = "comm";
	p->str[n++] = "pid";
	p->str[n++] = KERNEL_FILE;
	p->str[n++] = header;
	if (*run->lost_line)
		p->str[n++] = run->lost_line;
	if (p->kernel_build_id)
		p->str[n++] = p->kernel_build_id;
	for (size_t i = 0; i < p->nfn; i++)
		p->str[n++] = p->fn[i];
	for (size_t i = 0; i < p->nmap; i++) {
		p->str[n++] = p->map[i].file;
		if (p->map[i].build_id)
			p->str[n++] = p->map[i].build_id;
	}
	for (size_t i = 0; i < p->nstacks; i++)
		p->str[n++] = p->stacks[i].comm;
	p->nstr = uniq(p->str, n, sizeof(*p->str), cmp_str);

	/* locations: one per frame address in its mapping, by its name */
	p->loc = calloc(nf + 1, sizeof(*p->loc));
	if (!p->loc)
		return -ENOMEM;
	for (size_t i = 0; i < p->nstacks; i++)
		for (size_t j = 0; j < p->stacks[i].n; j++) {
			const struct sw_frame *f = &p->stacks[i].f[j];

			p->loc[p->nloc++] = (struct location){
				.mapping = mapping_id(p, f), .addr = f->addr,
				.fn = f->name,
			};
		}
	p->nloc = uniq(p->loc, p->nloc, sizeof(*p->loc), cmp_location);
	return 0;
}

static void value_type(struct pb *b, unsigned field, struct pb *sub,
		       const struct profile *p)
{
	pb_num(sub, VALUE_TYPE_TYPE, str_id(p, "events"));
	pb_num(sub, VALUE_TYPE_UNIT, str_id(p, "count"));
	pb_msg(b, field, sub);
}

static void mapping(struct pb *b, struct pb *sub, uint64_t id, uint64_t start,
		    uint64_t limit, uint64_t offset, size_t file, size_t build_id)
{
	pb_num(sub, MAPPING_ID, id);
	pb_num(sub, MAPPING_START, start);
	pb_num(sub, MAPPING_LIMIT, limit);
	pb_num(sub, MAPPING_OFFSET, offset);
	pb_num(sub, MAPPING_FILENAME, file);
	pb_num(sub, MAPPING_BUILD_ID, build_id);
	/* named already: pprof must not look the addresses up again */
	pb_num(sub, MAPPING_HAS_FUNCTIONS, 1);
	pb_msg(b, PROFILE_MAPPING, sub);
}

static void encode(struct pb *b, const struct profile *p,
		   const struct sw_run *run, const char *header)
{
	struct pb sub = {}, sub2 = {}, ids = {};

	value_type(b, PROFILE_SAMPLE_TYPE, &sub, p);
	for (size_t i = 0; i < p->nstacks; i++) {
		const struct stack *k = &p->stacks[i];

		/* leaf first, as our stacks are */
		for (size_t j = 0; j < k->n; j++) {
			struct location key = {
				.mapping = mapping_id(p, &k->f[j]),
				.addr = k->f[j].addr, .fn = k->f[j].name,
			};

			pb_varint(&ids, 1 + find(&key, p->loc, p->nloc,
						 sizeof(*p->loc), cmp_location));
		}
		pb_msg(&sub, SAMPLE_LOCATION_ID, &ids);
		pb_varint(&ids, k->st->count);
		pb_msg(&sub, SAMPLE_VALUE, &ids);
		if (run->keyed) {
			pb_num(&sub2, LABEL_KEY, str_id(p, "comm"));
			pb_num(&sub2, LABEL_STR, str_id(p, k->comm));
			pb_msg(&sub, SAMPLE_LABEL, &sub2);
		}
		if (run->keyed && run->per_pid) {
			pb_num(&sub2, LABEL_KEY, str_id(p, "pid"));
			pb_num(&sub2, LABEL_NUM, k->st->tgid);
			pb_msg(&sub, SAMPLE_LABEL, &sub2);
		}
		pb_msg(b, PROFILE_SAMPLE, &sub);
	}
	for (size_t i = 0; i < p->nmap; i++)
		mapping(b, &sub, i + 1, p->map[i].start, p->map[i].limit,
			p->map[i].offset, str_id(p, p->map[i].file),
			p->map[i].build_id ? str_id(p, p->map[i].build_id) : 0);
	if (p->kernel)
		mapping(b, &sub, p->nmap + 1, KERNEL_START, KERNEL_LIMIT, 0,
			str_id(p, KERNEL_FILE),
			p->kernel_build_id ? str_id(p, p->kernel_build_id) : 0);
	for (size_t i = 0; i < p->nloc; i++) {
		pb_num(&sub, LOCATION_ID, i + 1);
		pb_num(&sub, LOCATION_MAPPING_ID, p->loc[i].mapping);
		pb_num(&sub, LOCATION_ADDRESS, p->loc[i].addr);
		pb_num(&sub2, LINE_FUNCTION_ID, 1 + find(&p->loc[i].fn, p->fn, p->nfn,
							 sizeof(*p->fn), cmp_str));
		pb_msg(&sub, LOCATION_LINE, &sub2);
		pb_msg(b, PROFILE_LOCATION, &sub);
	}
	for (size_t i = 0; i < p->nfn; i++) {
		pb_num(&sub, FUNCTION_ID, i + 1);
		pb_num(&sub, FUNCTION_NAME, str_id(p, p->fn[i]));
		pb_num(&sub, FUNCTION_SYSTEM_NAME, str_id(p, p->fn[i]));
		pb_msg(b, PROFILE_FUNCTION, &sub);
	}
	for (size_t i = 0; i < p->nstr; i++)
		pb_bytes(b, PROFILE_STRING_TABLE, p->str[i], strlen(p->str[i]));
	pb_num(b, PROFILE_TIME_NANOS, run->start_ns);
	pb_num(b, PROFILE_DURATION_NANOS, run->seconds * 1e9);
	value_type(b, PROFILE_PERIOD_TYPE, &sub, p);
	pb_num(b, PROFILE_PERIOD, 1);
	pb_num(b, PROFILE_COMMENT, str_id(p, header));
	if (*run->lost_line)
		pb_num(b, PROFILE_COMMENT, str_id(p, run->lost_line));
	if (!b->err)
		b->err = sub.err ? sub.err : sub2.err ? sub2.err : ids.err;
	free(sub.p);
	free(sub2.p);
	free(ids.p);
}

/* gzip in memory, so that out's write errors are out's alone to say */
static int gzip_to(FILE *out, const struct pb *b)
{
	z_stream z = {};
	unsigned char *gz;
	uLong cap;
	int e;

	/* windowBits 15, +16: a gzip header and trailer, not zlib's */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, b->len);
	gz = malloc(cap);
	if (!gz) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = b->p;
	z.avail_in = b->len;
	z.next_out = gz;
	z.avail_out = cap;
	e = deflate(&z, Z_FINISH) == Z_STREAM_END ? 0 : -ENOMEM;
	if (!e)
		fwrite(gz, 1, z.total_out, out);
	deflateEnd(&z);
	free(gz);
	return e;
}

int pprof_write(FILE *out, const struct sw_stacks *s, struct symbolizer *sym,
		   const struct sw_format *fmt, const struct sw_run *run)
{
	struct profile p = {};
	struct pb b = {};
	char *header = NULL;
	int err;

	if (asprintf(&header, "%s %s", run->tool, run->pattern) < 0)
		header = NULL;
	err = header ? gather(&p, s, sym, fmt) : -ENOMEM;
	if (!err)
		err = tables(&p, run, header);
	if (!err) {
		encode(&b, &p, run, header);
		err = b.err;
	}
	if (!err)
		err = gzip_to(out, &b);
	for (size_t i = 0; i < p.nstacks; i++)
		frame_list_free(p.stacks[i].f, p.stacks[i].n);
	for (size_t i = 0; i < p.nmap; i++)
		free(p.map[i].build_id);
	free(p.stacks);
	free(p.str);
	free(p.fn);
	free(p.map);
	free(p.loc);
	free(p.kernel_build_id);
	free(header);
	free(b.p);
	return err;
}
