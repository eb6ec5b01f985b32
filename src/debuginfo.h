/* SPDX-License-Identifier: MIT */
/*
 * Where a stripped ELF file's symbols went:
 *  - a debug file by build-id, /usr/lib/debug/.build-id/ab/cdef....debug,
 *    as Debian's -dbgsym packages install them;
 *  - a debug file named by .gnu_debuglink, beside the file, in its .debug
 *    directory, or under /usr/lib/debug, checked against the link's CRC;
 *  - .gnu_debugdata: an xz-compressed ELF of the symbols .dynsym lacks
 *    (MiniDebugInfo).
 *  - last, a debuginfod server, when the caller has a client
 *    (debuginfod.h).
 * STACKWALK_DEBUG_DIR replaces /usr/lib/debug.
 * Each is opened as untrusted.h says; MiniDebugInfo is decompressed to at
 * most DEBUGDATA_MAX bytes, with at most twice that for the decoder (xz -9
 * needs 65 MiB).
 */
#ifndef SW_DEBUGINFO_H
#define SW_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>
#include <libelf.h>

#define DEBUGINFO_MAX 2
#define DEBUGDATA_MAX (64ULL << 20)

struct untrusted_skip;
struct untrusted_budget;
struct elf_image;
struct debuginfod;

struct debuginfo {
	Elf *elf[DEBUGINFO_MAX];	/* what holds the symbols; NULL ends */
	struct elf_image *img[DEBUGINFO_MAX];	/* a debug file's */
	void *mem[DEBUGINFO_MAX];	/* MiniDebugInfo */
	/*
	 * Set by the caller: where MiniDebugInfo is charged, for a file that
	 * users other than root can write (elf_image_budget); NULL: nowhere.
	 */
	struct untrusted_budget *budget;
	uint64_t held;			/* charged to budget */
	bool cut;			/* a source did not fit in a budget */
};

/*
 * d zeroed but for its budget.  0 when at least one source was found;
 * -ENOENT otherwise.  A source refused (not a regular file, too large) is
 * recorded in sk; one that did not fit in the budget of sk, in d->cut.
 * remote: where to ask when nothing here has it; NULL: nowhere.
 */
int debuginfo_find(struct debuginfo *d, const char *path, Elf *elf,
		   const uint8_t *build_id, size_t build_id_size,
		   struct debuginfod *remote, struct untrusted_skip *sk);
void debuginfo_free(struct debuginfo *d);

/* The NT_GNU_BUILD_ID of a note section's data: its size, *id in data. */
size_t elf_note_build_id(Elf_Data *data, const uint8_t **id);

/* The section called name, its header in *sh; NULL when there is none. */
Elf_Scn *elf_section_named(Elf *elf, const char *name, GElf_Shdr *sh);

#endif
