// SPDX-License-Identifier: MIT
#include "procs.h"
#include "htab.h"
#include "vec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/fs.h>
#include "untrusted.h"

struct proc {
	uint32_t pid;
	uint32_t gen;
	bool dead;
	/* every mapping since its image began is known (exec, fork, /proc) */
	bool complete;
	bool tried;	/* /proc was read for it once already */
	bool traced;	/* its news is kept whatever the scope */
	uint64_t dead_round;	/* when seen exiting */
	bool going;	/* procs_evict's verdict, between its two passes */
	uint32_t uid;	/* its owner, when last read from /proc; 0: unknown */
	char comm[PROCS_COMM_LEN];
	struct proc_map *maps;	/* in arrival order, so newest last */
	size_t nr, cap;
};

struct procs {
	struct htab procs;	/* of struct proc *, by pid */
	/* every process maps the same few paths: keep one copy of each */
	struct htab paths;	/* of char * */
	enum procs_scope scope;
	uint64_t round;
	size_t nr_dead;
};

static size_t hash_pid(uint32_t pid)
{
	return pid * 2654435761u;
}

static size_t proc_hash(const void *slot)
{
	return hash_pid((*(struct proc *const *)slot)->pid);
}

static bool proc_is(const void *slot, const void *pid)
{
	return (*(struct proc *const *)slot)->pid == *(const uint32_t *)pid;
}

static size_t path_hash(const void *slot)
{
	return htab_hash_str(*(char *const *)slot);
}

static bool path_is(const void *slot, const void *s)
{
	return !strcmp(*(char *const *)slot, s);
}

static const struct htab_ops proc_ops = {
	.size = sizeof(struct proc *), .min = 64, .hash = proc_hash,
};

static const struct htab_ops path_ops = {
	.size = sizeof(char *), .min = 64, .hash = path_hash,
};

void procs_map_file(uint32_t pid, const struct proc_map *m, char *buf,
		    size_t len)
{
	snprintf(buf, len, "/proc/%u/map_files/%llx-%llx", pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
}

int procs_file_igen(const char *path, uint64_t ino, uint32_t *igen)
{
	struct untrusted_skip sk = {};
	struct stat st;
	int fd, v = 0, err = 0;

	/* a map_files link is followed to the mapped file, checked regular */
	fd = untrusted_open(path, 0, &st, &sk);
	if (fd < 0)
		return fd;
	if (ino && st.st_ino != ino)
		err = -ESTALE;
	else if (ioctl(fd, FS_IOC_GETVERSION, &v))
		err = -errno;
	close(fd);
	*igen = (uint32_t)v;
	return err;
}

int procs_read_mem(uint32_t pid, uint64_t start, size_t len, uint8_t **out)
{
	char path[64];
	uint8_t *mem;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	mem = malloc(len);
	n = mem ? pread(fd, mem, len, (off_t)start) : -1;
	close(fd);
	if (!mem)
		return -ENOMEM;
	if (n != (ssize_t)len) {
		free(mem);
		return -EIO;
	}
	*out = mem;
	return 0;
}

int procs_own_vdso(uint8_t **out, size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	struct proc_map m;
	size_t n = 0;
	int err = -ENOENT;

	*out = NULL;
	while (f && err == -ENOENT && getline(&line, &n, f) > 0) {
		if (!procs_parse_maps_line(line, &m) || strcmp(m.path, "[vdso]") ||
		    m.end - m.start > PROCS_VDSO_MAX)
			continue;
		*out = malloc(m.end - m.start);
		err = *out ? 0 : -ENOMEM;
		if (*out) {
			*len = m.end - m.start;
			memcpy(*out, (const void *)m.start, *len);
		}
	}
	free(line);
	if (f)
		fclose(f);
	return err;
}

bool procs_map_deleted(const struct proc_map *m)
{
	static const char mark[] = " (deleted)";
	size_t n = strlen(m->path), k = sizeof(mark) - 1;

	return n > k && !strcmp(m->path + n - k, mark);
}

uint32_t procs_tgid_of(uint32_t tid)
{
	char path[64], line[128];
	uint32_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %u", &tgid) == 1)
			break;
	if (f)
		fclose(f);
	return tgid;
}

int procs_new(struct procs **out)
{
	struct procs *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p)
		return -ENOMEM;
	if (htab_init(&p->procs, &proc_ops, proc_ops.min) ||
	    htab_init(&p->paths, &path_ops, path_ops.min)) {
		procs_free(p);
		return -ENOMEM;
	}
	*out = p;
	return 0;
}

void procs_free(struct procs *p)
{
	struct proc **procs;
	char **paths;
	size_t i;

	if (!p)
		return;
	procs = p->procs.slots;
	for (i = 0; i < p->procs.cap; i++) {
		if (procs[i]) {
			free(procs[i]->maps);
			free(procs[i]);
		}
	}
	paths = p->paths.slots;
	for (i = 0; i < p->paths.cap; i++)
		free(paths[i]);
	free(procs);
	free(paths);
	free(p);
}

static struct proc **proc_slot(const struct procs *p, uint32_t pid)
{
	return htab_find(&p->procs, &proc_ops, hash_pid(pid), proc_is, &pid);
}

static struct proc *proc_get(const struct procs *p, uint32_t pid)
{
	return *proc_slot(p, pid);
}

static struct proc *proc_get_or_add(struct procs *p, uint32_t pid)
{
	struct proc **slot = proc_slot(p, pid);

	if (*slot)
		return *slot;
	if (htab_reserve(&p->procs, &proc_ops))
		return NULL;
	slot = proc_slot(p, pid);
	*slot = calloc(1, sizeof(**slot));
	if (!*slot)
		return NULL;
	(*slot)->pid = pid;
	p->procs.nr++;
	return *slot;
}

static void set_alive(struct procs *p, struct proc *pr)
{
	if (pr->dead)
		p->nr_dead--;
	pr->dead = false;
}

void procs_set_scope(struct procs *p, enum procs_scope scope)
{
	p->scope = scope;
}

int procs_trace(struct procs *p, uint32_t pid)
{
	struct proc *pr = proc_get_or_add(p, pid);

	if (!pr)
		return -ENOMEM;
	pr->traced = true;
	return 0;
}

bool procs_wants(const struct procs *p, uint32_t pid)
{
	const struct proc *pr;

	if (p->scope == PROCS_ALL)
		return true;
	pr = proc_get(p, pid);
	return pr && pr->traced;
}

static char **path_slot(const struct procs *p, const char *s)
{
	return htab_find(&p->paths, &path_ops, htab_hash_str(s), path_is, s);
}

static const char *intern(struct procs *p, const char *s)
{
	char **slot = path_slot(p, s);

	if (*slot)
		return *slot;
	if (htab_reserve(&p->paths, &path_ops))
		return NULL;
	slot = path_slot(p, s);
	*slot = strdup(s);
	if (!*slot)
		return NULL;
	p->paths.nr++;
	return *slot;
}

static int add_map(struct procs *p, struct proc *pr, const struct proc_map *m)
{
	struct proc_map *dst;

	if (VEC_GROW(pr->maps, pr->nr, pr->cap, 32))
		return -ENOMEM;
	dst = &pr->maps[pr->nr];
	*dst = *m;
	dst->gen = pr->gen;
	dst->path = intern(p, m->path ? m->path : "");
	if (!dst->path)
		return -ENOMEM;
	pr->nr++;
	return 0;
}

int procs_mmap(struct procs *p, uint32_t pid, const struct proc_map *m)
{
	struct proc *pr;

	if (!procs_wants(p, pid))
		return 0;
	pr = proc_get_or_add(p, pid);

	return pr ? add_map(p, pr, m) : -ENOMEM;
}

static void set_comm(struct proc *pr, const char *comm)
{
	size_t n = strnlen(comm, sizeof(pr->comm) - 1);

	memcpy(pr->comm, comm, n);
	pr->comm[n] = '\0';
}

/* /proc/PID's owner: the effective uid, as files it creates get. */
static void load_uid(struct proc *pr, uint32_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u", pid);
	if (!stat(path, &st))
		pr->uid = st.st_uid;
}

int procs_exec(struct procs *p, uint32_t pid, const char *comm)
{
	struct proc *pr;

	if (!procs_wants(p, pid))
		return 0;
	pr = proc_get_or_add(p, pid);
	if (!pr)
		return -ENOMEM;
	/* a setuid program, or one that dropped privileges and then ran it */
	load_uid(pr, pid);
	pr->gen++;
	set_alive(p, pr);
	pr->complete = true;
	set_comm(pr, comm);
	return 0;
}

int procs_set_comm(struct procs *p, uint32_t pid, const char *comm)
{
	struct proc *pr;

	if (!procs_wants(p, pid))
		return 0;
	pr = proc_get_or_add(p, pid);

	if (!pr)
		return -ENOMEM;
	set_comm(pr, comm);
	return 0;
}

int procs_fork(struct procs *p, uint32_t child, uint32_t parent)
{
	struct proc *c, *par;
	size_t i;
	int err;

	if (p->scope != PROCS_ALL) {
		par = proc_get(p, parent);
		c = proc_get(p, child);
		/*
		 * traced before its fork was heard of: a COMMAND we started
		 * (not one read from /proc with no mappings: a child that had
		 * ended by then, whose mappings are its parent's)
		 */
		if (c && c->traced && !c->dead && !c->gen && !c->nr &&
		    !c->complete)
			return 0;
		if (p->scope == PROCS_ONE || !par || !par->traced) {
			/* a stranger took a traced pid: keep the old, hear no more */
			if (c)
				c->traced = false;
			return 0;
		}
	}
	c = proc_get_or_add(p, child);
	if (!c)
		return -ENOMEM;
	c->traced = p->scope != PROCS_ALL;
	/* may add to the table: look the parent up after */
	par = proc_get(p, parent);
	/* a reused pid: the old process's mappings stay, but lose */
	if (c->nr || c->comm[0])
		c->gen++;
	set_alive(p, c);
	if (!par || par == c)
		return 0;
	c->complete = par->complete;
	c->uid = par->uid;
	memcpy(c->comm, par->comm, sizeof(c->comm));
	for (i = 0; i < par->nr; i++) {
		if (par->maps[i].gen != par->gen)
			continue;
		err = add_map(p, c, &par->maps[i]);
		if (err)
			return err;
	}
	return 0;
}

void procs_exit(struct procs *p, uint32_t pid)
{
	struct proc *pr = proc_get(p, pid);

	if (pr && !pr->dead) {
		pr->dead = true;
		pr->dead_round = p->round;
		p->nr_dead++;
	}
}

void procs_next_round(struct procs *p)
{
	p->round++;
}

size_t procs_nr_dead(const struct procs *p)
{
	return p->nr_dead;
}

long procs_evict(struct procs *p, procs_keep_fn keep, void *ctx)
{
	struct proc **procs = p->procs.slots;
	size_t i, live = 0, cap = 64, gone = 0;
	struct htab tab;

	for (i = 0; i < p->procs.cap; i++) {
		struct proc *pr = procs[i];

		if (!pr)
			continue;
		pr->going = pr->dead && pr->dead_round < p->round &&
			    !(keep && keep(ctx, pr->pid));
		if (pr->going)
			gone++;
		else
			live++;
	}
	if (!gone)
		return 0;
	/* a new table: the old one may have grown for processes now gone */
	while (2 * (live + 1) > cap)
		cap *= 2;
	if (htab_init(&tab, &proc_ops, cap))
		return -ENOMEM;
	for (i = 0; i < p->procs.cap; i++) {
		struct proc *pr = procs[i];

		if (!pr)
			continue;
		if (pr->going) {
			free(pr->maps);
			free(pr);
			p->nr_dead--;
			continue;
		}
		htab_put(&tab, &proc_ops, &procs[i]);
	}
	free(procs);
	p->procs = tab;
	return gone;
}

const struct proc_map *procs_find(const struct procs *p, uint32_t pid,
				   uint64_t addr)
{
	const struct proc *pr = proc_get(p, pid);
	size_t i;

	if (!pr)
		return NULL;
	for (i = pr->nr; i-- > 0;)
		if (addr >= pr->maps[i].start && addr < pr->maps[i].end)
			return &pr->maps[i];
	return NULL;
}

bool procs_image_seen(const struct procs *p, uint32_t pid)
{
	const struct proc *pr = proc_get(p, pid);
	size_t i;

	if (!pr || !pr->gen)
		return false;
	for (i = 0; i < pr->nr; i++)
		if (pr->maps[i].gen == pr->gen)
			return true;
	return false;
}

uint32_t procs_uid(const struct procs *p, uint32_t pid)
{
	const struct proc *pr = proc_get(p, pid);

	return pr ? pr->uid : 0;
}

const char *procs_comm(const struct procs *p, uint32_t pid)
{
	const struct proc *pr = proc_get(p, pid);

	return pr ? pr->comm : NULL;
}

bool procs_alive(const struct procs *p, uint32_t pid)
{
	const struct proc *pr = proc_get(p, pid);

	return pr && !pr->dead;
}

bool procs_parse_maps_line(char *line, struct proc_map *m)
{
	char perms[8];
	int n = 0;
	char *path, *nl;

	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
		   &m->start, &m->end, perms, &m->pgoff, &m->maj, &m->min,
		   &m->ino, &n) < 7 || !n)
		return false;
	path = line + n;
	nl = strchr(path, '\n');
	if (nl)
		*nl = '\0';
	m->exec = perms[2] == 'x';
	m->prot = (perms[0] == 'r') | (perms[1] == 'w') << 1 | m->exec << 2 |
		  (perms[3] == 's') << 3;
	m->path = path;
	return *path;
}

int procs_writable_at(uint32_t pid, uint64_t ino, uint64_t off, uint64_t *addr)
{
	char path[64], line[4352];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		struct proc_map m;

		if (!procs_parse_maps_line(line, &m) || m.ino != ino ||
		    !(m.prot & 2) || off < m.pgoff || off - m.pgoff >= m.end - m.start)
			continue;
		*addr = m.start + (off - m.pgoff);
		err = 0;
	}
	fclose(f);
	return err;
}

static void load_comm(struct proc *pr, uint32_t pid)
{
	char path[64], comm[PROCS_COMM_LEN + 2];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(comm, sizeof(comm), f)) {
		comm[strcspn(comm, "\n")] = '\0';
		set_comm(pr, comm);
	}
	fclose(f);
}

int procs_load(struct procs *p, uint32_t pid)
{
	char path[64], *line = NULL;
	size_t len = 0;
	struct proc *pr;
	struct proc_map m;
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	pr = proc_get_or_add(p, pid);
	if (!pr) {
		fclose(f);
		return -ENOMEM;
	}
	while (!err && getline(&line, &len, f) > 0)
		if (procs_parse_maps_line(line, &m))
			err = add_map(p, pr, &m);
	free(line);
	fclose(f);
	load_comm(pr, pid);
	load_uid(pr, pid);
	/* asked for by name (-p) or by a stack: its news matters */
	pr->traced = true;
	set_alive(p, pr);
	pr->complete = !err;
	return err;
}

int procs_ensure(struct procs *p, uint32_t pid)
{
	struct proc *pr = proc_get(p, pid);

	if (pr && (pr->complete || pr->tried))
		return 0;
	pr = proc_get_or_add(p, pid);
	if (!pr)
		return -ENOMEM;
	pr->tried = true;
	return procs_load(p, pid);
}
