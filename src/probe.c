// SPDX-License-Identifier: MIT
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include "probe.h"
#include "ksyms.h"
#include "vec.h"
#include "elf_file.h"
#include "libpath.h"
#include "procs.h"
#include "untrusted.h"
#include "usdt.h"

static int fail(char *err, size_t len, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return code;
}

/* Every error fills err: a bare -ENOMEM would print an empty line. */
static int oom(char *err, size_t len, const char *doing, const char *what)
{
	return fail(err, len, -ENOMEM, "out of memory %s \"%s\"", doing, what);
}

/*
 * '*' wildcards become ".*" in an anchored regex, everything else is
 * literal -- bcc's rule.  A regex (-r) must match from the start, as
 * Python's re.match does.
 */
static int compile(const char *pat, bool regex, regex_t *re)
{
	size_t n = strlen(pat);
	char *s = malloc(2 * n + 8), *o = s;
	int err;

	if (!s)
		return -ENOMEM;
	if (regex) {
		sprintf(s, "^(%s)", pat);
	} else {
		*o++ = '^';
		for (const char *p = pat; *p; p++) {
			if (*p == '*') {
				*o++ = '.';
				*o++ = '*';
				continue;
			}
			if (strchr(".[]()+?{}|^$\\", *p))
				*o++ = '\\';
			*o++ = *p;
		}
		*o++ = '$';
		*o = 0;
	}
	err = regcomp(re, s, REG_EXTENDED | REG_NOSUB);
	free(s);
	return err ? -EINVAL : 0;
}

static bool matches(const regex_t *re, const char *s)
{
	return regexec(re, s, 0, NULL, 0) == 0;
}

int probe_pattern_parse(const char *s, bool regex, struct sw_pattern *p,
		     char *err, size_t errlen)
{
	char *parts[3] = {}, *copy = strdup(s), *c = copy;
	const char *type = "p", *lib = "", *name;
	size_t n = 0;
	int e = 0;

	memset(p, 0, sizeof(*p));
	if (!copy)
		return oom(err, errlen, "parsing the pattern", s);
	while (n < 3) {
		parts[n++] = c;
		c = strchr(c, ':');
		if (!c)
			break;
		*c++ = 0;
	}
	if (c) {
		e = fail(err, errlen, -EINVAL, "too many ':'-separated parts in "
			 "\"%s\"; use func, lib:func, p:lib:func, t:cat:event "
			 "or u:lib:probe", s);
		goto out;
	}
	if (n == 1) {
		name = parts[0];
	} else if (n == 2) {
		lib = parts[0];
		name = parts[1];
	} else {
		type = parts[0];
		lib = parts[1];
		name = parts[2];
	}
	p->regex = regex;
	if (!strcmp(type, "p")) {
		p->type = *lib ? SW_PAT_UPROBE : SW_PAT_KPROBE;
	} else if (!strcmp(type, "t")) {
		p->type = SW_PAT_TRACEPOINT;
		p->category = strdup(lib);
	} else if (!strcmp(type, "u")) {
		p->type = SW_PAT_USDT;
	} else {
		e = fail(err, errlen, -EINVAL, "unknown probe type '%s' in \"%s\"; "
			 "use p (function), t (tracepoint) or u (USDT)", type, s);
		goto out;
	}
	if (!*name || (p->type == SW_PAT_TRACEPOINT && !*lib) ||
	    (p->type == SW_PAT_USDT && !*lib)) {
		e = fail(err, errlen, -EINVAL, "incomplete pattern \"%s\"; use "
			 "func, lib:func, t:cat:event or u:lib:probe", s);
		goto out;
	}
	p->lib = strdup(lib);
	p->name = strdup(name);
	if (!p->lib || !p->name || (p->type == SW_PAT_TRACEPOINT && !p->category)) {
		e = oom(err, errlen, "parsing the pattern", s);
		goto out;
	}
	e = compile(p->name, regex, &p->re);
	if (!e && p->category)
		e = compile(p->category, regex, &p->cat_re);
	if (e == -ENOMEM) {
		oom(err, errlen, "compiling the pattern", s);
		goto out;
	}
	if (e) {
		e = fail(err, errlen, -EINVAL, "\"%s\" is not a valid %s in \"%s\"",
			 name, regex ? "regular expression" : "pattern", s);
		goto out;
	}
out:
	free(copy);
	return e;
}

void probe_pattern_free(struct sw_pattern *p)
{
	if (p->name)
		regfree(&p->re);
	if (p->category)
		regfree(&p->cat_re);
	free(p->lib);
	free(p->libpath);
	free(p->name);
	free(p->category);
	memset(p, 0, sizeof(*p));
}

void probe_targets_free(struct sw_targets *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free((char *)t->v[i].spec.func);
		free((char *)t->v[i].spec.path);
		free((char *)t->v[i].spec.category);
		free((char *)t->v[i].spec.event);
	}
	free(t->v);
	free(t->replaced);
	memset(t, 0, sizeof(*t));
}

static struct sw_target *add(struct sw_targets *t, enum sw_role role,
			     const char *name)
{
	struct sw_target *v = realloc(t->v, (t->n + 1) * sizeof(*v));

	if (!v)
		return NULL;
	t->v = v;
	v = &t->v[t->n++];
	memset(v, 0, sizeof(*v));
	v->role = role;
	v->name = strdup(name);
	return v->name ? v : NULL;
}

/* ---- kernel functions ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The functions ftrace can patch (and so kprobes can attach to through
 * it), sorted for bsearch; NULL without ftrace.  It lists one name per
 * address (6.1 lists __do_sys_getppid, not its alias __x64_sys_getppid).
 */
static char **traceable(const char *tracefs, size_t *n)
{
	char path[PATH_MAX + 64], line[512], **v = NULL;
	size_t cap = 0;
	FILE *in;

	*n = 0;
	snprintf(path, sizeof(path), "%s/available_filter_functions", tracefs);
	in = tracefs[0] ? fopen(path, "r") : NULL;
	if (!in)
		return NULL;
	while (fgets(line, sizeof(line), in)) {
		line[strcspn(line, " \t\n")] = 0;
		if (VEC_GROW(v, *n, cap, 4096))
			break;
		if (!(v[*n] = strdup(line)))
			break;
		(*n)++;
	}
	fclose(in);
	qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

struct ksym_name {
	unsigned long long addr;
	const char *name;	/* in the struct ksyms */
	bool traceable;
};

struct functions {
	struct ksym_name *v;
	size_t n, cap;
	char **ok;		/* available_filter_functions, sorted; NULL: all */
	size_t nok;
};

static int add_function(void *ctx, uint64_t addr, const char *name)
{
	struct functions *fs = ctx;
	const char *key = name;

	/* padding and CFI stubs before functions (6.x) */
	if (!strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6))
		return 0;
	if (VEC_GROW(fs->v, fs->n, fs->cap, 65536))
		return -ENOMEM;
	fs->v[fs->n].addr = addr;
	fs->v[fs->n].name = name;
	fs->v[fs->n].traceable = !fs->ok ||
		bsearch(&key, fs->ok, fs->nok, sizeof(*fs->ok), cmp_str);
	fs->n++;
	return 0;
}

static int resolve_kprobes(const struct sw_pattern *p,
			   const struct sw_features *f, struct ksyms *kallsyms,
			   struct sw_targets *t, char *err, size_t errlen)
{
	struct functions fs = {};
	struct ksym_name *ks;
	size_t nks, i, j;
	int e = 0;

	fs.ok = traceable(f->tracefs, &fs.nok);
	if (kallsyms)
		e = ksyms_each(kallsyms, add_function, &fs);
	ks = fs.v;
	nks = fs.n;
	if (e)
		e = oom(err, errlen, "listing the kernel functions matching", p->name);
	else if (!nks)
		e = fail(err, errlen, -ENOENT, "cannot list kernel functions: "
			 "/proc/kallsyms is unreadable or hides addresses");
	/* aliases share an address: one probe, under the first name matched */
	for (i = 0; !e && i < nks; i = j) {
		bool traceable = false;
		const char *hit = NULL;
		struct sw_target *tg;

		for (j = i; j < nks && ks[j].addr == ks[i].addr; j++) {
			traceable |= ks[j].traceable;
			if (!hit && matches(&p->re, ks[j].name))
				hit = ks[j].name;
		}
		if (!hit || !traceable)
			continue;
		tg = add(t, SW_ROLE_KPROBE, hit);
		if (!tg || !(tg->spec.func = strdup(hit))) {
			e = oom(err, errlen, "listing the kernel functions matching", p->name);
			break;
		}
		tg->spec.kind = SW_PROBE_KPROBE;
	}
	free(ks);
	for (i = 0; i < fs.nok; i++)
		free(fs.ok[i]);
	free(fs.ok);
	if (e)
		return e;
	t->matched = t->n;
	if (!t->n && !strncmp(p->name, "sys_", 4) &&
	    f->version >= SW_KVERSION(4, 17, 0))
		return fail(err, errlen, -ENOENT, "no kernel function matches "
			    "\"%s\": since 4.17 the syscall functions are "
			    "named __x64_sys_*; try __x64_%s", p->name, p->name);
	if (!t->n)
		return fail(err, errlen, -ENOENT, "no kernel function matches "
			    "\"%s\"; they are listed in %s/available_filter_functions",
			    p->name, f->tracefs);
	return 0;
}

/* ---- tracepoints ---- */

static int resolve_tracepoints(const struct sw_pattern *p,
			       const struct sw_features *f,
			       struct sw_targets *t, char *err, size_t errlen)
{
	char path[PATH_MAX + 512], id[PATH_MAX + 1024];
	struct dirent *c, *e;
	DIR *cats, *evs;

	snprintf(path, sizeof(path), "%s/events", f->tracefs);
	cats = f->tracefs[0] ? opendir(path) : NULL;
	if (!cats)
		return fail(err, errlen, -ENOENT, "cannot list tracepoints: no "
			    "tracefs; mount it: mount -t tracefs tracefs "
			    "/sys/kernel/tracing");
	while ((c = readdir(cats))) {
		if (c->d_name[0] == '.' || !matches(&p->cat_re, c->d_name))
			continue;
		/* a wildcard leaves out what this kernel cannot attach to */
		if (!f->prog_syscall_tp && !strcmp(c->d_name, "syscalls"))
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", f->tracefs, c->d_name);
		evs = opendir(path);
		while (evs && (e = readdir(evs))) {
			struct sw_target *tg;

			if (e->d_name[0] == '.' || !matches(&p->re, e->d_name))
				continue;
			snprintf(id, sizeof(id), "%s/%s/id", path, e->d_name);
			if (access(id, R_OK))
				continue;	/* a directory that is no event */
			snprintf(id, sizeof(id), "%s:%s", c->d_name, e->d_name);
			tg = add(t, SW_ROLE_TRACEPOINT, id);
			if (!tg || !(tg->spec.category = strdup(c->d_name)) ||
			    !(tg->spec.event = strdup(e->d_name))) {
				closedir(evs);
				closedir(cats);
				return oom(err, errlen, "listing the tracepoints matching", p->name);
			}
			tg->spec.kind = SW_PROBE_TRACEPOINT;
		}
		if (evs)
			closedir(evs);
	}
	closedir(cats);
	t->matched = t->n;
	if (!t->n)
		return fail(err, errlen, -ENOENT, "no tracepoint matches "
			    "\"%s:%s\"; they are listed in %s/available_events",
			    p->category, p->name, f->tracefs);
	return 0;
}

/* ---- user functions ---- */

struct sym_match {
	const struct sw_pattern *p;
	const struct elf_file *ef;
	struct sw_targets *t;
};

/* What a kernel's own entry heuristic keys on: push %rbp, or endbr64. */
static enum sw_entry_shape entry_shape(const unsigned char *b, ssize_t n)
{
	static const unsigned char endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

	if (n >= 1 && b[0] == 0x55)
		return SW_SHAPE_PUSH_RBP;
	return n >= 4 && !memcmp(b, endbr64, sizeof(endbr64)) ?
	       SW_SHAPE_ENDBR64 : SW_SHAPE_OTHER;
}

/*
 * A uprobe at file offset off: its instruction judged as the kernel will
 * (64-bit code only; the kernel's 32-bit rules are not mirrored), and
 * marked refused if it must not be probed.
 */
static struct sw_target *add_uprobe(struct sw_targets *t,
				    const struct elf_file *ef, enum sw_role role,
				    const char *name, const char *path,
				    uint64_t off)
{
	unsigned char b[INSN_MAX];
	struct sw_target *tg = add(t, role, name);
	ssize_t n;
	GElf_Ehdr eh;

	if (!tg || !(tg->spec.path = strdup(path)))
		return NULL;
	tg->spec.kind = SW_PROBE_UPROBE;
	tg->spec.offset = off;
	n = elf_file_read(ef, off, b, sizeof(b));
	if (role == SW_ROLE_UENTRY)
		tg->shape = entry_shape(b, n);
	if (gelf_getehdr(elf_file_elf(ef), &eh) && eh.e_machine == EM_X86_64)
		tg->refused = insn_uprobe_check(b, n > 0 ? n : 0);
	if (tg->refused)
		tg->attach_err = -SW_ENOTSUPP;
	return tg;
}

static int match_sym(const struct elf_sym *s, void *ctx)
{
	struct sym_match *m = ctx;
	uint64_t off;

	if (!matches(&m->p->re, s->name))
		return 0;
	/* a PLT entry (func@plt) only where asked for: no wildcard doubles func's calls */
	if (elf_sym_plt(s) && !strstr(m->p->name, "@plt"))
		return 0;
	if (elf_file_vaddr_to_offset(m->ef, s->addr, &off))
		return 0;
	/* aliases share an address: one probe */
	for (size_t i = 0; i < m->t->n; i++)
		if (m->t->v[i].spec.offset == off)
			return 0;
	return add_uprobe(m->t, m->ef, SW_ROLE_UENTRY, s->name, m->p->libpath,
			  off) ? 0 : -ENOMEM;
}

/*
 * With -p: the copy of path that pid maps, if the file was deleted or
 * replaced on disk since (a package upgrade renames a new file over a
 * running program's), as a /proc/PID/map_files path into out.  Its
 * uprobes belong there: the new file's inode is not what pid runs.
 */
static bool mapped_copy(pid_t pid, const char *path, char *out, size_t len)
{
	size_t n = strlen(path), cap = 0;
	char maps[64], *line = NULL;
	struct proc_map m;
	bool found = false;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	while (f && !found && getline(&line, &cap, f) > 0) {
		if (!procs_parse_maps_line(line, &m) || !procs_map_deleted(&m) ||
		    strncmp(m.path, path, n) || strcmp(m.path + n, " (deleted)"))
			continue;
		procs_map_file(pid, &m, out, len);
		found = true;
	}
	free(line);
	if (f)
		fclose(f);
	return found;
}

static int open_lib(const struct sw_pattern *p, struct debuginfod *remote,
		    pid_t pid, struct sw_targets *t,
		    struct elf_file **ef, char *err, size_t errlen)
{
	struct untrusted_skip sk = {};
	char path[PATH_MAX], shown[256], copy[96];
	size_t size;
	int e;

	e = libpath_resolve(p->lib, pid, path, sizeof(path));
	if (pid > 0 && (e == -ENOENT || !e) && strchr(p->lib, '/') &&
	    mapped_copy(pid, e ? p->lib : path, copy, sizeof(copy))) {
		t->replaced = strdup(e ? p->lib : path);
		if (!t->replaced)
			return oom(err, errlen, "resolving", p->lib);
		snprintf(path, sizeof(path), "%s", copy);
		e = 0;
	}
	t->malformed = e && (!strcmp(p->lib, "t") || !strcmp(p->lib, "u"));
	if (t->malformed)
		return fail(err, errlen, -EINVAL, "incomplete pattern \"%s:%s\"; "
			    "a %s is %s:%s", p->lib, p->name,
			    *p->lib == 't' ? "tracepoint" : "USDT probe",
			    p->lib, *p->lib == 't' ? "category:event" : "lib:probe");
	/* a path was given: the hint is about that path, not a search */
	if (e && strchr(p->lib, '/'))
		return fail(err, errlen, e, "cannot open \"%s\": %s; check the "
			    "path", untrusted_escape(shown, sizeof(shown), p->lib),
			    e == -ELOOP ? "a loop of symbolic links" :
			    e == -ENOENT ? "no such file" : strerror(-e));
	if (e)
		return fail(err, errlen, -ENOENT, "cannot find library or "
			    "executable \"%s\"; give its path, e.g. "
			    "/usr/lib/x86_64-linux-gnu/lib%s.so", p->lib, p->lib);
	((struct sw_pattern *)p)->libpath = strdup(path);
	if (!p->libpath)
		return oom(err, errlen, "resolving", p->lib);
	/* a debug file refused here is said when the symbolizer meets it */
	e = elf_file_open_code(ef, path, remote, &sk);
	if (e && sk.why)
		return fail(err, errlen, e, "cannot read %s: %s",
			    untrusted_escape(shown, sizeof(shown), sk.what), sk.why);
	if (e == -EDQUOT)
		return fail(err, errlen, e, "cannot read %s: its symbols need "
			    "more than the %llu MiB a file that users other "
			    "than root can write may take; give the path of a "
			    "copy only root can change",
			    untrusted_escape(shown, sizeof(shown), path),
			    UNTRUSTED_BUDGET_DEFAULT >> 20);
	if (e)
		return fail(err, errlen, e, "cannot read %s as ELF: %s",
			    untrusted_escape(shown, sizeof(shown), path),
			    strerror(-e));
	if (!elf_file_whole(*ef, &size)) {
		elf_file_free(*ef);
		*ef = NULL;
		return fail(err, errlen, -ENOEXEC, "cannot read %s as ELF: its "
			    "headers or sections lie past its end (%zu bytes), "
			    "so it was cut short; give the whole file",
			    untrusted_escape(shown, sizeof(shown), path), size);
	}
	return 0;
}

static int resolve_uprobes(const struct sw_pattern *p,
			   struct debuginfod *remote, pid_t pid,
			   struct sw_targets *t, char *err, size_t errlen)
{
	struct sym_match m = { .p = p, .t = t };
	struct elf_file *ef;
	bool stripped;
	int e;

	e = open_lib(p, remote, pid, t, &ef, err, errlen);
	if (e)
		return e;
	m.ef = ef;
	e = elf_file_find_syms(ef, match_sym, &m);
	stripped = elf_file_stripped(ef);
	elf_file_free(ef);
	if (e == -ENOMEM)
		return oom(err, errlen, "listing the functions of", p->libpath);
	if (e)
		return fail(err, errlen, e, "cannot read the symbols of %s: %s",
			    p->libpath, strerror(-e));
	t->matched = t->n;
	if (!t->n && stripped)
		return fail(err, errlen, -ENOENT, "no function matches \"%s\" in "
			    "%s, which is stripped, and no debug file of it was "
			    "found; install its debug symbols%s", p->name,
			    p->libpath, remote ? "" : ", or set DEBUGINFOD_URLS "
			    "to a debuginfod server that has them");
	if (!t->n)
		return fail(err, errlen, -ENOENT, "no function matches \"%s\" in "
			    "%s; list them with: nm %s",
			    p->name, p->libpath, p->libpath);
	return 0;
}

/* ---- USDT ---- */

/* Why usdt_probes() failed: out of memory, or no section names. */
static void usdt_failed(const struct elf_file *ef, const char *path, int e,
			char *err, size_t errlen)
{
	char shown[256];
	GElf_Ehdr eh;
	size_t shnum;

	untrusted_escape(shown, sizeof(shown), path);
	if (e == -ENOMEM) {
		oom(err, errlen, "listing the USDT probes of", shown);
		return;
	}
	if (gelf_getehdr(elf_file_elf(ef), &eh) && eh.e_shstrndx == SHN_XINDEX &&
	    (elf_getshdrnum(elf_file_elf(ef), &shnum) || !shnum)) {
		fail(err, errlen, e, "cannot read the section names of %s: its "
		     "section header string table index (SHN_XINDEX) points "
		     "into a section header that is not there", shown);
		return;
	}
	fail(err, errlen, e, "cannot read the section names of %s: %s", shown,
	     elf_errmsg(-1));
}

static int resolve_usdt(const struct sw_pattern *p,
			const struct sw_features *f, pid_t pid,
			struct sw_targets *t, char *err, size_t errlen)
{
	struct usdt_probe *probes = NULL;
	struct elf_file *ef;
	size_t n = 0;
	int e;

	e = open_lib(p, NULL, pid, t, &ef, err, errlen);
	if (e)
		return e;
	e = usdt_probes(ef, &probes, &n);
	if (e)
		usdt_failed(ef, p->libpath, e, err, errlen);
	for (size_t i = 0; !e && i < n; i++) {
		struct sw_target *tg;
		bool seen = false;

		if (!matches(&p->re, probes[i].name))
			continue;
		for (size_t j = 0; j < t->n; j++)
			seen |= !strcmp(t->v[j].name, probes[i].name);
		tg = add_uprobe(t, ef, SW_ROLE_UINSIDE, probes[i].name,
				p->libpath, probes[i].pc_offset);
		if (!tg) {
			e = oom(err, errlen, "listing the USDT probes of", p->libpath);
			break;
		}
		if (f->uprobe_ref_ctr)
			tg->spec.ref_ctr_off = probes[i].sem_offset;
		else
			tg->semaphore = probes[i].sem_offset;
		t->matched += !seen;
	}
	free(probes);
	elf_file_free(ef);
	if (e)
		return e;
	if (!t->n)
		return fail(err, errlen, -ENOENT, "no USDT probe matches \"%s\" "
			    "in %s; list them with: readelf -n %s", p->name,
			    p->libpath, p->libpath);
	return 0;
}

int probe_pattern_check(const struct sw_pattern *p, const struct sw_features *f,
		     char *err, size_t errlen)
{
	const char *legacy = f->legacy ? ", and forced legacy mode emulates "
					 "an older one" : "";

	switch (p->type) {
	case SW_PAT_KPROBE:
		if (!f->kprobes)
			return fail(err, errlen, -EOPNOTSUPP, "this kernel has "
				    "no kprobes (CONFIG_KPROBES is not set), so "
				    "kernel functions cannot be traced; trace a "
				    "tracepoint instead, e.g. t:syscalls:sys_enter_*");
		return 0;
	case SW_PAT_TRACEPOINT:
		if (!f->prog_tracepoint)
			return fail(err, errlen, -EOPNOTSUPP, "this kernel cannot "
				    "run BPF on tracepoints (4.7+%s); trace a "
				    "kernel function instead, e.g. sys_getppid",
				    legacy);
		if (!f->prog_syscall_tp && !strcmp(p->category, "syscalls"))
			return fail(err, errlen, -EOPNOTSUPP, "this kernel cannot "
				    "run BPF on syscalls:* tracepoints (4.14+); "
				    "trace t:raw_syscalls:sys_enter, or the "
				    "kernel function sys_NAME, instead");
		return 0;
	default:
		if (!f->uprobes)
			return fail(err, errlen, -EOPNOTSUPP, "this kernel cannot "
				    "run BPF on uprobes (4.3+, CONFIG_UPROBE_EVENTS%s), "
				    "so %s cannot be traced", legacy,
				    p->type == SW_PAT_USDT ? "USDT probes" :
				    "user functions");
		return 0;
	}
}

int probe_targets_resolve(const struct sw_pattern *p,
		       const struct sw_features *f, struct ksyms *kallsyms,
		       struct debuginfod *remote, pid_t pid,
		       struct sw_targets *out, char *err, size_t errlen)
{
	int e;

	memset(out, 0, sizeof(*out));
	*err = 0;
	e = probe_pattern_check(p, f, err, errlen);
	if (e)
		return e;
	switch (p->type) {
	case SW_PAT_KPROBE:
		e = resolve_kprobes(p, f, kallsyms, out, err, errlen);
		break;
	case SW_PAT_TRACEPOINT:
		e = resolve_tracepoints(p, f, out, err, errlen);
		break;
	case SW_PAT_UPROBE:
		e = resolve_uprobes(p, remote, pid, out, err, errlen);
		break;
	default:
		e = resolve_usdt(p, f, pid, out, err, errlen);
		break;
	}
	if (e && !*err)
		fail(err, errlen, e, "cannot resolve \"%s\": %s", p->name,
		     strerror(-e));
	if (e) {
		bool malformed = out->malformed;

		probe_targets_free(out);
		out->malformed = malformed;
	}
	return e;
}
