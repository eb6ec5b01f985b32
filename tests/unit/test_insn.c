// SPDX-License-Identifier: MIT
/*
 * The uprobe instruction check (src/insn.c): what 6.18 refuses, checked by
 * attaching to each, and the VEX/EVEX instructions it accepts and then
 * misruns, among them glibc's first instructions.
 */
#include <string.h>
#include "insn.h"
#include "unit.h"

#define IS(v, ...)                                                          \
	do {                                                                \
		const unsigned char b[] = { __VA_ARGS__ };                  \
		enum insn_verdict got = insn_uprobe_check(b, sizeof(b));    \
		CHECK(got == (v), "%s: got %s", #__VA_ARGS__, insn_why(got)); \
	} while (0)

int main(void)
{
	/* fine: what functions start with */
	IS(INSN_OK, 0x55);				/* push %rbp */
	IS(INSN_OK, 0xf3, 0x0f, 0x1e, 0xfa);		/* endbr64 */
	IS(INSN_OK, 0x41, 0x57);			/* push %r15 */
	IS(INSN_OK, 0x48, 0x89, 0xe5);			/* mov %rsp,%rbp */
	IS(INSN_OK, 0x64, 0x90);			/* fs nop */
	IS(INSN_OK, 0x66, 0x90);			/* xchg %ax,%ax */
	IS(INSN_OK, 0x0f, 0x0b);			/* ud2: every 0f opcode */
	IS(INSN_OK, 0x0f, 0x05);			/* syscall */
	IS(INSN_OK, 0x0f, 0xa2);			/* cpuid */
	IS(INSN_OK, 0xe9, 0, 0, 0, 0);			/* jmp rel32 */
	IS(INSN_OK, 0x8f, 0xc0);			/* pop %rax (8f /0) */
	IS(INSN_OK, 0x8e, 0xd8);			/* mov %eax,%ds */
	IS(INSN_OK, 0xc3);				/* ret */

	/* VEX and EVEX, whatever the opcode after them */
	IS(INSN_VEX, 0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xce);	/* vpbroadcastb %esi,%ymm17 */
	IS(INSN_VEX, 0x62, 0xe2, 0x7d, 0x48, 0x7a, 0xc6);	/* __memset_avx512_unaligned */
	IS(INSN_VEX, 0x62, 0xe2, 0x7d, 0x28, 0x7c, 0xce);	/* __wcschr_evex: jl's byte */
	IS(INSN_VEX, 0xc4, 0xe2, 0x79, 0x78, 0xc8);		/* vpbroadcastb: js's */
	IS(INSN_VEX, 0xc5, 0xf8, 0x77);				/* vzeroupper: ja's */
	IS(INSN_VEX, 0xc5, 0xf9, 0x6e, 0xc6);			/* vmovd (refused too) */
	IS(INSN_VEX, 0xc4, 0xe2, 0x40, 0xf2, 0xc6);		/* andn */
	IS(INSN_VEX, 0x67, 0xc5, 0xf8, 0x77);			/* after addr32 */
	IS(INSN_XOP, 0x8f, 0xe9, 0x78, 0xe1, 0xc1);		/* vphaddbw */

	/* what the kernel refuses */
	IS(INSN_LOCK, 0xf0, 0xff, 0x0f);		/* pthread_spin_lock */
	IS(INSN_LOCK, 0x66, 0xf0, 0x0f, 0xb1, 0x17);	/* after another prefix */
	IS(INSN_SEGMENT, 0x2e, 0x90);			/* cs nop */
	IS(INSN_SEGMENT, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0);	/* nopw %cs: */
	IS(INSN_SEGMENT, 0x3e, 0xff, 0xe0);		/* notrack jmp *%rax */
	IS(INSN_OPCODE, 0xcc);				/* int3 */
	IS(INSN_OPCODE, 0xf4);				/* hlt */
	IS(INSN_OPCODE, 0x48, 0xcf);			/* iretq */
	IS(INSN_OPCODE, 0xec);				/* in (%dx),%al */
	IS(INSN_BRANCH16, 0x66, 0xeb, 0x00);		/* jmpw */
	IS(INSN_BRANCH16, 0x66, 0xe8, 0, 0);		/* callw */
	IS(INSN_BRANCH16, 0x66, 0x0f, 0x84, 0, 0);	/* jew rel16 */
	IS(INSN_MOVSS, 0x8e, 0xd0);			/* mov %eax,%ss */

	/* cut short: nothing read, prefixes only, an opcode's second byte */
	IS(INSN_SHORT);
	IS(INSN_SHORT, 0x66, 0x48);
	IS(INSN_SHORT, 0x0f);
	IS(INSN_SHORT, 0x8f);
	/* more than an instruction's 15 bytes of prefixes is no instruction */
	IS(INSN_SHORT, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
	   0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x90);

	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
