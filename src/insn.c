// SPDX-License-Identifier: MIT
/*
 * Facts from the kernel's arch/x86/kernel/uprobes.c (read in its 4.17-era
 * and 6.x forms) and checked on a 6.18 kernel: uprobes refuse an
 * instruction with a lock or es/cs/ss/ds prefix, a mov to %ss, a
 * 0x66-prefixed branch, and the one-byte opcodes listed below (on 4.17+
 * every 0x0f opcode is allowed in 64-bit code).  The kernel's decoder
 * reads past a VEX/EVEX/XOP prefix and then judges the opcode byte as if
 * it had none: those are refused here whatever their opcode.
 */
#include <stdbool.h>
#include <string.h>
#include "insn.h"

/* One-byte opcodes uprobes refuse in 64-bit code. */
static const unsigned char refused_opcodes[] = {
	0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f,	/* push/pop of segments */
	0x27, 0x2f, 0x37, 0x3f,				/* BCD adjusts */
	0x60, 0x61, 0x6c, 0x6d, 0x6e, 0x6f,		/* pusha/popa, ins/outs */
	0x82, 0x9a,					/* invalid in 64-bit code */
	0xcc, 0xcd, 0xce, 0xcf,				/* int3, int, into, iret */
	0xd4, 0xd5, 0xd6,				/* aam, aad, salc */
	0xe4, 0xe5, 0xe6, 0xe7, 0xea,			/* in/out imm, far jmp */
	0xec, 0xed, 0xee, 0xef,				/* in/out dx */
	0xf1, 0xf4, 0xfa, 0xfb,				/* int1, hlt, cli, sti */
};

static bool is_legacy_prefix(unsigned char c)
{
	switch (c) {
	case 0x26: case 0x2e: case 0x36: case 0x3e:	/* es cs ss ds */
	case 0x64: case 0x65:				/* fs gs */
	case 0x66: case 0x67:				/* operand, address size */
	case 0xf0: case 0xf2: case 0xf3:		/* lock, repne, rep */
		return true;
	default:
		return false;
	}
}

/* jmp rel8/rel32, call rel32, jcc rel8 */
static bool is_branch(unsigned char op)
{
	return op == 0xe8 || op == 0xe9 || op == 0xeb || (op >= 0x70 && op <= 0x7f);
}

enum insn_verdict insn_uprobe_check(const unsigned char *b, size_t n)
{
	bool lock = false, segment = false, opsize = false;
	size_t i = 0;
	unsigned char op;

	if (n > INSN_MAX)
		n = INSN_MAX;
	for (; i < n && is_legacy_prefix(b[i]); i++) {
		lock |= b[i] == 0xf0;
		segment |= b[i] == 0x26 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e;
		opsize |= b[i] == 0x66;
	}
	if (i < n && (b[i] & 0xf0) == 0x40)	/* REX */
		i++;
	if (i >= n)
		return INSN_SHORT;
	if (lock)
		return INSN_LOCK;
	if (segment)
		return INSN_SEGMENT;
	op = b[i];
	/* in 64-bit code c4, c5 and 62 (les, lds, bound) are always prefixes */
	if (op == 0xc4 || op == 0xc5 || op == 0x62)
		return INSN_VEX;
	if (op == 0x0f) {
		if (i + 1 >= n)
			return INSN_SHORT;
		/* jcc rel32 */
		return opsize && (b[i + 1] & 0xf0) == 0x80 ? INSN_BRANCH16 : INSN_OK;
	}
	if (op == 0x8e || op == 0x8f) {
		if (i + 1 >= n)
			return INSN_SHORT;
		/* the ModRM reg field: 8e /2 loads %ss; 8f /0 is pop, the rest XOP */
		if (op == 0x8e && ((b[i + 1] >> 3) & 7) == 2)
			return INSN_MOVSS;
		if (op == 0x8f && ((b[i + 1] >> 3) & 7) != 0)
			return INSN_XOP;
	}
	if (memchr(refused_opcodes, op, sizeof(refused_opcodes)))
		return INSN_OPCODE;
	return opsize && is_branch(op) ? INSN_BRANCH16 : INSN_OK;
}

const char *insn_why(enum insn_verdict v)
{
	switch (v) {
	case INSN_OK:
		return "fine";
	case INSN_VEX:
		return "VEX/EVEX-encoded, which kernels misemulate in a uprobe";
	case INSN_XOP:
		return "XOP-encoded, which kernels misemulate in a uprobe";
	case INSN_LOCK:
		return "lock-prefixed, which uprobes refuse";
	case INSN_SEGMENT:
		return "es/cs/ss/ds-prefixed, which uprobes refuse";
	case INSN_OPCODE:
		return "one uprobes refuse (int3, int, in, out, hlt, cli, sti, or "
		       "invalid in 64-bit code)";
	case INSN_BRANCH16:
		return "a 0x66-prefixed branch, which uprobes refuse";
	case INSN_MOVSS:
		return "a load of %ss, which uprobes refuse";
	case INSN_SHORT:
		return "cut short by the end of the file";
	}
	return "unknown";
}
