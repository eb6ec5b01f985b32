// SPDX-License-Identifier: MIT
/*
 * libvictim.so, for tests/hostile.bats: lib_entry -> lib_inner -> lib_call
 * -> getppid().  lib_inner is static, so only .symtab names it, and that
 * lies past a padding section beyond every loaded segment: cutting the
 * file after its segments leaves the process running and the name gone.
 * (A frame-pointer walk loses lib_call's frame: glibc's getppid keeps none.)
 */
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

__asm__(".section .hostile_pad,\"\",@progbits\n.fill 32768,1,0\n.previous");

static NOINLINE void lib_call(void)
{
	getppid();
}

static NOINLINE void lib_inner(void)
{
	lib_call();
}

NOINLINE void lib_entry(void)
{
	lib_inner();
}
