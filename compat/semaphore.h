/* SPDX-License-Identifier: MIT */
/*
 * USDT semaphores on kernels before 4.20, which do not maintain them: the
 * tracer adds one to the semaphore in the traced process's memory while it
 * traces, and takes it back at exit, as bcc does.
 */
#ifndef SW_SEMAPHORE_H
#define SW_SEMAPHORE_H

#include <sys/types.h>

/* Add delta to the 16-bit semaphore at address addr of process pid. */
int semaphore_add(pid_t pid, unsigned long addr, int delta);

#endif
