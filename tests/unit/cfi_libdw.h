/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * elfutils' libdw as a second oracle of the unwind tables (beside readelf
 * in test_cfi.c): tests/unit/cfi_libdw.c.
 */
#ifndef SW_CFI_LIBDW_H
#define SW_CFI_LIBDW_H

#include <stddef.h>
#include <stdio.h>
#include "cfi.h"

struct cfi_libdw_tally {
	size_t ranges;		/* address ranges of one rule on both sides */
	size_t bytes;		/* the addresses in them */
	size_t differ;		/* ranges whose rows differ */
	size_t frames;		/* of them, ranges libdw has a frame for */
	int err;		/* a file libdw could not open: -errno */
};

/*
 * Every address t covers (from its first row to its last), compared with
 * the row libdw's frame there calls for: .eh_frame of the ELF file path,
 * then .debug_frame of dbg (path itself, or its debug file), as
 * cfi_table_from_elf prefers them.  The first few differences are
 * printed to log, labelled.
 */
void cfi_libdw_compare(const struct cfi_table *t, const char *path,
		       const char *dbg, const char *label, FILE *log,
		       struct cfi_libdw_tally *out);

#endif
