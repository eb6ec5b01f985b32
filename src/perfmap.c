// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "perfmap.h"
#include "untrusted.h"

struct jit_sym {
	uint64_t start, end;
	size_t name;		/* its offset in names */
};

struct perfmap {
	uint32_t pid;
	off_t size;		/* of the file when read: JITs append */
	bool refused;		/* said once: not again when it grows */
	bool cut;		/* read in part: the rest did not fit */
	bool cut_counted;
	struct jit_sym *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	/* what v and names are charged to: a map users other than root can write */
	struct untrusted_budget *budget, own;
	uint64_t held;
};

struct perfmaps {
	struct perfmap *v;
	size_t n;
	size_t cut;		/* maps read in part, each counted once */
};

int perfmaps_new(struct perfmaps **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static int by_start(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void clear(struct perfmap *pm)
{
	free(pm->v);
	free(pm->names);
	pm->v = NULL;
	pm->names = NULL;
	pm->n = pm->cap = pm->names_len = pm->names_cap = 0;
	if (pm->budget)
		untrusted_release(pm->budget, pm->held);
	pm->held = 0;
	pm->budget = NULL;
}

/*
 * Room for need elements of size in *v of *cap, doubling, charged to the
 * budget of pm: false when they do not fit.
 */
static bool grow(struct perfmap *pm, void *v, size_t *cap, size_t need,
		 size_t size)
{
	size_t want = *cap ? *cap : 4096 / size, more;
	void *p;

	if (need <= *cap)
		return true;
	while (want < need)
		want *= 2;
	more = (want - *cap) * size;
	if (pm->budget && !untrusted_charge(pm->budget, more))
		return false;
	memcpy(&p, v, sizeof(p));
	p = realloc(p, want * size);
	if (!p) {
		if (pm->budget)
			untrusted_release(pm->budget, more);
		return false;
	}
	memcpy(v, &p, sizeof(p));
	pm->held += pm->budget ? more : 0;
	*cap = want;
	return true;
}

/* One entry; false when it did not fit. */
static bool add(struct perfmap *pm, uint64_t start, uint64_t len,
		const char *name)
{
	size_t k = strlen(name) + 1;

	if (!grow(pm, &pm->v, &pm->cap, pm->n + 1, sizeof(*pm->v)) ||
	    !grow(pm, &pm->names, &pm->names_cap, pm->names_len + k, 1))
		return false;
	memcpy(pm->names + pm->names_len, name, k);
	pm->v[pm->n++] = (struct jit_sym){ start, start + len, pm->names_len };
	pm->names_len += k;
	return true;
}

/*
 * As perf does, only a map its process's owner or root wrote is believed:
 * anyone can create /tmp/perf-PID.map for someone else's PID.  One that
 * users other than root can write is read as far as the budget of sk
 * goes (its own UNTRUSTED_BUDGET_DEFAULT without one).
 */
static void load(struct perfmap *pm, const char *path, off_t size,
		 uint32_t uid, struct untrusted_skip *sk)
{
	unsigned long long start, len;
	char line[4096], name[4096];
	struct stat st;
	FILE *f = NULL;
	int fd;

	clear(pm);
	pm->size = size;
	pm->cut = false;
	fd = untrusted_open(path, UNTRUSTED_NOFOLLOW, &st, pm->refused ? NULL : sk);
	if (fd >= 0 && st.st_uid && st.st_uid != uid) {
		if (!pm->refused)
			untrusted_skip_set(sk, "owned by neither its process's user "
					   "nor root", "%s", path);
		close(fd);
		fd = -EPERM;
	}
	if (fd == -EINVAL || fd == -EFBIG || fd == -EPERM)
		pm->refused = true;
	if (fd >= 0 && !untrusted_only_root(fd, &st)) {
		pm->own.limit = UNTRUSTED_BUDGET_DEFAULT;
		pm->budget = sk && sk->budget ? sk->budget : &pm->own;
	}
	if (fd >= 0 && !(f = fdopen(fd, "r")))
		close(fd);
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %llx %4095[^\n]", &start, &len, name) != 3)
			continue;
		if (!add(pm, start, len, name)) {
			pm->cut = true;
			break;
		}
	}
	if (f)
		fclose(f);
	/* a JIT may write a range again when it recompiles: the last wins */
	if (pm->n)
		qsort(pm->v, pm->n, sizeof(*pm->v), by_start);
}

static struct perfmap *get(struct perfmaps *m, uint32_t pid)
{
	struct perfmap *v;

	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].pid == pid)
			return &m->v[i];
	v = realloc(m->v, (m->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	m->v = v;
	v = &m->v[m->n++];
	memset(v, 0, sizeof(*v));
	v->pid = pid;
	v->size = -1;
	return v;
}

const char *perfmaps_find(struct perfmaps *m, uint32_t pid, uint32_t uid,
			   uint64_t addr, uint64_t *start,
			   struct untrusted_skip *sk)
{
	struct perfmap *pm = get(m, pid);
	char path[64];
	struct stat st;
	size_t lo = 0, hi;

	if (!pm)
		return NULL;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	/* lstat: what the map is, is for untrusted_open to say */
	if (!lstat(path, &st) && st.st_size != pm->size) {
		load(pm, path, st.st_size, uid, sk);
		if (pm->cut && !pm->cut_counted) {
			pm->cut_counted = true;
			m->cut++;
		}
	}
	hi = pm->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pm->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= pm->v[lo - 1].end)
		return NULL;
	*start = pm->v[lo - 1].start;
	return pm->names + pm->v[lo - 1].name;
}

bool perfmaps_cut(const struct perfmaps *m, uint32_t pid)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].pid == pid)
			return m->v[i].cut;
	return false;
}

size_t perfmaps_nr_cut(const struct perfmaps *m)
{
	return m->cut;
}

void perfmaps_free(struct perfmaps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		clear(&m->v[i]);
	free(m->v);
	free(m);
}
