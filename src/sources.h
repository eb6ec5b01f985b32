/* SPDX-License-Identifier: MIT */
/* The BPF C source of each walker, embedded at build time (gen/embed.py). */
#ifndef SW_SOURCES_H
#define SW_SOURCES_H

#include "../compat/kfeatures.h"

const char *sw_walker_source(enum sw_walker w);

#endif
