/* SPDX-License-Identifier: MIT */
/*
 * Per-interval counts (-i) without clearing the kernel's map: clearing
 * races with events that are counting into an entry as it is deleted, and
 * loses them.  Instead the map only grows, and each interval prints the
 * difference from the last.
 */
#ifndef SW_DELTAS_H
#define SW_DELTAS_H

#include "walker.h"

struct deltas;

int deltas_new(struct deltas **out);
/* Turn cumulative counts into counts since the previous call. */
int deltas_apply(struct deltas *d, struct sw_stacks *s);
void deltas_free(struct deltas *d);

#endif
