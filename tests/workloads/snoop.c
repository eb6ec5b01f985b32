// SPDX-License-Identifier: MIT
/*
 * snoop [N]: calls target() once through each of three paths, in order --
 *
 *   target <- first <- main
 *   target <- second <- main
 *   target <- third_inner <- third <- main
 *
 * -- then N more times from main (a high event rate), and prints its pid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void target(void)
{
	sink++;
}

NOINLINE void first(void)
{
	target();
}

NOINLINE void second(void)
{
	target();
}

NOINLINE void third_inner(void)
{
	target();
}

NOINLINE void third(void)
{
	third_inner();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;

	printf("%d\n", (int)getpid());
	fflush(stdout);
	first();
	second();
	third();
	for (long i = 0; i < n; i++)
		target();
	return 0;
}
