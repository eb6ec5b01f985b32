// SPDX-License-Identifier: MIT
/*
 * labels: target() called twice through assembly whose symbols have no
 * size, as hand-written assembly often leaves them:
 *
 *   target <- nosize_fn <- bare_label <- sized_fn <- main
 *
 * nosize_fn has .type but no .size (a FUNC of size 0), bare_label has
 * neither (NOTYPE, size 0); sized_fn has a size, and a label of its own
 * (sized_fn_mid) before its call, which names nothing inside it.  gdb
 * names each frame so: a label of size 0 holds what lies up to the next
 * symbol, where no symbol with a size does.
 */
#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void target(void)
{
	sink++;
}

void sized_fn(void);

__asm__(
	".text\n"
	".globl nosize_fn\n"
	".type nosize_fn, @function\n"
	"nosize_fn:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	call target\n"
	"	pop %rbp\n"
	"	ret\n"
	".globl bare_label\n"
	"bare_label:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	call nosize_fn\n"
	"	pop %rbp\n"
	"	ret\n"
	".globl sized_fn\n"
	".type sized_fn, @function\n"
	"sized_fn:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	".globl sized_fn_mid\n"
	"sized_fn_mid:\n"
	"	call bare_label\n"
	"	pop %rbp\n"
	"	ret\n"
	".size sized_fn, .-sized_fn\n");

int main(void)
{
	sized_fn();
	sized_fn();
	return 0;
}
