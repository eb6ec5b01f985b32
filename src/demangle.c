// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>
#include "demangle.h"

struct slot {
	const char *name;
	char *readable;		/* NULL: name is not mangled */
};

struct demangler {
	struct slot *v;
	size_t cap, used;
};

int demangler__new(struct demangler **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static size_t hash(const char *p, size_t cap)
{
	return ((uintptr_t)p >> 3) * 0x9e3779b97f4a7c15ULL >> 20 & (cap - 1);
}

static int grow(struct demangler *d)
{
	size_t cap = d->cap ? 2 * d->cap : 1024;
	struct slot *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < d->cap; i++) {
		size_t j;

		if (!d->v[i].name)
			continue;
		for (j = hash(d->v[i].name, cap); v[j].name; j = (j + 1) & (cap - 1))
			;
		v[j] = d->v[i];
	}
	free(d->v);
	d->v = v;
	d->cap = cap;
	return 0;
}

/* Itanium C++ (_Z...) and Rust (legacy _ZN...17h<hash>E, v0 _R...). */
static bool looks_mangled(const char *name)
{
	return (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')) ||
	       !strncmp(name, "__Z", 3);
}

const char *demangler__name(struct demangler *d, const char *name)
{
	size_t i;

	if (!d || !looks_mangled(name))
		return name;
	if ((d->used + 1) * 2 > d->cap && grow(d))
		return name;
	for (i = hash(name, d->cap); d->v[i].name; i = (i + 1) & (d->cap - 1))
		if (d->v[i].name == name)
			return d->v[i].readable ? d->v[i].readable : name;
	d->v[i].name = name;
	d->v[i].readable = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	d->used++;
	return d->v[i].readable ? d->v[i].readable : name;
}

void demangler__free(struct demangler *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->cap; i++)
		free(d->v[i].readable);
	free(d->v);
	free(d);
}
