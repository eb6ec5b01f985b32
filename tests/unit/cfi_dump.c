// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * cfi_dump: the unwind rows stackwalk builds from a binary's CFI, one per
 * change of rule, for learning and for debugging the tables.
 *
 *   cfi_dump [-e] FILE       every row of FILE (-e: each in words too)
 *   cfi_dump [-e] FILE ADDR  the row for one ELF address of FILE
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfi.h"
#include "elf_file.h"
#include "untrusted.h"

static void print_row(const struct cfi_table *t, const struct sw_cfi_row *r,
		      bool words)
{
	char rule[128], why[512];

	cfi_row_rule(r, rule, sizeof(rule));
	printf("%016" PRIx64 " %s\n", t->base + r->pc, rule);
	if (words) {
		cfi_row_explain(r, why, sizeof(why));
		printf("                 %s\n", why);
	}
}

int main(int argc, char **argv)
{
	struct untrusted_skip sk = {};
	struct elf_file *ef;
	struct cfi_table *t;
	bool words = false;
	int opt, err;

	while ((opt = getopt(argc, argv, "e")) != -1) {
		if (opt != 'e')
			goto usage;
		words = true;
	}
	if (optind >= argc || argc - optind > 2)
		goto usage;
	err = elf_file_open(&ef, argv[optind], NULL, &sk);
	if (err) {
		fprintf(stderr, "cfi_dump: %s: %s%s%s\n", argv[optind],
			sk.why ? sk.why : strerror(-err), sk.why ? ": " : "",
			sk.why ? sk.what : "");
		return 1;
	}
	err = cfi_table_from_elf(&t, ef, argv[optind], &sk);
	if (err) {
		fprintf(stderr, "cfi_dump: %s: %s\n", argv[optind],
			err == -ENOENT ? "no CFI (.eh_frame or .debug_frame)" :
			err == -ENOTSUP ? "not an x86_64 ELF64 file" :
			strerror(-err));
		elf_file_free(ef);
		return 1;
	}
	if (argc - optind == 2) {
		char *end;
		uint64_t addr = strtoull(argv[optind + 1], &end, 16);
		const struct sw_cfi_row *r;

		if (*end) {
			fprintf(stderr, "cfi_dump: %s: not a hex address\n",
				argv[optind + 1]);
			return 2;
		}
		r = cfi_table_find(t, addr);
		if (r)
			print_row(t, r, words);
		else
			printf("%016" PRIx64 " below the first row\n", addr);
	} else {
		printf("%s: %zu rows (%zu bytes) from %zu FDEs of %s, %zu skipped, "
		       "%zu overlapping\n", argv[optind], t->nr_rows,
		       t->nr_rows * sizeof(*t->rows), t->nr_fdes, t->source,
		       t->nr_skipped, t->nr_overlaps);
		for (size_t i = 0; i < t->nr_rows; i++)
			print_row(t, &t->rows[i], words);
	}
	cfi_table_free(t);
	elf_file_free(ef);
	return 0;
usage:
	fprintf(stderr, "usage: cfi_dump [-e] FILE [ADDR]\n");
	return 2;
}
