// SPDX-License-Identifier: MIT
/*
 * latelib LIB: for each number N read from stdin, calls getppid() N times
 * through ask(); for 0, maps LIB (dlopen) and calls its lib_entry() once
 * (libvictim.so's: three frames of its own, then getppid()).  Prints
 * "done N" after each, so that a test knows which calls happened before
 * each of its steps: a library mapped only when the test says.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void ask(void)
{
	getppid();
}

int main(int argc, char **argv)
{
	int n;

	if (argc != 2)
		return 2;
	while (scanf("%d", &n) == 1) {
		if (!n) {
			void *lib = dlopen(argv[1], RTLD_NOW);
			void (*entry)(void) = lib ? (void (*)(void))dlsym(lib, "lib_entry") : NULL;

			if (!entry)
				return 1;
			entry();
		}
		for (int i = 0; i < n; i++)
			ask();
		printf("done %d\n", n);
		fflush(stdout);
	}
	return 0;
}
