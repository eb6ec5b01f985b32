// SPDX-License-Identifier: MIT
/*
 * phases: for each number N read from stdin, calls work() through via_a()
 * N times, then prints "done N" and flushes; for 0, prints its USDT
 * semaphore ("semaphore S"); for -N, calls getppid() N times.  Tests drive it step by step, so they know
 * exactly which calls happened before each observation.  work() fires the
 * USDT probe phases:step while a tracer holds its semaphore.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <unistd.h>
#include <sys/sdt.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;
unsigned short phases_step_semaphore __attribute__((section(".probes")));

NOINLINE void work(void)
{
	sink++;
	if (phases_step_semaphore)
		STAP_PROBE(phases, step);
}

NOINLINE void via_a(void)
{
	work();
}

/* glibc's getppid keeps no frame: a frame-pointer walk loses its caller */
NOINLINE void ask(void)
{
	getppid();
}

int main(void)
{
	int n;

	while (scanf("%d", &n) == 1) {
		if (!n) {
			printf("semaphore %u\n", phases_step_semaphore);
			fflush(stdout);
			continue;
		}
		for (; n < 0; n++)
			ask();
		for (int i = 0; i < n; i++)
			via_a();
		printf("done %d\n", n);
		fflush(stdout);
	}
	return 0;
}
