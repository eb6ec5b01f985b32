/* SPDX-License-Identifier: MIT */
/*
 * Names of JIT-compiled code: /tmp/perf-PID.map, lines "START SIZE name"
 * in hex, as Java (perf-map-agent), Node (--perf-basic-prof) and LuaJIT
 * write them.  Read when first needed, again when the file has grown.
 */
#ifndef SW_PERFMAP_H
#define SW_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perfmaps;

int perfmaps_new(struct perfmaps **out);
struct untrusted_skip;

/*
 * The name over addr in pid's map, or NULL; *start gets its start.  uid:
 * the process's owner (0 when unknown: only root's map is then read).  A
 * map refused (not a regular file or a symlink, too large, someone else's)
 * is recorded in sk the first time only.  A map that users other than root
 * can write is read as far as the budget of sk goes (see untrusted.h).
 */
const char *perfmaps_find(struct perfmaps *m, uint32_t pid, uint32_t uid,
			   uint64_t addr, uint64_t *start,
			   struct untrusted_skip *sk);
/* Whether pid's map was read in part, the rest not fitting. */
bool perfmaps_cut(const struct perfmaps *m, uint32_t pid);
/* How many maps were read in part. */
size_t perfmaps_nr_cut(const struct perfmaps *m);
void perfmaps_free(struct perfmaps *m);

#endif
