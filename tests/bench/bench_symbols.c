// SPDX-License-Identifier: MIT
/*
 * bench_symbols: how fast user frames are named.  100,000 distinct
 * addresses inside the functions of 10 shared libraries mapped into one
 * (modelled) process, named once cold (each library opened and indexed on
 * first use) and once warm.  Prints frames per second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "../../src/elf_file.h"
#include "../../src/procs.h"
#include "../../src/symbolize.h"

#define FILES 10
#define FRAMES 100000
#define PID 4242424

static const char *const candidates[] = {
	"libc.so.6", "libstdc++.so.6", "libm.so.6", "libz.so.1", "libelf.so.1",
	"libbpf.so.1", "libcrypto.so.3", "libssl.so.3", "libgcc_s.so.1",
	"libzstd.so.1", "liblzma.so.5", "libsqlite3.so.0", "libxml2.so.2",
	"libcurl.so.4", "libgnutls.so.30", "libsystemd.so.0", "libudev.so.1",
	"libpython3.11.so.1.0", "libLLVM-14.so.1", "libclang-14.so.1",
};

struct pick {
	const struct elf_file *ef;
	unsigned long long base;
	unsigned long long *addrs;
	size_t n, want;
	uint64_t last;
};

/* Addresses all through the file's functions, every 4 bytes; aliases once. */
static int pick(const struct elf_sym *s, void *ctx)
{
	struct pick *p = ctx;
	uint64_t off;

	if (s->addr == p->last)
		return 0;
	p->last = s->addr;
	for (uint64_t at = 0; at < s->size && p->n < p->want; at += 4) {
		if (elf_file_vaddr_to_offset(p->ef, s->addr + at, &off))
			return 0;
		p->addrs[p->n++] = p->base + off;
	}
	return 0;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

static double run(struct symbolizer *sym, const unsigned long long *a, size_t n,
		  size_t *named)
{
	struct sym_result r;
	struct timespec t0;

	*named = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < n; i++)
		*named += !symbolizer_user(sym, PID, a[i], false, &r);
	return ms_since(&t0);
}

int main(void)
{
	unsigned long long *addrs = calloc(FRAMES, sizeof(*addrs));
	struct symbolizer *sym;
	struct procs *procs;
	size_t total = 0, files = 0, named;
	double cold, warm;

	if (!addrs || procs_new(&procs) || symbolizer_new(&sym, procs))
		return 1;
	procs_exec(procs, PID, "bench");
	for (size_t c = 0; c < sizeof(candidates) / sizeof(*candidates) && files < FILES; c++) {
		char path[256];
		struct elf_file *ef;
		struct stat st;
		struct pick p;

		snprintf(path, sizeof(path), "/usr/lib/x86_64-linux-gnu/%s", candidates[c]);
		if (stat(path, &st) || elf_file_new(&ef, path))
			continue;
		p = (struct pick){ ef, 0x100000000000ULL * (files + 1), addrs + total, 0,
				   (FRAMES - total) / (FILES - files), 0 };
		elf_file_find_syms(ef, pick, &p);
		elf_file_free(ef);
		if (p.n < 100)
			continue;
		/* the whole file mapped at base: file offset = address - base */
		procs_mmap(procs, PID, &(struct proc_map){
			.start = p.base, .end = p.base + st.st_size, .pgoff = 0,
			.ino = st.st_ino, .maj = major(st.st_dev), .min = minor(st.st_dev),
			.path = path, .exec = true });
		total += p.n;
		files++;
	}
	cold = run(sym, addrs, total, &named);
	warm = run(sym, addrs, total, &named);
	printf("symbols: %zu distinct user frames across %zu binaries, %zu named\n",
	       total, files, named);
	printf("symbols: cold (files opened and indexed) %8.1f ms  %10.0f frames/s\n",
	       cold, total / cold * 1e3);
	printf("symbols: warm                            %8.1f ms  %10.0f frames/s\n",
	       warm, total / warm * 1e3);
	symbolizer_free(sym);
	procs_free(procs);
	free(addrs);
	return named == total ? 0 : 1;
}
