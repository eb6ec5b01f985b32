// SPDX-License-Identifier: MIT
/* C++ and Rust names as people read them, kept apart, cached once each. */
#include <stdio.h>
#include <string.h>
#include "../../src/demangle.h"

static int passed, failed;

static void expect(struct demangler *d, const char *mangled, const char *want)
{
	const char *got = demangler_name(d, mangled);

	if (strcmp(got, want)) {
		printf("not ok: %s -> %s, want %s\n", mangled, got, want);
		failed++;
	} else {
		passed++;
	}
}

int main(void)
{
	struct demangler *d;
	const char *once;

	if (demangler_new(&d))
		return 1;
	expect(d, "_ZN7Monitor5IWaitEP6Threadl", "Monitor::IWait(Thread*, long)");
	expect(d, "_ZN6shapes3BoxIiE4openEi", "shapes::Box<int>::open(int)");
	expect(d, "_ZN6shapes3BoxIdE4openEd", "shapes::Box<double>::open(double)");
	expect(d, "_ZN6shapes5twiceEi", "shapes::twice(int)");
	expect(d, "_ZN6shapes5twiceEd", "shapes::twice(double)");
	expect(d, "_ZN3foo3barEv.cold", "foo::bar() [clone .cold]");
	/* Rust: legacy (_ZN...17h<hash>E) and v0 (_R) */
	expect(d, "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	expect(d, "_RNvCs1234_7mycrate4main", "mycrate::main");
	/* C, and what only looks mangled, stay as they are */
	expect(d, "main", "main");
	expect(d, "_Znotmangled", "_Znotmangled");
	/* one demangling per name: the same pointer comes back */
	once = "_ZN6shapes5twiceEi";
	if (demangler_name(d, once) != demangler_name(d, once)) {
		printf("not ok: demangled twice\n");
		failed++;
	}
	demangler_free(d);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
