/* SPDX-License-Identifier: MIT */
/*
 * Where a stripped ELF file's symbols went:
 *  - a debug file by build-id, /usr/lib/debug/.build-id/ab/cdef....debug,
 *    as Debian's -dbgsym packages install them;
 *  - a debug file named by .gnu_debuglink, beside the file, in its .debug
 *    directory, or under /usr/lib/debug, checked against the link's CRC;
 *  - .gnu_debugdata: an xz-compressed ELF of the symbols .dynsym lacks
 *    (MiniDebugInfo).
 * STACKWALK_DEBUG_DIR replaces /usr/lib/debug.
 */
#ifndef SW_DEBUGINFO_H
#define SW_DEBUGINFO_H

#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

#define DEBUGINFO_MAX 2

struct debuginfo {
	Elf *elf[DEBUGINFO_MAX];	/* what holds the symbols; NULL ends */
	int fd[DEBUGINFO_MAX];
	void *mem[DEBUGINFO_MAX];	/* decompressed MiniDebugInfo */
};

/* 0 when at least one source was found; -ENOENT otherwise. */
int debuginfo_find(struct debuginfo *d, const char *path, Elf *elf,
		   const uint8_t *build_id, size_t build_id_size);
void debuginfo_free(struct debuginfo *d);

#endif
