/* SPDX-License-Identifier: MIT */
/*
 * USDT probes from a file's .note.stapsdt notes (owner "stapsdt", type 3),
 * as <sys/sdt.h> emits them.
 */
#ifndef SW_USDT_H
#define SW_USDT_H

#include <stddef.h>
#include <stdint.h>

struct elf_file;

struct usdt_probe {
	/* strings point into the elf_file and live as long as it */
	const char *provider;
	const char *name;
	const char *args;	/* e.g. "-4@%edi 8@%rsi"; "" without arguments */
	/*
	 * ELF virtual addresses, already moved by the distance between the
	 * .stapsdt.base section and the base the note recorded (prelink).
	 */
	uint64_t pc;
	uint64_t base;		/* the note's own value, unadjusted */
	uint64_t semaphore;	/* 0: none */
	uint64_t pc_offset;	/* file offset of pc, where uprobes attach */
	uint64_t sem_offset;	/* file offset of the semaphore; 0: none */
};

/*
 * All probes of ef in note order.  *probes is for free(); it is NULL and
 * *nr 0 when the file has none.  Returns 0, -ENOMEM, or -EINVAL when the
 * section names cannot be read.
 */
int usdt_probes(const struct elf_file *ef, struct usdt_probe **probes,
		 size_t *nr);

#endif /* SW_USDT_H */
