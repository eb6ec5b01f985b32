// SPDX-License-Identifier: MIT
/*
 * The kernel version code a 4.x kernel checks kprobe programs against,
 * from the labels distributions put on their kernels.
 */
#include <stdio.h>
#include "../../compat/kfeatures.h"

static int failed, passed;

static void expect(const char *sig, const char *rel, const char *ver,
		   unsigned a, unsigned b, unsigned c)
{
	__u32 code = 0;
	int err = kversion_of(sig, rel, ver, &code);

	if (err || code != SW_KVERSION(a, b, c)) {
		printf("not ok: %s | %s | %s -> %u.%u.%u (err %d), want %u.%u.%u\n",
		       sig ? sig : "-", rel, ver, code >> 16, (code >> 8) & 255,
		       code & 255, err, a, b, c);
		failed++;
	} else {
		passed++;
	}
}

int main(void)
{
	/* Ubuntu: uname -r says 4.4.0, the kernel is 4.4.283 */
	expect("Ubuntu 4.4.0-210.242-generic 4.4.283", "4.4.0-210-generic",
	       "#242-Ubuntu SMP Fri Apr 16 09:57:56 UTC 2021", 4, 4, 283);
	/* Debian: the sublevel is in uname -v */
	expect(NULL, "4.9.0-8-amd64", "#1 SMP Debian 4.9.130-2 (2018-10-27)", 4, 9, 130);
	expect(NULL, "6.1.0-56-cloud-amd64",
	       "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2 (2026-01-01)", 6, 1, 192);
	/* everyone else: uname -r; sublevels above 255 saturate, as in the kernel */
	expect(NULL, "4.4.0", "#1 SMP", 4, 4, 0);
	expect(NULL, "5.15.0-91-generic", "#101-Ubuntu SMP", 5, 15, 0);
	expect(NULL, "4.19.325", "#1 SMP", 4, 19, 255);
	expect(NULL, "6.18.44-fc-v657", "#1 SMP PREEMPT_DYNAMIC @0", 6, 18, 44);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
