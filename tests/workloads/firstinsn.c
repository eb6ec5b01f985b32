// SPDX-License-Identifier: MIT
/*
 * firstinsn N: functions whose first instruction a uprobe must not be
 * placed on, each called N times and checked, and fi_plain, which may be
 * traced.  Kernels pick how to run a probed instruction from its opcode
 * byte alone: fi_evex's vpbroadcastd %edi,%zmm17 (EVEX, opcode 0x7c, jl's
 * byte) and fi_vex's vpbroadcastb %xmm0,%xmm1 (VEX, 0x78, js's) are run as
 * jumps to the next instruction, that is skipped, and each returns what
 * its register held from the call before.  fi_locked's lock prefix is
 * refused by the kernel when the probe goes in.  fi_evex needs AVX-512F,
 * fi_vex AVX2.  Prints how many calls of each came out right.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

volatile int fi_sink;

/* returns c, through every lane of %zmm17 */
__asm__(".text\n.globl fi_evex\n.type fi_evex, @function\nfi_evex:\n"
	"	vpbroadcastd %edi, %zmm17\n"
	"	vmovd %xmm17, %eax\n"
	"	ret\n.size fi_evex, .-fi_evex\n");
unsigned fi_evex(unsigned c);

/* returns the low byte of x's bits four times, through %xmm1 */
__asm__(".text\n.globl fi_vex\n.type fi_vex, @function\nfi_vex:\n"
	"	vpbroadcastb %xmm0, %xmm1\n"
	"	vmovd %xmm1, %eax\n"
	"	ret\n.size fi_vex, .-fi_vex\n");
unsigned fi_vex(float x);

__asm__(".text\n.globl fi_locked\n.type fi_locked, @function\nfi_locked:\n"
	"	lock incl fi_sink(%rip)\n"
	"	ret\n.size fi_locked, .-fi_locked\n");
void fi_locked(void);

NOINLINE void fi_plain(void)
{
	fi_sink++;
}

/* A float whose bits are c: fi_vex's argument travels in %xmm0. */
static float bits(unsigned c)
{
	float f;

	memcpy(&f, &c, sizeof(f));
	return f;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, evex = 0, vex = 0;

	for (int i = 0; i < n; i++) {
		unsigned c = i % 255 + 1;	/* never the call before's */

		evex += fi_evex(c) == c;
		vex += fi_vex(bits(c)) == c * 0x01010101u;
		fi_locked();
		fi_plain();
	}
	printf("fi_evex: %d of %d right\n", evex, n);
	printf("fi_vex: %d of %d right\n", vex, n);
	printf("fi_sink: %d of %d\n", fi_sink, 2 * n);
	return evex != n || vex != n || fi_sink != 2 * n;
}
