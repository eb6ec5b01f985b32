/* SPDX-License-Identifier: MIT */
/*
 * The tools block SIGINT, SIGTERM and SIGHUP and read them from a signalfd
 * (session.c), so that however they end, no probe is left in tracefs.  A
 * step that can take long (attaching many probes, naming many stacks,
 * waiting for a reader to make room) asks here whether one is waiting and
 * stops early, leaving it pending for the session: Ctrl-C works at every
 * step.
 */
#ifndef SW_INTERRUPT_H
#define SW_INTERRUPT_H

#include <signal.h>

/* The signal that asks the tool to end, pending; 0: none. */
static inline int interrupt_pending(void)
{
	static const int ends[] = { SIGINT, SIGTERM, SIGHUP };
	sigset_t set;

	if (sigpending(&set))
		return 0;
	for (unsigned i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (sigismember(&set, ends[i]))
			return ends[i];
	return 0;
}

#endif
