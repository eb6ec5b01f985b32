// SPDX-License-Identifier: MIT
/*
 * LINUX_VERSION_CODE of the running kernel.  A 4.x kernel refuses a kprobe
 * program whose kern_version differs from its own, and distributions label
 * their kernels with the ABI, not the sublevel: Ubuntu's "4.4.0-210-generic"
 * is 4.4.283 (in /proc/version_signature), Debian's "4.9.0-8-amd64" is
 * 4.9.130 (in uname -v).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include "kfeatures.h"

int kversion_parse(const char *s, __u32 *code)
{
	unsigned a, b, c = 0;

	if (sscanf(s, "%u.%u.%u", &a, &b, &c) < 2)
		return -EINVAL;
	*code = SW_KVERSION(a, b, c);
	return 0;
}

/* The last word of "Ubuntu 4.4.0-210.242-generic 4.4.283". */
static int ubuntu_version(const char *signature, __u32 *code)
{
	const char *last;

	if (!signature)
		return -ENOENT;
	last = strrchr(signature, ' ');
	return last ? kversion_parse(last + 1, code) : -ENOENT;
}

/* "#1 SMP Debian 4.9.130-2 (2018-10-27)" */
static int debian_version(const char *uts_version, __u32 *code)
{
	const char *d = strstr(uts_version, "Debian ");

	return d ? kversion_parse(d + strlen("Debian "), code) : -ENOENT;
}

int kversion_of(const char *signature, const char *release,
		  const char *uts_version, __u32 *code)
{
	if (!ubuntu_version(signature, code) || !debian_version(uts_version, code))
		return 0;
	return kversion_parse(release, code);
}

int kversion_running(__u32 *code, char *release, size_t len)
{
	char sig[256] = "";
	struct utsname u;
	FILE *f;

	if (uname(&u))
		return -errno;
	snprintf(release, len, "%s", u.release);
	f = fopen("/proc/version_signature", "r");
	if (f) {
		if (!fgets(sig, sizeof(sig), f))
			sig[0] = 0;
		sig[strcspn(sig, "\n")] = 0;
		fclose(f);
	}
	return kversion_of(sig[0] ? sig : NULL, u.release, u.version, code);
}
