// SPDX-License-Identifier: MIT
/*
 * deep N: calls target() twice at the bottom of N + 1 nested calls that go
 * through down0, down1 and down2 in turn:
 *
 *   target <- down(N % 3) <- ... <- down1 <- down0 <- main
 *
 * so a stack's frames spell its depth: a frame lost, repeated or out of
 * place where a walker cuts a long stack into pieces breaks the cycle.
 *
 * deep N DEEPER: target() calls getppid() 5 times at depth N, getpid()
 * once at depth DEEPER, then getppid() 5 times at depth N again: a deeper
 * stack in between, from another syscall (whose tracepoints can sit at
 * other kernel depths), leaves its frames in whatever scratch space a
 * walker reuses.
 */
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;
static int sysc;

NOINLINE void target(void)
{
	sink++;
	if (sysc == 1)
		getppid();
	else if (sysc == 2)
		getpid();
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

	/* one call site: the frames of the 10 calls at depth N are equal */
	for (int i = 0; argc > 2 && i < 11; i++) {
		sysc = i == 5 ? 2 : 1;
		down0(i == 5 ? atoi(argv[2]) : n);
	}
	if (argc > 2)
		return 0;
	down0(n);
	down0(n);
	return 0;
}
