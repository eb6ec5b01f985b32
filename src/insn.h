/* SPDX-License-Identifier: MIT */
/*
 * What the kernel's x86 uprobe code would refuse or mishandle at the
 * instruction a uprobe is placed on, decoded from the file's bytes before
 * anything is attached.
 *
 * The kernel refuses some instructions only when the probe goes into a
 * process (with -- COMMAND, after the tool said it traces them), and it
 * mishandles others: it picks how to run a probed instruction from its
 * opcode byte alone, so a VEX- or EVEX-encoded one whose opcode happens to
 * be a jcc, jmp, call, nop or ret byte is "emulated" as that, and the
 * traced program computes wrongly or crashes.  Only 64-bit code is decoded.
 */
#ifndef SW_INSN_H
#define SW_INSN_H

#include <stddef.h>

/* The longest x86 instruction. */
#define INSN_MAX 15

enum insn_verdict {
	INSN_OK,
	INSN_VEX,	/* VEX (c4, c5) or EVEX (62): misemulated */
	INSN_XOP,	/* AMD's XOP (8f with a non-zero reg field): likewise */
	INSN_LOCK,	/* lock prefix: refused */
	INSN_SEGMENT,	/* es, cs, ss or ds prefix: refused */
	INSN_OPCODE,	/* an opcode uprobes do not step (int3, in, hlt, ...) */
	INSN_BRANCH16,	/* a 0x66-prefixed jmp, jcc or call: refused */
	INSN_MOVSS,	/* mov to %ss, which holds off the single-step trap */
	INSN_SHORT,	/* the bytes end before its opcode does */
};

/* The verdict on the instruction at b, of which n bytes could be read. */
enum insn_verdict insn_uprobe_check(const unsigned char *b, size_t n);

/* Why, to follow "its first instruction is ": "VEX/EVEX-encoded, which ..." */
const char *insn_why(enum insn_verdict v);

#endif
