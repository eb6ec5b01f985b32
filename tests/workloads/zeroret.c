// SPDX-License-Identifier: MIT
/*
 * zeroret: target() called once under a frame chain that ends in a 0
 * return address, with a frame of garbage behind it:
 *
 *   target <- cut <- main <- 0 <- 0x1234
 *
 * Frame-pointer unwinders (the kernel's perf_callchain_user among them)
 * store the 0 and go on; a 0 return address is where a stack ends, so
 * nothing from it on is a frame.
 */
#include <stdint.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void target(void)
{
	sink++;
}

NOINLINE void cut(void)
{
	uint64_t garbage[2] = { 0, 0x1234 };
	uint64_t end[2] = { (uintptr_t)garbage, 0 };
	uint64_t *fp = __builtin_frame_address(0);
	uint64_t saved = fp[0];

	/* main's saved %rbp, put back before the epilogue pops it */
	fp[0] = (uintptr_t)end;
	target();
	fp[0] = saved;
}

int main(void)
{
	cut();
	return 0;
}
