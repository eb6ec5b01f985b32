// SPDX-License-Identifier: MIT
/*
 * ia32: a 32-bit (ia32) process, no libc: calls work() through via_a()
 * three times, then exits.  The fp walker must not read its 4-byte frames
 * as 8-byte ones.
 */
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

void _start(void)
{
	for (int i = 0; i < 3; i++)
		via_a();
	__asm__ volatile("int $0x80" : : "a"(1), "b"(0));
	__builtin_unreachable();
}
