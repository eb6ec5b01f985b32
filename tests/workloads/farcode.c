// SPDX-License-Identifier: MIT
/*
 * farcode: a static program whose code spans more than 4 GiB (far_away
 * is linked 8 GiB up, see workloads.mk), so its unwind table cannot hold
 * 32-bit row PCs and is refused by name.  Without libc, frame pointers
 * everywhere, raw syscall instructions: a frame-pointer walk finds every
 * caller of
 *
 *   t:syscalls:sys_enter_getppid   far_away <- main <- _start   3 times
 *
 * and ends at _start, which clears %rbp.
 */
#include <sys/syscall.h>

#define NOINLINE __attribute__((noinline))

NOINLINE __attribute__((section("farcode"))) void far_away(void)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
}

NOINLINE int main(void)
{
	for (int i = 0; i < 3; i++)
		far_away();
	return 0;
}

__asm__(".text\n.globl _start\n.type _start, @function\n_start:\n"
	"	xor %ebp, %ebp\n"
	"	call main\n"
	"	mov %eax, %edi\n"
	"	mov $60, %eax\n"	/* exit */
	"	syscall\n"
	".size _start, .-_start\n");
