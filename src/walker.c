// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "walker.h"
#include "calib.h"
#include "sources.h"
#include "fp_key.h"
#include "getstack.skel.h"
#include "stackmap.skel.h"
#include "fp.skel.h"

struct walker {
	const struct sw_features *f;
	struct walker_opts o;
	struct bpf_object *obj;
	struct bpf_map *counts, *stacks, *config, *lost, *follow;
	struct sw_attachment *att;
	size_t natt, cap;
	/* newer kernels add the caller at entry uprobes on push/endbr */
	bool kernel_adds_ucaller;
	__u32 key_size;
};

/* The program a target needs, by walker: see the SEC()s in bpf/. */
static const char *prog_name(const struct walker *w, enum sw_role role,
			     bool entry_heuristic)
{
	bool uentry = role == SW_ROLE_UENTRY &&
		      !(entry_heuristic && w->kernel_adds_ucaller);

	switch (w->o.kind) {
	case SW_WALKER_GETSTACK:
		switch (role) {
		case SW_ROLE_KPROBE: return "gs_kprobe";
		case SW_ROLE_TRACEPOINT: return "gs_tp";
		default: return uentry ? "gs_uprobe_entry" : "gs_uprobe";
		}
	case SW_WALKER_STACKMAP:
		switch (role) {
		case SW_ROLE_KPROBE: return "sm_kprobe";
		case SW_ROLE_TRACEPOINT: return "sm_tp";
		default: return uentry ? "sm_uprobe_entry" : "sm_uprobe";
		}
	default:
		switch (role) {
		case SW_ROLE_KPROBE:
			if (w->o.ustack)
				return "fp_kprobe";
			return w->f->helper_pid ? "fp_kprobe_k" : "fp_kprobe_k_v41";
		case SW_ROLE_TRACEPOINT:
			return w->o.ustack ? "fp_tp" : "fp_tp_k";
		case SW_ROLE_UENTRY:
			return "fp_uprobe_entry";
		default:
			return "fp_uprobe";
		}
	}
}

static struct bpf_program *prog(const struct walker *w, const char *name)
{
	return bpf_object__find_program_by_name(w->obj, name);
}

static int open_object(struct walker *w)
{
	const void *elf;
	size_t sz;
	LIBBPF_OPTS(bpf_object_open_opts, opts);

	switch (w->o.kind) {
	case SW_WALKER_GETSTACK:
		elf = getstack_bpf__elf_bytes(&sz);
		break;
	case SW_WALKER_STACKMAP:
		elf = stackmap_bpf__elf_bytes(&sz);
		break;
	default:
		elf = fp_bpf__elf_bytes(&sz);
		break;
	}
	w->obj = bpf_object__open_mem(elf, sz, &opts);
	if (!w->obj)
		return -errno;
	w->counts = bpf_object__find_map_by_name(w->obj, "counts");
	w->stacks = bpf_object__find_map_by_name(w->obj, "stacks");
	w->config = bpf_object__find_map_by_name(w->obj, "config");
	w->lost = bpf_object__find_map_by_name(w->obj, "lost");
	w->follow = bpf_object__find_map_by_name(w->obj, "follow");
	return 0;
}

static bool fork_hook_tracepoint(const struct sw_features *f)
{
	return f->prog_tracepoint && !f->legacy;
}

bool walker_can_follow(const struct sw_features *f)
{
	return fork_hook_tracepoint(f) || f->kprobes;
}

/* Only what this run needs is loaded: an old kernel may refuse the rest. */
static void choose_programs(struct walker *w, const struct sw_targets *t)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, w->obj)
		bpf_program__set_autoload(p, false);
	for (size_t i = 0; i < t->n; i++)
		bpf_program__set_autoload(prog(w, prog_name(w, t->v[i].role,
				t->v[i].entry_heuristic)), true);
	if (w->o.kind == SW_WALKER_FP) {
		bool tails = w->o.ustack && w->f->helper_tail_call;

		bpf_program__set_autoload(prog(w, "fp_user_kp"), tails);
		bpf_program__set_autoload(prog(w, "fp_user_tp"),
					  tails && w->f->prog_tracepoint);
		if (!w->f->map_prog_array) {
			bpf_map__set_autocreate(bpf_object__find_map_by_name(w->obj, "tails_kp"), false);
			bpf_map__set_autocreate(bpf_object__find_map_by_name(w->obj, "tails_tp"), false);
		}
		bpf_map__set_max_entries(bpf_object__find_map_by_name(w->obj, "scratch"),
					 libbpf_num_possible_cpus());
	}
	if (w->o.follow) {
		bool tp = fork_hook_tracepoint(w->f);

		bpf_program__set_autoload(prog(w, tp ? "sw_fork_tp" : "sw_fork_kretprobe"), true);
		bpf_program__set_autoload(prog(w, tp ? "sw_exit_tp" : "sw_exit_kprobe"), true);
	}
}

/* Byte offset of a field in a tracepoint's format file. */
static int tp_field_offset(const char *tracefs, const char *cat,
			   const char *ev, const char *field)
{
	char p[512], line[512], want[64];
	int off = -ENOENT;
	FILE *f;

	snprintf(p, sizeof(p), "%s/events/%s/%s/format", tracefs, cat, ev);
	snprintf(want, sizeof(want), " %s;", field);
	f = fopen(p, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *o = strstr(line, "offset:");

		if (strstr(line, want) && o) {
			off = atoi(o + 7);
			break;
		}
	}
	fclose(f);
	return off;
}

static int configure(struct walker *w, const struct sw_config *c)
{
	__u32 zero = 0;
	__u8 one = 1;
	int err;

	err = bpf_map_update_elem(bpf_map__fd(w->config), &zero, c, BPF_ANY);
	if (err)
		return -errno;
	/* key 0 lets every event pass the follow lookup when not following */
	if (!c->follow_mask)
		err = bpf_map_update_elem(bpf_map__fd(w->follow), &zero, &one, BPF_ANY);
	else
		bpf_map_delete_elem(bpf_map__fd(w->follow), &zero);
	return err ? -errno : 0;
}

static void base_config(const struct walker *w, struct sw_config *c)
{
	const struct sw_features *f = w->f;

	memset(c, 0, sizeof(*c));
	if (w->o.kstack)
		c->flags |= SW_CFG_KSTACK;
	if (w->o.ustack)
		c->flags |= SW_CFG_USTACK;
	if (f->unwinder == SW_UNWINDER_FP) {
		c->flags |= SW_CFG_KFP;
		/* the kernel's frame-pointer unwinder starts at the caller's
		 * frame, missing the caller at a function's entry */
		c->flags |= SW_CFG_KENTRY;
	}
	if (w->o.pid) {
		c->tgid = w->o.pid;
		c->tgid_mask = ~0u;
	}
	if (w->o.cpu >= 0) {
		c->cpu = w->o.cpu;
		c->cpu_mask = ~0u;
	}
	c->key_mask = w->o.per_process ? ~0u : 0;
	c->follow_mask = w->o.follow ? ~0u : 0;
	c->thread_size = f->thread_size;
	c->stack_padding = f->stack_padding;
}

/* Room for one more attachment at w->att[w->natt]. */
static int reserve_attachment(struct walker *w)
{
	struct sw_attachment *a;
	size_t cap;

	if (w->natt < w->cap)
		return 0;
	cap = w->cap ? w->cap * 2 : 16;
	a = realloc(w->att, cap * sizeof(*a));
	if (!a)
		return -ENOMEM;
	w->att = a;
	w->cap = cap;
	return 0;
}

static void clear_map(struct bpf_map *m)
{
	char key[4096], next[4096];
	int fd = bpf_map__fd(m);

	while (!bpf_map_get_next_key(fd, NULL, next)) {
		memcpy(key, next, bpf_map__key_size(m));
		bpf_map_delete_elem(fd, key);
	}
}

/*
 * Whether this kernel's user unwinder already adds the caller at a uprobe
 * on a function entry starting with push %rbp (6.11+ does, older ones do
 * not): fire such a probe on ourselves and look.
 */
static int calibrate(struct walker *w)
{
	struct sw_config c;
	struct sw_stacks s = {};
	struct sw_calib cal;
	int err;

	base_config(w, &c);
	c.flags = SW_CFG_USTACK;
	c.tgid = getpid();
	c.tgid_mask = ~0u;
	c.cpu_mask = 0;
	c.key_mask = 0;
	c.follow_mask = 0;
	err = configure(w, &c);
	if (!err)
		err = reserve_attachment(w);
	if (!err)
		err = sw_calib_run(w->f, bpf_program__fd(prog(w,
				   w->o.kind == SW_WALKER_GETSTACK ? "gs_uprobe" : "sm_uprobe")),
				   &cal, &w->att[w->natt]);
	if (!err)
		w->natt++;
	if (!err)
		err = walker__read(w, &s);
	if (err)
		goto out;
	err = -ENODATA;
	for (size_t i = 0; i < s.n; i++) {
		if (s.v[i].nu >= 2 && s.v[i].uip[0] == cal.target) {
			w->kernel_adds_ucaller = s.v[i].uip[1] == cal.ret;
			err = 0;
		}
	}
out:
	sw_stacks__free(&s);
	clear_map(w->counts);
	return err;
}

static bool needs_calibration(const struct walker *w, const struct sw_targets *t)
{
	if (w->o.kind == SW_WALKER_FP || !w->o.ustack)
		return false;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].role == SW_ROLE_UENTRY && t->v[i].entry_heuristic)
			return true;
	return false;
}

int walker__open(struct walker **out, const struct sw_features *f,
		 const struct walker_opts *o, const struct sw_targets *t)
{
	struct walker *w = calloc(1, sizeof(*w));
	struct sw_config c;
	bool calib;
	int err;

	if (!w)
		return -ENOMEM;
	w->f = f;
	w->o = *o;
	err = open_object(w);
	if (err)
		goto fail;
	calib = needs_calibration(w, t);
	choose_programs(w, t);
	if (calib)
		bpf_program__set_autoload(prog(w, w->o.kind == SW_WALKER_GETSTACK ?
					       "gs_uprobe" : "sm_uprobe"), true);
	bpf_map__set_max_entries(w->counts, o->storage);
	if (w->stacks)
		bpf_map__set_max_entries(w->stacks, o->storage);
	bpf_object__set_kversion(w->obj, f->version);
	err = bpf_object__load(w->obj);
	if (err)
		goto fail;
	w->key_size = bpf_map__key_size(w->counts);
	if (w->o.kind == SW_WALKER_FP && o->ustack && f->helper_tail_call) {
		__u32 idx = 0;
		int pfd = bpf_program__fd(prog(w, "fp_user_kp"));

		err = bpf_map_update_elem(bpf_map__fd(bpf_object__find_map_by_name(w->obj, "tails_kp")),
					  &idx, &pfd, BPF_ANY);
		if (!err && f->prog_tracepoint) {
			pfd = bpf_program__fd(prog(w, "fp_user_tp"));
			err = bpf_map_update_elem(bpf_map__fd(bpf_object__find_map_by_name(w->obj, "tails_tp")),
						  &idx, &pfd, BPF_ANY);
		}
		if (err) {
			err = -errno;
			goto fail;
		}
	}
	if (calib) {
		err = calibrate(w);
		if (err)
			goto fail;
	}
	base_config(w, &c);
	if (o->follow && fork_hook_tracepoint(f)) {
		int off = tp_field_offset(f->tracefs, "sched", "sched_process_fork",
					  "child_pid");
		if (off < 0) {
			err = off;
			goto fail;
		}
		c.fork_child_off = off;
	}
	err = configure(w, &c);
	if (err)
		goto fail;
	*out = w;
	return 0;
fail:
	walker__free(w);
	return err;
}

static int add_attachment(struct walker *w, int prog_fd,
			  const struct sw_probe_spec *spec)
{
	int err = reserve_attachment(w);

	if (err)
		return err;
	err = sw_attach(w->f, prog_fd, spec, w->natt, &w->att[w->natt]);
	if (!err)
		w->natt++;
	return err;
}

/* The kernel function that creates tasks, by release. */
static const char *fork_function(void)
{
	static const char *const names[] = { "kernel_clone", "_do_fork", "do_fork" };
	const char *found = NULL;
	char line[512];
	FILE *k = fopen("/proc/kallsyms", "r");

	while (k && !found && fgets(line, sizeof(line), k)) {
		char *name = strrchr(line, ' ');

		if (!name)
			continue;
		name[1 + strcspn(name + 1, "\n")] = 0;
		for (size_t i = 0; i < 3; i++)
			if (!strcmp(name + 1, names[i]))
				found = names[i];
	}
	if (k)
		fclose(k);
	return found;
}

static int attach_follow(struct walker *w)
{
	struct sw_probe_spec s = {};
	int err;

	if (fork_hook_tracepoint(w->f)) {
		s.kind = SW_PROBE_TRACEPOINT;
		s.category = "sched";
		s.event = "sched_process_fork";
		err = add_attachment(w, bpf_program__fd(prog(w, "sw_fork_tp")), &s);
		if (err)
			return err;
		s.event = "sched_process_exit";
		return add_attachment(w, bpf_program__fd(prog(w, "sw_exit_tp")), &s);
	}
	s.func = fork_function();
	if (!s.func)
		return -ENOENT;
	s.kind = SW_PROBE_KRETPROBE;
	err = add_attachment(w, bpf_program__fd(prog(w, "sw_fork_kretprobe")), &s);
	if (err)
		return err;
	s.kind = SW_PROBE_KPROBE;
	s.func = "do_exit";
	return add_attachment(w, bpf_program__fd(prog(w, "sw_exit_kprobe")), &s);
}

int walker__attach(struct walker *w, const struct sw_targets *t)
{
	int err;

	if (w->o.follow) {
		err = attach_follow(w);
		if (err)
			return err;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct sw_target *tg = &t->v[i];
		const char *name = prog_name(w, tg->role, tg->entry_heuristic);

		err = add_attachment(w, bpf_program__fd(prog(w, name)), &tg->spec);
		if (err)
			return err;
	}
	return 0;
}

int walker__follow(struct walker *w, pid_t tid)
{
	__u32 k = tid;
	__u8 one = 1;

	return bpf_map_update_elem(bpf_map__fd(w->follow), &k, &one, BPF_ANY) ? -errno : 0;
}

int walker__lost(struct walker *w, __u64 lost[SW_LOST_NR])
{
	for (__u32 i = 0; i < SW_LOST_NR; i++) {
		lost[i] = 0;
		if (bpf_map_lookup_elem(bpf_map__fd(w->lost), &i, &lost[i]))
			return -errno;
	}
	return 0;
}

void sw_stacks__clear(struct sw_stacks *s)
{
	s->n = 0;
}

void sw_stacks__free(struct sw_stacks *s)
{
	free(s->v);
	free(s->frames);
	memset(s, 0, sizeof(*s));
}

/* Frames are stored as offsets into s->frames until the end, when it stops moving. */
static int push_stack(struct sw_stacks *s, const struct sw_key_hdr *h,
		      __u64 count, const __u64 *k, size_t nk, __u64 kcaller,
		      const __u64 *u, size_t nu, __u64 ucaller, size_t *fused,
		      size_t *fcap)
{
	size_t need = nk + nu + 2;
	struct sw_stack *st;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		void *v = realloc(s->v, cap * sizeof(*s->v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	if (*fused + need > *fcap) {
		size_t cap = (*fcap + need) * 2;
		void *v = realloc(s->frames, cap * sizeof(__u64));

		if (!v)
			return -ENOMEM;
		s->frames = v;
		*fcap = cap;
	}
	st = &s->v[s->n++];
	memset(st, 0, sizeof(*st));
	st->tgid = h->tgid;
	memcpy(st->comm, h->comm, sizeof(st->comm));
	st->kstop = h->kstop;
	st->ustop = h->ustop;
	st->count = count;
	st->kip = (__u64 *)(uintptr_t)*fused;
	for (size_t i = 0; i < nk; i++) {
		s->frames[(*fused)++] = k[i];
		if (i == 0 && kcaller)
			s->frames[(*fused)++] = kcaller;
	}
	st->nk = *fused - (uintptr_t)st->kip;
	st->uip = (__u64 *)(uintptr_t)*fused;
	for (size_t i = 0; i < nu; i++) {
		s->frames[(*fused)++] = u[i];
		if (i == 0 && ucaller)
			s->frames[(*fused)++] = ucaller;
	}
	st->nu = *fused - (uintptr_t)st->uip;
	return 0;
}

static size_t nframes(const __u64 *v, size_t max)
{
	size_t n = 0;

	while (n < max && v[n])
		n++;
	return n;
}

static int read_stackmap(struct walker *w, int id, __u64 *buf)
{
	memset(buf, 0, SW_MAX_FRAMES * sizeof(*buf));
	if (id < 0)
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(w->stacks), &id, buf))
		return 0;
	return nframes(buf, SW_MAX_FRAMES);
}

int walker__read(struct walker *w, struct sw_stacks *s)
{
	size_t fused = 0, fcap = 0, ks = w->key_size;
	int fd = bpf_map__fd(w->counts), err = 0;
	char *key = calloc(2, ks), *next = key + ks;
	__u64 kbuf[SW_MAX_FRAMES], ubuf[SW_MAX_FRAMES], count;
	void *prev = NULL;

	if (!key)
		return -ENOMEM;
	free(s->frames);
	s->frames = NULL;
	s->n = 0;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, ks);
		prev = key;
		if (bpf_map_lookup_elem(fd, key, &count))
			continue;	/* deleted meanwhile */
		if (w->o.kind == SW_WALKER_GETSTACK) {
			const struct sw_gs_key *k = (void *)key;

			err = push_stack(s, &k->h, count, k->kip,
					 nframes(k->kip, SW_MAX_FRAMES), 0, k->uip,
					 nframes(k->uip, SW_MAX_FRAMES), 0, &fused, &fcap);
		} else if (w->o.kind == SW_WALKER_STACKMAP) {
			const struct sw_sm_key *k = (void *)key;
			int nk = read_stackmap(w, k->kid, kbuf);
			int nu = read_stackmap(w, k->uid, ubuf);

			err = push_stack(s, &k->h, count, kbuf, nk, k->kcaller,
					 ubuf, nu, k->ucaller, &fused, &fcap);
		} else {
			const struct sw_fp_key *k = (void *)key;

			err = push_stack(s, &k->h, count, k->kip,
					 nframes(k->kip, SW_FP_KDEPTH), 0, k->uip,
					 nframes(k->uip, SW_FP_UDEPTH), 0, &fused, &fcap);
		}
		if (err)
			break;
	}
	free(key);
	/* the frame store has stopped moving: offsets become pointers */
	for (size_t i = 0; i < s->n; i++) {
		s->v[i].kip = s->frames + (uintptr_t)s->v[i].kip;
		s->v[i].uip = s->frames + (uintptr_t)s->v[i].uip;
	}
	return err;
}

const char *walker__source(const struct walker *w)
{
	return sw_walker_source(w->o.kind);
}

void walker__free(struct walker *w)
{
	if (!w)
		return;
	/* perf fds first: a tracefs event with users cannot be removed */
	for (size_t i = w->natt; i-- > 0;)
		sw_detach(w->f, &w->att[i]);
	free(w->att);
	bpf_object__close(w->obj);
	free(w);
}
