// SPDX-License-Identifier: MIT
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "walker.h"
#include "calib.h"
#include "ksyms.h"
#include "procs.h"
#include "tracepipe.h"
#include "sources.h"
#include "fp_key.h"
#include "getstack.skel.h"
#include "stackmap.skel.h"
#include "fp.skel.h"

/* getstack with small keys: an entry of the chunks map, as read back */
struct chunk {
	struct sw_gsc_chunk c;
	__u64 id;
};

/* stacksnoop: the events of one poll, to be sorted by time */
struct batch {
	struct walker *w;
	struct sw_event *v;
	size_t n, cap;
	int err;
};

struct walker {
	const struct sw_features *f;
	__u64 root;		/* see struct sw_config */
	struct walker_opts o;
	struct bpf_object *obj;
	/* getstack keeps counts by stack size (SW_GS_CLASS); the others, one */
	struct bpf_map *counts[SW_GS_CLASSES];
	int ncounts;
	/* getstack where hash keys are at most 512 bytes: interned chunks */
	bool small;
	struct bpf_map *chunks, *scratch_small;
	struct chunk *chunk_tab;	/* by id, as of the last read */
	size_t nchunks;
	__u64 partial;		/* stacks of the last read missing chunks */
	struct bpf_map *stacks, *config, *lost, *follow, *events;
	struct perf_buffer *pb;
	struct tracepipe *tp;
	struct batch batch;
	sw_event_fn on_event;
	void *on_event_ctx;
	__u32 magic;		/* tags our trace_printk lines */
	bool user_events;	/* the events fire in user space */
	const char *missing;	/* a program this run needs is not built */
	struct sw_attachment *att;
	size_t natt, cap;
	/* programs loaded again for multi-probe links: see attach_multi() */
	struct { int fd, multi_fd; } clones[8];
	int nclones;
	size_t nlinks, nlinked;	/* links made, targets attached through them */
	/*
	 * By the shape of a function's first instruction: the kernel's
	 * unwinder adds the caller at a uprobe there (SW_SHAPE_OTHER: never)
	 */
	bool kernel_adds_ucaller[SW_SHAPES];
};

/* Program name suffix of a sink, as in bpf/fp.bpf.c. */
static const char *sink_suffix(enum walker_sink sink)
{
	static const char *const sfx[] = {
		[SINK_COUNT] = "", [SINK_EMIT] = "_e", [SINK_PRINTK] = "_p",
		[SINK_EXPLAIN] = "_x",
	};
	return sfx[sink];
}

/*
 * Whether a getstack or stackmap program must read the caller at the
 * stack pointer itself: at a user function's entry, unless the kernel's
 * unwinder adds it at a function of that shape.
 */
static bool reads_ucaller(const struct walker *w, const struct sw_target *tg)
{
	return tg->role == SW_ROLE_UENTRY && !w->kernel_adds_ucaller[tg->shape];
}

/*
 * The program a target needs: see the SEC()s in bpf/.  The base name says
 * where the event fires and which walk it needs, the suffix where the
 * stack goes.  uentry: as reads_ucaller(); the fp walker always reads it.
 */
static const char *prog_name(const struct walker *w, enum sw_role role,
			     bool uentry, char *buf, size_t len)
{
	const char *base, *sfx = sink_suffix(w->o.sink);
	bool x = w->o.sink == SINK_EXPLAIN;

	switch (w->o.kind) {
	case SW_WALKER_GETSTACK:
	case SW_WALKER_STACKMAP:
		switch (role) {
		case SW_ROLE_KPROBE: base = "kprobe"; break;
		case SW_ROLE_TRACEPOINT: base = "tp"; break;
		default: base = uentry ? "uprobe_entry" : "uprobe"; break;
		}
		if (w->small && w->o.sink == SINK_COUNT)
			sfx = "_small";
		snprintf(buf, len, "%s_%s%s", w->o.kind == SW_WALKER_GETSTACK ?
			 "gs" : "sm", base, sfx);
		return buf;
	default:
		break;
	}
	switch (role) {
	case SW_ROLE_KPROBE:
		/* with user frames, the first stage is shared: its tail differs */
		if (w->o.ustack && !x)
			base = w->o.sink == SINK_PRINTK ? "kprobe_p" : "kprobe";
		else if (x)
			base = "kprobe";
		else
			base = w->f->helper_pid ? "kprobe_k" : "kprobe_k_v41";
		break;
	case SW_ROLE_TRACEPOINT:
		base = w->o.ustack && !x ? "tp" : x ? "tp" : "tp_k";
		break;
	case SW_ROLE_UENTRY:
		base = "uprobe_entry";
		break;
	default:
		base = "uprobe";
		break;
	}
	if ((role == SW_ROLE_KPROBE || role == SW_ROLE_TRACEPOINT) &&
	    w->o.ustack && !x)
		sfx = "";	/* fp_kprobe, fp_kprobe_p, fp_tp: the tail sinks */
	snprintf(buf, len, "fp_%s%s", base, sfx);
	return buf;
}

/* The user walk a kernel event's first stage tail-calls, by sink. */
static const char *tail_name(const struct walker *w, bool tracepoint,
			     char *buf, size_t len)
{
	snprintf(buf, len, "fp_user_%s%s", tracepoint ? "tp" : "kp",
		 sink_suffix(w->o.sink));
	return buf;
}

static struct bpf_program *prog(const struct walker *w, const char *name)
{
	return bpf_object__find_program_by_name(w->obj, name);
}

/* The counting program the calibration fires (see calibrate()). */
static const char *calib_prog_name(const struct walker *w)
{
	if (w->o.kind == SW_WALKER_STACKMAP)
		return "sm_uprobe";
	return w->small ? "gs_uprobe_small" : "gs_uprobe";
}

static struct bpf_map *map(const struct walker *w, const char *name)
{
	return bpf_object__find_map_by_name(w->obj, name);
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
	if (w->o.kind == SW_WALKER_GETSTACK) {
		/* one mode's maps: the other's may not exist on this kernel */
		w->small = !w->f->map_big_keys;
		for (int i = 0; i < SW_GS_CLASSES; i++) {
			char name[32];

			snprintf(name, sizeof(name), "counts_%d", SW_GS_CLASS(i));
			if (w->small)
				bpf_map__set_autocreate(map(w, name), false);
			else
				w->counts[w->ncounts++] = map(w, name);
		}
		if (w->small) {
			w->counts[w->ncounts++] = map(w, "counts");
			w->chunks = map(w, "chunks");
			w->scratch_small = map(w, "scratch_small");
		} else {
			bpf_map__set_autocreate(map(w, "counts"), false);
			bpf_map__set_autocreate(map(w, "chunks"), false);
			bpf_map__set_autocreate(map(w, "scratch_small"), false);
		}
	} else {
		w->counts[w->ncounts++] = bpf_object__find_map_by_name(w->obj, "counts");
	}
	w->stacks = bpf_object__find_map_by_name(w->obj, "stacks");
	w->config = bpf_object__find_map_by_name(w->obj, "config");
	w->lost = bpf_object__find_map_by_name(w->obj, "lost");
	w->follow = bpf_object__find_map_by_name(w->obj, "follow");
	w->events = bpf_object__find_map_by_name(w->obj, "events");
	return 0;
}

/* Load the program or not; one that is wanted must exist. */
static void want(struct walker *w, const char *name, bool on)
{
	struct bpf_program *p = prog(w, name);

	if (p)
		bpf_program__set_autoload(p, on);
	else if (on)
		w->missing = name;
}

static bool fork_hook_tracepoint(const struct sw_features *f)
{
	return f->prog_tracepoint && !f->legacy;
}

bool walker_can_follow(const struct sw_features *f)
{
	return fork_hook_tracepoint(f) || f->kprobes;
}

/*
 * The entry shapes to calibrate, a bit each: those of this run's targets
 * that some kernel adds the caller at.  Each costs a self-probe's attach
 * at start-up.
 */
static unsigned calib_shapes(const struct walker *w, const struct sw_targets *t)
{
	unsigned shapes = 0;

	if (w->o.kind == SW_WALKER_FP || !w->o.ustack)
		return 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].role == SW_ROLE_UENTRY &&
		    t->v[i].shape != SW_SHAPE_OTHER)
			shapes |= 1u << t->v[i].shape;
	return shapes;
}

/* Only what this run needs is loaded: an old kernel may refuse the rest. */
static void choose_programs(struct walker *w, const struct sw_targets *t,
			    unsigned shapes)
{
	struct bpf_program *p;

	bool events = w->o.sink == SINK_EMIT || w->o.sink == SINK_EXPLAIN;
	bool counting = w->o.sink == SINK_COUNT || shapes;
	char name[64];

	bpf_object__for_each_program(p, w->obj)
		bpf_program__set_autoload(p, false);
	for (size_t i = 0; i < t->n; i++) {
		const struct sw_target *tg = &t->v[i];

		want(w, prog_name(w, tg->role, reads_ucaller(w, tg), name,
				  sizeof(name)), true);
		/* calibration, after loading, picks between the two */
		if (tg->role == SW_ROLE_UENTRY && (shapes & 1u << tg->shape))
			want(w, prog_name(w, tg->role, false, name, sizeof(name)),
			     true);
	}
	/* what this run does not use, an old kernel may not even have */
	bpf_map__set_autocreate(w->events, events);
	for (int i = 0; i < w->ncounts; i++)
		bpf_map__set_autocreate(w->counts[i], counting);
	if (w->small) {
		bpf_map__set_autocreate(w->chunks, counting);
		bpf_map__set_autocreate(w->scratch_small, counting);
	}
	if (w->o.kind == SW_WALKER_FP) {
		bool tails = w->o.ustack && w->f->helper_tail_call &&
			     w->o.sink != SINK_EXPLAIN;

		want(w, tail_name(w, false, name, sizeof(name)), tails);
		want(w, tail_name(w, true, name, sizeof(name)),
		     tails && w->f->prog_tracepoint && w->o.sink != SINK_PRINTK);
		if (!w->f->map_prog_array) {
			bpf_map__set_autocreate(bpf_object__find_map_by_name(w->obj, "tails_kp"), false);
			bpf_map__set_autocreate(bpf_object__find_map_by_name(w->obj, "tails_tp"), false);
		}
		bpf_map__set_max_entries(bpf_object__find_map_by_name(w->obj, "scratch"),
					 libbpf_num_possible_cpus());
	}
	if (w->o.follow) {
		bool tp = fork_hook_tracepoint(w->f);

		want(w, tp ? "sw_fork_tp" : "sw_fork_kretprobe", true);
		want(w, tp ? "sw_exit_tp" : "sw_exit_kprobe", true);
	}
}

/* Byte offset of a field in a tracepoint's format file. */
static int tp_field_offset(const char *tracefs, const char *cat,
			   const char *ev, const char *field)
{
	char p[4096 + 256], line[512], want[64];
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
	c->jit_frame_off = f->jit_frame_off;
	c->root = w->root;
	c->magic = w->magic;
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
 * on a function entry of one shape (6.11+ does at push %rbp, and at
 * endbr64 if built with IBT; older ones never do): fire such a probe on
 * ourselves and look.
 */
static int calibrate_shape(struct walker *w, int prog_fd,
			   enum sw_entry_shape shape)
{
	struct sw_stacks s = {};
	struct sw_calib cal;
	int err;

	err = reserve_attachment(w);
	if (!err)
		err = sw_calib_run(w->f, prog_fd, shape, w->natt, &cal,
				   &w->att[w->natt]);
	if (!err)
		w->natt++;
	if (!err)
		err = walker__read(w, &s);
	if (err)
		goto out;
	err = -ENODATA;
	for (size_t i = 0; i < s.n; i++) {
		if (s.v[i].nu >= 1 && s.v[i].uip[0] == cal.target) {
			/* had it not, [1] would be from our caller's frame */
			w->kernel_adds_ucaller[shape] = s.v[i].nu >= 2 &&
							s.v[i].uip[1] == cal.ret;
			err = 0;
		}
	}
out:
	sw_stacks__free(&s);
	/* one at a time: the maps may have room for a single stack */
	for (int i = 0; i < w->ncounts; i++)
		clear_map(w->counts[i]);
	if (w->stacks)
		clear_map(w->stacks);	/* its one stack must not take a slot */
	if (w->chunks)
		clear_map(w->chunks);
	return err;
}

static int calibrate(struct walker *w, unsigned shapes)
{
	int prog_fd = bpf_program__fd(prog(w, calib_prog_name(w)));
	struct sw_config c;
	int err;

	base_config(w, &c);
	c.flags = SW_CFG_USTACK;
	c.tgid = getpid();
	c.tgid_mask = ~0u;
	c.cpu_mask = 0;
	c.key_mask = 0;
	c.follow_mask = 0;
	err = configure(w, &c);
	for (int shape = 0; shape < SW_SHAPES && !err; shape++)
		if (shapes & 1u << shape)
			err = calibrate_shape(w, prog_fd, shape);
	return err;
}

/*
 * Where a kernel frame-pointer walk ends: the return into the code every
 * task starts in (6.6 split it into ret_from_fork_asm and a C part).
 */
static int find_root(struct walker *w)
{
	static const char *const names[] = { "ret_from_fork_asm", "ret_from_fork" };
	const struct ksym *s = NULL;
	struct ksyms *ks;
	int err = ksyms__new(&ks, NULL);

	if (err)
		return err;
	for (size_t i = 0; i < 2 && !s; i++)
		s = ksyms__get(ks, names[i]);
	if (s)
		w->root = (s->end - s->addr) << 32 | (__u32)s->addr;
	ksyms__free(ks);
	return s ? 0 : -ENOENT;
}

/*
 * What the maps storage sizes can take once full, as the kernel charges a
 * hash element (its key and value after a header of about 64 bytes) or a
 * stack map bucket: a preallocated map pins it all at once, the others
 * as stacks arrive.
 */
static __u64 map_bytes(const struct walker *w)
{
	const struct bpf_map *m[SW_GS_CLASSES + 2];
	int n = 0;
	__u64 sum = 0;

	for (int i = 0; i < w->ncounts; i++)
		m[n++] = w->counts[i];
	if (w->stacks)
		m[n++] = w->stacks;
	if (w->chunks)
		m[n++] = w->chunks;
	for (int i = 0; i < n; i++)
		if (bpf_map__autocreate(m[i]))
			sum += (__u64)bpf_map__max_entries(m[i]) *
			       (64 + bpf_map__key_size(m[i]) +
				bpf_map__value_size(m[i]));
	return sum;
}

int walker__open(struct walker **out, const struct sw_features *f,
		 const struct walker_opts *o, const struct sw_targets *t,
		 __u64 *need)
{
	struct walker *w = calloc(1, sizeof(*w));
	struct sw_config c;
	unsigned calib;
	int err;

	if (!w)
		return -ENOMEM;
	w->f = f;
	w->o = *o;
	w->magic = 0x57000000 | (getpid() & 0xffffff);
	w->user_events = t->n && (t->v[0].role == SW_ROLE_UENTRY ||
				  t->v[0].role == SW_ROLE_UINSIDE);
	err = open_object(w);
	if (err)
		goto fail;
	calib = calib_shapes(w, t);
	choose_programs(w, t, calib);
	if (w->missing) {
		/* a walker/sink/probe combination without a program: a bug */
		err = -ENOSYS;
		goto fail;
	}
	if (calib)
		bpf_program__set_autoload(prog(w, calib_prog_name(w)), true);
	for (int i = 0; i < w->ncounts; i++)
		bpf_map__set_max_entries(w->counts[i], o->storage);
	if (w->stacks)
		bpf_map__set_max_entries(w->stacks, o->storage);
	/* a stack under 64 frames a side adds two new chunks at most */
	if (w->chunks)
		bpf_map__set_max_entries(w->chunks, 2 * o->storage);
	*need = map_bytes(w);
	if (o->map_limit && *need > o->map_limit) {
		err = -E2BIG;
		goto fail;
	}
	bpf_object__set_kversion(w->obj, f->version);
	err = bpf_object__load(w->obj);
	if (err)
		goto fail;
	if (w->o.kind == SW_WALKER_FP && o->ustack && f->helper_tail_call &&
	    o->sink != SINK_EXPLAIN) {
		char name[64];
		__u32 idx = 0;
		int pfd = bpf_program__fd(prog(w, tail_name(w, false, name, sizeof(name))));

		err = bpf_map_update_elem(bpf_map__fd(bpf_object__find_map_by_name(w->obj, "tails_kp")),
					  &idx, &pfd, BPF_ANY);
		if (!err && f->prog_tracepoint && o->sink != SINK_PRINTK) {
			pfd = bpf_program__fd(prog(w, tail_name(w, true, name, sizeof(name))));
			err = bpf_map_update_elem(bpf_map__fd(bpf_object__find_map_by_name(w->obj, "tails_tp")),
						  &idx, &pfd, BPF_ANY);
		}
		if (err) {
			err = -errno;
			goto fail;
		}
	}
	if (calib) {
		err = calibrate(w, calib);
		if (err)
			goto fail;
	}
	/* without kallsyms the walk ends one frame late: no reason to fail */
	if (o->kind == SW_WALKER_FP && f->unwinder == SW_UNWINDER_FP)
		find_root(w);
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

/* Whether tg can share a BPF link with other targets: see attach_multi(). */
static bool multi_ok(const struct walker *w, const struct sw_target *tg)
{
	/* fp programs tail-call, and a tail call must stay in its program type */
	if (w->o.kind == SW_WALKER_FP || w->f->legacy)
		return false;
	return tg->spec.kind == SW_PROBE_UPROBE && w->f->link_uprobe_multi;
}

/*
 * The program at fd loaded again, as a link of the target's kind needs it:
 * the same instructions, maps and all, under another expected attach
 * type.  The original stays for targets a link refuses alone.
 */
static int multi_prog(struct walker *w, const struct bpf_program *p)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .kern_version = w->f->version,
		    .expected_attach_type = SW_TRACE_UPROBE_MULTI);
	int fd = bpf_program__fd(p), mfd;

	for (int i = 0; i < w->nclones; i++)
		if (w->clones[i].fd == fd)
			return w->clones[i].multi_fd;
	if (w->nclones == (int)(sizeof(w->clones) / sizeof(w->clones[0])))
		return -ENOSPC;
	mfd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, bpf_program__name(p), "GPL",
			    bpf_program__insns(p), bpf_program__insn_cnt(p), &o);
	if (mfd < 0)
		return mfd;
	w->clones[w->nclones].fd = fd;
	w->clones[w->nclones++].multi_fd = mfd;
	return mfd;
}

/* Whether two targets can share one link. */
static bool same_link(const struct walker *w, const struct sw_target *a,
		      const struct sw_target *b)
{
	return a->spec.pid == b->spec.pid && a->role == b->role &&
	       reads_ucaller(w, a) == reads_ucaller(w, b) &&
	       !strcmp(a->spec.path, b->spec.path) &&
	       !a->spec.ref_ctr_off == !b->spec.ref_ctr_off;
}

/*
 * Attach the n targets at ix with one link; a link the kernel refuses as
 * a whole is split in two, down to single targets, which then go the
 * one-perf-event way, so that the one it refuses is named as without
 * links.  Returns 0, or an error not about a target (memory, fds).
 */
static int attach_split(struct walker *w, struct sw_targets *t, size_t *ix,
			size_t n, int prog_fd, int multi_fd)
{
	struct sw_target *t0 = &t->v[ix[0]];
	struct sw_multi m = { .n = n, .path = t0->spec.path, .pid = t0->spec.pid };
	int err = reserve_attachment(w);

	if (err)
		return err;
	if (n == 1) {
		t0->attach_err = add_attachment(w, prog_fd, &t0->spec);
		return sw_attach_target_err(t0->attach_err) ? 0 : t0->attach_err;
	}
	m.offsets = calloc(n, sizeof(*m.offsets));
	m.ref_ctr_offs = t0->spec.ref_ctr_off ? calloc(n, sizeof(*m.offsets)) : NULL;
	err = !m.offsets || (t0->spec.ref_ctr_off && !m.ref_ctr_offs) ?
	      -ENOMEM : 0;
	for (size_t i = 0; !err && i < n; i++) {
		m.offsets[i] = t->v[ix[i]].spec.offset;
		if (m.ref_ctr_offs)
			m.ref_ctr_offs[i] = t->v[ix[i]].spec.ref_ctr_off;
	}
	if (!err)
		err = sw_attach_multi(multi_fd, &m, &w->att[w->natt]);
	free(m.offsets);
	free(m.ref_ctr_offs);
	if (!err) {
		w->natt++;
		w->nlinks++;
		w->nlinked += n;
		for (size_t i = 0; i < n; i++)
			t->v[ix[i]].attach_err = 0;
		return 0;
	}
	if (!sw_attach_target_err(err))
		return err;
	err = attach_split(w, t, ix, n / 2, prog_fd, multi_fd);
	return err ? err : attach_split(w, t, ix + n / 2, n - n / 2, prog_fd,
					multi_fd);
}

/*
 * Where the kernel has multi-probe links, the targets that can share one
 * are attached in groups: a wildcard over a whole library takes seconds,
 * not minutes, to attach and to detach.  The rest are marked for the
 * one-by-one way (attach_err = 1).
 */
static int attach_multi(struct walker *w, struct sw_targets *t)
{
	size_t *ix = malloc(t->n * sizeof(*ix)), n;
	int err = ix ? 0 : -ENOMEM;

	for (size_t i = 0; i < t->n; i++)
		t->v[i].attach_err = multi_ok(w, &t->v[i]) ? -EAGAIN : 1;
	for (size_t i = 0; !err && i < t->n; i++) {
		struct sw_target *tg = &t->v[i];
		const struct bpf_program *p;
		char name[64];
		int mfd;

		if (tg->attach_err != -EAGAIN)
			continue;
		n = 0;
		for (size_t j = i; j < t->n; j++)
			if (t->v[j].attach_err == -EAGAIN && same_link(w, tg, &t->v[j]))
				ix[n++] = j;
		if (n == 1) {
			tg->attach_err = 1;
			continue;
		}
		p = prog(w, prog_name(w, tg->role, reads_ucaller(w, tg), name,
				      sizeof(name)));
		mfd = multi_prog(w, p);
		if (mfd < 0) {
			/* the kernel said it had them: one by one, then */
			for (size_t j = 0; j < n; j++)
				t->v[ix[j]].attach_err = 1;
			continue;
		}
		err = attach_split(w, t, ix, n, bpf_program__fd(p), mfd);
	}
	free(ix);
	return err;
}

/*
 * One function of a wildcard the kernel will not probe (a uprobe on a
 * lock-prefixed instruction, a tracepoint perf may not sample) must not
 * cost the rest: of several targets, one the kernel refuses is skipped,
 * and the caller says which.  What is no fault of the target (memory,
 * file descriptors) fails them all; so does every target failing.
 */
int walker__attach(struct walker *w, struct sw_targets *t,
		   const struct sw_target **failed)
{
	const struct sw_target *first = NULL;
	size_t ok = 0;
	int err;

	*failed = NULL;
	if (w->o.follow) {
		err = attach_follow(w);
		if (err)
			return err;
	}
	err = t->n > 1 ? attach_multi(w, t) : 0;
	if (err)
		return err;
	for (size_t i = 0; i < t->n; i++) {
		struct sw_target *tg = &t->v[i];
		char name[64];

		if (t->n == 1 || tg->attach_err == 1) {
			prog_name(w, tg->role, reads_ucaller(w, tg), name, sizeof(name));
			err = add_attachment(w, bpf_program__fd(prog(w, name)), &tg->spec);
			tg->attach_err = err;
		}
		err = tg->attach_err;
		if (!err) {
			ok++;
			continue;
		}
		if (!first)
			first = tg;
		if (t->n == 1 || !sw_attach_target_err(err)) {
			*failed = tg;
			return err;
		}
	}
	if (!ok && first) {
		*failed = first;
		return first->attach_err;
	}
	return 0;
}

void walker__links(const struct walker *w, size_t *links, size_t *linked)
{
	*links = w->nlinks;
	*linked = w->nlinked;
}

int walker__follow(struct walker *w, pid_t pid)
{
	struct sw_config c;
	__u32 k = pid, zero = 0;
	__u8 one = 1;

	if (bpf_map_update_elem(bpf_map__fd(w->follow), &k, &one, BPF_ANY))
		return -errno;
	/* the command is held at its exec: nothing of it fires meanwhile */
	if (bpf_map_lookup_elem(bpf_map__fd(w->config), &zero, &c))
		return -errno;
	c.follow_root = pid;
	return bpf_map_update_elem(bpf_map__fd(w->config), &zero, &c, BPF_ANY) ? -errno : 0;
}

__u64 walker__trace_lost(const struct walker *w)
{
	return w->tp ? tracepipe__lost(w->tp) : 0;
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

/* A key's frames, whichever walker's key it is. */
struct key_frames {
	const struct sw_key_hdr *h;
	const __u64 *k, *u;
	size_t nk, nu;
	__u64 kcaller, ucaller;		/* stackmap: inserted after frame 0 */
	__u64 kbuf[SW_MAX_FRAMES + 1], ubuf[SW_MAX_FRAMES + 1];
};

/*
 * Every key of map m and its 8-byte value, one after the other, in
 * *recs (to be freed).  A count's key is read before what it refers to
 * (stack map entries, chunks), which was stored before it: so that is
 * there when read after.
 */
static int snapshot(struct bpf_map *m, char **recs, size_t *n)
{
	size_t ks = bpf_map__key_size(m), rec = ks + sizeof(__u64), cap = 0;
	int fd = bpf_map__fd(m);
	char *key = malloc(ks), *v = NULL;
	bool first = true;

	*recs = NULL;
	*n = 0;
	if (!key)
		return -ENOMEM;
	/* the kernel reads the key before it writes the next: one buffer */
	while (!bpf_map_get_next_key(fd, first ? NULL : key, key)) {
		first = false;
		if (*n == cap) {
			char *more = realloc(v, (cap = cap ? 2 * cap : 256) * rec);

			if (!more) {
				free(v);
				free(key);
				return -ENOMEM;
			}
			v = more;
		}
		if (bpf_map_lookup_elem(fd, key, v + *n * rec + ks))
			continue;	/* deleted meanwhile */
		memcpy(v + *n * rec, key, ks);
		(*n)++;
	}
	free(key);
	*recs = v;
	return 0;
}

static int by_chunk_id(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The chunks map, whole, sorted by id: once per read. */
static int load_chunks(struct walker *w)
{
	char *recs;
	int err;

	free(w->chunk_tab);
	w->chunk_tab = NULL;
	/* struct chunk is a key and its value, as snapshot() lays them out */
	err = snapshot(w->chunks, &recs, &w->nchunks);
	if (err)
		return err;
	w->chunk_tab = (struct chunk *)recs;
	qsort(w->chunk_tab, w->nchunks, sizeof(*w->chunk_tab), by_chunk_id);
	return 0;
}

/*
 * The n frames of the side whose last chunk has this id, into buf; how
 * many were found.  Parents lead from the last chunk back to the first,
 * whose frames come first.  A chunk not in the map (not to happen: none
 * is removed) leaves its frames out, and *partial says so.
 */
static size_t chunk_frames(const struct walker *w, __u64 id, size_t n,
			   __u64 *buf, bool *partial)
{
	const struct sw_gsc_chunk *chain[SW_GSC_CHUNKS];
	size_t need = (n + SW_GSC_FRAMES - 1) / SW_GSC_FRAMES, have = 0, got = 0;
	struct chunk want = { .id = id };

	if (need > SW_GSC_CHUNKS) {
		need = SW_GSC_CHUNKS;
		*partial = true;
	}
	while (have < need && want.id) {
		const struct chunk *c = bsearch(&want, w->chunk_tab, w->nchunks,
						sizeof(*c), by_chunk_id);

		if (!c)
			break;
		chain[have++] = &c->c;
		want.id = c->c.parent;
	}
	if (have < need || want.id)
		*partial = true;
	/* chain[i] is chunk need - 1 - i: the first found is the last */
	for (size_t i = have; i-- > 0;) {
		size_t first = (need - 1 - i) * SW_GSC_FRAMES;
		size_t len = n - first < SW_GSC_FRAMES ? n - first : SW_GSC_FRAMES;

		memcpy(buf + got, chain[i]->ip, len * sizeof(*buf));
		got += len;
	}
	return got;
}

/* A key's frames, whichever walker's key it is; counted: from a counts map. */
static void key_frames(struct walker *w, const void *key, bool counted,
		       struct key_frames *f)
{
	f->kcaller = f->ucaller = 0;
	if (w->small && counted) {
		const struct sw_gsc_key *k = key;
		bool partial = false;

		f->h = &k->h;
		f->nk = chunk_frames(w, k->kid, k->h.nk, f->kbuf, &partial);
		f->nu = chunk_frames(w, k->uid, k->h.nu, f->ubuf, &partial);
		f->k = f->kbuf;
		f->u = f->ubuf;
		w->partial += partial;
	} else if (w->o.kind == SW_WALKER_GETSTACK) {
		const struct sw_gs_key *k = key;

		f->h = &k->h;
		f->nk = k->h.nk;
		f->nu = k->h.nu;
		f->k = k->ip;
		f->u = k->ip + f->nk;
	} else if (w->o.kind == SW_WALKER_STACKMAP) {
		const struct sw_sm_key *k = key;

		f->h = &k->h;
		f->nk = read_stackmap(w, k->kid, f->kbuf);
		f->nu = read_stackmap(w, k->uid, f->ubuf);
		f->k = f->kbuf;
		f->u = f->ubuf;
		f->kcaller = k->kcaller;
		f->ucaller = k->ucaller;
	} else {
		const struct sw_fp_key *k = key;

		f->h = &k->h;
		f->k = k->kip;
		f->u = k->uip;
		f->nk = nframes(k->kip, SW_FP_KDEPTH);
		f->nu = nframes(k->uip, SW_FP_UDEPTH);
	}
	/*
	 * Some kernels' unwinders (5.15's, at a tracepoint) give the frame
	 * where the event fired twice: once from the registers perf made up
	 * for it, once from the frame chain.  At a probe or a tracepoint,
	 * frame 0 is where the event fired and frame 1 a return into the
	 * caller: they are equal only when one frame was given twice.
	 */
	if (f->nk >= 2 && f->k[0] == f->k[1] && !f->kcaller) {
		f->k++;
		f->nk--;
	}
	/*
	 * A 0 return address is where a stack ends (bcc, bpftrace and gdb
	 * stop there): the kernel's frame-pointer unwinders store it and go
	 * on, and what they read after it is no frame.
	 */
	f->nk = nframes(f->k, f->nk);
	f->nu = nframes(f->u, f->nu);
}

/* Every stack counted in map m, appended to s. */
static int read_counts(struct walker *w, struct bpf_map *m, struct sw_stacks *s,
		       struct key_frames *f, size_t *fused, size_t *fcap)
{
	size_t ks = bpf_map__key_size(m), n;
	/* room for the largest key a header may claim */
	char *key = calloc(1, sizeof(struct sw_gs_key) > ks ? sizeof(struct sw_gs_key) : ks);
	char *recs = NULL;
	__u64 count;
	int err;

	if (!key)
		return -ENOMEM;
	err = snapshot(m, &recs, &n);
	if (!err && w->small)
		err = load_chunks(w);
	for (size_t i = 0; i < n && !err; i++) {
		memcpy(key, recs + i * (ks + sizeof(count)), ks);
		memcpy(&count, recs + i * (ks + sizeof(count)) + ks, sizeof(count));
		key_frames(w, key, true, f);
		err = push_stack(s, f->h, count, f->k, f->nk, f->kcaller, f->u,
				 f->nu, f->ucaller, fused, fcap);
	}
	free(recs);
	free(key);
	return err;
}

int walker__counted_tgids(struct walker *w, void (*fn)(void *ctx, __u32 tgid),
			  void *ctx)
{
	for (int i = 0; i < w->ncounts; i++) {
		size_t ks = bpf_map__key_size(w->counts[i]);
		int fd = bpf_map__fd(w->counts[i]);
		char *key = malloc(ks);
		bool first = true;
		__u32 tgid;

		if (!key)
			return -ENOMEM;
		/* every walker's key starts with struct sw_key_hdr: keys suffice */
		while (!bpf_map_get_next_key(fd, first ? NULL : key, key)) {
			first = false;
			memcpy(&tgid, key, sizeof(tgid));
			fn(ctx, tgid);
		}
		free(key);
	}
	return 0;
}

int walker__read(struct walker *w, struct sw_stacks *s)
{
	struct key_frames *f = malloc(sizeof(*f));
	size_t fused = 0, fcap = 0;
	int err = 0;

	if (!f)
		return -ENOMEM;
	free(s->frames);
	s->frames = NULL;
	s->n = 0;
	w->partial = 0;
	for (int i = 0; i < w->ncounts && !err; i++)
		err = read_counts(w, w->counts[i], s, f, &fused, &fcap);
	free(f);
	/* the frame store has stopped moving: offsets become pointers */
	for (size_t i = 0; i < s->n; i++) {
		s->v[i].kip = s->frames + (uintptr_t)s->v[i].kip;
		s->v[i].uip = s->frames + (uintptr_t)s->v[i].uip;
	}
	return err;
}

__u64 walker__partial(const struct walker *w)
{
	return w->partial;
}

/* ---- stacksnoop: events one by one ---- */

/* The frames of f into ev, the entry callers in place. */
static void event_frames(struct sw_event *ev, const struct key_frames *f)
{
	size_t n = 0, max = sizeof(ev->frames) / sizeof(ev->frames[0]);

	ev->stack.kip = ev->frames;
	for (size_t i = 0; i < f->nk && n < max; i++) {
		ev->frames[n++] = f->k[i];
		if (i == 0 && f->kcaller && n < max)
			ev->frames[n++] = f->kcaller;
	}
	ev->stack.nk = n;
	ev->stack.uip = ev->frames + n;
	for (size_t i = 0; i < f->nu && n < max; i++) {
		ev->frames[n++] = f->u[i];
		if (i == 0 && f->ucaller && n < max)
			ev->frames[n++] = f->ucaller;
	}
	ev->stack.nu = n - ev->stack.nk;
}

/* An explain record holds one walk: the event's own side of the stack. */
static void explain_frames(struct sw_event *ev, const struct sw_fp_explain *x,
			   bool user)
{
	size_t n = nframes(x->ret, SW_FP_XDEPTH);

	memcpy(ev->frames, x->ret, n * sizeof(__u64));
	ev->stack.kip = ev->stack.uip = ev->frames;
	ev->stack.nk = user ? 0 : n;
	ev->stack.nu = user ? n : 0;
	ev->explain = x;
}


static void on_sample(void *ctx, int cpu, void *data, __u32 size)
{
	struct batch *b = ctx;
	const struct sw_event_hdr *e = data;
	struct key_frames *f;
	struct sw_event *ev;

	(void)cpu;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64;
		void *v = realloc(b->v, cap * sizeof(*b->v));

		if (!v) {
			b->err = -ENOMEM;
			return;
		}
		b->v = v;
		b->cap = cap;
	}
	if (size < sizeof(*e))
		return;
	ev = &b->v[b->n];
	memset(ev, 0, offsetof(struct sw_event, frames));
	ev->explain = NULL;
	ev->ts = e->ts;
	ev->tid = e->tid;
	ev->cpu = e->cpu;
	if (b->w->o.sink == SINK_EXPLAIN) {
		const struct sw_fp_explain *x = (const void *)(e + 1);
		struct sw_fp_explain *copy = malloc(sizeof(*copy));

		if (!copy || size < sizeof(*e) + sizeof(*x)) {
			free(copy);
			return;
		}
		memcpy(copy, x, sizeof(*copy));
		ev->stack.tgid = x->h.tgid;
		memcpy(ev->stack.comm, x->h.comm, SW_COMM_LEN);
		ev->stack.kstop = x->h.kstop;
		ev->stack.ustop = x->h.ustop;
		explain_frames(ev, copy, b->w->user_events);
	} else {
		f = malloc(sizeof(*f));
		if (!f) {
			b->err = -ENOMEM;
			return;
		}
		key_frames(b->w, e + 1, false, f);
		ev->stack.tgid = f->h->tgid;
		memcpy(ev->stack.comm, f->h->comm, SW_COMM_LEN);
		ev->stack.kstop = f->h->kstop;
		ev->stack.ustop = f->h->ustop;
		event_frames(ev, f);
		free(f);
	}
	ev->stack.count = 1;
	b->n++;
}

/* A trace_pipe event (4.1-4.3) into the batch, as a perf one would be. */
static void on_trace_event(const struct tp_event *t, void *ctx)
{
	struct walker *w = ctx;
	struct sw_fp_key *key = calloc(1, sizeof(*key));
	struct sw_event_hdr *e;
	char *rec;

	if (!key)
		return;
	for (__u32 i = 0; i < t->nk && i < SW_FP_KDEPTH; i++)
		key->kip[i] = t->k[i];
	for (__u32 i = 0; i < t->nu && i < SW_FP_UDEPTH; i++)
		key->uip[i] = t->u[i];
	key->h.kstop = t->kstop;
	key->h.ustop = t->ustop;
	/* trace_pipe gives the thread: its process names the frames */
	key->h.tgid = procs_tgid_of(t->tid);
	memcpy(key->h.comm, t->comm, SW_COMM_LEN);
	rec = malloc(sizeof(*e) + sizeof(*key));
	if (rec) {
		e = (void *)rec;
		e->ts = t->ts;
		e->tid = t->tid;
		e->cpu = t->cpu;
		memcpy(e + 1, key, sizeof(*key));
		on_sample(&w->batch, t->cpu, rec, sizeof(*e) + sizeof(*key));
		free(rec);
	}
	free(key);
}

static int by_time(const void *a, const void *b)
{
	const struct sw_event *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

int walker__events_open(struct walker *w, size_t pages, sw_event_fn fn,
			void *ctx)
{
	w->on_event = fn;
	w->on_event_ctx = ctx;
	if (w->o.sink == SINK_PRINTK)
		return tracepipe__open(&w->tp, w->f->tracefs, w->magic);
	w->pb = perf_buffer__new(bpf_map__fd(w->events), pages, on_sample,
				 NULL, &w->batch, NULL);
	return w->pb ? 0 : -errno;
}

int walker__events_fd(const struct walker *w)
{
	if (w->tp)
		return tracepipe__fd(w->tp);
	return w->pb ? perf_buffer__epoll_fd(w->pb) : -1;
}

/* Everything now in the buffers, sorted by time: CPUs' buffers interleave. */
int walker__events_poll(struct walker *w)
{
	struct batch *b = &w->batch;
	int err;

	b->w = w;
	b->n = 0;
	b->err = 0;
	if (w->tp)
		err = tracepipe__read(w->tp, on_trace_event, w);
	else
		err = perf_buffer__consume(w->pb);
	if (!err)
		err = b->err;
	qsort(b->v, b->n, sizeof(*b->v), by_time);
	for (size_t i = 0; i < b->n; i++) {
		struct sw_event *ev = &b->v[i];

		/* the batch moved as it grew: frames point into their own event */
		ev->stack.kip = ev->frames;
		ev->stack.uip = ev->explain ? ev->frames : ev->frames + ev->stack.nk;
		w->on_event(ev, w->on_event_ctx);
		free((void *)b->v[i].explain);
	}
	return err;
}

const char *walker__source(const struct walker *w)
{
	return sw_walker_source(w->o.kind);
}

/* in the detaching child: nothing open but the perf events and @fd */
static void keep_only(const struct walker *w, int fd)
{
	int max = (int)sysconf(_SC_OPEN_MAX);

	if (max < 0 || max > 65536)
		max = 65536;
	for (int i = 3; i < max; i++) {
		bool keep = i == fd;

		for (size_t j = 0; j < w->natt && !keep; j++)
			keep = w->att[j].perf_fd == i;
		if (!keep)
			close(i);
	}
}

/*
 * Detaching a perf event waits out RCU grace periods in the kernel (~60
 * ms each here), which start-up plus tear-down should not pay.  A child
 * that outlives us holds the last references and closes them once ours
 * are closed (whoever closes last waits); we disable the events, so
 * nothing fires into maps no one reads, and go.  tracefs
 * probe events (old kernels) are removed here, in order, as before: a run
 * must not leave one behind for anyone to see.
 */
void walker__detach_async(struct walker *w)
{
	int go[2], null;
	char c;
	pid_t pid;

	size_t nopen = 0;

	if (!w)
		return;
	for (size_t i = 0; i < w->natt; i++) {
		if (w->att[i].tracefs_event)
			return;		/* detached in order by walker__free */
		nopen += w->att[i].perf_fd >= 0;
	}
	if (!nopen)
		return;		/* already detached, or nothing attached */
	for (size_t i = 0; i < w->natt; i++)
		ioctl(w->att[i].perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	if (pipe2(go, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return;
	}
	if (!pid) {
		/* a grandchild, so init reaps it; no terminal, no pipe held */
		if (fork())
			_exit(0);
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		keep_only(w, go[0]);
		/* closing last is what costs: wait until ours are closed */
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		for (size_t i = 0; i < w->natt; i++)
			close(w->att[i].perf_fd);
		_exit(0);
	}
	close(go[0]);
	waitpid(pid, NULL, 0);
	/* ours are not the last references now: closing them is cheap */
	for (size_t i = 0; i < w->natt; i++) {
		close(w->att[i].perf_fd);
		w->att[i].perf_fd = -1;
	}
	close(go[1]);
}

void walker__free(struct walker *w)
{
	if (!w)
		return;
	perf_buffer__free(w->pb);
	tracepipe__free(w->tp);
	free(w->batch.v);
	/* perf fds first: a tracefs event with users cannot be removed */
	for (size_t i = w->natt; i-- > 0;)
		sw_detach(w->f, &w->att[i]);
	free(w->att);
	for (int i = 0; i < w->nclones; i++)
		close(w->clones[i].multi_fd);
	free(w->chunk_tab);
	bpf_object__close(w->obj);
	free(w);
}
