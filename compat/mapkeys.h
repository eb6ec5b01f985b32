/* SPDX-License-Identifier: MIT */
/* A BPF map's keys, walked the same way on every kernel. */
#ifndef SW_MAPKEYS_H
#define SW_MAPKEYS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The key after *key in map fd, into next; with first, the map's first
 * key (key unused).  0, or -errno (-ENOENT: no more).  key_size and
 * value_size are the map's (a lookup checks that the key it starts from
 * before 4.12 is not one of the map's).
 */
int mapkeys_next(int fd, bool first, const void *key, void *next,
		 size_t key_size, size_t value_size);

#endif /* SW_MAPKEYS_H */
