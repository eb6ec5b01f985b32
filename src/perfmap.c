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
#include "vec.h"

struct jit_sym {
	uint64_t start, end;
	char *name;
};

struct perfmap {
	uint32_t pid;
	off_t size;		/* of the file when read: JITs append */
	bool refused;		/* said once: not again when it grows */
	struct jit_sym *v;
	size_t n;
};

struct perfmaps {
	struct perfmap *v;
	size_t n;
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
	for (size_t i = 0; i < pm->n; i++)
		free(pm->v[i].name);
	free(pm->v);
	pm->v = NULL;
	pm->n = 0;
}

/*
 * As perf does, only a map its process's owner or root wrote is believed:
 * anyone can create /tmp/perf-PID.map for someone else's PID.
 */
static void load(struct perfmap *pm, const char *path, off_t size,
		 uint32_t uid, struct untrusted_skip *sk)
{
	unsigned long long start, len;
	char line[4096], name[4096];
	size_t cap = 0;
	struct stat st;
	FILE *f = NULL;
	int fd;

	clear(pm);
	pm->size = size;
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
	if (fd >= 0 && !(f = fdopen(fd, "r")))
		close(fd);
	while (f && fgets(line, sizeof(line), f)) {
		struct jit_sym *s;

		if (sscanf(line, "%llx %llx %4095[^\n]", &start, &len, name) != 3)
			continue;
		if (VEC_GROW(pm->v, pm->n, cap, 256))
			break;
		s = &pm->v[pm->n];
		s->start = start;
		s->end = start + len;
		s->name = strdup(name);
		if (s->name)
			pm->n++;
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
	if (!lstat(path, &st) && st.st_size != pm->size)
		load(pm, path, st.st_size, uid, sk);
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
	return pm->v[lo - 1].name;
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
