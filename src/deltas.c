// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "deltas.h"
#include "htab.h"

/*
 * A stack's identity as bytes: its frames, as printed.  The kernel's map
 * may hold more than one key for them (a walker's key can carry bytes
 * beyond the frames), so each read sums the counts of one identity first:
 * keeping one key's count and taking it for all of them loses the rest.
 */
struct entry {
	unsigned char *id;	/* NULL: a free slot */
	size_t len;
	__u64 hash, count;
	__u64 sum, round;	/* this read's total, while round is the read's */
};

struct deltas {
	struct htab tab;	/* of struct entry */
	__u64 round;
};

/* What find looks for: an identity and its hash. */
struct key {
	const unsigned char *id;
	size_t len;
	__u64 hash;
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

static size_t entry_hash(const void *slot)
{
	return ((const struct entry *)slot)->hash;
}

static const struct htab_ops entry_ops = {
	.size = sizeof(struct entry), .min = 1024, .hash = entry_hash,
};

static bool entry_is(const void *slot, const void *key)
{
	const struct entry *e = slot;
	const struct key *k = key;

	return e->hash == k->hash && e->len == k->len &&
	       !memcmp(e->id, k->id, k->len);
}

int deltas_new(struct deltas **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

/* The entry of st's identity, added with count 0 if new; -ENOMEM. */
static int find(struct deltas *d, const struct sw_stack *st, struct entry **e)
{
	struct key k;
	unsigned char *id;

	k.len = identity(st, &id);
	if (!k.len)
		return -ENOMEM;
	if (htab_reserve(&d->tab, &entry_ops)) {
		free(id);
		return -ENOMEM;
	}
	k.id = id;
	k.hash = htab_hash_bytes(id, k.len);
	*e = htab_find(&d->tab, &entry_ops, k.hash, entry_is, &k);
	if ((*e)->id) {
		free(id);
	} else {
		**e = (struct entry){ .id = id, .len = k.len, .hash = k.hash };
		d->tab.nr++;
	}
	return 0;
}

int deltas_apply(struct deltas *d, struct sw_stacks *s)
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

void deltas_free(struct deltas *d)
{
	struct entry *v;

	if (!d)
		return;
	v = d->tab.slots;
	for (size_t i = 0; i < d->tab.cap; i++)
		free(v[i].id);
	free(v);
	free(d);
}
