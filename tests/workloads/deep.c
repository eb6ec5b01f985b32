// SPDX-License-Identifier: MIT
/*
 * deep N: calls target() twice at the bottom of N + 1 nested calls that go
 * through down0, down1 and down2 in turn:
 *
 *   target <- down(N % 3) <- ... <- down1 <- down0 <- main
 *
 * so a stack's frames spell its depth: a frame lost, repeated or out of
 * place where a walker cuts a long stack into pieces breaks the cycle.
 */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void target(void)
{
	sink++;
}

void down1(int n);
void down2(int n);

NOINLINE void down0(int n)
{
	if (n)
		down1(n - 1);
	else
		target();
}

NOINLINE void down1(int n)
{
	if (n)
		down2(n - 1);
	else
		target();
}

NOINLINE void down2(int n)
{
	if (n)
		down0(n - 1);
	else
		target();
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;

	down0(n);
	down0(n);
	return 0;
}
