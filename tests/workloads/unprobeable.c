// SPDX-License-Identifier: MIT
/*
 * unprobeable: reads N from stdin, then calls probe_a N times, probe_b 2N
 * times and probe_locked 3N times.  A uprobe is checked only where it is
 * put in place, in processes that map the binary: tests attach while this
 * one waits.  probe_locked's first instruction is lock-prefixed, which x86
 * uprobes refuse to step (ENOTSUPP), as glibc's pthread_spin_lock's is: a
 * wildcard over probe_* must trace the other two.
 */
#include <stdio.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void probe_a(void)
{
	sink++;
}

NOINLINE void probe_b(void)
{
	sink++;
}

__asm__(".text\n.globl probe_locked\n.type probe_locked, @function\n"
	"probe_locked:\n	lock incl sink(%rip)\n	ret\n"
	".size probe_locked, .-probe_locked\n");
void probe_locked(void);

int main(void)
{
	int n;

	if (scanf("%d", &n) != 1)
		return 1;
	for (int i = 0; i < n; i++) {
		probe_a();
		probe_b();
		probe_b();
		probe_locked();
		probe_locked();
		probe_locked();
	}
	return 0;
}
