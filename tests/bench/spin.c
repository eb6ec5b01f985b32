// SPDX-License-Identifier: MIT
/*
 * spin getppid N | spin call N: makes N getppid() syscalls, or N calls of
 * bench_fn(), and prints what one call took (the median of 21 timed slices).
 * The benchmark subtracts the untraced time from the traced: what tracing added.
 * SPIN_AT_END, if set, is a shell command run after the calls, before exit.
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

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The calls run in CHUNKS slices, each timed: the median slice is what a
 * call costs, untouched by the odd slice another task or an interrupt
 * stretched.
 */
#define CHUNKS 21

static long calls;
static int sys;
static double t[CHUNKS];

/* the timed loop, reached with %rbp zero: see main */
NOINLINE void run(void)
{
	long per = calls / CHUNKS > 0 ? calls / CHUNKS : 1;

	for (int c = 0; c < CHUNKS; c++) {
		double t0 = now();

		for (long i = 0; i < per; i++) {
			if (sys)
				syscall_site();
			else
				bench_fn();
		}
		t[c] = (now() - t0) / per;
	}
}

int main(int argc, char **argv)
{
	const char *hook;

	calls = argc > 2 ? atol(argv[2]) : 100000;
	sys = argc > 1 && !strcmp(argv[1], "getppid");
	/*
	 * Below main, libc's frames do not keep %rbp as a frame pointer: an
	 * unwinder reads on from whatever it holds, and how far it gets
	 * before a fault (~0.7 us each) changes with the address-space
	 * layout from run to run.  A zero %rbp ends every walk at run():
	 * the same stack, at the same cost, in every run.
	 */
	__asm__ volatile("push %%rbp\n\t"
			 "sub $8, %%rsp\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "call run\n\t"
			 "add $8, %%rsp\n\t"
			 "pop %%rbp"
			 ::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",
			 "r11", "memory", "cc");
	qsort(t, CHUNKS, sizeof(t[0]), by_value);
	printf("%.1f\n", t[CHUNKS / 2]);
	fflush(stdout);
	/* the tracer is still attached: let the benchmark read its stats */
	hook = getenv("SPIN_AT_END");
	if (hook && *hook && system(hook))
		return 1;
	return 0;
}
