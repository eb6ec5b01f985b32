/* SPDX-License-Identifier: MIT */
/*
 * C++ and Rust symbol names as people read them: Monitor::IWait(Thread*,
 * long), with templates and overloads kept apart by their parameters.
 * Each name is demangled once; names are keyed by pointer, as they live
 * in their ELF files for the life of the symbolizer.
 */
#ifndef SW_DEMANGLE_H
#define SW_DEMANGLE_H

struct demangler;

int demangler_new(struct demangler **out);
/* The readable name, or name itself when it is not mangled. */
const char *demangler_name(struct demangler *d, const char *name);
void demangler_free(struct demangler *d);

#endif
