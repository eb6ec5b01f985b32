// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/fs.h>
#include <bpf/bpf.h>
#include "cfi.h"
#include "procs.h"
#include "unwind.h"
#include "vec.h"
#include "../compat/mapkeys.h"

struct unwind;
static int add_proc(struct unwind *u, uint32_t pid, size_t *lines);
static double now_ms(void);

/*
 * Reading a process's maps file again for every mapping it makes would
 * cost the square of its mappings.  So each read is charged REREAD_MS,
 * plus REREAD_MS_PER_LINE for each line the file had, to its process's
 * clock, which runs ahead of now as it reads: a process may read at once
 * while its clock is at most REREAD_BURST_MS ahead (hundreds of reads:
 * every library a program loads), else its next read waits until it is.
 */
#define REREAD_MS		1.0
#define REREAD_MS_PER_LINE	0.005
#define REREAD_BURST_MS		1000.0

/* A process read lately; pending: it has mapped since, unread. */
struct reread {
	uint32_t pid;
	bool pending;
	double paid;		/* its reads' cost, as a time to run ahead of now */
};

/* A file's entry for "cfi_files", waiting for its rows to be pushed. */
struct file_entry {
	struct sw_cfi_file_key k;
	struct sw_cfi_file f;
};

struct unwind {
	struct cfi_cache *cache;
	struct reread *rereads;
	size_t nr_rereads, cap_rereads;
	int rows_fd, procs_fd, files_fd;
	struct file_entry *files;
	size_t nr_files, cap_files;
	size_t files_no_room;
	size_t pushed;		/* rows already in the rows map */
	bool no_mmap;		/* the rows map cannot be mapped (before 5.5) */
	struct sw_cfi_proc proc, old;	/* a process's list, as built and as was */
	const atomic_bool *warm_stop;	/* unwind_warm's */
	size_t procs, nmaps, procs_no_room, maps_no_room, replaced;
	double ms;
};

/*
 * A file's inode generation, which ext4, XFS and btrfs draw anew for
 * every inode they create: with it, the kernel side never takes this
 * file's rows for a later one given the same inode number.
 */
static bool file_gen(uint32_t pid, const struct proc_map *m, __u32 *gen)
{
	char path[96];

	if (m->igen_known) {
		*gen = m->igen;
		return true;
	}
	/* pid 0: a file no process maps yet (unwind_add_file) */
	if (pid)
		procs_map_file(pid, m, path, sizeof(path));
	return !procs_file_igen(pid ? path : m->path, m->ino, gen);
}

static void on_file(void *ctx, uint32_t pid, const struct proc_map *m,
		    const struct sw_cfi_file *f)
{
	struct unwind *u = ctx;
	struct file_entry *e;

	if (VEC_GROW(u->files, u->nr_files, u->cap_files, 16)) {
		u->files_no_room++;
		return;
	}
	e = &u->files[u->nr_files++];
	memset(e, 0, sizeof(*e));
	e->k.ino = m->ino;
	e->k.dev = m->maj << 20 | m->min;
	e->f = *f;
	/* inode 0: the kernel's vDSO (src/cfi_cache.c), no file's */
	e->f.gen_known = m->ino && file_gen(pid, m, &e->f.gen);
}

/* The files told since, once their rows are in: a walk reaches rows through them. */
static void push_files(struct unwind *u)
{
	for (size_t i = 0; i < u->nr_files; i++)
		if (bpf_map_update_elem(u->files_fd, &u->files[i].k,
					&u->files[i].f, BPF_ANY))
			u->files_no_room++;
	u->nr_files = 0;
}

/* Rows let go, read back from the rows map. */
static int read_rows(void *ctx, size_t first, size_t n, struct sw_cfi_row *out)
{
	struct unwind *u = ctx;

	for (size_t i = 0; i < n; i++) {
		__u32 k = first + i;

		if (bpf_map_lookup_elem(u->rows_fd, &k, &out[i]))
			return -errno;
	}
	return 0;
}

int unwind_new(struct unwind **out, uint32_t max_rows, int rows_fd,
		int procs_fd, int files_fd)
{
	struct unwind *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return -ENOMEM;
	err = cfi_cache_new(&u->cache, max_rows);
	if (err) {
		free(u);
		return err;
	}
	u->rows_fd = u->procs_fd = u->files_fd = -1;
	/* unbound: whether files are told is known once bound */
	if (rows_fd < 0)
		cfi_cache_on_file(u->cache, on_file, u);
	else
		unwind_bind(u, rows_fd, procs_fd, files_fd);
	*out = u;
	return 0;
}

void unwind_bind(struct unwind *u, int rows_fd, int procs_fd, int files_fd)
{
	u->rows_fd = rows_fd;
	u->procs_fd = procs_fd;
	u->files_fd = files_fd;
	cfi_cache_on_file(u->cache, files_fd >= 0 ? on_file : NULL, u);
	if (files_fd < 0)
		u->nr_files = 0;
	cfi_cache_on_read(u->cache, read_rows, u);
}

/*
 * Unbound, the rows built are all held until bound: past this many, the
 * rest are left to the bound pass (1 MiB of rows).
 */
#define WARM_ROWS	(128u << 10)

/* A process gone meanwhile, or a kernel thread: nothing to unwind, no error. */
static int unless_gone(int err)
{
	return err == -ENOENT || err == -ESRCH || err == -EACCES ? 0 : err;
}

/*
 * fn for every process there is now, until one fails, or one returns 1
 * (enough): 0 or the error.
 */
static int each_proc(struct unwind *u, int (*fn)(struct unwind *u, uint32_t pid))
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (e = readdir(d)))
		if (isdigit((unsigned char)e->d_name[0]))
			err = fn(u, strtoul(e->d_name, NULL, 10));
	closedir(d);
	return err < 0 ? err : 0;
}

static int warm_proc(struct unwind *u, uint32_t pid)
{
	size_t nr, no_room, lines;

	if (atomic_load(u->warm_stop) || cfi_cache_nr_rows(u->cache) >= WARM_ROWS)
		return 1;
	return unless_gone(cfi_cache_proc(u->cache, pid, u->proc.maps,
					  SW_CFI_PROC_MAPS, &nr, &no_room,
					  &lines));
}

int unwind_warm(struct unwind *u, uint32_t pid, const atomic_bool *stop)
{
	double t0 = now_ms();
	int err;

	u->warm_stop = stop;
	err = pid ? warm_proc(u, pid) : each_proc(u, warm_proc);
	u->ms += now_ms() - t0;
	return err < 0 ? err : 0;
}

void unwind_free(struct unwind *u)
{
	if (!u)
		return;
	cfi_cache_free(u->cache);
	free(u->rereads);
	free(u->files);
	free(u);
}

void unwind_on_skip(struct unwind *u, cfi_skip_fn fn, void *ctx)
{
	cfi_cache_on_skip(u->cache, fn, ctx);
}

void unwind_on_disk(struct unwind *u, struct cfi_disk *d)
{
	cfi_cache_on_disk(u->cache, d);
}

/* Rows written through one mapping of the map at a time (5.5+). */
#define PUSH_WINDOW	(256u << 10)

/*
 * Rows [u->pushed, n) through mappings of the rows map, a window at a
 * time so that no more of it than that is ever in this process's RSS.
 * -EINVAL: it cannot be mapped (not mmapable before 5.5): by syscall then.
 */
static int push_mapped(struct unwind *u, size_t n)
{
	const size_t page = 4096, row = sizeof(struct sw_cfi_row);

	while (u->pushed < n) {
		size_t off = u->pushed * row & ~(page - 1);
		size_t end = n * row - off > PUSH_WINDOW ? off + PUSH_WINDOW : n * row;
		size_t len = (end - off + page - 1) & ~(page - 1);
		char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				  u->rows_fd, off);

		if (base == MAP_FAILED)
			return -EINVAL;
		while (u->pushed * row < end) {
			const struct sw_cfi_row *rows;
			size_t held = cfi_cache_held(u->cache, u->pushed, &rows);
			size_t take = (end - u->pushed * row) / row;

			if (!held) {
				munmap(base, len);
				return -EFAULT;	/* given out, never held: cannot be */
			}
			take = held < take ? held : take;
			memcpy(base + (u->pushed * row - off), rows, take * row);
			u->pushed += take;
		}
		munmap(base, len);
	}
	return 0;
}

/*
 * Rows [u->pushed, n) by the syscall: in batches where the kernel has
 * them (5.6+), else one by one.
 */
static int push_updates(struct unwind *u, size_t n)
{
	const struct sw_cfi_row *rows;
	__u32 batch = 4096, *keys = malloc(batch * sizeof(*keys));
	bool batched = true;
	int err = 0;

	if (!keys)
		return -ENOMEM;
	while (!err && u->pushed < n) {
		size_t held = cfi_cache_held(u->cache, u->pushed, &rows);
		__u32 count = held < batch ? held : batch;

		if (!held) {
			err = -EFAULT;	/* given out, never held: cannot be */
			break;
		}
		for (__u32 i = 0; i < count; i++)
			keys[i] = u->pushed + i;
		if (batched &&
		    !bpf_map_update_batch(u->rows_fd, keys, rows, &count, NULL)) {
			u->pushed += count;
			continue;
		}
		batched = false;
		if (bpf_map_update_elem(u->rows_fd, keys, rows, BPF_ANY))
			err = -errno;
		else
			u->pushed++;
	}
	free(keys);
	return err;
}

/*
 * The new rows into the rows map, then their memory goes
 * (cfi_cache_release).  The walker can only reach a row once a mapping
 * names it, and mappings are written after.
 */
static int push_rows(struct unwind *u)
{
	size_t n = cfi_cache_nr_rows(u->cache);
	int err = 0;

	if (u->pushed >= n)
		return 0;
	if (!u->no_mmap) {
		err = push_mapped(u, n);
		u->no_mmap = err == -EINVAL;
	}
	if (u->no_mmap)
		err = push_updates(u, n);
	if (!err)
		cfi_cache_release(u->cache, u->pushed);
	return err;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Room for more: forget the processes that have exited (whose events have
 * all fired), their entries and their count.  Returns how many.
 */
static size_t reap(struct unwind *u)
{
	__u32 pid, next, *dead = NULL;
	size_t n = 0, cap = 0, reaped = 0;
	bool first = true;

	while (!mapkeys_next(u->procs_fd, first, &pid, &next, sizeof(pid),
			     sizeof(struct sw_cfi_proc))) {
		first = false;
		pid = next;
		if (kill(pid, 0) && errno == ESRCH && !VEC_GROW(dead, n, cap, 64))
			dead[n++] = pid;
	}
	for (size_t i = 0; i < n; i++)
		reaped += !bpf_map_delete_elem(u->procs_fd, &dead[i]);
	free(dead);
	return reaped;
}

/* As unwind_add_proc; *lines: what reading the maps file cost. */
static int add_proc_lines(struct unwind *u, uint32_t pid, size_t *lines)
{
	int err = add_proc(u, pid, lines);

	/* full: make room from processes that exited, and once more */
	if (err == -E2BIG && reap(u))
		err = add_proc(u, pid, lines);
	if (err == -E2BIG || err == -ENOSPC) {
		u->procs_no_room++;
		err = 0;
	}
	return err;
}

int unwind_add_proc(struct unwind *u, uint32_t pid)
{
	size_t lines;

	return add_proc_lines(u, pid, &lines);
}

static struct reread *reread_of(struct unwind *u, uint32_t pid)
{
	for (size_t i = 0; i < u->nr_rereads; i++)
		if (u->rereads[i].pid == pid)
			return &u->rereads[i];
	return NULL;
}

/* Read pid's maps again now, and charge it. */
static int reread(struct unwind *u, uint32_t pid, double now)
{
	struct reread *r = reread_of(u, pid);
	double paid = r && r->paid > now ? r->paid : now;
	size_t lines = 0, k = 0;
	int err = add_proc_lines(u, pid, &lines);

	/* those with nothing to wait for, and nothing waiting, go */
	for (size_t i = 0; i < u->nr_rereads; i++) {
		r = &u->rereads[i];
		if (r->pid != pid && (r->pending || r->paid > now))
			u->rereads[k++] = *r;
	}
	u->nr_rereads = k;
	if (VEC_GROW(u->rereads, u->nr_rereads, u->cap_rereads, 16))
		return -ENOMEM;
	u->rereads[u->nr_rereads++] = (struct reread){
		pid, false, paid + REREAD_MS + lines * REREAD_MS_PER_LINE };
	return err;
}

/* When r may read next. */
static double next_read(const struct reread *r)
{
	return r->paid - REREAD_BURST_MS;
}

int unwind_mapped(struct unwind *u, uint32_t pid)
{
	struct reread *r = reread_of(u, pid);
	double now = now_ms();

	if (r && next_read(r) > now) {
		r->pending = true;
		return 0;
	}
	return reread(u, pid, now);
}

double unwind_due(const struct unwind *u)
{
	double due = -1;

	for (size_t i = 0; i < u->nr_rereads; i++) {
		const struct reread *r = &u->rereads[i];

		if (r->pending && (due < 0 || next_read(r) < due))
			due = next_read(r);
	}
	return due;
}

int unwind_flush(struct unwind *u, bool all)
{
	double now = now_ms();
	int err = 0;

	/* reread reorders the list: from the start again after each */
	for (size_t i = 0; i < u->nr_rereads;) {
		struct reread *r = &u->rereads[i];

		if (r->pending && (all || next_read(r) <= now)) {
			int e = reread(u, r->pid, now);

			if (e == -ENOMEM)
				err = e;
			i = 0;
		} else {
			i++;
		}
	}
	return err;
}

/* The mappings of a list that have their tables (bpf/cfi.h). */
static size_t tabled(const struct sw_cfi_proc *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nr && i < SW_CFI_PROC_MAPS; i++)
		n += p->maps[i].first != SW_CFI_UNTABLED;
	return n;
}

static int add_proc(struct unwind *u, uint32_t pid, size_t *lines)
{
	struct sw_cfi_proc *p = &u->proc, *old = &u->old;
	bool known = !bpf_map_lookup_elem(u->procs_fd, &pid, old);
	double t0 = now_ms();
	size_t nr, no_room;
	int err;

	memset(p, 0, sizeof(*p));
	err = cfi_cache_proc(u->cache, pid, p->maps, SW_CFI_PROC_MAPS, &nr,
			     &no_room, lines);
	p->nr = nr;
	p->no_room = no_room;
	/*
	 * No mappings: an exiting process's maps file is empty.  What it had
	 * stays: its events may still be printed (and explained) after.  The
	 * same list as before stays as it is.
	 */
	if (!err && u->nr_files && !push_rows(u))
		push_files(u);
	if (err || !nr || (known && !memcmp(p, old, sizeof(*p))))
		goto out;
	/*
	 * A list BPF built from the process's VMAs (bpf/cfi.bpf.c) is as
	 * true as ours, and may be newer than the maps we read: ours only
	 * where it has more tables.
	 */
	if (known && old->built && nr <= tabled(old))
		goto out;
	err = push_rows(u);
	/*
	 * The rows first: a walk can reach them only through the list.  One
	 * BPF built since we looked stays.
	 */
	if (!err && bpf_map_update_elem(u->procs_fd, &pid, p,
					known ? BPF_ANY : BPF_NOEXIST)) {
		err = errno == EEXIST ? 0 : -errno;
		goto out;
	}
	if (!err) {
		u->procs += !known;
		u->replaced += known && old->built;
		u->nmaps += nr - (known ? old->nr : 0);
		/*
		 * Each mapping left out once, however often it is read again:
		 * only more than last time are new ones.
		 */
		if (!known || no_room > old->no_room)
			u->maps_no_room += no_room - (known ? old->no_room : 0);
	}
out:
	u->ms += now_ms() - t0;
	return err;
}

/* A table built since t0 (err: how): its rows and file into the kernel. */
static int pushed(struct unwind *u, double t0, int err)
{
	/* a file without a table is told as one, no error */
	if (err == -ENOMEM)
		return err;
	if (u->nr_files && !push_rows(u))
		push_files(u);
	u->ms += now_ms() - t0;
	return 0;
}

int unwind_add_file(struct unwind *u, const char *path)
{
	double t0 = now_ms();
	int err = cfi_cache_path(u->cache, path);

	return pushed(u, t0, err);
}

int unwind_add_vdso(struct unwind *u)
{
	double t0 = now_ms();
	int err = cfi_cache_vdso(u->cache);

	return pushed(u, t0, err);
}

static int add_one(struct unwind *u, uint32_t pid)
{
	return unless_gone(unwind_add_proc(u, pid));
}

int unwind_add_all(struct unwind *u)
{
	return each_proc(u, add_one);
}

/* As bpf/cfi.h step 1, from user space: the mapping of pid holding pc. */
static int find_map(const struct unwind *u, uint32_t pid, uint64_t pc,
		    struct sw_cfi_map *m)
{
	struct sw_cfi_proc p;
	size_t lo = 0, hi;

	if (bpf_map_lookup_elem(u->procs_fd, &pid, &p) || !p.nr ||
	    p.nr > SW_CFI_PROC_MAPS)
		return -ENOENT;
	hi = p.nr;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (p.maps[mid].start <= pc)
			lo = mid;
		else
			hi = mid;
	}
	*m = p.maps[lo];
	return pc >= m->start && pc < m->end ? 0 : -ENOENT;
}

int unwind_row(const struct unwind *u, uint32_t pid, uint64_t addr,
	       bool exact, const struct proc_map *file, struct sw_cfi_row *row)
{
	uint64_t pc = addr - !exact, rel;
	struct sw_cfi_map m;
	size_t lo = 0, hi;

	/* no list (5.17+): the file the walk found from the PC's VMA */
	if (find_map(u, pid, pc, &m) &&
	    (!file || cfi_cache_known(u->cache, file, &m)))
		return -ENOENT;
	if (pc - m.bias >= 1ULL << 32 || !m.count ||
	    (size_t)m.first + m.count > cfi_cache_nr_rows(u->cache))
		return -ENOENT;
	/* the last row at or below rel, as the walker's search finds it */
	rel = pc - m.bias;
	hi = m.count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cfi_cache_row(u->cache, m.first + mid, row))
			return -ENOENT;
		if (row->pc <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? cfi_cache_row(u->cache, m.first + lo - 1, row) : -ENOENT;
}

void unwind_stats(const struct unwind *u, struct unwind_stats *st)
{
	memset(st, 0, sizeof(*st));
	cfi_cache_stats(u->cache, &st->cfi);
	st->procs = u->procs;
	st->replaced = u->replaced;
	st->maps = u->nmaps;
	st->procs_no_room = u->procs_no_room;
	st->maps_no_room = u->maps_no_room;
	st->ms = u->ms;
}
