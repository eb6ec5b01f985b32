// SPDX-License-Identifier: MIT
/*
 * paths N: calls work() and leaf() through known paths an exact number of
 * times, then makes exactly N getppid() syscalls.
 *
 *   work <- via_a <- main                    N times
 *   work <- via_b <- main                    2N times
 *   work <- via_a <- deep3 <- deep2 <- main  3N times
 *   guarded <- via_c <- main                 N times
 *   guarded <- via_d <- main                 2N times
 *
 * via_a and via_b differ only in the function-entry caller: a walker that
 * drops the caller at a probe on work's first instruction merges them.
 * leaf() is called on the same paths; it starts without push %rbp, so a
 * kernel's own entry heuristic does not fire there.  guarded() starts
 * with endbr64, as every function of code built for CET (-fcf-protection)
 * does: a kernel adds the caller there only if it is built with IBT.
 */
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void work(void)
{
	sink++;
}

/* no frame of its own: the first instruction is not push %rbp */
__asm__(".text\n.globl leaf\n.type leaf, @function\nleaf:\n"
	"	addl $1, sink(%rip)\n	ret\n.size leaf, .-leaf\n");
void leaf(void);

/* endbr64, then a frame as -fno-omit-frame-pointer makes it */
__asm__(".text\n.globl guarded\n.type guarded, @function\nguarded:\n"
	"	endbr64\n	push %rbp\n	mov %rsp, %rbp\n"
	"	addl $1, sink(%rip)\n	pop %rbp\n	ret\n"
	".size guarded, .-guarded\n");
void guarded(void);

NOINLINE void via_a(void)
{
	work();
	leaf();
}

NOINLINE void via_b(void)
{
	work();
	leaf();
}

NOINLINE void via_c(void)
{
	guarded();
}

NOINLINE void via_d(void)
{
	guarded();
}

NOINLINE void deep3(void)
{
	via_a();
}

NOINLINE void deep2(void)
{
	deep3();
}

NOINLINE void syscalls(int n)
{
	for (int i = 0; i < n; i++)
		getppid();
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < n; i++)
		via_a();
	for (int i = 0; i < 2 * n; i++)
		via_b();
	for (int i = 0; i < 3 * n; i++)
		deep2();
	for (int i = 0; i < n; i++)
		via_c();
	for (int i = 0; i < 2 * n; i++)
		via_d();
	syscalls(n);
	return 0;
}
