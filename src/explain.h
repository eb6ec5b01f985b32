/* SPDX-License-Identifier: MIT */
/* stacksnoop --explain: the fp walker's reads of one event, in words. */
#ifndef SW_EXPLAIN_H
#define SW_EXPLAIN_H

#include <stdbool.h>
#include <stdio.h>
#include "walker.h"
#include "symbolize.h"

struct sw_explain_how {
	bool user;		/* a user walk (uprobe, USDT), else kernel */
	bool entry;		/* the probe is on a function's first instruction */
	bool tracepoint;	/* kernel walk from the program's own frame */
};

void explain_print(FILE *out, const struct sw_event *ev,
		      struct symbolizer *sym, const struct sw_explain_how *how);

#endif
