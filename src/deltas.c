// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "deltas.h"

/*
 * A stack's identity as bytes: its frames, as printed.  The kernel's map
 * may hold more than one key for them (a walker's key can carry bytes
 * beyond the frames), so each read sums the counts of one identity first:
 * keeping one key's count and taking it for all of them loses the rest.
 */
struct entry {
	unsigned char *id;
	size_t len;
	__u64 hash, count;
	__u64 sum, round;	/* this read's total, while round is the read's */
};

struct deltas {
	struct entry *slots;
	size_t cap, used;
	__u64 round;
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

/* The entry of st's identity, added with count 0 if new; -ENOMEM. */
static int find(struct deltas *d, const struct sw_stack *st, struct entry **e)
{
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
		free(id);
	} else {
		d->slots[j] = (struct entry){ .id = id, .len = len, .hash = h };
		d->used++;
	}
	*e = &d->slots[j];
	return 0;
}

int deltas__apply(struct deltas *d, struct sw_stacks *s)
{
	struct entry *e;
	int err;

	d->round++;
	for (size_t i = 0; i < s->n; i++) {
		err = find(d, &s->v[i], &e);
		if (err)
			return err;
		if (e->round != d->round) {
			e->round = d->round;
			e->sum = 0;
		}
		e->sum += s->v[i].count;
	}
	/* the first key of an identity carries its delta, the others 0 */
	for (size_t i = 0; i < s->n; i++) {
		err = find(d, &s->v[i], &e);
		if (err)
			return err;
		if (e->round != d->round) {
			s->v[i].count = 0;
			continue;
		}
		s->v[i].count = e->sum > e->count ? e->sum - e->count : 0;
		e->count = e->sum;
		e->round = 0;
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
