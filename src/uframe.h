/* SPDX-License-Identifier: MIT */
/*
 * Where a uprobe inside a function finds its caller when the %rbp chain
 * does not lead there: a USDT probe in a frameless function, or before
 * the function has set %rbp up.  A frame-pointer walk from there skips
 * the caller; the function's CFI row at the probe says where the return
 * address is.  Read in user space from the binary's .eh_frame, once per
 * probe, for the walkers that have no CFI of their own (see
 * SW_UFRAMES_MAX in bpf/stackwalk.h).
 */
#ifndef SW_UFRAME_H
#define SW_UFRAME_H

#include "probe.h"

/*
 * Each uprobe target of t inside a function gets its rule (tg->uframe,
 * 0: the %rbp chain is right there, or nothing tells) and the key it is
 * found by; probes whose keys collide with another rule get none, and
 * are counted in the return.  Tables that cannot be read give no rule:
 * the walk stays as it was.
 */
size_t uframe_rules(struct sw_targets *t);

#endif
