/* SPDX-License-Identifier: MIT */
/*
 * The files a program starts with, found before it runs as its dynamic
 * loader will find them: the program, its interpreter (PT_INTERP), and
 * the closure of DT_NEEDED, each name searched in the DT_RPATH of the
 * object that needs it (when it has no DT_RUNPATH), LD_LIBRARY_PATH, its
 * DT_RUNPATH ($ORIGIN expanded), then ld.so.cache and the standard
 * directories (libpath.h).  So the cfi walker can have their tables in
 * the kernel before the program's first instruction, without stopping it.
 *
 * What is read of each file is bounded (headers, the dynamic section and
 * its strings), and so is the closure (NEEDED_MAX files): a name that
 * cannot be found, or a file that cannot be read, is left out; its
 * library's table then comes when the kernel reports the mapping.
 */
#ifndef SW_NEEDED_H
#define SW_NEEDED_H

#define NEEDED_MAX	256

/* Called once per file, the program first; a non-zero return stops. */
typedef int (*needed_fn)(void *ctx, const char *path);

/* 0, what fn returned, or -ENOMEM. */
int needed_closure(const char *program, needed_fn fn, void *ctx);

/*
 * The same for the programs a command's arguments name, which wrappers
 * run (taskset, env, strace, timeout, sh -c "exec ..."): each argument
 * after the first that is an executable file, as a path or on PATH, and
 * each word of one that holds a '/' and is a path to one; at most
 * NEEDED_ARGS of them.
 */
#define NEEDED_ARGS	16
int needed_args(char *const argv[], needed_fn fn, void *ctx);

#endif
