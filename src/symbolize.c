// SPDX-License-Identifier: MIT
#include "symbolize.h"
#include "vec.h"
#include "demangle.h"
#include "perfmap.h"
#include "elf_file.h"
#include "htab.h"
#include "ksyms.h"
#include "procs.h"
#include "untrusted.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

struct file_slot {
	bool used;
	uint32_t maj, min;
	uint64_t ino;		/* 0: keyed by path */
	/* the inode's generation: a later file under the same number differs */
	uint32_t igen;
	bool igen_known;
	const char *path;	/* interned by procs */
	/* NULL when it could not be opened: not tried again */
	struct elf_file *ef;
	bool cut;		/* it, or its debug symbols, did not fit */
	/*
	 * Reachable only through its process, which had ended when it was
	 * first asked for: deleted or replaced at its path since, or a memfd
	 */
	bool gone;
};

static size_t hash_key(const struct proc_map *m)
{
	if (m->ino)
		return (m->ino * 0x9e3779b97f4a7c15ull) ^
		       ((uint64_t)m->maj << 20 | m->min);
	return htab_hash_str(m->path);
}

static bool same_file(const void *slot, const void *key)
{
	const struct file_slot *f = slot;
	const struct proc_map *m = key;

	if (m->ino)
		return f->ino == m->ino && f->maj == m->maj &&
		       f->min == m->min && (!f->igen_known || !m->igen_known ||
					    f->igen == m->igen);
	return !f->ino && !strcmp(f->path, m->path);
}

static bool file_used(const void *slot)
{
	return ((const struct file_slot *)slot)->used;
}

static size_t file_hash(const void *slot)
{
	const struct file_slot *f = slot;
	struct proc_map key = { .maj = f->maj, .min = f->min, .ino = f->ino,
				.path = f->path };

	return hash_key(&key);
}

static const struct htab_ops file_ops = {
	.size = sizeof(struct file_slot), .min = 64,
	.hash = file_hash, .used = file_used,
};

struct symbolizer {
	struct procs *procs;
	/* kallsyms being read meanwhile (symbolizer_preload_kernel) */
	pthread_t loader;
	bool loading;
	struct demangler *dm;		/* NULL: names as mangled */
	struct perfmaps *jit;
	symbolizer_skip_fn on_skip;
	void *on_skip_ctx;
	struct ksyms *ksyms;
	int ksyms_err;		/* the first load's failure, repeated */
	struct htab files;	/* of struct file_slot */
	/* for files and perf maps that users other than root can write */
	struct untrusted_budget budget;
	struct debuginfod *remote;	/* NULL: debug files from here only */
	size_t files_cut;
	uint64_t frames_cut;	/* named [unknown] for want of budget */
	uint64_t frames_gone;	/* [unknown]: their file_slot's gone */
	/* the kernel's vDSO, as this process has it, and its symbols */
	uint8_t *vdso;
	size_t vdso_len;
	struct elf_file *vdso_ef;
	bool vdso_read;
	/*
	 * processes whose vDSO was the kernel's when it was mapped, and
	 * those whose was not, sorted
	 */
	struct tgid_set { uint32_t *v; size_t n, cap; } vdso_ok, vdso_bad;
	uint64_t frames_vdso_unchecked;	/* see symbolizer_cut */
};

int symbolizer_new(struct symbolizer **out, struct procs *procs)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->procs = procs;
	s->budget.limit = UNTRUSTED_BUDGET_DEFAULT;
	if (htab_init(&s->files, &file_ops, file_ops.min) ||
	    demangler_new(&s->dm) || perfmaps_new(&s->jit)) {
		symbolizer_free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

static void *load_ksyms(void *arg)
{
	struct symbolizer *s = arg;

	s->ksyms_err = ksyms_new(&s->ksyms, NULL);
	return NULL;
}

/*
 * The kernel takes ~60 ms to print its symbol table: read it while the
 * tracing runs, not after it.
 */
void symbolizer_preload_kernel(struct symbolizer *s)
{
	if (!s->ksyms && !s->ksyms_err && !s->loading &&
	    !pthread_create(&s->loader, NULL, load_ksyms, s))
		s->loading = true;
}

static void wait_loader(struct symbolizer *s)
{
	if (s->loading) {
		pthread_join(s->loader, NULL);
		s->loading = false;
	}
}

void symbolizer_free(struct symbolizer *s)
{
	struct file_slot *files;

	if (!s)
		return;
	wait_loader(s);
	files = s->files.slots;
	for (size_t i = 0; i < s->files.cap; i++)
		elf_file_free(files[i].ef);
	free(files);
	free(s->vdso);
	free(s->vdso_ok.v);
	free(s->vdso_bad.v);
	elf_file_free(s->vdso_ef);
	ksyms_free(s->ksyms);
	demangler_free(s->dm);
	perfmaps_free(s->jit);
	free(s);
}

void symbolizer_set_demangle(struct symbolizer *s, bool on)
{
	if (!on) {
		demangler_free(s->dm);
		s->dm = NULL;
	} else if (!s->dm) {
		demangler_new(&s->dm);
	}
}

void symbolizer_on_skip(struct symbolizer *s, symbolizer_skip_fn fn,
			 void *ctx)
{
	s->on_skip = fn;
	s->on_skip_ctx = ctx;
}

static void skipped(struct symbolizer *s, const struct untrusted_skip *sk)
{
	if (sk->why && s->on_skip)
		s->on_skip(s->on_skip_ctx, sk->what, sk->why);
}

void symbolizer_set_debuginfod(struct symbolizer *s, struct debuginfod *d)
{
	s->remote = d;
}

void symbolizer_set_budget(struct symbolizer *s, uint64_t bytes)
{
	s->budget.limit = bytes;
}

void symbolizer_cut(const struct symbolizer *s, struct symbolizer_cut *c)
{
	c->limit = s->budget.limit;
	c->files = s->files_cut;
	c->perfmaps = perfmaps_nr_cut(s->jit);
	c->frames = s->frames_cut;
	c->gone = s->frames_gone;
	c->vdso_unchecked = s->frames_vdso_unchecked;
}

/*
 * JIT code lives in anonymous memory; its runtime may have said what it
 * is.  anon: addr is in no file, so a map read in part may be why.
 */
static int jit_name(struct symbolizer *s, uint32_t tgid, uint64_t addr,
		    uint64_t look, bool anon, struct sym_result *r)
{
	struct untrusted_skip sk = { .budget = &s->budget };
	uint64_t start;
	const char *name = perfmaps_find(s->jit, tgid,
					  s->procs ? procs_uid(s->procs, tgid) : 0,
					  look, &start, &sk);

	skipped(s, &sk);
	if (!name && anon && perfmaps_cut(s->jit, tgid))
		s->frames_cut++;
	if (!name)
		return -ENOENT;
	r->name = name;
	r->offset = addr - start;
	return 0;
}

int symbolizer_kernel_symbols(struct symbolizer *s, struct ksyms **out)
{
	wait_loader(s);
	if (!s->ksyms && !s->ksyms_err)
		s->ksyms_err = ksyms_new(&s->ksyms, NULL);
	*out = s->ksyms;
	return s->ksyms_err;
}

int symbolizer_kernel(struct symbolizer *s, uint64_t addr, bool is_return,
		       struct sym_result *r)
{
	const struct ksym *k;
	struct ksyms *ks;
	int err;

	memset(r, 0, sizeof(*r));
	err = symbolizer_kernel_symbols(s, &ks);
	if (err)
		return err;
	k = ksyms_find(ks, is_return ? addr - 1 : addr);
	if (!k)
		return -ENOENT;
	r->name = k->name;
	r->offset = addr - k->addr;
	r->module = k->module;
	return 0;
}

static struct file_slot *file_slot(struct symbolizer *s,
				   const struct proc_map *m)
{
	return htab_find(&s->files, &file_ops, hash_key(m), same_file, m);
}

/*
 * path's ELF if it is f's file.  A mapping's file may since have been
 * replaced at that path: the inode tells, and its generation where known
 * (a number freed and given to a new file is not the file).  The device
 * is not compared: btrfs subvolumes and overlayfs report different ones
 * to stat() and to /proc/PID/maps.
 */
static struct elf_file *open_checked(struct symbolizer *s, const char *path,
				     struct file_slot *f,
				     struct untrusted_skip *sk, bool *cut)
{
	struct elf_file *ef;
	struct stat st;
	uint32_t igen;
	int err;

	if (f->ino && (stat(path, &st) || st.st_ino != f->ino))
		return NULL;
	err = f->ino ? procs_file_igen(path, f->ino, &igen) : -ENOENT;
	if (f->igen_known && !err && igen != f->igen)
		return NULL;
	if (!f->igen_known && !err) {
		f->igen = igen;
		f->igen_known = true;
	}
	err = elf_file_open(&ef, path, s->remote, sk);
	*cut |= err == -EDQUOT || (!err && elf_file_cut(ef));
	return err ? NULL : ef;
}

/* Whether path still reaches f's file, as far as stat tells. */
static bool same_at_path(const struct file_slot *f, const char *path)
{
	struct stat st;

	return !stat(path, &st) && (!f->ino || st.st_ino == f->ino) &&
	       !procs_map_deleted(&(struct proc_map){ .path = path });
}

/* f's file from the first of n paths that is it, counted when it did not fit. */
static void open_slot(struct symbolizer *s, struct file_slot *f,
		      const char *const *paths, int n)
{
	struct untrusted_skip sk = { .budget = &s->budget };

	f->ef = NULL;
	for (int i = 0; i < n && !f->ef; i++) {
		f->cut = false;
		f->ef = open_checked(s, paths[i], f, &sk, &f->cut);
	}
	s->files_cut += f->cut;
	skipped(s, &sk);
}

/*
 * While the process lives, the file it maps itself (deleted or replaced
 * since, or in another mount namespace), then the path in its root; the
 * path in ours after.
 */
static void open_file(struct symbolizer *s, uint32_t tgid,
		      const struct proc_map *m, struct file_slot *f)
{
	char mapped[96], root[4096];
	const char *paths[3];
	bool alive = procs_alive(s->procs, tgid);
	int n = 0;

	if (alive) {
		procs_map_file(tgid, m, mapped, sizeof(mapped));
		paths[n++] = mapped;
		if (snprintf(root, sizeof(root), "/proc/%u/root%s", tgid,
			     m->path) < (int)sizeof(root))
			paths[n++] = root;
	}
	paths[n++] = m->path;
	open_slot(s, f, paths, n);
	/* alive may be a process already past releasing its memory */
	f->gone = !f->ef && !same_at_path(f, m->path);
}

static int get_file(struct symbolizer *s, uint32_t tgid,
		    const struct proc_map *m, struct file_slot **out)
{
	struct file_slot *f = file_slot(s, m);
	int err;

	if (!f->used) {
		err = htab_reserve(&s->files, &file_ops);
		if (err)
			return err;
		f = file_slot(s, m);
		f->used = true;
		f->maj = m->maj;
		f->min = m->min;
		f->ino = m->ino;
		f->igen = m->igen;
		f->igen_known = m->igen_known;
		f->path = m->path;
		open_file(s, tgid, m, f);
		s->files.nr++;
	}
	*out = f;
	return 0;
}

/*
 * A file we opened ourselves (a probe's target), keyed as the kernel will
 * name its mappings: its inode, whatever path a process reaches it by.
 */
int symbolizer_add_file(struct symbolizer *s, const char *path)
{
	struct proc_map key = {};
	struct file_slot *f;
	struct stat st;

	if (stat(path, &st))
		return -errno;
	key.maj = major(st.st_dev);
	key.min = minor(st.st_dev);
	key.ino = st.st_ino;
	if (htab_reserve(&s->files, &file_ops))
		return -ENOMEM;
	f = file_slot(s, &key);
	if (f->used)
		return 0;
	f->used = true;
	f->maj = key.maj;
	f->min = key.min;
	f->ino = key.ino;
	f->path = NULL;		/* keyed by inode: the path is never compared */
	f->ef = NULL;
	open_slot(s, f, &path, 1);
	s->files.nr++;
	return 0;
}

/* Where tgid is, or would go, in the sorted set. */
static size_t tgid_at(const struct tgid_set *set, uint32_t tgid)
{
	size_t lo = 0, hi = set->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->v[mid] < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool tgid_has(const struct tgid_set *set, uint32_t tgid)
{
	size_t i = tgid_at(set, tgid);

	return i < set->n && set->v[i] == tgid;
}

/* tgid in the set (on), or not; out of memory leaves it out. */
static void tgid_put(struct tgid_set *set, uint32_t tgid, bool on)
{
	size_t i = tgid_at(set, tgid);
	bool have = i < set->n && set->v[i] == tgid;

	if (have && !on)
		memmove(&set->v[i], &set->v[i + 1], (--set->n - i) * sizeof(*set->v));
	if (have || !on || VEC_GROW(set->v, set->n, set->cap, 64))
		return;
	memmove(&set->v[i + 1], &set->v[i], (set->n - i) * sizeof(*set->v));
	set->v[i] = tgid;
	set->n++;
}

/*
 * Whether tgid's vDSO, now, is the kernel's: 1 its bytes are ours, 0 they
 * are not, -1 nothing tells (the process has ended, or we have no vDSO).
 */
static int vdso_kernels(struct symbolizer *s, uint32_t tgid,
			const struct proc_map *m)
{
	uint8_t *mem, *copy;
	bool same;

	if (!s->vdso_read) {
		s->vdso_read = true;
		if (!procs_own_vdso(&s->vdso, &s->vdso_len) &&
		    (copy = malloc(s->vdso_len)) != NULL) {
			memcpy(copy, s->vdso, s->vdso_len);
			/* the copy is the elf_file's, even on error */
			if (elf_file_from_memory(&s->vdso_ef, copy, s->vdso_len))
				s->vdso_ef = NULL;
		}
	}
	if (!s->vdso_ef)
		return -1;
	if (m->end - m->start != s->vdso_len)
		return 0;
	if (procs_read_mem(tgid, m->start, s->vdso_len, &mem))
		return -1;
	same = !memcmp(mem, s->vdso, s->vdso_len);
	free(mem);
	return same;
}

/*
 * The vDSO has no file, but a process's is the kernel's own, as this
 * process has it, unless the process rewrote it: compared while it lives,
 * else as it was when mapped (symbolizer_prefetch); named from ours only
 * if equal.  A process that ended before its vDSO could be compared at
 * all (a short one, whose mapping was read after its end) is named from
 * ours too, where the sizes agree, and the frames are counted, as
 * unchecked.
 */
static struct elf_file *vdso_elf(struct symbolizer *s, uint32_t tgid,
				 const struct proc_map *m)
{
	int same;

	if (procs_alive(s->procs, tgid)) {
		same = vdso_kernels(s, tgid, m);
		if (same >= 0)
			return same ? s->vdso_ef : NULL;
	}
	if (tgid_has(&s->vdso_ok, tgid))
		return s->vdso_ef;
	if (tgid_has(&s->vdso_bad, tgid) || !s->vdso_ef ||
	    m->end - m->start != s->vdso_len)
		return NULL;
	s->frames_vdso_unchecked++;
	return s->vdso_ef;
}

/*
 * The vDSO's __vdso_clock_gettime is also clock_gettime, at one address:
 * the name the program called, as gdb gives it.
 */
static const struct elf_sym *vdso_alias(const struct elf_file *ef,
					const struct elf_sym *sym)
{
	const struct elf_sym *plain;

	if (strncmp(sym->name, "__vdso_", 7))
		return sym;
	plain = elf_file_sym_by_name(ef, sym->name + 7);
	return plain && plain->addr == sym->addr ? plain : sym;
}

/* A process mapped its vDSO (at exec): whether it is the kernel's, kept. */
static void vdso_mapped(struct symbolizer *s, uint32_t tgid,
			const struct proc_map *m)
{
	int same = vdso_kernels(s, tgid, m);

	if (same < 0)
		return;
	tgid_put(&s->vdso_ok, tgid, same);
	tgid_put(&s->vdso_bad, tgid, !same);
}

static bool is_file(const char *path);

/*
 * A file this process maps that is not at its path in our mount namespace
 * (a container's, a private mount's), or no longer there (deleted or
 * replaced), can only be opened through /proc/PID while the process
 * lives: open it now.
 */
void symbolizer_prefetch(struct symbolizer *s, uint32_t tgid,
			  const struct proc_map *m)
{
	struct file_slot *f;
	struct stat st;

	if (m && !strcmp(m->path, "[vdso]")) {
		vdso_mapped(s, tgid, m);
		return;
	}
	if (!m || !is_file(m->path) ||
	    (!stat(m->path, &st) && (!m->ino || st.st_ino == m->ino)))
		return;
	get_file(s, tgid, m, &f);
}

/* A file's path, deleted since or not: not [vdso], [heap], //anon. */
static bool is_file(const char *path)
{
	/* "//anon" is how perf names anonymous memory */
	return path[0] == '/' && path[1] != '/';
}

void symbolizer_open_ahead(struct symbolizer *s, uint32_t tgid, uint64_t addr,
			   uint64_t *lo, uint64_t *hi)
{
	const struct proc_map *m;
	struct file_slot *f;

	*lo = *hi = 0;
	if (!s->procs || procs_ensure(s->procs, tgid))
		return;
	m = procs_find(s->procs, tgid, addr);
	if (!m)
		return;
	*lo = m->start;
	*hi = m->end;
	if (is_file(m->path))
		get_file(s, tgid, m, &f);
}

/* Not named by f's file: by a perf map, or counted when f did not fit. */
static int unnamed(struct symbolizer *s, const struct file_slot *f,
		   uint32_t tgid, uint64_t addr, uint64_t look,
		   struct sym_result *r)
{
	int err = jit_name(s, tgid, addr, look, false, r);

	if (err)
		s->frames_cut += f->cut;
	return err;
}

int symbolizer_user(struct symbolizer *s, uint32_t tgid, uint64_t addr,
		     bool is_return, struct sym_result *r)
{
	uint64_t look = is_return ? addr - 1 : addr, vaddr;
	const struct proc_map *m;
	const struct elf_sym *sym;
	struct file_slot *f;
	struct elf_file *ef;
	const char *slash;
	int err;

	memset(r, 0, sizeof(*r));
	if (s->procs)
		procs_ensure(s->procs, tgid);
	m = s->procs ? procs_find(s->procs, tgid, look) : NULL;
	if (!m)
		return jit_name(s, tgid, addr, look, true, r);
	slash = strrchr(m->path, '/');
	r->path = m->path;
	r->module = m->path[0] == '/' && slash ? slash + 1 : m->path;
	r->module_offset = addr - m->start + m->pgoff;
	r->map_start = m->start;
	r->map_end = m->end;
	r->map_pgoff = m->pgoff;
	if (!strcmp(m->path, "[vdso]")) {
		f = NULL;
		ef = vdso_elf(s, tgid, m);
	} else if (is_file(m->path)) {
		err = get_file(s, tgid, m, &f);
		if (err)
			return err;
		ef = f->ef;
	} else {
		return jit_name(s, tgid, addr, look, true, r);
	}
	if (ef)
		r->build_id_size = elf_file_build_id(ef, &r->build_id);
	if (!ef && f && f->gone) {
		s->frames_gone++;
		return -ENOENT;
	}
	if (!ef || elf_file_offset_to_vaddr(ef, look - m->start + m->pgoff,
					     &vaddr) ||
	    !(sym = elf_file_sym_at(ef, vaddr)))
		return f ? unnamed(s, f, tgid, addr, look, r) :
			   jit_name(s, tgid, addr, look, true, r);
	r->module_offset = vaddr + (addr - look);
	if (ef == s->vdso_ef)
		sym = vdso_alias(ef, sym);
	r->name = demangler_name(s->dm, sym->name);
	r->offset = r->module_offset - sym->addr;
	return 0;
}
