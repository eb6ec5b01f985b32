/* SPDX-License-Identifier: MIT */
/*
 * One binary's unwind table: its CFI (.eh_frame; .debug_frame's FDEs where
 * no .eh_frame FDE covers a PC) run into sorted, merged rows of bpf/cfi.h's form, for x86_64
 * ELF files.  A PC that no FDE covers maps to a SW_CFI_NONE row; a rule no
 * row can express maps to SW_CFI_UNKNOWN: never to a wrong rule.
 *
 * The file is untrusted (untrusted.h): every read is bounded by its
 * record and its section, the remember/restore stack by CFI_STATE_DEPTH,
 * the rows by the section's size and by SW_CFI_TABLE_MAX.
 */
#ifndef SW_CFI_H
#define SW_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../bpf/cfi.h"

struct elf_file;
struct untrusted_skip;

/* An executable PT_LOAD: where its bytes are in the file and in memory. */
struct cfi_seg {
	uint64_t vaddr, offset, filesz, memsz;
};

struct cfi_table {
	struct sw_cfi_row *rows;
	size_t nr_rows;
	uint64_t base;		/* the ELF vaddr that row pc 0 stands for */
	struct cfi_seg *segs;	/* the file's executable segments */
	size_t nr_segs;
	size_t nr_fdes;		/* FDEs with rows in the table */
	size_t nr_skipped;	/* FDEs not used: malformed, outside the code */
	size_t nr_overlaps;	/* FDEs over another one's range: unknown there */
	const char *source;	/* ".eh_frame", ".debug_frame", "the debug file's .debug_frame" */
};

/* One CFI section's bytes, for cfi_table_parse. */
struct cfi_input {
	const uint8_t *data;
	size_t size;
	uint64_t addr;		/* sh_addr: what pcrel pointers count from */
	bool debug_frame;	/* .debug_frame's CIE ids and pointers */
	/* an FDE must lie inside one of these; NULL: anywhere */
	const struct cfi_seg *code;
	size_t nr_code;
};

/*
 * The table of an opened ELF file (path: for its debug file).  Returns 0,
 * -ENOTSUP (not x86_64 ELF64), -ENOENT (no CFI at all), -E2BIG (more rows
 * than SW_CFI_TABLE_MAX), -ERANGE (code spanning 4 GiB or more), -ENOMEM.
 * sk gets a debug file that was refused.
 */
int cfi_table_from_elf(struct cfi_table **out, const struct elf_file *ef,
			const char *path, struct untrusted_skip *sk);
/*
 * The same, inflating a compressed section only within room bytes (what
 * the rows may still use): -ENOSPC when one would take more, *need then
 * its size inflated, and nothing inflated.
 */
int cfi_table_from_elf_room(struct cfi_table **out, const struct elf_file *ef,
			    const char *path, struct untrusted_skip *sk,
			    size_t room, size_t *need);

/* The table of one section's bytes, as above (no segments). */
int cfi_table_parse(struct cfi_table **out, const struct cfi_input *in);

void cfi_table_free(struct cfi_table *t);

/*
 * The row for ELF address vaddr (exact: a return address minus 1), or
 * NULL below the first row; searched in SW_CFI_STEPS fixed steps, as the
 * BPF walker does (bpf/cfi.h).
 */
const struct sw_cfi_row *cfi_table_find(const struct cfi_table *t,
					 uint64_t vaddr);
/* The same search over rows[0, n) for rel, as an index; n when none. */
size_t cfi_rows_search(const struct sw_cfi_row *rows, size_t n, uint32_t rel);
/* The rows mb MiB hold (--unwind-memory). */
static inline uint32_t cfi_rows_in(uint32_t mb)
{
	return (uint64_t)mb * 1024 * 1024 / sizeof(struct sw_cfi_row);
}

/*
 * What to subtract from an address in a mapping of the file at start
 * whose first page is file offset pgoff, to get a row pc (the load bias
 * plus the table's base): -ENOENT when no executable segment is there.
 */
int cfi_table_bias(const struct cfi_table *t, uint64_t start, uint64_t pgoff,
		    uint64_t *bias);

/* "rsp+16", "rbp+16", "plt", ...: the CFA column, as readelf writes it. */
const char *cfi_kind_name(unsigned int kind);
/* A row in readelf's terms: "CFA=rsp+16 rbp=c-16 ra=c-8". */
int cfi_row_rule(const struct sw_cfi_row *r, char *buf, size_t len);
/*
 * A row in words, for --explain: "CFA = %rsp+8: the return address is on
 * top of the stack; %rbp still holds the caller's".
 */
int cfi_row_explain(const struct sw_cfi_row *r, char *buf, size_t len);

#endif
