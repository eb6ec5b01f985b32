/* SPDX-License-Identifier: MIT */
/*
 * Debug files from the debuginfod servers DEBUGINFOD_URLS names (Debian's,
 * Fedora's, Ubuntu's, a local one), by build-id, for a stripped binary
 * whose debug file is nowhere on this machine.
 *
 * The asking is done by elfutils' client, debuginfod-find, run as a child:
 * the tools are static, and libdebuginfod brings libcurl and a TLS stack
 * that cannot be linked into them.  The client keeps the cache gdb and
 * perf share (DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client
 * or ~/.cache/debuginfod_client), and answers from it without the network.
 *
 * Each fetch is bounded in time (DEBUGINFOD_FETCH_S, or DEBUGINFOD_TIMEOUT
 * when it is less, as the client reads it); a server that cannot
 * be reached, or a fetch that runs out of time, ends the asking for the
 * rest of the run.  A file fetched is opened as any other debug file
 * (untrusted.h), and used only if its build-id is the one asked for.
 */
#ifndef SW_DEBUGINFOD_H
#define SW_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DEBUGINFOD_FETCH_S 30
/* a fetch that takes longer than this shows a line while it runs */
#define DEBUGINFOD_PROGRESS_MS 1000

struct debuginfod;

/*
 * A client for the servers of DEBUGINFOD_URLS; *out is NULL (nothing will
 * be asked) when it is unset or empty.  tool: for the progress line.
 */
int debuginfod_new(struct debuginfod **out, const char *tool);
void debuginfod_free(struct debuginfod *d);

/*
 * The debug file of build-id id (n bytes) as a path in the client's cache,
 * into path; what: the binary it is for, for the progress line.  0, or
 * -ENOENT (no server has it), -ECANCELED (asking has ended: a server could
 * not be reached, a fetch ran out of time, no client is installed, or the
 * tool is being stopped), another -errno.
 */
int debuginfod_fetch(struct debuginfod *d, const uint8_t *id, size_t n,
		     const char *what, char *path, size_t len);

/*
 * The binaries left without symbols because asking ended, with why, in one
 * line on f; nothing when none were.
 */
void debuginfod_report(const struct debuginfod *d, FILE *f);

#endif
