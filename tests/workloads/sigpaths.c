// SPDX-License-Identifier: MIT
/*
 * sigpaths: a stack that goes through a signal frame.  main -> sender ->
 * raise(SIGUSR1): the kernel delivers the signal as raise's kill syscall
 * returns, and handler() runs on a frame the kernel built, whose return
 * address is glibc's __restore_rt.  Past that frame the caller is not a
 * return address but the interrupted PC, inside raise, saved with the
 * other registers in the ucontext.  handler calls on_signal() (the probe
 * point) twice per signal, and sender raises 3 times:
 *
 *   on_signal <- handler <- __restore_rt <- (raise's innards) <- raise
 *     <- sender <- main                      6 times
 *
 * sigpaths first: a fault on a function's first byte (its ud2, SIGILL),
 * twice.  The interrupted PC is that first byte: looked up as a return
 * address (PC - 1) it would fall in before_fault, just before it.
 *
 *   on_signal <- on_ill <- __restore_rt <- first_fault <- faulter
 *     <- main                                 4 times
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <ucontext.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void on_signal(void)
{
	sink++;
}

NOINLINE void handler(int sig)
{
	(void)sig;
	on_signal();
	on_signal();
}

NOINLINE void sender(void)
{
	raise(SIGUSR1);
}

/* before_fault, then first_fault, whose first instruction faults */
void before_fault(void);
void first_fault(void);
__asm__(".text\n"
	".globl before_fault\n.type before_fault, @function\n"
	"before_fault:\n\t.cfi_startproc\n\tret\n\t.cfi_endproc\n"
	".size before_fault, .-before_fault\n"
	".globl first_fault\n.type first_fault, @function\n"
	"first_fault:\n\t.cfi_startproc\n\tud2\n\tret\n\t.cfi_endproc\n"
	".size first_fault, .-first_fault\n");

/* the faulting ud2 is 2 bytes: go on past it */
NOINLINE void on_ill(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	on_signal();
	on_signal();
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

NOINLINE void faulter(void)
{
	first_fault();
	sink++;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = handler };

	if (argc > 1 && !strcmp(argv[1], "first")) {
		sa.sa_sigaction = on_ill;
		sa.sa_flags = SA_SIGINFO;
		sigaction(SIGILL, &sa, 0);
		faulter();
		faulter();
		return 0;
	}
	sigaction(SIGUSR1, &sa, 0);
	for (int i = 0; i < 3; i++)
		sender();
	return 0;
}
