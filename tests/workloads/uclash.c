// SPDX-License-Identifier: MIT
/*
 * Two USDT probes at the same offset in their pages (each function starts
 * a page), in frameless functions whose frames differ: 8 and 24 bytes
 * below the return address.  A walker without CFI of its own finds a
 * probe's caller by a rule keyed by that offset (src/uframe.c), so these
 * two cannot both have one, and the tool says so.
 * Usage: uclash N: calls each N times, from main.
 */
#include <stdlib.h>
#include <sys/sdt.h>

#define CLASH(fn, frame)						\
	".text\n"							\
	".p2align 12\n"							\
	".globl " #fn "\n"						\
	".type " #fn ", @function\n"					\
	#fn ":\n"							\
	"	.cfi_startproc\n"					\
	"	sub $" #frame ", %rsp\n"				\
	"	.cfi_adjust_cfa_offset " #frame "\n"			\
	STAP_PROBE_ASM(uclash, fn, )					\
	"	add $" #frame ", %rsp\n"				\
	"	.cfi_adjust_cfa_offset -" #frame "\n"			\
	"	ret\n"							\
	"	.cfi_endproc\n"						\
	".size " #fn ", .-" #fn "\n"

__asm__(CLASH(clash_a, 8) CLASH(clash_b, 24));

void clash_a(void);
void clash_b(void);

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < n; i++) {
		clash_a();
		clash_b();
	}
	return 0;
}
