// SPDX-License-Identifier: MIT
/* The semaphore-guarded probe of usdt.c: sys/sdt.h decides per file. */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#define NOINLINE __attribute__((noinline))

unsigned short sw_tock_semaphore __attribute__((section(".probes")));

NOINLINE void tock_site(int i)
{
	if (sw_tock_semaphore)
		STAP_PROBE1(sw, tock, i);
}
