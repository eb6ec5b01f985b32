// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "deltas.h"

/* A stack's identity as bytes: what the kernel's map keyed it by. */
struct entry {
	unsigned char *id;
	size_t len;
	__u64 hash, count;
};

struct deltas {
	struct entry *slots;
	size_t cap, used;
};

static size_t identity(const struct sw_stack *st, unsigned char **out)
{
	size_t len = sizeof(st->tgid) + SW_COMM_LEN + 4 +
		     (st->nk + st->nu) * sizeof(__u64);
	unsigned char *p = malloc(len), *o = p;

	if (!p)
		return 0;
	memcpy(o, &st->tgid, sizeof(st->tgid));
	o += sizeof(st->tgid);
	memcpy(o, st->comm, SW_COMM_LEN);
	o += SW_COMM_LEN;
	memcpy(o, &st->nk, 2);
	memcpy(o + 2, &st->nu, 2);
	o += 4;
	memcpy(o, st->kip, st->nk * sizeof(__u64));
	o += st->nk * sizeof(__u64);
	memcpy(o, st->uip, st->nu * sizeof(__u64));
	*out = p;
	return len;
}

static __u64 fnv1a(const unsigned char *p, size_t len)
{
	__u64 h = 0xcbf29ce484222325ULL;

	while (len--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

static int grow(struct deltas *d)
{
	size_t cap = d->cap ? d->cap * 2 : 1024;
	struct entry *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < d->cap; i++) {
		size_t j;

		if (!d->slots[i].id)
			continue;
		for (j = d->slots[i].hash & (cap - 1); s[j].id; j = (j + 1) & (cap - 1))
			;
		s[j] = d->slots[i];
	}
	free(d->slots);
	d->slots = s;
	d->cap = cap;
	return 0;
}

int deltas__new(struct deltas **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

int deltas__apply(struct deltas *d, struct sw_stacks *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct sw_stack *st = &s->v[i];
		unsigned char *id;
		size_t len = identity(st, &id), j;
		__u64 h;

		if (!len)
			return -ENOMEM;
		if ((d->used + 1) * 2 > d->cap && grow(d)) {
			free(id);
			return -ENOMEM;
		}
		h = fnv1a(id, len);
		for (j = h & (d->cap - 1); d->slots[j].id; j = (j + 1) & (d->cap - 1))
			if (d->slots[j].hash == h && d->slots[j].len == len &&
			    !memcmp(d->slots[j].id, id, len))
				break;
		if (d->slots[j].id) {
			__u64 prev = d->slots[j].count;

			d->slots[j].count = st->count;
			st->count -= prev;
			free(id);
			continue;
		}
		d->slots[j] = (struct entry){ id, len, h, st->count };
		d->used++;
	}
	return 0;
}

void deltas__free(struct deltas *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->cap; i++)
		free(d->slots[i].id);
	free(d->slots);
	free(d);
}
