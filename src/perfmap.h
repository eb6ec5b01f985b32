/* SPDX-License-Identifier: MIT */
/*
 * Names of JIT-compiled code: /tmp/perf-PID.map, lines "START SIZE name"
 * in hex, as Java (perf-map-agent), Node (--perf-basic-prof) and LuaJIT
 * write them.  Read when first needed, again when the file has grown.
 */
#ifndef SW_PERFMAP_H
#define SW_PERFMAP_H

#include <stdint.h>

struct perfmaps;

int perfmaps__new(struct perfmaps **out);
/* The name over addr in pid's map, or NULL; *start gets its start. */
const char *perfmaps__find(struct perfmaps *m, uint32_t pid, uint64_t addr,
			   uint64_t *start);
void perfmaps__free(struct perfmaps *m);

#endif
