// SPDX-License-Identifier: MIT
/*
 * usdt N: fires USDT probe sw:tick N times from tick_site(), and sw:tock
 * 2N times from tock_site() -- but tock only while its semaphore is set,
 * as probes with costly arguments are written: counting it exactly shows
 * the tracer set the semaphore.
 */
#include <stdlib.h>
#include <sys/sdt.h>

#define NOINLINE __attribute__((noinline))

void tock_site(int i);	/* usdt_sem.c: sdt.h takes semaphores per file */

NOINLINE void tick_site(int i)
{
	DTRACE_PROBE1(sw, tick, i);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < n; i++)
		tick_site(i);
	for (int i = 0; i < 2 * n; i++)
		tock_site(i);
	return 0;
}
