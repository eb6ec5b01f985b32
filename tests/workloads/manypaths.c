// SPDX-License-Identifier: MIT
/*
 * manypaths DEPTH: 2^DEPTH distinct stacks into target(), path p taken
 * (p % 3) + 1 times.  Each level calls the next from one of two call
 * sites, chosen by a bit of p, so every path has its own return
 * addresses: "lvl+0x<site>" frames, printed with -s, spell p in binary,
 * least significant bit nearest target().
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void target(void)
{
	sink++;
}

NOINLINE void lvl(int depth, unsigned bits)
{
	if (depth == 0) {
		target();
		return;
	}
	if (bits & 1) {
		lvl(depth - 1, bits >> 1);
		sink += 1;	/* distinct code after each call: distinct sites */
	} else {
		lvl(depth - 1, bits >> 1);
		sink += 2;
	}
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 12;

	for (unsigned p = 0; p < (1u << depth); p++)
		for (unsigned r = 0; r <= p % 3; r++)
			lvl(depth, p);
	return 0;
}
