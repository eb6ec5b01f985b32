// SPDX-License-Identifier: MIT
/*
 * vdsopaths: syscalls made from inside the vDSO.  The vDSO has no time for
 * a process's CPU clock, so its clock_gettime makes the syscall itself:
 * at sys_enter_clock_gettime the user registers are in the vDSO's code,
 * and only the vDSO's own CFI (read from the process's memory: there is
 * no file) leads back to the caller.
 *
 *   [vdso] <- clock_gettime <- via_a <- main     2 times
 *   [vdso] <- clock_gettime <- via_b <- main     3 times
 */
#include <time.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void via_a(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
}

NOINLINE void via_b(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
}

int main(void)
{
	for (int i = 0; i < 2; i++)
		via_a();
	for (int i = 0; i < 3; i++)
		via_b();
	return 0;
}
