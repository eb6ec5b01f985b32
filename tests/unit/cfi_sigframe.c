// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * bpf/cfi.h's signal frame offsets, checked at build time against the
 * kernel's own headers (struct ucontext and struct sigcontext): kept apart
 * from test_cfi.c, as glibc's <signal.h> defines struct sigcontext too.
 */
#include <stddef.h>
#include <asm/signal.h>
#include <asm/sigcontext.h>
#include <asm/ucontext.h>
#include "../../bpf/cfi.h"

#define SW_UC_REG(r) (offsetof(struct ucontext, uc_mcontext) + \
		      offsetof(struct sigcontext, r))

_Static_assert(SW_UC_REG(rbp) == SW_CFI_SIG_RBP, "saved %rbp in the ucontext");
_Static_assert(SW_UC_REG(rsp) == SW_CFI_SIG_RSP, "saved %rsp in the ucontext");
_Static_assert(SW_UC_REG(rip) == SW_CFI_SIG_RIP, "saved %rip in the ucontext");
