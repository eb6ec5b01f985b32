// SPDX-License-Identifier: MIT
/*
 * jit N: writes a function into anonymous executable memory, names it in
 * /tmp/perf-PID.map as a JIT does ("jitted_hot_loop"), and calls work()
 * through it N times:  work <- jitted_hot_loop <- main.  The generated
 * code keeps a frame: push %rbp; mov %rsp,%rbp; call work; pop %rbp; ret.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void work(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	unsigned char code[] = {
		0x55,				/* push %rbp */
		0x48, 0x89, 0xe5,		/* mov %rsp,%rbp */
		0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,	/* movabs $work,%rax */
		0xff, 0xd0,			/* call *%rax */
		0x5d,				/* pop %rbp */
		0xc3,				/* ret */
	};
	uint64_t target = (uint64_t)(uintptr_t)work;
	void (*fn)(void);
	char path[64];
	FILE *map;
	void *mem;

	memcpy(code + 6, &target, sizeof(target));
	mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof(code));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx jitted_hot_loop\n", (unsigned long)(uintptr_t)mem,
		sizeof(code));
	fclose(map);
	fn = (void (*)(void))mem;
	for (int i = 0; i < n; i++)
		fn();
	return 0;
}
