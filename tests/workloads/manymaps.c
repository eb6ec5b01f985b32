// SPDX-License-Identifier: MIT
/*
 * manymaps N: maps a page of its own code N times (each its own
 * executable mapping of its own file, so each has an unwind table), then
 * obeys a line at a time on stdin, answering each on stdout:
 *
 *   map M    M more such mappings            -> "mapped TOTAL"
 *   call K   K calls of getppid through glibc's syscall(), which has no
 *            frame of its own: syscall <- sys_a <- main   -> "called"
 *
 * and exits at the end of its input.  The kernel places each new mapping
 * below the last, so they all lie below libc's and ld.so's.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* The file offset of its own executable segment's first page. */
static off_t code_offset(void)
{
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);

	for (unsigned long i = 0; i < n; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
			return ph[i].p_offset & ~4095UL;
	return -1;
}

static int map_more(int fd, off_t off, long m)
{
	for (long i = 0; i < m; i++)
		if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd,
			 off) == MAP_FAILED)
			return -1;
	return 0;
}

NOINLINE void sys_a(void)
{
	syscall(SYS_getppid);
}

int main(int argc, char **argv)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	off_t off = code_offset();
	long total = argc > 1 ? atol(argv[1]) : 0, k;
	char line[64];

	if (fd < 0 || off < 0 || map_more(fd, off, total))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "map %ld", &k) == 1) {
			if (map_more(fd, off, k))
				return 1;
			total += k;
			printf("mapped %ld\n", total);
		} else if (sscanf(line, "call %ld", &k) == 1) {
			while (k-- > 0)
				sys_a();
			printf("called\n");
		}
	}
	return 0;
}
