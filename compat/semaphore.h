/* SPDX-License-Identifier: MIT */
/*
 * USDT semaphores on kernels before 4.20, which do not maintain them: the
 * tracer adds one to the semaphore in the traced process's memory while it
 * traces, and takes it back at exit, as bcc does.
 */
#ifndef SW_SEMAPHORE_H
#define SW_SEMAPHORE_H

#include <sys/types.h>

/*
 * Add delta to the 16-bit semaphore at file offset sem_off of path, as
 * mapped (writable) in process pid.  -ENOENT: path is not mapped there.
 */
int semaphore_add(pid_t pid, const char *path, unsigned long sem_off,
		     int delta);

#endif
