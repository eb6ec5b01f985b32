// SPDX-License-Identifier: MIT
/*
 * sysc N: enters the kernel through getppid exactly 3N times, from code
 * with frame pointers all the way to the syscall instruction:
 *
 *   raw_getppid <- from_a <- main            N times
 *   raw_getppid <- from_b <- main            2N times
 *
 * glibc's getppid() keeps no frame of its own, so the user stack of a
 * kernel event would lose its caller there; here every user frame of a
 * kprobe or tracepoint inside the syscall is known, and from_a and from_b
 * differ only in the frame behind raw_getppid.
 */
#include <stdlib.h>
#include <sys/syscall.h>

#define NOINLINE __attribute__((noinline))

NOINLINE long raw_getppid(void)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
	return ret;
}

NOINLINE void from_a(void)
{
	raw_getppid();
}

NOINLINE void from_b(void)
{
	raw_getppid();
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < n; i++)
		from_a();
	for (int i = 0; i < 2 * n; i++)
		from_b();
	return 0;
}
