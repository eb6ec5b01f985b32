// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * bench_cfi: what the unwind tables (src/cfi.c, src/cfi_cache.c) cost.
 *  - per binary (libc, libstdc++, python3.11): rows, the bytes the BPF map
 *    holds for them, and the time to open the file and build them;
 *  - per process: every table of a live python3.11, then of one that has
 *    also loaded libstdc++ through ctypes, built from nothing: time, rows,
 *    bytes, and how much the builder's peak RSS grew.
 * Times are the median of ROUNDS builds (the files in the page cache, as
 * when a tool starts on a running system).  Measured, never asserted.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "../../src/cfi.h"
#include "../../src/cfi_cache.h"
#include "../../src/elf_file.h"
#include "../../src/libpath.h"
#include "../unit/unit.h"

#define ROUNDS 5
#define PYTHON "/usr/bin/python3.11"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v)
{
	qsort(v, ROUNDS, sizeof(*v), cmp_double);
	return v[ROUNDS / 2];
}

static void one_binary(const char *label, const char *path)
{
	double ms[ROUNDS];
	size_t rows = 0;

	for (int r = 0; r < ROUNDS; r++) {
		struct elf_file *ef;
		struct cfi_table *t;
		double t0 = now_ms();
		/* as the builder opens it: no symbols */
		int err = elf_file_open_own(&ef, path, false, NULL);

		if (!err) {
			err = cfi_table_from_elf(&t, ef, path, NULL);
			elf_file_free(ef);
		}
		ms[r] = now_ms() - t0;
		if (err) {
			printf("  %-34s %s\n", label, strerror(-err));
			return;
		}
		rows = t->nr_rows;
		cfi_table_free(t);
	}
	printf("  %-34s %8zu %8zu %9.1f\n", label, rows,
	       rows * sizeof(struct sw_cfi_row) / 1024, median(ms));
}

static long vm_hwm_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/* What a forked builder reports back: one build of every table of pid. */
struct proc_cost {
	double ms;
	size_t maps, rows, tables;
	long hwm_kb;
	int err;
};

static void build_proc(pid_t pid, struct proc_cost *pc)
{
	static struct sw_cfi_map maps[SW_CFI_PROC_MAPS];
	long before = vm_hwm_kb();
	struct cfi_cache *c;
	struct cfi_stats st;
	size_t nr, no_room, lines;
	double t0 = now_ms();

	pc->err = cfi_cache_new(&c, SW_CFI_ROWS_DEFAULT);
	if (!pc->err)
		pc->err = cfi_cache_proc(c, pid, maps, SW_CFI_PROC_MAPS, &nr,
					 &no_room, &lines);
	pc->ms = now_ms() - t0;
	if (pc->err)
		return;
	cfi_cache_stats(c, &st);
	pc->maps = nr;
	pc->rows = st.rows;
	pc->tables = st.tables;
	pc->hwm_kb = vm_hwm_kb() - before;
	cfi_cache_free(c);
}

/* Each round in a fresh child: no table, page or heap left by the last. */
static void one_process(const char *label, const char *code)
{
	char cmd[1024], line[16];
	double ms[ROUNDS];
	struct proc_cost pc = { .err = -ENOENT };
	long hwm[ROUNDS];
	FILE *out;
	int in, fds[2];
	pid_t py;

	snprintf(cmd, sizeof(cmd), "%s -c '%s; print(\"ready\", flush=True); "
		 "import sys; sys.stdin.read()'", PYTHON, code);
	py = unit_spawn("/bin/sh", &in, &out);
	if (py < 0) {
		printf("  %-34s could not start\n", label);
		return;
	}
	/* the shell reads its command from stdin: then python does */
	dprintf(in, "exec %s\n", cmd);
	if (!fgets(line, sizeof(line), out))
		goto done;
	for (int r = 0; r < ROUNDS; r++) {
		pid_t b;

		if (pipe(fds))
			goto done;
		b = fork();
		if (!b) {
			build_proc(py, &pc);
			_exit(write(fds[1], &pc, sizeof(pc)) != sizeof(pc));
		}
		close(fds[1]);
		if (b < 0 || read(fds[0], &pc, sizeof(pc)) != sizeof(pc))
			pc.err = -EIO;
		close(fds[0]);
		waitpid(b, NULL, 0);
		if (pc.err)
			break;
		ms[r] = pc.ms;
		hwm[r] = pc.hwm_kb;
	}
	if (pc.err) {
		printf("  %-34s %s\n", label, strerror(-pc.err));
	} else {
		double h[ROUNDS];

		for (int r = 0; r < ROUNDS; r++)
			h[r] = hwm[r];
		printf("  %-34s %8zu %8zu %9.1f   %zu mappings, %zu tables, "
		       "peak RSS +%.0f KB\n", label, pc.rows,
		       pc.rows * sizeof(struct sw_cfi_row) / 1024, median(ms),
		       pc.maps, pc.tables, median(h));
	}
done:
	fclose(out);
	close(in);
	waitpid(py, NULL, 0);
}

int main(void)
{
	char path[4096];

	signal(SIGPIPE, SIG_IGN);
	printf("Unwind tables from CFI: rows (8 bytes each in the BPF map), median "
	       "of %d builds\n", ROUNDS);
	printf("  %-34s %8s %8s %9s\n", "", "rows", "KB", "build ms");
	if (!libpath_resolve("c", 0, path, sizeof(path)))
		one_binary("libc.so.6", path);
	if (!libpath_resolve("stdc++", 0, path, sizeof(path)))
		one_binary("libstdc++.so.6", path);
	if (access(PYTHON, R_OK)) {
		printf("  python3.11 is not installed: no python figures\n");
		return 0;
	}
	one_binary("python3.11", PYTHON);
	one_process("python3.11 process", "pass");
	one_process("python3.11 + libstdc++ (ctypes)",
		    "import ctypes; ctypes.CDLL(\"libstdc++.so.6\")");
	return 0;
}
