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

int sw_version_parse(const char *s, __u32 *code)
{
	unsigned a, b, c = 0;

	if (sscanf(s, "%u.%u.%u", &a, &b, &c) < 2)
		return -EINVAL;
	*code = SW_KVERSION(a, b, c);
	return 0;
}

/* The last word of "Ubuntu 4.4.0-210.242-generic 4.4.283". */
static int ubuntu_version(__u32 *code)
{
	char line[256], *last;
	FILE *f = fopen("/proc/version_signature", "r");
	int err = -ENOENT;

	if (!f)
		return err;
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		last = strrchr(line, ' ');
		if (last)
			err = sw_version_parse(last + 1, code);
	}
	fclose(f);
	return err;
}

/* "#1 SMP Debian 4.9.130-2 (2018-10-27)" */
static int debian_version(const char *uts_version, __u32 *code)
{
	const char *d = strstr(uts_version, "Debian ");

	return d ? sw_version_parse(d + strlen("Debian "), code) : -ENOENT;
}

int sw_kernel_version(__u32 *code, char *release, size_t len)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	snprintf(release, len, "%s", u.release);
	if (!ubuntu_version(code) || !debian_version(u.version, code))
		return 0;
	return sw_version_parse(u.release, code);
}
