// SPDX-License-Identifier: MIT
/*
 * The cfi walker (4.18+): kernel frames from bpf_get_stack as the getstack
 * walker has them, user frames unwound in BPF from the binaries' own
 * unwind tables (.eh_frame), which the frontend loads into maps
 * (src/unwind.c).  So code built without frame pointers, frameless leaf
 * functions and probes before a prologue all give their callers.  Its own
 * object (bpf/cfi.bpf.c), with getstack's keys and counts: a first
 * program per role takes the kernel frames and the user registers, then
 * walk programs tail-call one another, a few frames each.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "walker_int.h"
#include "../compat/tracefs.h"
#include "cfi.h"
#include "cfi.skel.h"
#include "vma_calib.h"

static bool cfi_refuse(const struct sw_features *f, const struct walker_need *n,
		       char *msg, size_t len)
{
	bool tails = f->helper_tail_call && f->map_prog_array;

	if (walkers_refuse_helper(&walker_cfi, f, n, f->helper_get_stack &&
				  f->map_percpu && tails,
				  "this kernel has no bpf_get_stack (4.18+)", msg, len))
		return true;
	if (n && !n->ustack)
		return walkers_refused(&walker_cfi, "it unwinds user frames, and "
				       "this run records none", msg, len);
	return false;
}

static const char *cfi_why(const struct sw_features *f, const struct walker_need *n)
{
	(void)n;
	return f->map_big_keys ?
	       "bpf_get_stack and tail calls (4.18+): user frames from unwind "
	       "tables, exact raw-frame keys" :
	       "bpf_get_stack and tail calls (4.18+): user frames from unwind "
	       "tables, hash keys are at most 512 bytes: exact interned chunks "
	       "of frames";
}

/*
 * 4.18-5.16: whether processes' lists can be built in BPF from their VMAs
 * (bpf/cfi.bpf.c), with the offsets from BTF or measured here; the
 * syscall tracepoints that say when code is mapped are needed too.
 * STACKWALK_NO_VMA_LISTS=1: never (lists from the frontend alone, and
 * COMMAND held at its execs until they are read).
 */
static bool vma_lists(struct walker *w)
{
	char tfs[4096];

	_Static_assert(sizeof(w->vma_offs) == sizeof(w->f->vma_off),
		       "struct sw_vma_offs is vma_off's fields");
	if (w->f->no_vma_lists_forced || !w->f->prog_tracepoint ||
	    tracefs_find(tfs, sizeof(tfs), false) ||
	    !tracefs_has(tfs, "events/syscalls/sys_exit_mmap/id") ||
	    !tracefs_has(tfs, "events/syscalls/sys_enter_mmap/id"))
		return false;
	if (w->f->vma_list_ok) {
		memcpy(&w->vma_offs, w->f->vma_off, sizeof(w->vma_offs));
		w->vma_list_how = "offsets from BTF";
		return true;
	}
	w->vma_list_how = "offsets measured on this process";
	return !vma_calib(w, &w->vma_offs);
}

static int cfi_open(struct walker *w)
{
	struct cfi_bpf *s = cfi_bpf__open();

	if (!s)
		return -errno;
	WALKER_COMMON(w, s);
	w->gs = WALKER_GS_PARTS(s);
	w->cfi_rows = s->maps.cfi_rows;
	w->cfi_procs = s->maps.cfi_procs;
	w->vma = w->f->helper_find_vma;
	if (w->vma)
		memcpy(&w->vma_offs, w->f->vma_off, sizeof(w->vma_offs));
	else
		w->vma_list = vma_lists(w);
	if (w->vma || w->vma_list)
		w->cfi_files = s->maps.cfi_files;
	bpf_map__set_autocreate(s->maps.cfi_files, w->cfi_files != NULL);
	bpf_map__set_max_entries(w->cfi_rows, cfi_rows_in(w->o.unwind_mb));
	/* rows written through a mapping of it: memcpy, not 250 ns each */
	if (w->f->map_mmap)
		bpf_map__set_map_flags(w->cfi_rows, bpf_map__map_flags(w->cfi_rows) |
				       BPF_F_MMAPABLE);
	return walker_gs_open(w);
}

static void cfi_destroy(struct walker *w)
{
	cfi_bpf__destroy(w->skel);
}

static struct bpf_program *cfi_prog(const struct walker *w, enum sw_role role,
				    bool uentry)
{
	const struct cfi_bpf *s = w->skel;

	switch (role) {
	case SW_ROLE_KPROBE:
		return WALKER_GS_PROG(w, s, gs_cfi_kprobe);
	case SW_ROLE_TRACEPOINT:
		return WALKER_GS_PROG(w, s, gs_cfi_tp);
	case SW_ROLE_UENTRY:
		/*
		 * At an entry without CFI, the entry's own rule still holds;
		 * uentry: the kernel's unwinder (for a process with no tables
		 * yet) does not add the caller there (see calibration).
		 */
		return uentry ? WALKER_GS_PROG(w, s, gs_cfi_uprobe_entry) :
				WALKER_GS_PROG(w, s, gs_cfi_uprobe_entry_k);
	default:
		return WALKER_GS_PROG(w, s, gs_cfi_uprobe);
	}
}

/* The walk programs of this run's mode, by the type their callers have. */
static void walk_progs(const struct walker *w, struct bpf_program **kp,
		       struct bpf_program **tp)
{
	const struct cfi_bpf *s = w->skel;

	if (w->vma) {
		*kp = WALKER_GS_PROG(w, s, gs_cfi_walk_vma_kp);
		*tp = WALKER_GS_PROG(w, s, gs_cfi_walk_vma_tp);
		return;
	}
	*kp = WALKER_GS_PROG(w, s, gs_cfi_walk_kp);
	*tp = WALKER_GS_PROG(w, s, gs_cfi_walk_tp);
}

/* Its slot in the tail-call maps: this run's mode. */
static __u32 walk_slot(const struct walker *w)
{
	if (w->o.sink == SINK_EMIT)
		return w->per_task ? SW_GS_EMIT_T : SW_GS_EMIT;
	return w->small ? SW_GS_SMALL : w->per_task ? SW_GS_COUNT_T : SW_GS_COUNT;
}

/*
 * Whether a program chosen so far (only the targets' are, when cfi_choose
 * begins: the walk's callers) is of type t.
 */
static bool calls_walk(const struct walker *w, enum bpf_prog_type t)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, w->obj)
		if (bpf_program__autoload(p) && bpf_program__type(p) == t)
			return true;
	return false;
}

/*
 * Each walk is the largest program the verifier checks (tens of ms): only
 * those with callers of their type are loaded.
 */
static void cfi_choose(struct walker *w)
{
	const struct cfi_bpf *s = w->skel;
	bool kp_called = calls_walk(w, BPF_PROG_TYPE_KPROBE);
	bool tp_called = calls_walk(w, BPF_PROG_TYPE_TRACEPOINT);
	struct bpf_program *kp, *tp;

	walker_getstack_choose(w);
	walk_progs(w, &kp, &tp);
	walker_want(w, kp, kp_called);
	walker_want(w, tp, w->f->prog_tracepoint && tp_called);
	walker_want_hook(w, s->progs.gs_cfi_fork, true);
	walker_want_hook(w, s->progs.gs_cfi_exec, !w->vma_list);
	walker_want_hook(w, s->progs.gs_cfi_exec_build, w->vma_list);
	walker_want_hook(w, s->progs.gs_cfi_build_next_x, w->vma_list);
	walker_want(w, s->progs.gs_cfi_mmap_enter, w->vma_list);
	walker_want(w, s->progs.gs_cfi_mmap_exit, w->vma_list);
	walker_want(w, s->progs.gs_cfi_build_next_m, w->vma_list);
	walker_want_hook(w, s->progs.gs_cfi_exit, true);
}

/* the mmaps of code that make a list built in BPF be built again */
static int attach_mmaps(struct walker *w)
{
	const struct cfi_bpf *s = w->skel;
	struct sw_probe_spec e = {
		.kind = SW_PROBE_TRACEPOINT, .category = "syscalls",
		.event = "sys_enter_mmap",
	}, x = e;
	int err;

	x.event = "sys_exit_mmap";
	err = walker_attach_spec(w, bpf_program__fd(s->progs.gs_cfi_mmap_enter), &e);
	return err ? err : walker_attach_spec(w, bpf_program__fd(s->progs.gs_cfi_mmap_exit), &x);
}

/*
 * Processes' mapping lists follow fork, exec and exit in the kernel
 * (bpf/cfi.bpf.c says how), so a child of fork is walked from its
 * first event, a process the frontend has not read yet never with
 * another image's tables.
 */
static int cfi_attach(struct walker *w)
{
	const struct cfi_bpf *s = w->skel;
	int err;

	err = walker_getstack_attach(w);
	if (!err)
		err = walker_attach_hook(w, s->progs.gs_cfi_fork, "sched_process_fork");
	if (!err && w->vma_list)
		err = attach_mmaps(w);
	if (!err)
		err = walker_attach_hook(w, w->vma_list ? s->progs.gs_cfi_exec_build :
					 s->progs.gs_cfi_exec, "sched_process_exec");
	if (!err)
		err = walker_attach_hook(w, s->progs.gs_cfi_exit, "sched_process_exit");
	return err;
}

static int cfi_loaded(struct walker *w)
{
	const struct cfi_bpf *s = w->skel;
	struct bpf_program *kp, *tp;
	__u32 slot = walk_slot(w);
	int fd;

	if (w->vma_list) {
		__u32 zero = 0;

		fd = bpf_program__fd(s->progs.gs_cfi_build_next_x);
		if (bpf_map_update_elem(bpf_map__fd(s->maps.cfi_build_x), &zero, &fd, BPF_ANY))
			return -errno;
		fd = bpf_program__fd(s->progs.gs_cfi_build_next_m);
		if (bpf_map_update_elem(bpf_map__fd(s->maps.cfi_build_m), &zero, &fd, BPF_ANY))
			return -errno;
	}
	walk_progs(w, &kp, &tp);
	fd = bpf_program__fd(kp);
	if (fd >= 0 &&
	    bpf_map_update_elem(bpf_map__fd(s->maps.cfi_tails_kp), &slot, &fd, BPF_ANY))
		return -errno;
	fd = bpf_program__fd(tp);
	if (fd >= 0 &&
	    bpf_map_update_elem(bpf_map__fd(s->maps.cfi_tails_tp), &slot, &fd, BPF_ANY))
		return -errno;
	return 0;
}

bool walker_vma_lists(const struct walker *w)
{
	return w->vma_list;
}

void walker_print_lists(const struct walker *w, FILE *out)
{
	const struct sw_vma_offs *o = &w->vma_offs;

	if (!w->vma_list)
		return;
	fprintf(out, "process lists: built in BPF from their VMAs at exec and "
		"at each mmap of code (%s: task_struct.mm +%u, mm_struct.mmap "
		"+%u, vm_area_struct vm_next +%u vm_flags +%u vm_pgoff +%u "
		"vm_file +%u, file.f_inode +%u, inode i_ino +%u i_sb +%u, "
		"super_block.s_dev +%u)\n", w->vma_list_how, o->task_mm,
		o->mm_mmap, o->vm_next, o->vm_flags, o->vm_pgoff, o->vm_file,
		o->f_inode, o->i_ino, o->i_sb, o->s_dev);
}

int walker_cfi_fds(const struct walker *w, int *rows, int *procs, int *files)
{
	if (!w->cfi_rows)
		return -ENOENT;
	*rows = bpf_map__fd(w->cfi_rows);
	*procs = bpf_map__fd(w->cfi_procs);
	*files = w->cfi_files ? bpf_map__fd(w->cfi_files) : -1;
	return 0;
}

const struct walker_desc walker_cfi = {
	.kind = SW_WALKER_CFI,
	.name = "cfi",
	.tail_calls = true,
	.multi_tails = true,
	.refuse = cfi_refuse,
	.why = cfi_why,
	.open = cfi_open,
	.destroy = cfi_destroy,
	.prog = cfi_prog,
	.choose = cfi_choose,
	.loaded = cfi_loaded,
	.attach = cfi_attach,
	.calib_prog = walker_getstack_calib_prog,
	.read_begin = walker_getstack_read_begin,
	.key_frames = walker_getstack_key_frames,
};
