// SPDX-License-Identifier: MIT
/*
 * A USDT probe behind a semaphore, in a leaf function that keeps no frame
 * of its own (it pushes %rbx, not %rbp): the probe fires only while a
 * tracer holds the semaphore (the kernel does from 4.20, the tool before
 * that), and a frame-pointer walk from it skips its caller unless the
 * probe's CFI row says where the return address is (src/uframe.c).
 * Usage: semleaf: guarded() from g_a once and from g_b twice; each call
 * the probe fires on prints "fired".
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <sys/sdt.h>

unsigned short semleaf_guarded_semaphore __attribute__((section(".probes")));

__asm__(".text\n.globl guarded\n.type guarded, @function\nguarded:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rbx, 0\n"
	"	xor %eax, %eax\n"
	"	cmpw $0, semleaf_guarded_semaphore(%rip)\n"
	"	je 1f\n"
	STAP_PROBE_ASM(semleaf, guarded, )
	"	mov $1, %eax\n"
	"1:	pop %rbx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbx\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size guarded, .-guarded\n");
int guarded(void);

__attribute__((noinline)) void g_a(void)
{
	if (guarded())
		puts("fired");
}

__attribute__((noinline)) void g_b(void)
{
	if (guarded())
		puts("fired");
}

int main(void)
{
	g_a();
	g_b();
	g_b();
	return 0;
}
