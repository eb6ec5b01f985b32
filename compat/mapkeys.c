// SPDX-License-Identifier: MIT
/*
 * BPF_MAP_GET_NEXT_KEY gives a map's first key for a NULL key from 4.12
 * (backported to some stable releases: 4.4.178 and 4.9.337 have it,
 * 4.8.15 does not, and fails it with EFAULT).  Before that a key that is
 * not in the map gives the first, in a hash (the lookup misses) and an
 * array (the index is past its end) alike; every map read here is keyed
 * by a process id or starts with one, and none is 0xffffffff.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "mapkeys.h"

/* A key of fill bytes, not in the map: the first key after it */
static int first_after_absent(int fd, void *next, size_t ks, size_t vs)
{
	unsigned char *probe = malloc(ks), *value = malloc(vs ? vs : 1);
	int err = -ENOENT;

	for (int fill = 0xff; probe && value && fill >= 0xf0; fill--) {
		memset(probe, fill, ks);
		if (!bpf_map_lookup_elem(fd, probe, value))
			continue;
		err = bpf_map_get_next_key(fd, probe, next) ? -errno : 0;
		break;
	}
	if (!probe || !value)
		err = -ENOMEM;
	free(probe);
	free(value);
	return err;
}

int mapkeys_next(int fd, bool first, const void *key, void *next,
		 size_t key_size, size_t value_size)
{
	if (!first)
		return bpf_map_get_next_key(fd, key, next) ? -errno : 0;
	if (!bpf_map_get_next_key(fd, NULL, next))
		return 0;
	if (errno != EFAULT)
		return -errno;
	return first_after_absent(fd, next, key_size, value_size);
}
