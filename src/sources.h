/* SPDX-License-Identifier: MIT */
/* The BPF C source of each walker, embedded at build time (gen/embed.py). */
#ifndef SW_SOURCES_H
#define SW_SOURCES_H

/* The source of the walker of that name (struct walker_desc), or NULL. */
const char *sources_walker(const char *name);

#endif
