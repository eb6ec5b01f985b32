// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * Unit test of the symbol layer (elf_file, usdt, ksyms, procs, sideband,
 * symbolize, libpath).  This one file is also the fixture the test reads:
 * built with -DSYMS_FIXTURE (and a second object with -DSYMS_FIXTURE_SEM)
 * it becomes build/tests/fx_pie and fx_nopie, whose symbols it knows.
 * Needs root: system-wide perf events and kernel addresses.
 */

/* ---------------------------------------------------------------- fixture */
#if defined(SYMS_FIXTURE_SEM)

/* sdt.h decides at inclusion whether probes use semaphores */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

unsigned short fxprov_withsem_semaphore __attribute__((section(".probes")));

__attribute__((noinline)) int fx_sem_probe(int x)
{
	STAP_PROBE1(fxprov, withsem, x);
	return x + 1;
}

#elif defined(SYMS_FIXTURE)

#include <dlfcn.h>
#include <stdio.h>
#include <sys/sdt.h>

int fx_sem_probe(int x);

/*
 * Functions with a layout the test relies on, which a compiler would not
 * promise: a gap after fx_asm_a, a call as fx_asm_b's last instruction
 * with fx_asm_c right after, symbols without .type or .size, a nested
 * symbol, and a global and a local name for one function.
 */
__asm__(
	"	.text\n"
	"	.p2align 6\n"
	"	.globl fx_asm_a\n"
	"	.type fx_asm_a, @function\n"
	"fx_asm_a:\n"
	"	nop\n	nop\n	ret\n"
	"	.size fx_asm_a, 3\n"
	"	.fill 13, 1, 0xcc\n"
	"	.globl fx_asm_b\n"
	"	.type fx_asm_b, @function\n"
	"fx_asm_b:\n"
	"	push %rbp\n"
	"	call fx_asm_die\n"
	"	.size fx_asm_b, .-fx_asm_b\n"
	"	.globl fx_asm_c\n"
	"	.type fx_asm_c, @function\n"
	"fx_asm_c:\n"
	"	ret\n"
	"	.size fx_asm_c, 1\n"
	"	.globl fx_asm_notype\n"
	"fx_asm_notype:\n"
	"	nop\n	ret\n"
	"	.size fx_asm_notype, 2\n"
	"	.globl fx_asm_notype0\n"
	"fx_asm_notype0:\n"
	"	ret\n"
	"	.globl fx_asm_zero\n"
	"	.type fx_asm_zero, @function\n"
	"fx_asm_zero:\n"
	"	nop\n	ret\n"
	"	.globl fx_asm_outer\n"
	"	.type fx_asm_outer, @function\n"
	"fx_asm_outer:\n"
	"	nop\n	nop\n"
	"	.type fx_asm_inner, @function\n"
	"fx_asm_inner:\n"
	"	nop\n	nop\n"
	"	.size fx_asm_inner, 2\n"
	"	nop\n	ret\n"
	"	.size fx_asm_outer, 6\n"
	"	.globl fx_asm_alias\n"
	"	.type fx_asm_alias, @function\n"
	"	.type __fx_asm_alias_impl, @function\n"
	"__fx_asm_alias_impl:\n"
	"fx_asm_alias:\n"
	"	ret\n"
	"	.size fx_asm_alias, 1\n"
	"	.size __fx_asm_alias_impl, 1\n"
	"	.globl fx_asm_die\n"
	"	.type fx_asm_die, @function\n"
	"fx_asm_die:\n"
	"	ud2\n"
	"	.size fx_asm_die, 2\n");

void fx_asm_a(void);
void fx_asm_c(void);

__attribute__((noinline)) int fx_alpha(int x)
{
	DTRACE_PROBE(fxprov, plain);
	return x * 3 + 1;
}

/*
 * Prints addresses for the test, maps a library after startup, then waits
 * for its stdin to close so the test can look at it alive and then dead.
 */
int main(int argc, char **argv)
{
	void *z = dlopen("libz.so.1", RTLD_NOW);
	void *zv = z ? dlsym(z, "zlibVersion") : NULL;

	(void)argv;
	printf("%lx %lx %lx %lx\n", (unsigned long)fx_alpha, (unsigned long)zv,
	       (unsigned long)fx_asm_a, (unsigned long)fx_asm_c);
	fflush(stdout);
	while (getchar() != EOF)
		;
	return fx_alpha(argc) + fx_sem_probe(argc) == 12345;
}

#else
/* ------------------------------------------------------------------- test */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memmem */
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf_file.h"
#include "ksyms.h"
#include "libpath.h"
#include "procs.h"
#include "sideband.h"
#include "symbolize.h"
#include "usdt.h"

#include "unit.h"

static bool streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *name_at(const struct elf_file *ef, uint64_t vaddr)
{
	const struct elf_sym *s = elf_file_sym_at(ef, vaddr);

	return s ? s->name : "(none)";
}

static int count_cb(const struct elf_sym *s, void *ctx)
{
	if (!strcmp(s->name, "fx_alpha"))
		(*(int *)ctx)++;
	return 0;
}

/* ------------------------------------------------------------ elf_file */

static void test_elf(const char *path, int type)
{
	const struct elf_sym *a, *b, *c, *s;
	struct elf_file *ef;
	const uint8_t *id;
	uint64_t off, va;
	unsigned char code[8];
	int err, n = 0;

	printf("# elf_file: %s\n", path);
	err = elf_file_new(&ef, path);
	CHECK(!err, "open %s: %d", path, err);
	if (err)
		return;
	CHECK(elf_file_type(ef) == type, "e_type %d", elf_file_type(ef));
	CHECK(elf_file_build_id(ef, &id) == 20, "build-id size");

	a = elf_file_sym_by_name(ef, "fx_alpha");
	CHECK(a && a->size > 0, "fx_alpha present and sized");
	if (a) {
		CHECK(elf_file_sym_at(ef, a->addr) == a, "start");
		CHECK(elf_file_sym_at(ef, a->addr + a->size - 1) == a, "last");
		CHECK(!streq(name_at(ef, a->addr + a->size), "fx_alpha"),
		      "past the end");
		CHECK(!elf_file_vaddr_to_offset(ef, a->addr, &off) &&
		      !elf_file_offset_to_vaddr(ef, off, &va) && va == a->addr,
		      "vaddr <-> offset round trip");
	}
	/* -rdynamic: in .symtab and .dynsym, listed once */
	elf_file_find_syms(ef, count_cb, &n);
	CHECK(n == 1, "fx_alpha listed %d times", n);

	a = elf_file_sym_by_name(ef, "fx_asm_a");
	b = elf_file_sym_by_name(ef, "fx_asm_b");
	c = elf_file_sym_by_name(ef, "fx_asm_c");
	CHECK(a && b && c, "asm symbols");
	if (!a || !b || !c)
		goto out;
	CHECK(a->size == 3 && b->addr == a->addr + 16, "asm layout");
	CHECK(!elf_file_sym_at(ef, a->addr + 3) &&
	      !elf_file_sym_at(ef, a->addr + 15), "gap between functions");
	CHECK(b->size == 6 && c->addr == b->addr + 6, "call is b's last insn");
	CHECK(!elf_file_vaddr_to_offset(ef, c->addr - 5, &off) &&
	      elf_file_read(ef, off, code, 1) == 1 && code[0] == 0xe8,
	      "read the call opcode: %02x", code[0]);

	/* gdb's rule: a symbol of size 0 holds up to the next symbol */
	s = elf_file_sym_by_name(ef, "fx_asm_notype");
	CHECK(s && s->size == 2, "sized NOTYPE in text kept");
	b = elf_file_sym_by_name(ef, "fx_asm_notype0");
	CHECK(b && b->size == 0, "unsized NOTYPE in text kept");
	if (s)
		CHECK(elf_file_sym_at(ef, s->addr + 2) == b, "NOTYPE0 address");

	s = elf_file_sym_by_name(ef, "fx_asm_zero");
	c = elf_file_sym_by_name(ef, "fx_asm_outer");
	CHECK(s && s->size == 0, "zero-size FUNC kept");
	if (s && c) {
		CHECK(elf_file_sym_at(ef, s->addr) == s, "zero-size: exact");
		CHECK(elf_file_sym_at(ef, s->addr + 1) == s, "zero-size: +1");
		CHECK(elf_file_sym_at(ef, c->addr) == c, "zero-size: up to the next");
	}

	s = elf_file_sym_by_name(ef, "fx_asm_outer");
	CHECK(s && s->size == 6, "outer");
	if (s) {
		CHECK(streq(name_at(ef, s->addr + 1), "fx_asm_outer"), "o+1");
		CHECK(streq(name_at(ef, s->addr + 2), "fx_asm_inner"), "o+2");
		CHECK(streq(name_at(ef, s->addr + 3), "fx_asm_inner"), "o+3");
		CHECK(streq(name_at(ef, s->addr + 4), "fx_asm_outer"),
		      "o+4 after the nested symbol: %s",
		      name_at(ef, s->addr + 4));
		CHECK(streq(name_at(ef, s->addr + 5), "fx_asm_outer"), "o+5");
	}

	s = elf_file_sym_by_name(ef, "__fx_asm_alias_impl");
	CHECK(s != NULL, "local alias listed");
	if (s)
		CHECK(streq(name_at(ef, s->addr), "fx_asm_alias"),
		      "global alias preferred: %s", name_at(ef, s->addr));

	/* PLT entries as gdb and objdump name them: lazy .plt, and .plt.got */
	a = elf_file_sym_by_name(ef, "dlopen@plt");
	b = elf_file_sym_by_name(ef, "printf@plt");
	CHECK(a && b, "PLT entries named");
	if (a && b) {
		CHECK(a->size == 16 && streq(name_at(ef, a->addr + 15), "dlopen@plt"),
		      "a .plt entry, whole");
		/* PLT0, the resolver's, before the first, is no function's */
		CHECK(!elf_file_sym_at(ef, b->addr - 16), "PLT0 unnamed");
	}
	/* a PIE calls __cxa_finalize through .plt.got's 8-byte entry */
	c = elf_file_sym_by_name(ef, "__cxa_finalize@plt");
	CHECK(type != ET_DYN || (c && c->size == 8), ".plt.got's entry");
out:
	elf_file_free(ef);
}

static void test_elf_libc(void)
{
	char path[PATH_MAX], line[PATH_MAX + 64], want[64] = "", got[64] = "";
	const struct elf_sym *m;
	struct elf_file *ef;
	const uint8_t *id;
	size_t n, i;
	FILE *f;

	printf("# elf_file: libc (stripped: .dynsym only)\n");
	CHECK(!libpath_resolve("c", 0, path, sizeof(path)), "find libc");
	if (elf_file_new(&ef, path)) {
		CHECK(0, "open %s", path);
		return;
	}
	CHECK(elf_file_type(ef) == ET_DYN, "libc is ET_DYN");
	m = elf_file_sym_by_name(ef, "malloc");
	CHECK(m && m->size, "malloc in .dynsym");
	if (m)
		CHECK(streq(name_at(ef, m->addr + 1), "malloc"),
		      "malloc over __libc_malloc: %s", name_at(ef, m->addr));

	n = elf_file_build_id(ef, &id);
	for (i = 0; i < n && i < 31; i++)
		sprintf(got + 2 * i, "%02x", id[i]);
	snprintf(line, sizeof(line), "readelf -n '%s' 2>/dev/null", path);
	f = popen(line, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "Build ID: "))
			sscanf(strstr(line, "Build ID: ") + 10, "%63s", want);
	if (f)
		pclose(f);
	if (want[0])
		CHECK(streq(got, want), "build-id %s vs readelf %s", got, want);
	elf_file_free(ef);
}

/* ----------------------------------------------------------------- usdt */

/*
 * What prelink leaves: sections moved by D, the notes' copies of the
 * addresses not.  Fakes it by moving the note's words back by D instead;
 * the parsed probe must come out the same.
 */
static void test_usdt_prelinked(const char *path, const struct usdt_probe *want)
{
	const uint64_t delta = 0x1000;
	char tmp[] = "/tmp/test_syms_prelink.XXXXXX";
	uint64_t words[3] = { want->pc, want->base, want->semaphore };
	struct usdt_probe *p = NULL;
	struct elf_file *ef;
	size_t len, n = 0, i;
	char *img, *at;
	FILE *f;
	int fd;

	f = fopen(path, "rb");
	img = malloc(1 << 20);
	len = f ? fread(img, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	at = memmem(img, len, words, sizeof(words));
	CHECK(at != NULL, "note words found in the file");
	if (!at)
		goto out;
	for (i = 0; i < 3; i++)
		words[i] -= delta;
	memcpy(at, words, sizeof(words));
	fd = mkstemp(tmp);
	if (fd < 0 || write(fd, img, len) != (ssize_t)len) {
		CHECK(0, "write %s", tmp);
		goto out;
	}
	close(fd);
	if (!elf_file_new(&ef, tmp)) {
		usdt_probes(ef, &p, &n);
		for (i = 0; i < n; i++)
			if (streq(p[i].name, want->name))
				break;
		CHECK(i < n && p[i].base == want->base - delta &&
		      p[i].pc == want->pc && p[i].semaphore == want->semaphore &&
		      p[i].pc_offset == want->pc_offset &&
		      p[i].sem_offset == want->sem_offset,
		      "prelinked note adjusted back");
		free(p);
		elf_file_free(ef);
	}
	unlink(tmp);
out:
	free(img);
}

static void test_usdt(const char *path)
{
	const struct usdt_probe *plain = NULL, *sem = NULL;
	struct usdt_probe *p = NULL;
	struct elf_file *ef;
	unsigned char b[2];
	uint64_t off;
	size_t n = 0, i;

	printf("# usdt: %s\n", path);
	if (elf_file_new(&ef, path)) {
		CHECK(0, "open %s", path);
		return;
	}
	CHECK(!usdt_probes(ef, &p, &n), "parse notes");
	for (i = 0; i < n; i++) {
		printf("#   %s:%s pc=%#" PRIx64 " off=%#" PRIx64
		       " sem=%#" PRIx64 "/%#" PRIx64 " args='%s'\n",
		       p[i].provider, p[i].name, p[i].pc, p[i].pc_offset,
		       p[i].semaphore, p[i].sem_offset, p[i].args);
		if (streq(p[i].provider, "fxprov") && streq(p[i].name, "plain"))
			plain = &p[i];
		if (streq(p[i].provider, "fxprov") && streq(p[i].name, "withsem"))
			sem = &p[i];
	}
	CHECK(n == 2 && plain && sem, "two probes, found %zu", n);
	if (plain) {
		CHECK(!plain->semaphore && !plain->sem_offset, "no semaphore");
		CHECK(streq(plain->args, ""), "no arguments");
		CHECK(streq(name_at(ef, plain->pc), "fx_alpha"), "in fx_alpha");
		CHECK(elf_file_read(ef, plain->pc_offset, b, 1) == 1 &&
		      b[0] == 0x90, "a nop at the probe's offset");
	}
	if (sem) {
		CHECK(sem->semaphore && sem->sem_offset, "has a semaphore");
		CHECK(!elf_file_vaddr_to_offset(ef, sem->semaphore, &off) &&
		      off == sem->sem_offset, "section and PT_LOAD agree");
		CHECK(elf_file_read(ef, sem->sem_offset, b, 2) == 2 &&
		      !b[0] && !b[1], "semaphore starts at 0");
		CHECK(strchr(sem->args, '@') != NULL, "one argument: %s",
		      sem->args);
		CHECK(streq(name_at(ef, sem->pc), "fx_sem_probe"), "in caller");
	}
	if (sem)
		test_usdt_prelinked(path, sem);
	free(p);
	elf_file_free(ef);
}

/* ---------------------------------------------------------------- ksyms */

static const char *ksym_name(struct ksyms *ks, uint64_t addr)
{
	const struct ksym *k = ksyms_find(ks, addr);

	return k ? k->name : "(none)";
}

static void test_ksyms_synthetic(void)
{
	char path[] = "/tmp/test_syms_kallsyms.XXXXXX";
	const char *text =
		"0000000000001000 T _stext\n"
		"0000000000001000 t startup\n"
		"00000000000010f0 T __pfx_func_a\n"
		"0000000000001100 T func_a\n"
		"00000000000011f0 t __pfx_func_c\n"
		"0000000000001200 t func_b\n"
		"0000000000001280 T __ia32_sys_getppid\n"
		"0000000000001280 T __x64_sys_getppid\n"
		"0000000000001300 T _etext\n"
		"0000000000001300 D some_data\n"
		"0000000000002000 T _sinittext\n"
		"0000000000002000 t init_a\n"
		"0000000000002100 T _einittext\n"
		"ffffffffc0000000 t mod_a\t[mymod]\n"
		"ffffffffc0000100 t mod_b\t[mymod]\n"
		"ffffffffc0000100 d mod_data\t[mymod]\n"
		"ffffffffc0010000 t other_a\t[othermod]\n"
		"ffffffffc0100000 t bpf_prog_x\t[bpf]\n";
	const char *zeros =
		"0000000000000000 T _stext\n0000000000000000 t x\n";
	const struct ksym *k;
	struct ksyms *ks;
	int fd;

	printf("# ksyms: synthetic kallsyms\n");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		CHECK(0, "temp file");
		return;
	}
	close(fd);
	CHECK(!ksyms_new(&ks, path), "load");
	if (ks) {
		CHECK(streq(ksym_name(ks, 0xfff), "(none)"), "below all");
		CHECK(streq(ksym_name(ks, 0x1000), "startup"), "not the marker");
		CHECK(streq(ksym_name(ks, 0x10ff), "__pfx_func_a"),
		      "a function's padding, its name shared");
		CHECK(streq(ksym_name(ks, 0x1150), "func_a"), "func_a");
		CHECK(streq(ksym_name(ks, 0x11f0), "__pfx_func_c"),
		      "padding before another name");
		CHECK(streq(ksym_name(ks, 0x10ef), "startup"),
		      "up to the next function's padding");
		k = ksyms_find(ks, 0x10f0);
		CHECK(k && k->addr == 0x10f0 && k->end == 0x1100, "the padding's span");
		CHECK(ksyms_get(ks, "func_a") && ksyms_get(ks, "__pfx_func_c") &&
		      !ksyms_get(ks, "func_c"), "by name: a function, padding kept alone");
		CHECK(streq(ksym_name(ks, 0x127f), "func_b"), "up to the next");
		CHECK(streq(ksym_name(ks, 0x12ff), "__x64_sys_getppid"),
		      "the 64-bit name of two at one address, up to _etext");
		CHECK(streq(ksym_name(ks, 0x1300), "(none)"), "_etext");
		CHECK(streq(ksym_name(ks, 0x1fff), "(none)"), "between");
		CHECK(streq(ksym_name(ks, 0x20ff), "init_a"), "init text");
		CHECK(streq(ksym_name(ks, 0x2100), "(none)"), "_einittext");
		k = ksyms_find(ks, 0xffffffffc0000150);
		CHECK(k && streq(k->name, "mod_b") && streq(k->module, "mymod")
		      && k->addr == 0xffffffffc0000100, "module symbol");
		CHECK(streq(ksym_name(ks, 0xffffffffc0000100 + 4095), "mod_b"),
		      "module tail within the bound");
		CHECK(streq(ksym_name(ks, 0xffffffffc0000100 + 4096), "(none)"),
		      "module tail past the bound");
		CHECK(streq(ksym_name(ks, 0xffffffffc0010fff), "other_a"),
		      "next module");
		CHECK(streq(ksym_name(ks, 0xffffffffc0100000 + 5000), "(none)"),
		      "last symbol bounded");
		k = ksyms_get(ks, "mod_a");
		CHECK(k && streq(k->module, "mymod"), "get by name");
		CHECK(!ksyms_get(ks, "mod_data"), "data skipped");
		k = ksyms_get(ks, "func_b");
		CHECK(k && !k->module && k->addr == 0x1200, "core by name");
		ksyms_free(ks);
	}

	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd >= 0 && write(fd, zeros, strlen(zeros)) > 0) {
		close(fd);
		CHECK(ksyms_new(&ks, path) == -EPERM, "hidden addresses");
	}
	unlink(path);
}

/* The first "addr t name\t[module]" line of kallsyms, if any. */
static bool first_module_sym(uint64_t *addr, char *name, char *mod)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], type;
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%" SCNx64 " %c %255s [%63[^]]]", addr,
			       &type, name, mod) == 4 &&
			(type == 't' || type == 'T') && *addr;
	if (f)
		fclose(f);
	return found;
}

static void test_ksyms_real(void)
{
	uint64_t maddr;
	char mname[256], mmod[64];
	const struct ksym *k, *s;
	struct symbolizer *sym;
	struct sym_result r;
	struct ksyms *ks;
	double t;
	int err;

	printf("# ksyms: /proc/kallsyms\n");
	t = now_ms();
	err = ksyms_new(&ks, NULL);
	t = now_ms() - t;
	CHECK(!err, "load /proc/kallsyms: %d", err);
	if (err)
		return;
	printf("#   loaded in %.1f ms\n", t);
	s = ksyms_get(ks, "schedule");
	CHECK(s && !s->module, "schedule by name");
	if (s) {
		k = ksyms_find(ks, s->addr);
		CHECK(k == s, "schedule by address");
		k = ksyms_find(ks, s->end - 1);
		CHECK(k == s, "last byte of schedule");
		CHECK(ksyms_find(ks, s->end) != s, "past schedule");
	}
	k = ksyms_get(ks, "_etext");
	CHECK(k && !ksyms_find(ks, k->addr), "_etext ends core text");
	if (k)
		CHECK(ksyms_find(ks, k->addr - 1) != NULL, "before _etext");

	if (first_module_sym(&maddr, mname, mmod)) {
		k = ksyms_find(ks, maddr);
		CHECK(k && streq(k->module, mmod) && k->addr == maddr,
		      "module symbol %s [%s]", mname, mmod);
		if (k)
			printf("#   %#" PRIx64 " -> %s [%s]\n", maddr, k->name,
			       k->module);
	} else {
		printf("#   no module symbols loaded: skipped\n");
	}

	CHECK(!symbolizer_new(&sym, NULL), "symbolizer");
	if (s && sym) {
		CHECK(!symbolizer_kernel(sym, s->addr + 4, false, &r) &&
		      streq(r.name, "schedule") && r.offset == 4 && !r.module,
		      "symbolizer: schedule+4");
		/* a call ending schedule returns to the next symbol */
		CHECK(!symbolizer_kernel(sym, s->end, true, &r) &&
		      streq(r.name, "schedule") &&
		      r.offset == s->end - s->addr, "return address");
		err = symbolizer_kernel(sym, s->end, false, &r);
		CHECK(!streq(r.name, "schedule"), "not a return address");
	}
	symbolizer_free(sym);
	ksyms_free(ks);
}

/* ---------------------------------------------------------------- procs */

static void test_procs(void)
{
	struct proc_map m = { .exec = true };
	const struct proc_map *f, *g;
	char self[PATH_MAX];
	struct procs *p;

	printf("# procs\n");
	CHECK(!procs_new(&p), "new");
	if (!p)
		return;
	m.start = 0x1000, m.end = 0x2000, m.path = "/bin/a";
	procs_mmap(p, 100, &m);
	m.start = 0x8000, m.end = 0x9000, m.path = "/lib/a2";
	procs_mmap(p, 100, &m);
	procs_set_comm(p, 100, "a");
	CHECK(!procs_fork(p, 200, 100), "fork");
	f = procs_find(p, 200, 0x1800);
	CHECK(f && streq(f->path, "/bin/a"), "child inherits");
	CHECK(streq(procs_comm(p, 200), "a"), "child comm");

	procs_exec(p, 200, "b-with-a-very-long-name");
	CHECK(streq(procs_comm(p, 200), "b-with-a-very-l"), "comm cut");
	m.start = 0x1000, m.end = 0x3000, m.path = "/bin/b", m.pgoff = 0x10;
	procs_mmap(p, 200, &m);
	f = procs_find(p, 200, 0x1800);
	CHECK(f && streq(f->path, "/bin/b") && f->gen == 1 &&
	      f->pgoff == 0x10, "newest generation wins");
	g = procs_find(p, 200, 0x8800);
	CHECK(g && streq(g->path, "/lib/a2") && g->gen == 0,
	      "older generation still answers where the newer has nothing");
	f = procs_find(p, 100, 0x1800);
	CHECK(f && streq(f->path, "/bin/a"), "parent unchanged");
	m.start = 0x1800, m.end = 0x1900, m.path = "/lib/late";
	procs_mmap(p, 200, &m);
	f = procs_find(p, 200, 0x1850);
	CHECK(f && streq(f->path, "/lib/late"), "later mmap over a range");
	procs_exit(p, 200);
	CHECK(!procs_alive(p, 200) && procs_alive(p, 100), "exit");
	f = procs_find(p, 200, 0x2800);
	CHECK(f && streq(f->path, "/bin/b"), "kept after exit");
	CHECK(!procs_find(p, 300, 0x1000) && !procs_comm(p, 300), "unknown");

	CHECK(!procs_load(p, getpid()), "load self");
	f = procs_find(p, getpid(), (uint64_t)(uintptr_t)test_procs);
	CHECK(realpath("/proc/self/exe", self) && f && streq(f->path, self) &&
	      f->exec, "own text: %s", f ? f->path : "(none)");
	procs_free(p);
}

/*
 * A COMMAND's child whose stack was read before its fork record, after it
 * had ended: /proc gave it no mappings, and the fork record that comes
 * next still gives it its parent's (src/stackcount.c reads the counts
 * before it drains the records since, but a reader may come first).
 */
static void test_procs_ended_child(void)
{
	struct proc_map m = { .exec = true, .start = 0x1000, .end = 0x2000,
			      .path = "/bin/a" };
	const struct proc_map *f;
	struct procs *p;
	siginfo_t si;
	pid_t pid;

	printf("# procs: a child first read from /proc after it ended\n");
	CHECK(!procs_new(&p), "new");
	if (!p)
		return;
	procs_set_scope(p, PROCS_TREE);
	CHECK(!procs_trace(p, 100), "the COMMAND");
	procs_mmap(p, 100, &m);
	pid = fork();
	if (pid == 0)
		_exit(0);
	/* ended, not reaped: its /proc/PID/maps reads empty */
	CHECK(pid > 0 && !waitid(P_PID, pid, &si, WEXITED | WNOWAIT), "ended");
	CHECK(!procs_load(p, pid) && !procs_find(p, pid, 0x1800),
	      "read with no mappings");
	CHECK(!procs_fork(p, pid, 100), "its fork record");
	f = procs_find(p, pid, 0x1800);
	CHECK(f && streq(f->path, "/bin/a"), "its parent's mappings");
	if (pid > 0)
		waitpid(pid, NULL, 0);
	procs_free(p);
}

/* -------------------------------------------------------------- libpath */

static void test_libpath(void)
{
	char buf[PATH_MAX];

	printf("# libpath\n");
	CHECK(!libpath_resolve("c", 0, buf, sizeof(buf)) &&
	      streq(base_name(buf), "libc.so.6"), "c -> %s", buf);
	printf("#   c -> %s\n", buf);
	CHECK(!libpath_resolve("pthread", 0, buf, sizeof(buf)) &&
	      !strncmp(base_name(buf), "libpthread.so", 13),
	      "pthread -> %s", buf);
	printf("#   pthread -> %s\n", buf);
	CHECK(!libpath_resolve("libc.so.6", 0, buf, sizeof(buf)) &&
	      streq(base_name(buf), "libc.so.6"), "exact soname");
	CHECK(!libpath_resolve("libz", 0, buf, sizeof(buf)) &&
	      !strncmp(base_name(buf), "libz.so", 7), "libz -> %s", buf);
	CHECK(!libpath_resolve("sh", 0, buf, sizeof(buf)) &&
	      buf[0] == '/', "sh on $PATH -> %s", buf);
	CHECK(!libpath_resolve("/proc/self/exe", 0, buf, sizeof(buf)) &&
	      buf[0] == '/' && !strstr(buf, "/proc/"), "a path: realpath");
	CHECK(libpath_resolve("./no/such/file", 0, buf, sizeof(buf)) ==
	      -ENOENT, "missing path");
	CHECK(libpath_resolve("zzz_no_such_lib", 0, buf, sizeof(buf)) ==
	      -ENOENT, "missing library");
	CHECK(libpath_resolve("c", 0, buf, 4) == -ENAMETOOLONG, "short buf");
}

/* ------------------------------------------------- sideband + symbolize */

struct child {
	pid_t pid;
	int in;		/* its stdin: closing it lets the child exit */
	uint64_t alpha, zv, asm_a, asm_c;
};

static int start_child(const char *path, struct child *c)
{
	FILE *f;
	int n;

	c->pid = unit_spawn(path, &c->in, &f);
	if (c->pid < 0)
		return -EIO;
	n = fscanf(f, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64,
		   &c->alpha, &c->zv, &c->asm_a, &c->asm_c);
	fclose(f);
	return n == 4 ? 0 : -EIO;
}

static void stop_child(struct child *c)
{
	int status;

	close(c->in);
	waitpid(c->pid, &status, 0);
}

/* What the symbolizer should say for a child of fixture path. */
static void check_child(struct symbolizer *s, const struct child *c,
			const char *path, const char *how)
{
	struct sym_result r;
	int err;

	err = symbolizer_user(s, c->pid, c->alpha, false, &r);
	CHECK(!err && streq(r.name, "fx_alpha") && !r.offset &&
	      streq(r.module, base_name(path)), "%s: fx_alpha: %d %s %s", how,
	      err, r.name, r.module);
	err = symbolizer_user(s, c->pid, c->alpha + 2, true, &r);
	CHECK(!err && streq(r.name, "fx_alpha") && r.offset == 2,
	      "%s: fx_alpha+2 as a return address", how);
	err = symbolizer_user(s, c->pid, c->zv, false, &r);
	CHECK(!err && streq(r.name, "zlibVersion") &&
	      !strncmp(r.module, "libz.so", 7), "%s: libz: %d %s %s", how,
	      err, r.name, r.module);
	/* fx_asm_b ends in a call, and fx_asm_c starts right after it */
	err = symbolizer_user(s, c->pid, c->asm_c, true, &r);
	CHECK(!err && streq(r.name, "fx_asm_b") && r.offset == 6,
	      "%s: return address names the caller: %s+%" PRIu64, how,
	      r.name, r.offset);
	err = symbolizer_user(s, c->pid, c->asm_c, false, &r);
	CHECK(!err && streq(r.name, "fx_asm_c") && !r.offset,
	      "%s: same address, not a return address", how);
	err = symbolizer_user(s, c->pid, c->asm_a + 5, false, &r);
	CHECK(err == -ENOENT && !r.name && streq(r.module, base_name(path)),
	      "%s: between functions: unknown (%s+%#" PRIx64 ")", how,
	      r.module, r.module_offset);
	err = symbolizer_user(s, c->pid, 0x10, false, &r);
	CHECK(err == -ENOENT && !r.name && !r.module, "%s: unmapped", how);
}

static void test_live(const char *path)
{
	struct symbolizer *s1 = NULL, *s2 = NULL;
	struct procs *p1 = NULL, *p2 = NULL;
	struct sideband *sb = NULL;
	char buf[PATH_MAX], real[PATH_MAX];
	struct child c;
	const int *fds;
	int err, n;

	printf("# sideband + symbolizer: %s\n", path);
	if (procs_new(&p1) || procs_new(&p2) ||
	    symbolizer_new(&s1, p1) || symbolizer_new(&s2, p2)) {
		CHECK(0, "setup");
		goto out;
	}
	err = sideband_open(p1, &sb, 0);
	CHECK(!err, "sideband_open: %d", err);
	if (err)
		goto out;
	CHECK(sideband_fds(sb, &fds) == sysconf(_SC_NPROCESSORS_ONLN) &&
	      fds[0] >= 0, "one fd per CPU");

	err = start_child(path, &c);
	CHECK(!err, "start %s", path);
	if (err)
		goto out;

	/* alive: the /proc view */
	CHECK(!libpath_resolve("z", c.pid, buf, sizeof(buf)) &&
	      strstr(buf, "libz.so"), "libpath through maps: %s", buf);
	CHECK(!procs_load(p2, c.pid), "procs_load");
	check_child(s2, &c, path, "live");

	stop_child(&c);
	/* dead: only what the sideband saw */
	n = sideband_drain(sb);
	CHECK(n > 0, "drained %d records", n);
	printf("#   %d records, %" PRIu64 " lost\n", n, sideband_lost(sb));
	CHECK(!procs_alive(p1, c.pid), "seen exiting");
	CHECK(streq(procs_comm(p1, c.pid), base_name(path)), "comm %s",
	      procs_comm(p1, c.pid));
	CHECK(realpath(path, real) &&
	      procs_find(p1, c.pid, c.alpha) &&
	      streq(procs_find(p1, c.pid, c.alpha)->path, real),
	      "exec mapping recorded");
	check_child(s1, &c, path, "exited");
out:
	sideband_free(sb);
	symbolizer_free(s1);
	symbolizer_free(s2);
	procs_free(p1);
	procs_free(p2);
}

/* Small rings: records wrap around the end, and overflow counts as lost. */
static void test_small_ring(const char *path)
{
	struct symbolizer *s = NULL;
	struct procs *p = NULL;
	struct sideband *sb = NULL;
	struct sym_result r;
	struct child c;
	int i, ok = 0, runs = 24;

	printf("# sideband: one-page rings\n");
	if (procs_new(&p) || symbolizer_new(&s, p) ||
	    sideband_open(p, &sb, 1)) {
		CHECK(0, "setup");
		goto out;
	}
	CHECK(sideband_open(p, &(struct sideband *){ NULL }, 3) == -EINVAL,
	      "pages must be a power of two");
	/* each run leaves ~700 bytes of records: many trips round 4 KiB */
	for (i = 0; i < runs; i++) {
		if (start_child(path, &c))
			break;
		stop_child(&c);
		if (sideband_drain(sb) < 0)
			break;
		ok += !symbolizer_user(s, c.pid, c.alpha, false, &r) &&
		      streq(r.name, "fx_alpha");
	}
	CHECK(ok == runs, "%d of %d runs named after wrapping", ok, runs);

	/* no draining: the rings overflow */
	for (i = 0; i < 40; i++) {
		pid_t pid = fork();

		if (!pid) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		waitpid(pid, NULL, 0);
	}
	CHECK(sideband_drain(sb) > 0, "drain a full ring");
	/*
	 * The kernel writes its LOST record only once space is free again,
	 * before the next record: make some.
	 */
	for (i = 0; i < 100 && !sideband_lost(sb); i++) {
		pid_t pid = fork();

		if (!pid)
			_exit(0);
		waitpid(pid, NULL, 0);
		sideband_drain(sb);
	}
	CHECK(sideband_lost(sb) > 0, "lost records counted");
	printf("#   %" PRIu64 " lost\n", sideband_lost(sb));
out:
	sideband_free(sb);
	symbolizer_free(s);
	procs_free(p);
}

/*
 * A fork on CPU 0, then its parent's exec on CPU 1, both written after one
 * drain copied CPU 0's ring and before it copied CPU 1's: the exec comes
 * a drain before the fork.  The child must still get the image it forked
 * with, not the one its parent ran next.
 */
struct reorder {
	int go;		/* a byte: the parent forks, moves to CPU 1, execs */
	FILE *out;	/* the child's pid, then the fixture's addresses */
	pid_t child;
	struct child exec;
	bool armed, done;
};

/* sideband_test_hook has no context: the one test that arms it sets this */
static struct reorder *reorder_now;

void sideband_test_hook(int ring)
{
	struct reorder *r = reorder_now;
	int child;

	if (!r || !r->armed || r->done || ring != 0)
		return;
	r->done = true;
	if (write(r->go, "g", 1) != 1 || fscanf(r->out, "%d", &child) != 1 ||
	    fscanf(r->out, "%" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64,
		   &r->exec.alpha, &r->exec.zv, &r->exec.asm_a,
		   &r->exec.asm_c) != 4)
		return;
	r->child = child;
}

static void on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(126);
}

static void test_fork_exec_order(const char *path)
{
	int go[2], out[2], in[2], hold[2], n;
	struct reorder r = { .go = -1 };
	struct procs *p = NULL;
	cpu_set_t cpus;
	struct sideband *sb = NULL;
	const struct proc_map *m;
	char self[PATH_MAX];
	pid_t pid;

	printf("# sideband: a fork heard a drain after its parent's exec\n");
	/* the first ring is CPU 0's, the first online */
	if (sched_getaffinity(0, sizeof(cpus), &cpus) || !CPU_ISSET(0, &cpus) ||
	    !CPU_ISSET(1, &cpus)) {
		printf("#   skipped: needs CPUs 0 and 1\n");
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	if (procs_new(&p) || sideband_open(p, &sb, 0) ||
	    procs_load(p, getpid()) || pipe2(go, O_CLOEXEC) ||
	    pipe2(out, O_CLOEXEC) || pipe2(in, O_CLOEXEC) ||
	    pipe2(hold, O_CLOEXEC)) {
		CHECK(0, "setup");
		goto out;
	}
	pid = fork();
	if (!pid) {
		char c;

		on_cpu(0);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		pid = fork();
		if (!pid) {
			/* lives on, in the image it forked with, till told */
			close(hold[1]);
			_exit(read(hold[0], &c, 1) < 0);
		}
		dprintf(out[1], "%d\n", pid);
		on_cpu(1);
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(out[1]);
	close(in[0]);
	r.go = go[1];
	r.out = fdopen(out[0], "r");
	CHECK(pid > 0 && r.out, "start");
	if (pid < 0 || !r.out)
		goto out;
	/* its start applied: the next drain is the one that races */
	CHECK(sideband_drain(sb) >= 0, "drain");
	reorder_now = &r;
	r.armed = true;
	CHECK(sideband_drain(sb) >= 0, "the drain that hears the exec");
	while (sideband_holding(sb))
		sideband_drain(sb);
	reorder_now = NULL;
	CHECK(r.child > 0, "the parent forked, then ran %s", path);
	m = procs_find(p, r.child, (uintptr_t)test_fork_exec_order);
	CHECK(m && streq(m->path, self), "the child's code: its own image (%s)",
	      m ? m->path : "none");
	m = procs_find(p, pid, r.exec.alpha);
	CHECK(m && !strcmp(base_name(m->path), base_name(path)),
	      "the parent's: the image it ran (%s)", m ? m->path : "none");
	close(hold[1]);
	close(in[1]);
	/* the child, now init's, ends on its own */
	waitpid(pid, NULL, 0);
out:
	if (r.out)
		fclose(r.out);
	if (r.go >= 0)
		close(r.go);
	sideband_free(sb);
	procs_free(p);
}

static int copy_file(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return system(cmd);
}

/*
 * A binary replaced at its path after its process exited must not lend
 * its symbols to the old one's addresses; a deleted one, while its
 * process lives, is named from the copy it maps (/proc/PID/map_files).
 */
static void test_replaced(const char *pie, const char *nopie)
{
	char tmp[] = "/tmp/test_syms_fx.XXXXXX", exe[64];
	struct symbolizer *s = NULL, *s2 = NULL;
	struct procs *p = NULL;
	struct sideband *sb = NULL;
	struct sym_result r;
	struct child c;
	int err;

	printf("# symbolizer: replaced and deleted files\n");
	if (!mkdtemp(tmp) || procs_new(&p) || symbolizer_new(&s, p) ||
	    symbolizer_new(&s2, p) || sideband_open(p, &sb, 0)) {
		CHECK(0, "setup");
		goto out;
	}
	snprintf(exe, sizeof(exe), "%s/fx", tmp);
	if (copy_file(pie, exe) || start_child(exe, &c)) {
		CHECK(0, "start copy");
		goto out;
	}
	/* alive but deleted: /proc/PID/maps says so, map_files reaches it */
	unlink(exe);
	CHECK(!procs_load(p, c.pid), "load");
	err = symbolizer_user(s2, c.pid, c.alpha, false, &r);
	CHECK(!err && r.name && streq(r.name, "fx_alpha") && r.path &&
	      strstr(r.path, "(deleted)"), "deleted: named from its copy (%s in %s)",
	      r.name, r.path);
	stop_child(&c);
	sideband_drain(sb);

	/* dead, and another file now sits at the path */
	copy_file(nopie, exe);
	err = symbolizer_user(s, c.pid, c.alpha, false, &r);
	CHECK(err == -ENOENT && !r.name && streq(r.module, "fx"),
	      "replaced: unknown, not %s", r.name);
	unlink(exe);
out:
	rmdir(tmp);
	sideband_free(sb);
	symbolizer_free(s);
	symbolizer_free(s2);
	procs_free(p);
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], pie[PATH_MAX + 16], nopie[PATH_MAX + 16];
	ssize_t n;

	/* the fixtures sit next to this binary unless given */
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	dir[n > 0 ? n : 0] = '\0';
	*strrchr(dir, '/') = '\0';
	snprintf(pie, sizeof(pie), "%s/fx_pie", argc > 1 ? argv[1] : dir);
	snprintf(nopie, sizeof(nopie), "%s/fx_nopie", argc > 1 ? argv[1] : dir);
	signal(SIGPIPE, SIG_IGN);

	test_elf(pie, ET_DYN);
	test_elf(nopie, ET_EXEC);
	test_elf_libc();
	test_usdt(pie);
	test_usdt(nopie);
	test_ksyms_synthetic();
	test_ksyms_real();
	test_procs();
	test_procs_ended_child();
	test_libpath();
	test_live(pie);
	test_live(nopie);
	test_small_ring(pie);
	test_fork_exec_order(pie);
	test_replaced(pie, nopie);

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif
