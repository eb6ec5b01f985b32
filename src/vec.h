/* SPDX-License-Identifier: MIT */
/*
 * Arrays that grow by doubling: the one copy of that code.  A vector is
 * any typed pointer with its element count and capacity beside it.
 */
#ifndef SW_VEC_H
#define SW_VEC_H

#include <stddef.h>

/*
 * Room for `more` elements after the first n of the array at *(void **)vp,
 * of *cap elements of size bytes: its capacity doubles, from min at first,
 * until they fit.  0, or -ENOMEM with the array as it was.
 */
int vec_reserve(void *vp, size_t *cap, size_t n, size_t more, size_t size,
		size_t min);

/* vec_reserve for one more element of typed array v with count n and cap. */
#define VEC_GROW(v, n, cap, min) \
	vec_reserve(&(v), &(cap), (n), 1, sizeof(*(v)), (min))

#endif
