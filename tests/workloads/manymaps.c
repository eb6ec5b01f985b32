// SPDX-License-Identifier: MIT
/*
 * manymaps N: maps a page of its own code N times (each its own
 * executable mapping of its own file, so each has an unwind table), then
 * obeys a line at a time on stdin, answering each on stdout:
 *
 *   map M      M more such mappings                 -> "mapped TOTAL"
 *   rewrite K  K rewrites of its own vDSO's CFI, each into a table no one
 *              has had, each followed by a mapping of a page of its code
 *              and its unmapping (so that a tracer reads its mappings
 *              again)                               -> "rewrote TOTAL"
 *   call K     K calls of getppid through glibc's syscall(), which has no
 *              frame of its own: syscall <- sys_a <- main   -> "called"
 *
 * and exits at the end of its input.  The kernel places each new mapping
 * below the last (or in a gap), so most lie below libc's and ld.so's.
 *
 * The kernel lets a process write its vDSO's pages (copy on write, as a
 * debugger would).  A rewrite shortens the address range of the vDSO's
 * longest FDE by one byte more than the last (so at most that range's
 * length of them).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static uint8_t *vdso;
static uint32_t *range;		/* the longest FDE's pc_range, in the vDSO */
static uint32_t orig;

/* The vDSO's longest FDE, if its pointers are 4 bytes ("zR", 0x1b). */
static int find_range(void)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)vdso;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(vdso + eh->e_shoff);
	const char *names = (const char *)vdso + sh[eh->e_shstrndx].sh_offset;
	uint8_t *p = NULL, *end = NULL;

	for (int i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, ".eh_frame")) {
			p = vdso + sh[i].sh_offset;
			end = p + sh[i].sh_size;
		}
	if (!p || strcmp((const char *)p + 9, "zR") || p[16] != 0x1b)
		return -1;
	while (p + 16 <= end) {
		uint32_t len, id;

		memcpy(&len, p, 4);
		memcpy(&id, p + 4, 4);
		if (!len)
			break;
		if (id && (!range || *(uint32_t *)(p + 12) > orig)) {
			range = (uint32_t *)(p + 12);
			orig = *range;
		}
		p += 4 + len;
	}
	return range && orig > 1 ? 0 : -1;
}

/* The vDSO mapping's length, from /proc/self/maps. */
static size_t vdso_len(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	unsigned long a, b;
	size_t len = 0;

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &a, &b) == 2)
			len = b - a;
	if (f)
		fclose(f);
	return len;
}

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

/* The vDSO writable and its longest FDE found, once: 0 or -1. */
static int writable_vdso(void)
{
	size_t len;

	if (range)
		return 0;
	vdso = (uint8_t *)getauxval(AT_SYSINFO_EHDR);
	len = vdso_len();
	if (!vdso || !len ||
	    mprotect(vdso, len, PROT_READ | PROT_WRITE | PROT_EXEC) ||
	    find_range()) {
		fprintf(stderr, "manymaps: cannot rewrite the vDSO's CFI\n");
		return -1;
	}
	return 0;
}

static long rewrites;


static int rewrite(int fd, off_t off)
{
	void *p;

	rewrites++;
	*range = orig - 1 - (uint32_t)((rewrites - 1) % (orig - 1));
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off);
	return p == MAP_FAILED ? -1 : munmap(p, 4096);
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
		} else if (sscanf(line, "rewrite %ld", &k) == 1) {
			if (writable_vdso())
				return 1;
			while (k-- > 0)
				if (rewrite(fd, off))
					return 1;
			printf("rewrote %ld\n", rewrites);
		} else if (sscanf(line, "call %ld", &k) == 1) {
			while (k-- > 0)
				sys_a();
			printf("called\n");
		}
	}
	return 0;
}
