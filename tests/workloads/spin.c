// SPDX-License-Identifier: MIT
/*
 * spin: once the dynamic loader hands over, spin, and never make a
 * syscall: no end of its own (the test's CPU limit, or a signal, ends
 * it).  Without libc, whose start makes syscalls (glibc's prlimit64 in
 * __libc_early_init), the first code after ld.so's is this loop.
 */
volatile unsigned long turns;

void _start(void)
{
	for (;;)
		turns++;
}
