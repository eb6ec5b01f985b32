// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vec.h"

int vec_reserve(void *vp, size_t *cap, size_t n, size_t more, size_t size,
		size_t min)
{
	size_t want = *cap ? *cap : min;
	void *v;

	if (n + more <= *cap)
		return 0;
	while (want < n + more) {
		if (want > SIZE_MAX / 2 / size)
			return -ENOMEM;
		want *= 2;
	}
	memcpy(&v, vp, sizeof(v));
	v = realloc(v, want * size);
	if (!v)
		return -ENOMEM;
	memcpy(vp, &v, sizeof(v));
	*cap = want;
	return 0;
}
