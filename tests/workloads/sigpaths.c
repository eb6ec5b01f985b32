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
 */
#include <signal.h>

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

int main(void)
{
	struct sigaction sa = { .sa_handler = handler };

	sigaction(SIGUSR1, &sa, 0);
	for (int i = 0; i < 3; i++)
		sender();
	return 0;
}
