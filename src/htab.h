/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash tables: linear probing, a power-of-two number of
 * slots, at most half full, doubled and rehashed when an entry more would
 * pass half.  The caller keeps its own slot struct and says through
 * struct htab_ops how big one is, what a used one hashes to and, unless
 * its first member is a pointer that is NULL only in a free slot, whether
 * one is used (an all-zero slot is free).  Entries are never removed one
 * by one: a table is rebuilt without them (htab_init, htab_put).
 */
#ifndef SW_HTAB_H
#define SW_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct htab {
	void *slots;
	size_t cap, nr;		/* slots; used ones, kept by the caller */
};

struct htab_ops {
	size_t size;			/* of a slot */
	size_t min;			/* the first capacity: a power of two */
	size_t (*hash)(const void *slot);	/* of a used slot */
	bool (*used)(const void *slot);	/* NULL: the first pointer is set */
};

/* Whether a used slot holds key. */
typedef bool (*htab_match_fn)(const void *slot, const void *key);

/* t empty, with cap free slots (a power of two): 0, or -ENOMEM. */
int htab_init(struct htab *t, const struct htab_ops *ops, size_t cap);

/*
 * A copy of used slot s into the free slot for it in t, counted: how a
 * table is rebuilt.  t has room.
 */
void htab_put(struct htab *t, const struct htab_ops *ops, const void *s);

/* Slot i of t. */
static inline void *htab_slot(const struct htab *t, const struct htab_ops *ops,
			      size_t i)
{
	return (char *)t->slots + i * ops->size;
}

static inline bool htab_used(const struct htab_ops *ops, const void *slot)
{
	void *first;

	if (ops->used)
		return ops->used(slot);
	memcpy(&first, slot, sizeof(first));
	return first;
}

/* htab_reserve's slow path: twice the slots (ops->min at first). */
int htab_grow(struct htab *t, const struct htab_ops *ops);

/*
 * Room for one more entry than t->nr: twice the slots (ops->min at first)
 * when it would pass half full.  0, or -ENOMEM with t as it was.  Slot
 * pointers from before do not survive a growth.
 */
static inline int htab_reserve(struct htab *t, const struct htab_ops *ops)
{
	return (t->nr + 1) * 2 <= t->cap ? 0 : htab_grow(t, ops);
}

/*
 * The slot holding key, whose hash is hash, or else the free slot where it
 * would go (the caller fills it and counts it in t->nr).  t has slots.
 * Inline, and ops a constant, so that the callbacks inline in each table's
 * lookup: symbolizing a frame looks up three tables.
 */
static inline void *htab_find(const struct htab *t, const struct htab_ops *ops,
			      size_t hash, htab_match_fn match,
			      const void *key)
{
	size_t i = hash & (t->cap - 1);
	void *s;

	while (s = htab_slot(t, ops, i), htab_used(ops, s) && !match(s, key))
		i = (i + 1) & (t->cap - 1);
	return s;
}

/* FNV-1a, 64-bit: of len bytes at p, and of a string. */
uint64_t htab_hash_bytes(const void *p, size_t len);
uint64_t htab_hash_str(const char *s);

#endif
