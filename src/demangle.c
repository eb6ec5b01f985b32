// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>
#include "demangle.h"
#include "htab.h"

struct slot {
	const char *name;	/* NULL: a free slot */
	char *readable;		/* NULL: name is not mangled */
};

struct demangler {
	struct htab tab;	/* of struct slot, by the name's address */
};

int demangler_new(struct demangler **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static size_t hash(const char *p)
{
	return ((uintptr_t)p >> 3) * 0x9e3779b97f4a7c15ULL >> 20;
}

static size_t slot_hash(const void *slot)
{
	return hash(((const struct slot *)slot)->name);
}

static const struct htab_ops slot_ops = {
	.size = sizeof(struct slot), .min = 1024, .hash = slot_hash,
};

/* By address: see demangle.h. */
static bool slot_is(const void *slot, const void *name)
{
	return ((const struct slot *)slot)->name == name;
}

/* Itanium C++ (_Z...) and Rust (legacy _ZN...17h<hash>E, v0 _R...). */
static bool looks_mangled(const char *name)
{
	return (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')) ||
	       !strncmp(name, "__Z", 3);
}

const char *demangler_name(struct demangler *d, const char *name)
{
	struct slot *v;

	if (!d || !looks_mangled(name))
		return name;
	if (htab_reserve(&d->tab, &slot_ops))
		return name;
	v = htab_find(&d->tab, &slot_ops, hash(name), slot_is, name);
	if (!v->name) {
		v->name = name;
		v->readable = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI |
						   DMGL_AUTO);
		d->tab.nr++;
	}
	return v->readable ? v->readable : name;
}

void demangler_free(struct demangler *d)
{
	struct slot *v;

	if (!d)
		return;
	v = d->tab.slots;
	for (size_t i = 0; i < d->tab.cap; i++)
		free(v[i].readable);
	free(v);
	free(d);
}
