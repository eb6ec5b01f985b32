// SPDX-License-Identifier: MIT
/*
 * victim N: calls work() N times (work -> lib_entry in libvictim.so, which
 * makes one getppid() call), then exits.  Without N: for each number N
 * read from stdin, the same, then prints "done N" and flushes.  Linked
 * with -rdynamic, so that a stripped copy still names work and main.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void lib_entry(void);

NOINLINE void work(void)
{
	lib_entry();
}

void calls(int n);

NOINLINE void calls(int n)
{
	for (int i = 0; i < n; i++)
		work();
}

int main(int argc, char **argv)
{
	int n;

	if (argc > 1) {
		calls(atoi(argv[1]));
		return 0;
	}
	while (scanf("%d", &n) == 1) {
		calls(n);
		printf("done %d\n", n);
		fflush(stdout);
	}
	return 0;
}
