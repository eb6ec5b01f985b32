// SPDX-License-Identifier: MIT
/*
 * A libFuzzer target for the readers of files that any local user controls
 * (src/untrusted.h): ELF files, their USDT notes and their CFI (unwind
 * tables), the debug files found by build-id or .gnu_debuglink,
 * MiniDebugInfo, perf maps, and one CFI section's bytes alone.  `make fuzz`
 * builds and runs it; tests/fuzz.bats runs a fixed number of inputs.
 *
 * The first byte of an input says what the rest is:
 *   sel & 3 == 0  a perf map, read as this process's /tmp/perf-PID.map
 *              1  an ELF file (MiniDebugInfo is its .gnu_debugdata)
 *              2  a u32 n (little-endian), an ELF file of n bytes, then
 *                 the debug file its build-id names
 *              3  the same, with the debug file beside it as f.debug
 *                 (what a seed's .gnu_debuglink names, its CRC right)
 *   sel & 4       the files are group-writable, so read into memory;
 *                 otherwise a root-owned file is mapped
 *   sel & 8       none of the above: a u64 (little-endian), the address of
 *                 a CFI section, then its bytes, handed to cfi_table_parse
 *                 with no file around them; .debug_frame if sel & 16,
 *                 else .eh_frame.  Every mutation reaches the CFI parser
 *                 instead of mostly breaking the ELF file around it.
 *
 * The readers take paths, so every input is written to files in a private
 * directory, which is also STACKWALK_DEBUG_DIR: libFuzzer's entry points
 * take no context, and the environment carries its name from one to the
 * next.  Each input leaves no file, no fd and no memory behind: a leaked fd
 * aborts here, a leak of memory is LeakSanitizer's to report.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cfi.h"
#include "elf_file.h"
#include "perfmap.h"
#include "untrusted.h"
#include "usdt.h"

#define DIR_ENV "STACKWALK_DEBUG_DIR"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void remove_dir(void)
{
	rmdir(getenv(DIR_ENV));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096];

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/stackwalk-fuzz.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir) || setenv(DIR_ENV, dir, 1)) {
		perror("fuzz: a directory for the inputs");
		exit(1);
	}
	atexit(remove_dir);
	return 0;
}

/* How many fds are open: one left open by a reader shows as one more. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d) {
		perror("fuzz: /proc/self/fd");
		abort();
	}
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void put(const char *path, const uint8_t *p, size_t n, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	/* fchmod: the umask would take the group's write bit away */
	if (fd < 0 || fchmod(fd, mode)) {
		perror(path);
		abort();
	}
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			perror(path);
			abort();
		}
		p += w;
		n -= w;
	}
	close(fd);
}

struct walk {
	const struct elf_file *ef;
	size_t seen;
};

static int visit(const struct elf_sym *s, void *ctx)
{
	struct walk *w = ctx;
	uint64_t off, vaddr;
	char name[256];

	/* sym_at names something over every symbol's first byte */
	if (s->addr + (s->size ? s->size : 1) > s->addr &&
	    !elf_file_sym_at(w->ef, s->addr)) {
		fprintf(stderr, "fuzz: no symbol at 0x%llx, where %s is\n",
			(unsigned long long)s->addr, s->name);
		abort();
	}
	/* a linear search: once, not once a symbol */
	if (!w->seen++ && !elf_file_sym_by_name(w->ef, s->name)) {
		fprintf(stderr, "fuzz: %s not found by its name\n", s->name);
		abort();
	}
	if (!elf_file_vaddr_to_offset(w->ef, s->addr, &off))
		elf_file_offset_to_vaddr(w->ef, off, &vaddr);
	untrusted_escape(name, sizeof(name), s->name);
	return 0;
}

/*
 * Its unwind table: rows of known kinds, strictly rising, each found at
 * its own address, a "none" row last; each in words.
 */
static void check_cfi(struct cfi_table *t)
{
	char buf[512];

	for (size_t i = 0; i < t->nr_rows; i++) {
		const struct sw_cfi_row *r = &t->rows[i];

		if (r->kind >= SW_CFI_KIND_NR || (i && r->pc <= r[-1].pc) ||
		    cfi_table_find(t, t->base + r->pc) != r) {
			fprintf(stderr, "fuzz: unwind row %zu of %zu unsound\n", i,
				t->nr_rows);
			abort();
		}
		cfi_row_rule(r, buf, sizeof(buf));
		cfi_row_explain(r, buf, sizeof(buf));
	}
	if (t->nr_rows && t->rows[t->nr_rows - 1].kind != SW_CFI_NONE) {
		fprintf(stderr, "fuzz: the last unwind row is not \"none\"\n");
		abort();
	}
	cfi_table_free(t);
}

static void use_cfi(const struct elf_file *ef)
{
	struct cfi_table *t;

	if (!cfi_table_from_elf(&t, ef, NULL, NULL))
		check_cfi(t);
}

/*
 * The section in memory of its own size: ASan sees a read one byte before
 * it, which the address in front would hide.
 */
static void cfi_input(const uint8_t *p, size_t n, bool debug_frame)
{
	struct cfi_input in = { .debug_frame = debug_frame };
	struct cfi_table *t;
	uint8_t *copy;

	if (n < sizeof(in.addr))
		return;
	memcpy(&in.addr, p, sizeof(in.addr));
	p += sizeof(in.addr);
	n -= sizeof(in.addr);
	copy = malloc(n ? n : 1);
	if (!copy)
		abort();
	memcpy(copy, p, n);
	in.data = copy;
	in.size = n;
	if (!cfi_table_parse(&t, &in))
		check_cfi(t);
	free(copy);
}

/* What the tool asks of an ELF file it probes, or names frames in. */
static void use_elf(const struct elf_file *ef)
{
	struct walk w = { .ef = ef };
	struct usdt_probe *probes;
	const uint8_t *id;
	char buf[256];
	size_t size, n;

	elf_file_type(ef);
	elf_file_build_id(ef, &id);
	elf_file_whole(ef, &size);
	elf_file_read(ef, size / 2, buf, sizeof(buf));
	elf_file_find_syms(ef, visit, &w);
	use_cfi(ef);
	if (usdt_probes(ef, &probes, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		untrusted_escape(buf, sizeof(buf), probes[i].provider);
		untrusted_escape(buf, sizeof(buf), probes[i].name);
		untrusted_escape(buf, sizeof(buf), probes[i].args);
	}
	free(probes);
}

/* .build-id/ab/cdef....debug under dir, as src/debuginfo.c looks for it */
static int build_id_path(char *out, size_t len, const char *dir,
			 const struct elf_file *ef)
{
	const uint8_t *id;
	size_t n = elf_file_build_id(ef, &id), o;

	if (n < 2 || n > 64)
		return -ENOENT;
	o = snprintf(out, len, "%s/.build-id/%02x/", dir, id[0]);
	for (size_t i = 1; i < n; i++)
		o += snprintf(out + o, len - o, "%02x", id[i]);
	snprintf(out + o, len - o, ".debug");
	return 0;
}

static void open_elf(const char *path)
{
	struct untrusted_skip sk = { 0 };
	struct elf_file *ef;

	if (elf_file_open(&ef, path, NULL, &sk))
		return;
	use_elf(ef);
	elf_file_free(ef);
}

static void elf_input(const uint8_t *p, size_t n, int how, mode_t mode)
{
	const char *dir = getenv(DIR_ENV);
	char path[4200], debug[4400] = "", sub[4400] = "", idpath[4400];
	size_t main_n = n;
	struct elf_file *ef;
	uint32_t len;

	if (how != 1) {
		if (n < sizeof(len))
			return;
		memcpy(&len, p, sizeof(len));
		p += sizeof(len);
		n -= sizeof(len);
		main_n = len < n ? len : n;
	}
	snprintf(path, sizeof(path), "%s/f", dir);
	put(path, p, main_n, mode);
	if (how == 3) {
		snprintf(debug, sizeof(debug), "%s/f.debug", dir);
		put(debug, p + main_n, n - main_n, mode);
	}
	/* the debug file's path needs the build-id: a first open reads it */
	if (how == 2 && !elf_file_new(&ef, path)) {
		if (!build_id_path(debug, sizeof(debug), dir, ef)) {
			snprintf(idpath, sizeof(idpath), "%s/.build-id", dir);
			snprintf(sub, sizeof(sub), "%.*s",
				 (int)(strrchr(debug, '/') - debug), debug);
			mkdir(idpath, 0700);
			mkdir(sub, 0700);
			put(debug, p + main_n, n - main_n, mode);
		}
		elf_file_free(ef);
	}
	open_elf(path);
	unlink(path);
	if (*debug)
		unlink(debug);
	if (*sub) {
		rmdir(sub);
		rmdir(idpath);
	}
}

static void find_all(struct perfmaps *m, const uint64_t *addrs, size_t n)
{
	struct untrusted_skip sk = { 0 };
	uint64_t start;
	char buf[256];

	for (size_t i = 0; i < n; i++) {
		const char *name = perfmaps_find(m, getpid(), getuid(), addrs[i],
						  &start, &sk);
		if (name)
			untrusted_escape(buf, sizeof(buf), name);
	}
}

/*
 * Read as a JIT writes it: half of it first (cut anywhere, even inside a
 * line), then all of it, which the grown file makes perfmap.c read again.
 */
static void perf_map_input(const uint8_t *p, size_t n, mode_t mode)
{
	uint64_t addrs[] = { 0, 0, 0x1000, 0x7fffffffffffULL, UINT64_MAX };
	size_t nr = sizeof(addrs) / sizeof(addrs[0]);
	char path[64], first[32];
	struct perfmaps *m;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	/* the first line's start: an address that some name is over */
	snprintf(first, sizeof(first), "%.*s", (int)(n < 31 ? n : 31),
		 (const char *)p);
	addrs[0] = strtoull(first, NULL, 16);
	if (perfmaps_new(&m))
		abort();
	put(path, p, n / 2, mode);
	find_all(m, addrs, nr);
	put(path, p, n, mode);
	find_all(m, addrs, nr);
	perfmaps_free(m);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fds = open_fds();
	mode_t mode;

	if (!size)
		return 0;
	mode = data[0] & 4 ? 0660 : 0600;
	if (data[0] & 8)
		cfi_input(data + 1, size - 1, data[0] & 16);
	else if ((data[0] & 3) == 0)
		perf_map_input(data + 1, size - 1, mode);
	else
		elf_input(data + 1, size - 1, data[0] & 3, mode);
	if (open_fds() != fds) {
		fprintf(stderr, "fuzz: an fd was left open\n");
		abort();
	}
	return 0;
}
