// SPDX-License-Identifier: MIT
#include "sideband.h"
#include "procs.h"
#include "vec.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif
#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

struct ring {
	struct perf_event_mmap_page *meta;
	char *data;
	uint64_t size;		/* of data; a power of two */
};

/* Where a copied record sits in the scratch buffer, and when it happened. */
struct rec {
	uint64_t time;
	size_t off;
	size_t seq;
};

struct sideband {
	struct procs *procs;
	sideband_map_fn on_map;
	void *on_map_ctx;
	int *fds;
	struct ring *rings;
	int nr;
	size_t map_len;
	uint64_t lost;
	bool read_lost;		/* each fd's read() counts what it dropped (6.0+) */
	/* start-up's drainer: a thread, and the pipe that stops it */
	pthread_t thread;
	bool threaded;
	int stop[2];
	/* records copied out and not yet applied, some held from a drain */
	char *scratch;
	size_t scratch_len, scratch_cap;
	struct rec *recs;
	size_t nr_recs, recs_cap;
	uint64_t seen;		/* the latest time of any record copied */
};

/* Record bodies as the kernel writes them; sample_id trails each. */
struct rec_mmap {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	char filename[];
};

struct rec_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;	/* a build-id instead with MMAP_BUILD_ID */
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};

struct rec_comm {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};

struct rec_task {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct rec_lost {
	struct perf_event_header h;
	uint64_t id, lost;
};

/* A drain's copies beyond this are freed after it, not kept for the next. */
#define SCRATCH_KEEP (256u << 10)

/* Passes over the rings in one drain while records keep coming. */
#define MAX_PASSES 8

/* sample_type TID|TIME with sample_id_all: { u32 pid, tid; u64 time; } */
#define SAMPLE_ID_SIZE 16

static int online_cpus(int **cpus, int *nr)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int lo, hi, *v = NULL;
	size_t n = 0, cap = 0;
	char sep;

	if (!f)
		return -errno;
	/* "0-3,5,7-8\n" */
	while (fscanf(f, "%d", &lo) == 1) {
		hi = lo;
		sep = fgetc(f);
		if (sep == '-') {
			if (fscanf(f, "%d", &hi) != 1)
				break;
			sep = fgetc(f);
		}
		for (; lo <= hi; lo++) {
			if (VEC_GROW(v, n, cap, 16)) {
				free(v);
				fclose(f);
				return -ENOMEM;
			}
			v[n++] = lo;
		}
		if (sep != ',')
			break;
	}
	fclose(f);
	if (!n) {
		free(v);
		return -ENODEV;
	}
	*cpus = v;
	*nr = n;
	return 0;
}

static int open_event(int cpu, bool *read_lost)
{
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	attr.sample_id_all = 1;
	attr.mmap = 1;
	attr.mmap2 = 1;
	attr.comm = 1;
	attr.comm_exec = 1;
	attr.task = 1;
	/*
	 * Wake on every record, not when half full: a mapping only a process
	 * can see (another mount namespace) must be opened while it lives.
	 */
	attr.watermark = 1;
	attr.wakeup_watermark = 1;
	/*
	 * A LOST record is written only when a record fits again: records
	 * dropped while nothing more comes would go unreported.  The count
	 * read() gives does not wait for room.
	 */
	attr.read_format = PERF_FORMAT_LOST;
	fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
		     PERF_FLAG_FD_CLOEXEC);
	*read_lost = fd >= 0;
	if (fd < 0 && errno == EINVAL) {
		attr.read_format = 0;
		fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0 && errno == EINVAL) {
		/* before 3.16: exec then looks like a mere rename */
		attr.comm_exec = 0;
		fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1,
			     PERF_FLAG_FD_CLOEXEC);
	}
	return fd < 0 ? -errno : fd;
}

int sideband_open(struct procs *procs, struct sideband **out,
		   unsigned int pages)
{
	long page = sysconf(_SC_PAGESIZE);
	struct sideband *sb;
	int *cpus = NULL, nr_cpus = 0, i, err;

	*out = NULL;
	if (!pages)
		pages = SIDEBAND_DEFAULT_PAGES;
	if (pages & (pages - 1))
		return -EINVAL;
	err = online_cpus(&cpus, &nr_cpus);
	if (err)
		return err;
	sb = calloc(1, sizeof(*sb));
	if (!sb) {
		free(cpus);
		return -ENOMEM;
	}
	sb->procs = procs;
	sb->stop[0] = sb->stop[1] = -1;
	sb->read_lost = true;
	sb->map_len = (size_t)(pages + 1) * page;
	sb->fds = calloc(nr_cpus, sizeof(*sb->fds));
	sb->rings = calloc(nr_cpus, sizeof(*sb->rings));
	err = -ENOMEM;
	if (!sb->fds || !sb->rings)
		goto fail;
	for (i = 0; i < nr_cpus; i++) {
		struct ring *r = &sb->rings[sb->nr];
		void *m;
		bool read_lost;
		int fd = open_event(cpus[i], &read_lost);

		sb->read_lost &= read_lost;
		if (fd < 0) {
			err = fd;
			goto fail;
		}
		sb->fds[sb->nr] = fd;
		/* writable: moving data_tail is what frees space for the kernel */
		m = mmap(NULL, sb->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		if (m == MAP_FAILED) {
			err = -errno;
			close(fd);
			goto fail;
		}
		r->meta = m;
		r->data = (char *)m + page;
		r->size = (uint64_t)pages * page;
		sb->nr++;
	}
	free(cpus);
	*out = sb;
	return 0;
fail:
	free(cpus);
	sideband_free(sb);
	return err;
}

void sideband_free(struct sideband *sb)
{
	int i;

	if (!sb)
		return;
	sideband_background_stop(sb);
	for (i = 0; i < sb->nr; i++) {
		munmap(sb->rings[i].meta, sb->map_len);
		close(sb->fds[i]);
	}
	free(sb->fds);
	free(sb->rings);
	free(sb->scratch);
	free(sb->recs);
	free(sb);
}

int sideband_fds(const struct sideband *sb, const int **fds)
{
	*fds = sb->fds;
	return sb->nr;
}

uint64_t sideband_lost(const struct sideband *sb)
{
	uint64_t total = 0, v[2];
	int i;

	if (!sb->read_lost)
		return sb->lost;
	for (i = 0; i < sb->nr; i++)
		if (read(sb->fds[i], v, sizeof(v)) == sizeof(v))
			total += v[1];
	/* the records may know of more, if a read failed */
	return total > sb->lost ? total : sb->lost;
}

static int reserve(void **buf, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*buf, ncap * elem);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = ncap;
	return 0;
}

/* Copies one ring's complete records out, then hands the space back. */
static int copy_ring(struct sideband *sb, struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	int err = 0;

	while (tail < head) {
		uint64_t at = tail & (r->size - 1), first;
		struct perf_event_header h;
		struct rec *rec;
		char *dst;

		/* records are 8-byte aligned: a header never straddles the end */
		memcpy(&h, r->data + at, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail) {
			tail = head;	/* corrupt: drop the rest */
			break;
		}
		err = reserve((void **)&sb->scratch, &sb->scratch_cap,
			      sb->scratch_len + ((h.size + 7) & ~7ul), 1);
		if (!err)
			err = reserve((void **)&sb->recs, &sb->recs_cap,
				      sb->nr_recs + 1, sizeof(*sb->recs));
		if (err)
			break;
		dst = sb->scratch + sb->scratch_len;
		first = r->size - at < h.size ? r->size - at : h.size;
		memcpy(dst, r->data + at, first);
		memcpy(dst + first, r->data, h.size - first);

		rec = &sb->recs[sb->nr_recs];
		rec->off = sb->scratch_len;
		rec->seq = sb->nr_recs++;
		rec->time = 0;
		if (h.size >= sizeof(h) + SAMPLE_ID_SIZE)
			memcpy(&rec->time, dst + h.size - 8, 8);
		if (rec->time > sb->seen)
			sb->seen = rec->time;
		/* keep records 8-byte aligned for the casts in apply() */
		sb->scratch_len += (h.size + 7) & ~7ul;
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A string field that must end before the trailing sample_id. */
static const char *record_str(const struct perf_event_header *h,
			      const char *s)
{
	const char *end = (const char *)h + h->size - SAMPLE_ID_SIZE;

	return s < end && memchr(s, '\0', end - s) ? s : NULL;
}

/* Into the model; then whoever asked hears of it, while the process lives. */
static int mapped(struct sideband *sb, uint32_t pid, const struct proc_map *m)
{
	int err = procs_mmap(sb->procs, pid, m);

	/* what is not traced is neither kept nor opened */
	if (!err && sb->on_map && procs_wants(sb->procs, pid))
		sb->on_map(sb->on_map_ctx, pid, procs_find(sb->procs, pid, m->start));
	return err;
}

void sideband_on_map(struct sideband *sb, sideband_map_fn fn, void *ctx)
{
	sb->on_map = fn;
	sb->on_map_ctx = ctx;
}

static int apply(struct sideband *sb, const struct perf_event_header *h)
{
	struct proc_map m = { .exec = true };
	const struct rec_mmap *mm;
	const struct rec_mmap2 *m2;
	const struct rec_comm *c;
	const struct rec_task *t;
	const char *s;

	switch (h->type) {
	case PERF_RECORD_MMAP:
		mm = (const void *)h;
		/* mmap_data is off, but the flag says it all anyway */
		if (h->misc & PERF_RECORD_MISC_MMAP_DATA ||
		    h->size < sizeof(*mm) + SAMPLE_ID_SIZE)
			return 0;
		s = record_str(h, mm->filename);
		if (!s)
			return 0;
		m.start = mm->addr;
		m.end = mm->addr + mm->len;
		m.pgoff = mm->pgoff;
		m.path = s;
		return mapped(sb, mm->pid, &m);
	case PERF_RECORD_MMAP2:
		m2 = (const void *)h;
		if (h->size < sizeof(*m2) + SAMPLE_ID_SIZE ||
		    !(m2->prot & PROT_EXEC))
			return 0;
		s = record_str(h, m2->filename);
		if (!s)
			return 0;
		m.start = m2->addr;
		m.end = m2->addr + m2->len;
		m.pgoff = m2->pgoff;
		if (!(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)) {
			m.maj = m2->maj;
			m.min = m2->min;
			m.ino = m2->ino;
			m.igen = (uint32_t)m2->ino_generation;
			m.igen_known = true;
		}
		m.path = s;
		return mapped(sb, m2->pid, &m);
	case PERF_RECORD_COMM:
		c = (const void *)h;
		if (h->size < sizeof(*c) + SAMPLE_ID_SIZE)
			return 0;
		s = record_str(h, c->comm);
		if (!s)
			return 0;
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			return procs_exec(sb->procs, c->pid, s);
		/* a thread's rename is not the process's name */
		return c->pid == c->tid ?
		       procs_set_comm(sb->procs, c->pid, s) : 0;
	case PERF_RECORD_FORK:
		t = (const void *)h;
		/* ppid is the forking tgid: equal for a new thread */
		if (h->size >= sizeof(*t) && t->pid != t->ppid)
			return procs_fork(sb->procs, t->pid, t->ppid);
		return 0;
	case PERF_RECORD_EXIT:
		t = (const void *)h;
		if (h->size >= sizeof(*t) && t->pid == t->tid)
			procs_exit(sb->procs, t->pid);
		return 0;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(struct rec_lost))
			sb->lost += ((const struct rec_lost *)h)->lost;
		return 0;
	default:
		return 0;
	}
}

/* One pass over every ring: how many records it copied, or -errno. */
static long copy_rings(struct sideband *sb)
{
	size_t before = sb->nr_recs;
	int i, err = 0;

	for (i = 0; !err && i < sb->nr; i++) {
		err = copy_ring(sb, &sb->rings[i]);
#ifdef SIDEBAND_TEST_HOOK
		sideband_test_hook(i);
#endif
	}
	return err ? err : (long)(sb->nr_recs - before);
}

/* Keeps recs[from..] for the next drain, in a buffer of their own. */
static int hold(struct sideband *sb, size_t from)
{
	size_t i, len = 0, n = sb->nr_recs - from;
	char *buf = NULL;

	for (i = from; i < sb->nr_recs; i++)
		len += (((const struct perf_event_header *)
			 (sb->scratch + sb->recs[i].off))->size + 7) & ~7ul;
	if (len && !(buf = malloc(len)))
		return -ENOMEM;
	len = 0;
	for (i = 0; i < n; i++) {
		struct rec *r = &sb->recs[from + i];
		const struct perf_event_header *h =
			(const void *)(sb->scratch + r->off);
		size_t size = (h->size + 7) & ~7ul;

		memcpy(buf + len, h, size);
		sb->recs[i] = (struct rec){ .time = r->time, .off = len, .seq = i };
		len += size;
	}
	free(sb->scratch);
	sb->scratch = buf;
	sb->scratch_len = sb->scratch_cap = len;
	sb->nr_recs = n;
	if (!n) {
		free(sb->recs);
		sb->recs = NULL;
		sb->recs_cap = 0;
	}
	return 0;
}

/*
 * A record not yet in its ring when a pass copied that ring is later than
 * every record copied by an earlier pass (it was written after them), but
 * not than those this pass copied from other rings: a fork on one CPU can
 * come a drain after its parent's exec on another, and its child would
 * take the new image's mappings for its own.  So records newer than the
 * last pass but one wait, as perf's rounds do, unless a pass finds
 * nothing new: then all that was written is in hand.
 */
int sideband_drain(struct sideband *sb)
{
	uint64_t bound = sb->seen;
	long got = 0;
	size_t i;
	int pass, err = 0;

	procs_next_round(sb->procs);
	for (pass = 0; pass < MAX_PASSES; pass++) {
		bound = sb->seen;
		got = copy_rings(sb);
		if (got <= 0)
			break;
	}
	if (got < 0)
		err = (int)got;
	else if (!got)
		bound = sb->seen;
	/* a fork on one CPU must land before the child's exec on another */
	qsort(sb->recs, sb->nr_recs, sizeof(*sb->recs), cmp_rec);
	for (i = 0; !err && i < sb->nr_recs && sb->recs[i].time <= bound; i++)
		err = apply(sb, (const void *)(sb->scratch + sb->recs[i].off));
	/* a burst's copy is not kept for the rest of the run */
	if (!err && (i < sb->nr_recs || sb->scratch_cap > SCRATCH_KEEP))
		err = hold(sb, i);
	else
		sb->scratch_len = sb->nr_recs = 0;
	/* out of memory: what was not applied is lost, not applied twice */
	if (err)
		sb->scratch_len = sb->nr_recs = 0;
	return err ? err : (int)i;
}

bool sideband_holding(const struct sideband *sb)
{
	return sb->nr_recs > 0;
}

static void *drainer(void *arg)
{
	struct sideband *sb = arg;
	struct pollfd *pfd = calloc(sb->nr + 1, sizeof(*pfd));
	int i;

	if (!pfd)
		return NULL;
	pfd[0] = (struct pollfd){ .fd = sb->stop[0], .events = POLLIN };
	for (i = 0; i < sb->nr; i++)
		pfd[i + 1] = (struct pollfd){ .fd = sb->fds[i], .events = POLLIN };
	while (!pfd[0].revents) {
		/* records held for order are applied soon even if none follow */
		int timeout = sideband_holding(sb) ? SIDEBAND_HOLD_MS : -1;

		if (poll(pfd, sb->nr + 1, timeout) < 0 && errno != EINTR)
			break;
		if (sideband_drain(sb) < 0)
			break;
	}
	free(pfd);
	return NULL;
}

int sideband_background(struct sideband *sb)
{
	int err;

	if (sb->threaded)
		return 0;
	if (pipe2(sb->stop, O_CLOEXEC))
		return -errno;
	err = pthread_create(&sb->thread, NULL, drainer, sb);
	if (err) {
		close(sb->stop[0]);
		close(sb->stop[1]);
		sb->stop[0] = sb->stop[1] = -1;
		return -err;
	}
	sb->threaded = true;
	return 0;
}

void sideband_background_stop(struct sideband *sb)
{
	if (!sb->threaded)
		return;
	close(sb->stop[1]);
	pthread_join(sb->thread, NULL);
	close(sb->stop[0]);
	sb->stop[0] = sb->stop[1] = -1;
	sb->threaded = false;
}
