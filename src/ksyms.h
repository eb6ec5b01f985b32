/* SPDX-License-Identifier: MIT */
/*
 * Kernel text symbols from /proc/kallsyms.  kallsyms gives no sizes, so a
 * symbol reaches up to the next one, with these bounds:
 *  - core text before _etext stops at _etext, and init text before
 *    _einittext at _einittext;
 *  - the last symbol of a module (pseudo-modules such as "[bpf]" for BPF
 *    programs and trampolines included) reaches at most KSYMS_TAIL_MAX
 *    bytes, and so does any core symbol outside those two ranges: past it
 *    lies memory kallsyms says nothing about, and "unknown" beats a wrong
 *    name.  Inside a module a symbol reaches the module's next symbol.
 *  - the _etext and _einittext markers hold no address at all.
 */
#ifndef SW_KSYMS_H
#define SW_KSYMS_H

#include <stdint.h>

#define KSYMS_TAIL_MAX 4096

struct ksyms;

struct ksym {
	uint64_t addr;
	uint64_t end;		/* exclusive; see above */
	const char *name;
	const char *module;	/* NULL for the core kernel */
};

/*
 * Load path, or /proc/kallsyms when NULL.  -EPERM when every address reads
 * as zero (kptr_restrict hides them from this user).
 */
int ksyms_new(struct ksyms **out, const char *path);
void ksyms_free(struct ksyms *ks);

/* The symbol whose [addr, end) holds addr, or NULL. */
const struct ksym *ksyms_find(struct ksyms *ks, uint64_t addr);

/*
 * fn for each symbol by address, aliases at one address in rank order
 * (see ksyms.c); stops at fn's first nonzero return, and returns it.
 */
int ksyms_each(const struct ksyms *ks,
		int (*fn)(void *ctx, uint64_t addr, const char *name), void *ctx);

/*
 * A symbol named exactly name (core kernel first), or NULL.  The padding
 * 6.x lists before a function as __pfx_NAME is found by address only.
 */
const struct ksym *ksyms_get(struct ksyms *ks, const char *name);

#endif /* SW_KSYMS_H */
