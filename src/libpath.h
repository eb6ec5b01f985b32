/* SPDX-License-Identifier: MIT */
/*
 * The file behind the "lib" part of a probe spec such as "c:malloc",
 * resolved the way bcc does:
 *  1. a name containing '/' is a path: its realpath, if it exists;
 *  2. with pid > 0, a library of that name that pid has mapped (as
 *     /proc/PID/root/PATH when pid lives in another mount namespace);
 *  3. "c" or "libc" or "libc.so.6": the x86-64 entry of /etc/ld.so.cache
 *     whose name starts with "libc.so" (an exact name matches itself);
 *  4. the same in the standard library directories;
 *  5. an executable of that name on $PATH.
 */
#ifndef SW_LIBPATH_H
#define SW_LIBPATH_H

#include <stddef.h>

/*
 * Writes the path into buf; returns 0, -ENOENT, or -ENAMETOOLONG; for a
 * path, what resolving it met (-ELOOP, -ENOTDIR, -EACCES...).
 */
int libpath_resolve(const char *lib, int pid, char *buf, size_t size);

#endif /* SW_LIBPATH_H */
