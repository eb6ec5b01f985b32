// SPDX-License-Identifier: MIT
/*
 * phases: for each number N read from stdin, calls work() through via_a()
 * N times, then prints "done N" and flushes.  Tests drive it step by step,
 * so they know exactly which calls happened before each observation.
 */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void work(void)
{
	sink++;
}

NOINLINE void via_a(void)
{
	work();
}

int main(void)
{
	int n;

	while (scanf("%d", &n) == 1) {
		for (int i = 0; i < n; i++)
			via_a();
		printf("done %d\n", n);
		fflush(stdout);
	}
	return 0;
}
