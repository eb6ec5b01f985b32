/* SPDX-License-Identifier: MIT */
/*
 * One ELF file, opened once: its function symbols, its PT_LOAD address
 * translation and its identity (type, build-id).  Addresses called "vaddr"
 * are ELF virtual addresses (st_value, p_vaddr); "offset" means file offset,
 * which is what uprobes attach by and what /proc/PID/maps reports.
 */
#ifndef SW_ELF_FILE_H
#define SW_ELF_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

struct Elf;	/* libelf's handle, for sibling modules such as usdt.c */
struct elf_file;

struct elf_sym {
	uint64_t addr;		/* st_value */
	uint64_t size;		/* 0: not given (see elf_file_sym_at) */
	const char *name;	/* owned by the elf_file */
};

struct untrusted_skip;
struct debuginfod;

/* Whether s is a PLT entry, named func@plt (its calls pass on to func). */
static inline bool elf_sym_plt(const struct elf_sym *s)
{
	size_t n = strlen(s->name);

	return n > 4 && !strcmp(s->name + n - 4, "@plt");
}

/*
 * Open path as elf_image.h says; *out is NULL on error.  Returns 0 or a
 * negative errno: -EDQUOT when the file or its symbols did not fit in the
 * budget of sk.  sk (may be NULL) gets what was refused: the file itself,
 * or (with 0 returned) a debug file or MiniDebugInfo of it.  remote: a
 * debuginfod client to ask for the debug file of a stripped one that this
 * machine lacks; NULL: none.
 */
int elf_file_open(struct elf_file **out, const char *path,
		   struct debuginfod *remote, struct untrusted_skip *sk);
/* The same, for elf_file_read of its code (a probe's target). */
int elf_file_open_code(struct elf_file **out, const char *path,
		       struct debuginfod *remote, struct untrusted_skip *sk);
/*
 * The same without its symbols or looking for its debug file, for readers
 * of the file's own sections: a debug file refused is then said once, by
 * whoever names its symbols, not again under another path to it.  code: as
 * elf_file_open_code, for a reader of its other bytes (its .interp and
 * .dynamic, which another user's file keeps unread otherwise).
 */
int elf_file_open_own(struct elf_file **out, const char *path, bool code,
		       struct untrusted_skip *sk);
int elf_file_new(struct elf_file **out, const char *path);
/*
 * An image already in memory (the vDSO, read from a process): mem, from
 * malloc, is the elf_file's from now on, even on error.  No debug file is
 * looked for.
 */
int elf_file_from_memory(struct elf_file **out, void *mem, size_t size);
void elf_file_free(struct elf_file *ef);

/* ET_EXEC, ET_DYN, ... (e_type). */
int elf_file_type(const struct elf_file *ef);

/*
 * The NT_GNU_BUILD_ID bytes: returns their number and points *id at them
 * (owned by ef), or 0 when the file has none.
 */
size_t elf_file_build_id(const struct elf_file *ef, const uint8_t **id);

/*
 * The symbol whose [addr, addr + size) holds vaddr, or NULL: never the
 * nearest symbol below.  Of aliases, the global, least decorated name wins.
 * A symbol of size 0 holds what lies between it and the next symbol, in
 * its section, that no symbol with a size holds (gdb's rule).
 */
const struct elf_sym *elf_file_sym_at(const struct elf_file *ef,
				       uint64_t vaddr);

/* The preferred symbol named exactly name, or NULL (a linear search). */
const struct elf_sym *elf_file_sym_by_name(const struct elf_file *ef,
					    const char *name);

/*
 * Calls cb for every symbol (aliases included) in address order; a non-zero
 * return from cb stops the walk and is returned.  Returns 0 otherwise.
 */
typedef int (*elf_sym_cb)(const struct elf_sym *sym, void *ctx);
int elf_file_find_syms(const struct elf_file *ef, elf_sym_cb cb, void *ctx);

/* Through the PT_LOAD headers; -ENOENT when no segment holds the address. */
int elf_file_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr,
			      uint64_t *offset);
int elf_file_offset_to_vaddr(const struct elf_file *ef, uint64_t offset,
			      uint64_t *vaddr);

/*
 * Whether the headers and every section lie inside the file: a truncated
 * one opens, and then its symbols are silently missing.  *size: its size.
 */
bool elf_file_whole(const struct elf_file *ef, size_t *size);
/*
 * Copies up to len bytes at offset; returns the count or a negative errno
 * (-ENODATA: another user's file opened without code, past what was read).
 */
ssize_t elf_file_read(const struct elf_file *ef, uint64_t offset, void *buf,
		       size_t len);

/* Whether it has no .symtab, nor a debug file or MiniDebugInfo with one. */
bool elf_file_stripped(const struct elf_file *ef);

/* Whether symbols of its debug file or MiniDebugInfo did not fit. */
bool elf_file_cut(const struct elf_file *ef);

/*
 * The libelf handle, valid as long as ef; for parsers of other sections
 * (of a file read in part, only those elf_image.h lists have their bytes).
 */
struct Elf *elf_file_elf(const struct elf_file *ef);

#endif /* SW_ELF_FILE_H */
