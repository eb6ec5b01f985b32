// SPDX-License-Identifier: MIT
/*
 * The mechanics every walker shares: its BPF object opened and loaded with
 * the programs this run needs, configured and calibrated; the targets
 * attached (a few uprobe_multi links where the kernel has them, a perf
 * event each where not), and detached.  What differs by walker is its
 * descriptor's (walkers.h).
 */
#include <errno.h>
#include <signal.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "interrupt.h"
#include "walker_int.h"
#include "../compat/mapkeys.h"
#include "calib.h"
#include "ksyms.h"
#include "tracepipe.h"
#include "sources.h"
#include "vec.h"

/*
 * Whether a getstack or stackmap program must read the caller at the
 * stack pointer itself: at a user function's entry, unless the kernel's
 * unwinder adds it at a function of that shape.
 */
static bool reads_ucaller(const struct walker *w, const struct sw_target *tg)
{
	return tg->role == SW_ROLE_UENTRY && !w->kernel_adds_ucaller[tg->shape];
}

void walker_want(struct walker *w, struct bpf_program *p, bool on)
{
	if (p)
		bpf_program__set_autoload(p, on);
	else if (on)
		w->missing = true;
}

/* Whether tg's program takes its caller by its uframes rule. */
static bool shifts(const struct walker *w, const struct sw_target *tg)
{
	if (!tg->uframe || !w->o.ustack)
		return false;
	return w->d->uframes == SW_UFRAMES_ALL ||
	       (w->d->uframes == SW_UFRAMES_RBP_KEPT &&
		!(tg->uframe & SW_UFRAME_BP_SAVED));
}

/* The program tg needs. */
static struct bpf_program *target_prog(const struct walker *w,
				       const struct sw_target *tg)
{
	return w->d->prog(w, shifts(w, tg) ? SW_ROLE_USHIFT : tg->role,
			  reads_ucaller(w, tg));
}

/* The uframes rules of the targets that take them, at their keys. */
static int fill_uframes(const struct walker *w, const struct sw_targets *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct sw_target *tg = &t->v[i];

		if (shifts(w, tg) &&
		    bpf_map_update_elem(bpf_map__fd(w->uframes), &tg->uframe_key,
					&tg->uframe, BPF_ANY))
			return -errno;
	}
	return 0;
}

static bool fork_hook_tracepoint(const struct sw_features *f)
{
	return f->prog_tracepoint && !f->legacy;
}

bool walker_can_follow(const struct sw_features *f)
{
	/* 4.1's fork hook could not say whose fork it saw */
	return f->helper_pid && (fork_hook_tracepoint(f) || f->kprobes);
}

/*
 * The programs that follow forks, execs and exits run as raw tracepoints
 * where the kernel has them and BTF says where a task keeps its id (the
 * raw sched_process_fork hands over the child's task): the kernel runs
 * those whatever else runs on the CPU.  A perf event's program it skips
 * while another, or a BPF map syscall (perhaps our own, preempted in it),
 * holds the CPU: a child of COMMAND would go untraced.
 */
static bool raw_hooks(const struct sw_features *f)
{
	return fork_hook_tracepoint(f) && f->prog_raw_tp && f->task_pid_off;
}

void walker_want_hook(struct walker *w, struct bpf_program *p, bool on)
{
	walker_want(w, p, on);
	if (p && on && raw_hooks(w->f))
		bpf_program__set_type(p, BPF_PROG_TYPE_RAW_TRACEPOINT);
}

/*
 * The entry shapes to calibrate, a bit each: those of this run's targets
 * that some kernel adds the caller at.  Each costs a self-probe's attach
 * at start-up.
 */
static unsigned calib_shapes(const struct walker *w, const struct sw_targets *t)
{
	unsigned shapes = 0;

	if (!w->d->calib_prog || !w->d->calib_prog(w) || !w->o.ustack)
		return 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].role == SW_ROLE_UENTRY &&
		    t->v[i].shape != SW_SHAPE_OTHER)
			shapes |= 1u << t->v[i].shape;
	return shapes;
}

/*
 * Whether this kernel attaches probes of kind k through links.  Kernel
 * functions' with either unwinder: fprobe hands a link's program the
 * registers at the function's entry as a kprobe does, %rsp at the return
 * address, so the caller the frame-pointer unwinder skips there is found
 * the same way (the fp612 test kernel: tests/vm/run-tests.sh,
 * kprobe_links).
 */
static bool links_for(const struct walker *w, enum sw_probe_kind k)
{
	if (k == SW_PROBE_UPROBE)
		return w->f->link_uprobe_multi;
	return k == SW_PROBE_KPROBE && w->f->link_kprobe_multi;
}

/*
 * A walker whose programs tail-call one another takes multi-probe links
 * when every program that shares its tail-call maps is loaded for them
 * (the kernel keeps a tail call within one attach type): all its callers
 * and walks, when every target is a uprobe (6.6+) or every one a kernel
 * function's entry (kprobe_multi).  Its own kernel probes (fork and exit
 * on kernels without those tracepoints, calibration's self-probe) stay
 * perf events.
 */
static void choose_multi(struct walker *w, const struct sw_targets *t)
{
	const struct bpf_program *calib = w->d->calib_prog ? w->d->calib_prog(w) : NULL;
	struct bpf_program *p;

	if (!w->d->multi_tails || !t->n || !links_for(w, t->v[0].spec.kind))
		return;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].spec.kind != t->v[0].spec.kind)
			return;
	w->multi_typed = true;
	bpf_object__for_each_program(p, w->obj)
		if (bpf_program__autoload(p) && p != calib &&
		    p != w->fork_kretprobe && p != w->fork_kprobe &&
		    p != w->exit_kprobe &&
		    bpf_program__type(p) == BPF_PROG_TYPE_KPROBE)
			bpf_program__set_expected_attach_type(p,
				attach_multi_type(t->v[0].spec.kind));
}

/*
 * Without fork tracepoints (4.2-4.6): where the task keeps its pid was
 * measured (src/task_calib.c), so the child is seen at wake_up_new_task,
 * before it first runs; else at the fork function's return, which a
 * child on another CPU may outrun (its first events then go untraced).
 */
static bool fork_kprobe_ok(const struct walker *w)
{
	struct ksyms *ks = w->o.kernel_symbols(w->o.ksyms_ctx);

	return w->o.task41.pid && w->fork_kprobe && ks &&
	       ksyms_get(ks, "wake_up_new_task");
}

/* Whether sw_fork_tp's hooks run: -- COMMAND, or the walker's own use */
static bool forks(const struct walker *w)
{
	return w->o.follow || w->fork_hooks;
}

/* Only what this run needs is loaded: an old kernel may refuse the rest. */
static void choose_programs(struct walker *w, const struct sw_targets *t,
			    unsigned shapes)
{
	struct bpf_program *p;

	bool events = w->o.sink == SINK_EMIT || w->o.sink == SINK_EXPLAIN;
	bool counting = w->o.sink == SINK_COUNT || shapes;

	bpf_object__for_each_program(p, w->obj)
		bpf_program__set_autoload(p, false);
	for (size_t i = 0; i < t->n; i++) {
		const struct sw_target *tg = &t->v[i];

		walker_want(w, target_prog(w, tg), true);
		/* calibration, after loading, picks between the two */
		if (tg->role == SW_ROLE_UENTRY && (shapes & 1u << tg->shape))
			walker_want(w, w->d->prog(w, tg->role, false), true);
	}
	/* what this run does not use, an old kernel may not even have */
	bpf_map__set_autocreate(w->events, events);
	bpf_map__set_autocreate(w->uframes, false);
	for (size_t i = 0; i < t->n; i++)
		if (shifts(w, &t->v[i]))
			bpf_map__set_autocreate(w->uframes, true);
	for (int i = 0; i < w->ncounts; i++)
		bpf_map__set_autocreate(w->counts[i], counting);
	if (w->d->choose)
		w->d->choose(w);
	if (w->o.follow && w->hooks_follow) {
		/* the walker's own hooks do it */
	} else if (forks(w) && fork_hook_tracepoint(w->f)) {
		walker_want_hook(w, w->fork_tp, true);
		/* an exit ends only what -- COMMAND follows */
		walker_want_hook(w, w->exit_tp, w->o.follow);
	} else if (forks(w)) {
		walker_want(w, fork_kprobe_ok(w) ? w->fork_kprobe : w->fork_kretprobe, true);
		walker_want(w, w->exit_kprobe, w->o.follow);
	}
	choose_multi(w, t);
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
	c->task_stack_off = f->task_stack_off;
	c->task_pid_off = raw_hooks(f) ? f->task_pid_off : 0;
	if (w->o.task41.pid) {
		c->task_stack_off = w->o.task41.stack;
		c->task_pid_off = w->o.task41.pid;
		c->task_comm_off = w->o.task41.comm;
		c->ti_cpu_off = w->o.task41.cpu;
	}
	if (w->vma)
		c->flags |= SW_CFG_VMA;
	if (w->vma_list)
		c->flags |= SW_CFG_VMA_LIST;
	if (w->cfl && f->syscall_fastpath && f->unwinder == SW_UNWINDER_FP)
		c->flags |= SW_CFG_UBP_CHAIN;
	if (w->cfl_carries) {
		c->flags |= SW_CFG_CFL_CARRY;
		c->cfl_carries = w->cfl_carries;
	}
	if (w->vma || w->vma_list)
		c->vma = w->vma_offs;
	c->jit_frame_off = f->jit_frame_off;
	c->stack_full = walker_stack_full(w->f);
	c->root = w->root;
	c->magic = w->magic;
}

/* Room for one more attachment at w->att[w->natt]. */
static int reserve_attachment(struct walker *w)
{
	return VEC_GROW(w->att, w->natt, w->cap, 16);
}

static void clear_map(struct bpf_map *m)
{
	char key[4096], next[4096];
	int fd = bpf_map__fd(m);

	while (!mapkeys_next(fd, true, NULL, next, bpf_map__key_size(m),
			     bpf_map__value_size(m))) {
		memcpy(key, next, bpf_map__key_size(m));
		bpf_map_delete_elem(fd, key);
	}
}

int walker_self_probe(struct walker *w, int prog_fd, __u64 fn)
{
	int err = reserve_attachment(w);

	if (!err)
		err = calib_attach(w->f, prog_fd, fn, w->natt, &w->att[w->natt]);
	/* its program may be gone before the end: none to read misses of */
	if (!err)
		w->att[w->natt++].prog_fd = -1;
	return err;
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
		err = calib_run(w->f, prog_fd, shape, w->natt, &cal,
				   &w->att[w->natt]);
	if (!err)
		w->natt++;
	if (!err)
		err = walker_read(w, &s);
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
	walker_stacks_free(&s);
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
	int prog_fd = bpf_program__fd(w->d->calib_prog(w));
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

/* Whether map fd is one libbpf would make for m. */
static bool made_as(int fd, const struct bpf_map *m)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	       info.type == bpf_map__type(m) &&
	       info.key_size == bpf_map__key_size(m) &&
	       info.value_size == bpf_map__value_size(m) &&
	       info.max_entries == bpf_map__max_entries(m) &&
	       info.map_flags == bpf_map__map_flags(m);
}

/*
 * The maps user space fills as the object loads (cfi's unwind tables),
 * created now as libbpf would and handed to it.
 */
static int create_early(struct walker *w)
{
	struct bpf_map *v[] = { w->cfi_rows, w->cfi_procs, w->cfi_files };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		LIBBPF_OPTS(bpf_map_create_opts, o);
		int fd, err;

		if (!v[i] || !bpf_map__autocreate(v[i]))
			continue;
		/* libbpf takes a copy: the maker closes its own */
		if (v[i] == w->cfi_rows && made_as(w->o.rows_fd, v[i]) &&
		    !bpf_map__reuse_fd(v[i], w->o.rows_fd))
			continue;
		o.map_flags = bpf_map__map_flags(v[i]);
		fd = bpf_map_create(bpf_map__type(v[i]), bpf_map__name(v[i]),
				    bpf_map__key_size(v[i]),
				    bpf_map__value_size(v[i]),
				    bpf_map__max_entries(v[i]), &o);
		if (fd < 0)
			return -errno;
		/* libbpf keeps a copy of its own */
		err = bpf_map__reuse_fd(v[i], fd);
		close(fd);
		if (err)
			return err;
	}
	return 0;
}

struct beside {
	const struct walker *w;
	int err;
};

static void *run_beside(void *arg)
{
	struct beside *b = arg;

	b->err = b->w->o.beside_load(b->w->o.beside_ctx, b->w);
	return NULL;
}

/* bpf_object__load, and o.beside_load meanwhile: the load's error first. */
static int load_beside(struct walker *w)
{
	struct beside b = { .w = w };
	pthread_t t;
	int err;

	if (!w->o.beside_load || !w->cfi_rows)
		return bpf_object__load(w->obj);
	err = create_early(w);
	if (err)
		return err;
	if (pthread_create(&t, NULL, run_beside, &b)) {
		b.err = w->o.beside_load(w->o.beside_ctx, w);
		err = bpf_object__load(w->obj);
		return err ? err : b.err;
	}
	err = bpf_object__load(w->obj);
	pthread_join(t, NULL);
	return err ? err : b.err;
}

/*
 * Once loaded, the object the skeleton embeds is read no more (libbpf
 * ends its ELF at open): the cfi walker's is ~900 KB of the tool's
 * read-only pages, touched by the open, that would count in its memory
 * to the end.  Dropped, they are read again from the file if ever needed.
 */
static void drop_image(const struct walker *w)
{
	uintptr_t page = sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)w->image + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)w->image + w->image_size) & ~(page - 1);

	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

int walker_open(struct walker **out, const struct sw_features *f,
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
	w->d = walkers_get(f, o->kind);
	err = w->d->open(w);
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
		bpf_program__set_autoload(w->d->calib_prog(w), true);
	for (int i = 0; i < w->ncounts; i++)
		bpf_map__set_max_entries(w->counts[i], o->storage);
	if (w->stacks)
		bpf_map__set_max_entries(w->stacks, o->storage);
	/* a stack under 64 frames a side adds two new chunks at most */
	if (w->chunks)
		bpf_map__set_max_entries(w->chunks, 2 * o->storage);
	/* not following, the follow map holds key 0 alone: no 64k entries to set up */
	if (!o->follow)
		bpf_map__set_max_entries(w->follow, 1);
	*need = map_bytes(w);
	if (o->map_limit && *need > o->map_limit) {
		err = -E2BIG;
		goto fail;
	}
	bpf_object__set_kversion(w->obj, f->version);
	err = load_beside(w);
	if (err)
		goto fail;
	drop_image(w);
	err = w->d->loaded ? w->d->loaded(w) : 0;
	if (err)
		goto fail;
	if (calib) {
		err = calibrate(w, calib);
		if (err)
			goto fail;
	}
	base_config(w, &c);
	/*
	 * A raw sched_process_fork has no record to find the child's id in;
	 * reading the perf event's format can wait long on a busy tracefs.
	 */
	if ((o->follow || w->d->attach) && fork_hook_tracepoint(f) &&
	    !raw_hooks(f)) {
		int off = tp_field_offset(f->tracefs, "sched", "sched_process_fork",
					  "child_pid");
		if (off < 0) {
			err = off;
			goto fail;
		}
		c.fork_child_off = off;
	}
	err = configure(w, &c);
	if (!err)
		err = fill_uframes(w, t);
	if (err)
		goto fail;
	*out = w;
	return 0;
fail:
	walker_free(w);
	return err;
}

static int add_attachment(struct walker *w, int prog_fd,
			  const struct sw_probe_spec *spec)
{
	int err = reserve_attachment(w);

	if (err)
		return err;
	err = attach_probe(w->f, prog_fd, spec, w->natt, &w->att[w->natt]);
	if (!err)
		w->att[w->natt++].prog_fd = prog_fd;
	return err;
}

int walker_attach_spec(struct walker *w, int prog_fd, const struct sw_probe_spec *spec)
{
	return add_attachment(w, prog_fd, spec);
}

/* A target's probe: what the kernel skips of its program is lost. */
static int add_target(struct walker *w, int prog_fd,
		      const struct sw_probe_spec *spec)
{
	int err = add_attachment(w, prog_fd, spec);

	if (!err)
		w->att[w->natt - 1].target = true;
	return err;
}

int walker_attach_hook(struct walker *w, struct bpf_program *p, const char *ev)
{
	struct sw_probe_spec s = {
		.kind = raw_hooks(w->f) ? SW_PROBE_RAW_TRACEPOINT :
					  SW_PROBE_TRACEPOINT,
		.category = "sched", .event = ev,
	};

	return add_attachment(w, bpf_program__fd(p), &s);
}

/* The kernel function that creates tasks, by release. */
static const char *fork_function(const struct walker *w)
{
	static const char *const names[] = { "kernel_clone", "_do_fork", "do_fork" };
	struct ksyms *ks = w->o.kernel_symbols(w->o.ksyms_ctx);

	for (size_t i = 0; ks && i < 3; i++)
		if (ksyms_get(ks, names[i]))
			return names[i];
	return NULL;
}

static int attach_follow(struct walker *w)
{
	struct sw_probe_spec s = {};
	int err;

	if (w->hooks_follow)
		return 0;
	if (fork_hook_tracepoint(w->f)) {
		err = walker_attach_hook(w, w->fork_tp, "sched_process_fork");
		return err || !w->o.follow ? err :
		       walker_attach_hook(w, w->exit_tp, "sched_process_exit");
	}
	if (fork_kprobe_ok(w)) {
		s.kind = SW_PROBE_KPROBE;
		s.func = "wake_up_new_task";
		err = add_attachment(w, bpf_program__fd(w->fork_kprobe), &s);
	} else {
		s.func = fork_function(w);
		if (!s.func)
			return -ENOENT;
		s.kind = SW_PROBE_KRETPROBE;
		err = add_attachment(w, bpf_program__fd(w->fork_kretprobe), &s);
	}
	if (err || !w->o.follow)
		return err;
	s.kind = SW_PROBE_KPROBE;
	s.func = "do_exit";
	return add_attachment(w, bpf_program__fd(w->exit_kprobe), &s);
}

/* attach_err while attaching: a link may take it, or it goes alone */
#define ATTACH_LINKABLE	(-EAGAIN)
#define ATTACH_ALONE	1

/* Whether tg can share a BPF link with other targets: see attach_multi(). */
static bool multi_ok(const struct walker *w, const struct sw_target *tg)
{
	/*
	 * A tail call must stay in its program's type, attach type and all:
	 * only a walker loaded for links (choose_multi) can take them.
	 */
	if (w->d->tail_calls && !w->multi_typed)
		return false;
	return links_for(w, tg->spec.kind);
}

/*
 * The program at fd loaded again, as a link of the target's kind needs it:
 * the same instructions, maps and all, under another expected attach
 * type.  The original stays for targets a link refuses alone.
 */
static int multi_prog(struct walker *w, const struct bpf_program *p,
		      enum sw_probe_kind kind)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o, .kern_version = w->f->version,
		    .expected_attach_type = attach_multi_type(kind));
	int fd = bpf_program__fd(p), mfd;

	if (w->multi_typed)
		return fd;
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
	if (a->spec.kind != b->spec.kind || a->role != b->role)
		return false;
	if (a->spec.kind == SW_PROBE_KPROBE)
		return true;
	return a->spec.pid == b->spec.pid &&
	       reads_ucaller(w, a) == reads_ucaller(w, b) &&
	       shifts(w, a) == shifts(w, b) &&
	       !strcmp(a->spec.path, b->spec.path) &&
	       !a->spec.ref_ctr_off == !b->spec.ref_ctr_off;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * m's probes, from the n targets at ix: uprobes' offsets (and USDT
 * semaphores'), or kernel functions' names, in the order the kernel
 * looks them up in (by name).
 */
static int multi_probes(struct sw_multi *m, const struct sw_targets *t,
			const size_t *ix, size_t n)
{
	const struct sw_target *t0 = &t->v[ix[0]];

	if (t0->spec.kind == SW_PROBE_KPROBE) {
		m->syms = calloc(n, sizeof(*m->syms));
		if (!m->syms)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			m->syms[i] = t->v[ix[i]].spec.func;
		qsort(m->syms, n, sizeof(*m->syms), by_name);
		return 0;
	}
	m->path = t0->spec.path;
	m->pid = t0->spec.pid;
	m->offsets = calloc(n, sizeof(*m->offsets));
	m->ref_ctr_offs = t0->spec.ref_ctr_off ? calloc(n, sizeof(*m->offsets)) : NULL;
	if (!m->offsets || (t0->spec.ref_ctr_off && !m->ref_ctr_offs))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		m->offsets[i] = t->v[ix[i]].spec.offset;
		if (m->ref_ctr_offs)
			m->ref_ctr_offs[i] = t->v[ix[i]].spec.ref_ctr_off;
	}
	return 0;
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
	struct sw_multi m = { .n = n };
	int err = reserve_attachment(w);

	if (err)
		return err;
	if (n == 1 && !w->multi_typed) {
		t0->attach_err = add_target(w, prog_fd, &t0->spec);
		return attach_target_err(t0->attach_err) ? 0 : t0->attach_err;
	}
	err = multi_probes(&m, t, ix, n);
	if (!err)
		err = attach_multi_probes(multi_fd, &m, &w->att[w->natt]);
	free(m.offsets);
	free(m.ref_ctr_offs);
	free(m.syms);
	if (!err) {
		w->att[w->natt].prog_fd = multi_fd;
		w->att[w->natt++].target = true;
		w->nlinks++;
		w->nlinked += n;
		for (size_t i = 0; i < n; i++)
			t->v[ix[i]].attach_err = 0;
		return 0;
	}
	if (!attach_target_err(err))
		return err;
	if (n == 1) {
		t0->attach_err = err;
		return 0;
	}
	err = attach_split(w, t, ix, n / 2, prog_fd, multi_fd);
	return err ? err : attach_split(w, t, ix + n / 2, n - n / 2, prog_fd,
					multi_fd);
}

/*
 * Where the kernel has multi-probe links, the targets that can share one
 * are attached in groups: a wildcard over a whole library takes seconds,
 * not minutes, to attach and to detach.  The rest are marked for the
 * one-by-one way (attach_err = ATTACH_ALONE).
 */
static int attach_multi(struct walker *w, struct sw_targets *t)
{
	size_t *ix = malloc(t->n * sizeof(*ix)), n;
	int err = ix ? 0 : -ENOMEM;

	for (size_t i = 0; i < t->n; i++)
		if (!t->v[i].refused)
			t->v[i].attach_err = multi_ok(w, &t->v[i]) ?
					     ATTACH_LINKABLE : ATTACH_ALONE;
	for (size_t i = 0; !err && i < t->n; i++) {
		struct sw_target *tg = &t->v[i];
		const struct bpf_program *p;
		int mfd;

		if (tg->attach_err != ATTACH_LINKABLE)
			continue;
		n = 0;
		for (size_t j = i; j < t->n; j++)
			if (t->v[j].attach_err == ATTACH_LINKABLE && same_link(w, tg, &t->v[j]))
				ix[n++] = j;
		if (n == 1 && !w->multi_typed) {
			tg->attach_err = ATTACH_ALONE;
			continue;
		}
		p = target_prog(w, tg);
		mfd = multi_prog(w, p, tg->spec.kind);
		if (mfd < 0) {
			/* the kernel said it had them: one by one, then */
			for (size_t j = 0; j < n; j++)
				t->v[ix[j]].attach_err = ATTACH_ALONE;
			continue;
		}
		err = attach_split(w, t, ix, n, bpf_program__fd(p), mfd);
	}
	free(ix);
	return err;
}

/*
 * One function of a wildcard the kernel will not probe (a uprobe on an
 * instruction this kernel does not step, a tracepoint perf may not sample)
 * must not cost the rest: of several targets, one the kernel refuses is
 * skipped, and the caller says which.  What is no fault of the target (memory,
 * file descriptors) fails them all; so does every target failing.
 */
int walker_attach(struct walker *w, struct sw_targets *t,
		   const struct sw_target **failed)
{
	const struct sw_target *first = NULL;
	size_t ok = 0;
	int err;

	*failed = NULL;
	if (forks(w)) {
		err = attach_follow(w);
		if (err)
			return err;
	}
	if (w->d->attach) {
		err = w->d->attach(w);
		if (err)
			return err;
	}
	err = t->n > 1 || w->multi_typed ? attach_multi(w, t) : 0;
	if (err)
		return err;
	for (size_t i = 0; i < t->n; i++) {
		struct sw_target *tg = &t->v[i];

		/* refused before attaching (insn.h): the caller says so */
		if (tg->refused)
			continue;
		/* thousands of tracefs probes take seconds: Ctrl-C meanwhile */
		if (interrupt_pending())
			return -EINTR;
		if ((t->n == 1 && !w->multi_typed) ||
		    tg->attach_err == ATTACH_ALONE) {
			size_t first = w->natt;

			err = w->d->before_target ? w->d->before_target(w, tg) : 0;
			if (!err)
				err = add_target(w, bpf_program__fd(target_prog(w, tg)),
						 &tg->spec);
			if (!err && w->d->after_target)
				err = w->d->after_target(w, tg);
			/* a target's probes are made all or none */
			while (err && w->natt > first)
				attach_remove(w->f, &w->att[--w->natt]);
			tg->attach_err = err;
		}
		err = tg->attach_err;
		if (!err) {
			if (++ok == w->o.stop_after)
				raise(SIGSTOP);
			continue;
		}
		if (!first)
			first = tg;
		if (t->n == 1 || !attach_target_err(err)) {
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

void walker_links(const struct walker *w, size_t *links, size_t *linked)
{
	*links = w->nlinks;
	*linked = w->nlinked;
}

int walker_follow(struct walker *w, pid_t pid)
{
	struct sw_config c;
	__u32 k = pid, zero = 0;
	__u8 one = 1;

	/* not followed (no fork hook): -p's filter holds it alone */
	if (!w->o.follow)
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(w->follow), &k, &one, BPF_ANY))
		return -errno;
	/* the command is held at its exec: nothing of it fires meanwhile */
	if (bpf_map_lookup_elem(bpf_map__fd(w->config), &zero, &c))
		return -errno;
	c.follow_root = pid;
	return bpf_map_update_elem(bpf_map__fd(w->config), &zero, &c, BPF_ANY) ? -errno : 0;
}

const char *walker_source(const struct walker *w)
{
	/* 4.1's cfi walker has an object of its own */
	return sources_walker(w->d == &walker_cfi41 ? "cfi41" : w->d->name);
}

static bool kept(const struct walker *w, int fd, int i)
{
	bool keep = i == fd;

	for (size_t j = 0; j < w->natt && !keep; j++)
		keep = w->att[j].perf_fd == i;
	return keep;
}

/*
 * In the detaching child: nothing open but the perf events and @fd.  The
 * ranges between them go by close_range (5.9+), not a close() for each of
 * up to RLIMIT_NOFILE numbers.
 */
static void keep_only(const struct walker *w, int fd)
{
	int max = (int)sysconf(_SC_OPEN_MAX), from = 3;

	if (max < 0 || max > 65536)
		max = 65536;
	for (int i = 3; i <= max; i++) {
		if (i < max && !kept(w, fd, i))
			continue;
		if (from < i && syscall(SYS_close_range, from, i - 1, 0))
			for (int j = from; j < i; j++)
				close(j);
		from = i + 1;
	}
	/* above the limit only if it was lowered after they were opened */
	(void)syscall(SYS_close_range, max, ~0U, 0);
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
void walker_detach_async(struct walker *w)
{
	int go[2], null;
	char c;
	pid_t pid;

	size_t nopen = 0;

	if (!w)
		return;
	for (size_t i = 0; i < w->natt; i++) {
		if (w->att[i].tracefs_event)
			return;		/* detached in order by walker_free */
		nopen += w->att[i].perf_fd >= 0;
	}
	if (!nopen)
		return;		/* already detached, or nothing attached */
	for (size_t i = 0; i < w->natt; i++)
		ioctl(w->att[i].perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	if (pipe2(go, O_CLOEXEC))
		return;
	/*
	 * Exit signal 0: no SIGCHLD comes of it (COMMAND's is what the
	 * session waits for), and init reaps it once we are gone.  The raw
	 * call, as the child makes system calls only: one copy of our page
	 * tables, where a fork and a grandchild made two, plus a teardown
	 * waited for.
	 */
	pid = syscall(SYS_clone, 0UL, NULL, NULL, NULL, 0UL);
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return;
	}
	if (!pid) {
		/* no terminal, no pipe held */
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
	/* ours are not the last references now: closing them is cheap */
	for (size_t i = 0; i < w->natt; i++) {
		close(w->att[i].perf_fd);
		w->att[i].perf_fd = -1;
	}
	close(go[1]);
}

void walker_free(struct walker *w)
{
	if (!w)
		return;
	perf_buffer__free(w->pb);
	tracepipe_free(w->tp);
	free(w->batch.v);
	/* perf fds first: a tracefs event with users cannot be removed */
	for (size_t i = w->natt; i-- > 0;)
		attach_remove(w->f, &w->att[i]);
	free(w->att);
	for (int i = 0; i < w->nclones; i++)
		close(w->clones[i].multi_fd);
	free(w->chunk_tab);
	if (w->d && w->skel)
		w->d->destroy(w);
	free(w);
}
