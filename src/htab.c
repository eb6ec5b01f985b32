// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "htab.h"

int htab_init(struct htab *t, const struct htab_ops *ops, size_t cap)
{
	t->slots = calloc(cap, ops->size);
	t->cap = t->slots ? cap : 0;
	t->nr = 0;
	return t->slots ? 0 : -ENOMEM;
}

void htab_put(struct htab *t, const struct htab_ops *ops, const void *s)
{
	size_t i = ops->hash(s) & (t->cap - 1);

	while (htab_used(ops, htab_slot(t, ops, i)))
		i = (i + 1) & (t->cap - 1);
	memcpy(htab_slot(t, ops, i), s, ops->size);
	t->nr++;
}

int htab_grow(struct htab *t, const struct htab_ops *ops)
{
	struct htab n;

	if (t->cap > SIZE_MAX / 2 / ops->size)
		return -ENOMEM;
	if (htab_init(&n, ops, t->cap ? t->cap * 2 : ops->min))
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++)
		if (htab_used(ops, htab_slot(t, ops, i)))
			htab_put(&n, ops, htab_slot(t, ops, i));
	free(t->slots);
	*t = n;
	return 0;
}

uint64_t htab_hash_bytes(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

uint64_t htab_hash_str(const char *s)
{
	return htab_hash_bytes(s, strlen(s));
}
