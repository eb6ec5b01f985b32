/* SPDX-License-Identifier: MIT */
/*
 * An ELF file opened as untrusted.h says, for libelf.  One that only root
 * can change is mapped.  Any other is read in part into an image as large
 * as the file whose other pages are never touched, so cost no memory: the
 * headers, the symbol tables and their strings, the notes, the debug links
 * and MiniDebugInfo, the unwind tables.  What is read is charged to the
 * budget of the untrusted_skip given (see untrusted.h), and a file that
 * does not fit is not read at all.
 */
#ifndef SW_ELF_IMAGE_H
#define SW_ELF_IMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <libelf.h>

struct elf_image;
struct untrusted_skip;
struct untrusted_budget;

/* Flags of elf_image_open. */
#define ELF_IMAGE_CODE	1	/* any byte readable by elf_image_read */
#define ELF_IMAGE_CRC32	2	/* the file's CRC32, for elf_image_crc32 */

/*
 * The ELF file at path, and *img for elf_image_free() after elf_end().
 * NULL on failure, with *err set: -EDQUOT when it did not fit in the
 * budget (not said in sk: the caller counts those).  ELF_IMAGE_CODE keeps
 * a read copy's fd open: for one file at a time only.
 */
Elf *elf_image_open(const char *path, int flags, struct elf_image **img,
		    int *err, struct untrusted_skip *sk);
void elf_image_free(struct elf_image *img);

/* The whole file's bytes at offset, as elf_file_read(); -ENODATA: not read. */
ssize_t elf_image_read(const struct elf_image *img, uint64_t offset, void *buf,
		       size_t len);
/* The CRC32 (as .gnu_debuglink has it) of the file, given ELF_IMAGE_CRC32. */
uint32_t elf_image_crc32(const struct elf_image *img);
/*
 * Charge n more bytes that the caller keeps for img's file (its symbols)
 * to its budget, until elf_image_free: false when they do not fit.  A
 * mapped file is root's, and always fits.
 */
bool elf_image_charge(struct elf_image *img, uint64_t n);
/* The budget a read copy is charged to; NULL for a mapped file. */
struct untrusted_budget *elf_image_budget(const struct elf_image *img);

#endif
