// SPDX-License-Identifier: MIT
/*
 * spin getppid N | spin call N: makes N getppid() syscalls, or N calls of
 * bench_fn(), and prints the mean nanoseconds each took.  The benchmark
 * subtracts the untraced time from the traced: what tracing added.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void bench_fn(void)
{
	sink++;
}

NOINLINE void syscall_site(void)
{
	getppid();
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 100000;
	int sys = argc > 1 && !strcmp(argv[1], "getppid");
	double t0 = now();

	for (long i = 0; i < n; i++) {
		if (sys)
			syscall_site();
		else
			bench_fn();
	}
	printf("%.1f\n", (now() - t0) / n);
	return 0;
}
