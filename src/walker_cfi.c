// SPDX-License-Identifier: MIT
/*
 * The cfi walker (4.9+): kernel frames from bpf_get_stack as the getstack
 * walker has them (4.18+) or by stack id as the stackmap walker's (the
 * SW_GS_LEGACY mode), user frames unwound in BPF from the binaries' own
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

/*
 * Without bpf_get_stack (4.9-4.17) the kernel side is a stack id and the
 * user frames are kept in a key of at most 512 bytes (struct sw_cfl_key).
 */
static bool cfi_legacy(const struct sw_features *f)
{
	return !f->helper_get_stack;
}

/* before it, a walk program takes one frame (bpf/cfi.bpf.c, GS_CFL_STEPS_49) */
#define CFI_V414	(4u << 16 | 14u << 8)

/*
 * The probes that carry a walk on to SW_MAX_FRAMES (bpf/cfi.bpf.c,
 * gs_cfl_carry_kp): each chain makes 32 tail calls, and a walk of 127
 * frames takes a program for each frame (two from 4.14), two to intern
 * chunks, the event's and the count's
 */
#define CFI_CARRIES_49	4
#define CFI_CARRIES	2

#define CFI_STR_(x) #x
#define CFI_STR(x) CFI_STR_(x)

/*
 * Where the syscall fast path leaves a stale user %rbp (4.14), what the
 * legacy walk still starts right: a syscall tracepoint (the slow path,
 * which saves it), and a kprobe on a kernel with frame pointers (its
 * chain ends at the saved one: SW_CFG_UBP_CHAIN).
 */
static bool cfl_fast_path_ok(const struct sw_features *f, const struct walker_need *n)
{
	return cfi_legacy(f) && n->kernel_event &&
	       (n->tracepoint ? n->syscall_tp : f->unwinder == SW_UNWINDER_FP);
}

bool walker_cfi_runs(const struct sw_features *f)
{
	bool tails = f->helper_tail_call && f->map_prog_array;
	bool kernel_side = f->helper_get_stack ||
			   (f->helper_stackid && f->map_stack_trace &&
			    f->prog_tracepoint && f->helper_current_task &&
			    f->map_value_offsets);

	return kernel_side && f->map_percpu && tails;
}

static bool cfi_refuse(const struct sw_features *f, const struct walker_need *n,
		       char *msg, size_t len)
{
	struct walker_need fast;

	if (n && cfl_fast_path_ok(f, n)) {
		fast = *n;
		fast.kernel_event = false;
		n = &fast;
	}
	if (walkers_refuse_helper(&walker_cfi, f, n, walker_cfi_runs(f),
				  "this kernel has neither bpf_get_stack (4.18+) "
				  "nor stack maps, bpf_get_current_task and map value offsets (4.9+)",
				  msg, len))
		return true;
	if (n && !n->ustack)
		return walkers_refused(&walker_cfi, "it unwinds user frames, and "
				       "this run records none", msg, len);
	return false;
}

static const char *cfi_why(const struct sw_features *f, const struct walker_need *n)
{
	(void)n;
	if (cfi_legacy(f) && f->version < CFI_V414)
		return "stack ids and tail calls (4.9+): user frames from unwind "
		       "tables, a kprobe's or uprobe's " CFI_STR(SW_MAX_FRAMES)
		       " (more probes carry the walk on, past "
		       CFI_STR(SW_CFL_FRAMES) " in interned chunks), a "
		       "tracepoint's first " CFI_STR(SW_CFL_FRAMES_EARLY);
	if (cfi_legacy(f))
		return "stack ids and tail calls (4.9+): user frames from unwind "
		       "tables, a kprobe's or uprobe's " CFI_STR(SW_MAX_FRAMES)
		       " (more probes carry the walk on, past "
		       CFI_STR(SW_CFL_FRAMES) " in interned chunks), a "
		       "tracepoint's first " CFI_STR(SW_CFL_FRAMES);
	return f->map_big_keys ?
	       "bpf_get_stack and tail calls (4.18+): user frames from unwind "
	       "tables, exact raw-frame keys" :
	       "bpf_get_stack and tail calls (4.18+): user frames from unwind "
	       "tables, hash keys are at most 512 bytes: exact interned chunks "
	       "of frames";
}

/* the syscall tracepoints that say when code is mapped */
static bool mmap_tracepoints(void)
{
	char tfs[4096];

	return !tracefs_find(tfs, sizeof(tfs), false) &&
	       tracefs_has(tfs, "events/syscalls/sys_exit_mmap/id") &&
	       tracefs_has(tfs, "events/syscalls/sys_enter_mmap/id");
}

/*
 * Without bpf_find_vma: whether BPF can find processes' mappings from
 * their VMAs, with the offsets from BTF or measured here.  4.18-5.16
 * (a list of VMAs): each process's list built in BPF at exec and at each
 * mmap of code (bpf/cfi.bpf.c), which needs the mmap tracepoints;
 * 6.1+ (a maple tree): each PC's VMA looked up as bpf_find_vma would
 * (bpf/cfi_walk.bpf.h), which needs bpf_loop.
 * STACKWALK_NO_VMA_LISTS=1: neither (lists from the frontend alone, and
 * COMMAND held at its execs until they are read).
 */
static void vma_reads(struct walker *w)
{
	bool tree = false;

	_Static_assert(__builtin_offsetof(struct sw_vma_offs, mm_vdso) ==
		       sizeof(w->f->vma_off),
		       "struct sw_vma_offs is vma_off's fields, then mm_vdso");
	if (w->f->no_vma_lists_forced || !w->f->prog_tracepoint)
		return;
	if (w->f->vma_list_ok) {
		memcpy(&w->vma_offs, w->f->vma_off, sizeof(w->f->vma_off));
		w->vma_list_how = "offsets from BTF";
		w->vma_list = mmap_tracepoints();
		/* without it the vDSO is left out of the lists, as before */
		vma_calib_vdso(w, &w->vma_offs);
		return;
	}
	w->vma_list_how = "offsets measured on this process";
	if (vma_calib(w, &w->vma_offs, w->f->helper_loop, &tree))
		return;
	if (tree)
		w->vma = w->vma_mt = true;
	else
		w->vma_list = mmap_tracepoints();
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
	w->cfl = cfi_legacy(w->f);
	w->cfl_carries = !w->cfl ? 0 : w->f->version < CFI_V414 ?
			 CFI_CARRIES_49 : CFI_CARRIES;
	if (w->vma)
		memcpy(&w->vma_offs, w->f->vma_off, sizeof(w->f->vma_off));
	else if (!w->cfl)
		vma_reads(w);
	if (w->vma || w->vma_list)
		w->cfi_files = s->maps.cfi_files;
	bpf_map__set_autocreate(s->maps.cfi_files, w->cfi_files != NULL);
	bpf_map__set_max_entries(w->cfi_rows, cfi_rows_in(w->o.unwind_mb));
	/* rows written through a mapping of it: memcpy, not 250 ns each */
	if (w->f->map_mmap)
		bpf_map__set_map_flags(w->cfi_rows, bpf_map__map_flags(w->cfi_rows) |
				       BPF_F_MMAPABLE);
	bpf_map__set_autocreate(s->maps.counts_cfl, w->cfl);
	bpf_map__set_autocreate(s->maps.scratch_cfl, w->cfl);
	bpf_map__set_autocreate(s->maps.kstacks, w->cfl);
	bpf_map__set_autocreate(s->maps.cfi_alias, w->cfl);
	bpf_map__set_autocreate(s->maps.chunks_cfl, w->cfl);
	bpf_map__set_autocreate(s->maps.chunk_ids_cfl, w->cfl);
	if (!w->cfl)
		return walker_gs_open(w);
	/* none of getstack's maps: its programs are not loaded */
	bpf_map__set_autocreate(w->gs.counts, false);
	bpf_map__set_autocreate(w->gs.chunks, false);
	bpf_map__set_autocreate(w->gs.scratch_small, false);
	bpf_map__set_autocreate(w->gs.walks, false);
	bpf_map__set_autocreate(w->gs.walk_zero, false);
	for (int i = 0; i < SW_GS_CLASSES; i++)
		bpf_map__set_autocreate(w->gs.classes[i], false);
	w->counts[w->ncounts++] = s->maps.counts_cfl;
	w->hooks_follow = true;
	/* every program names it; only kernel frames fill it */
	if (w->o.kstack)
		w->stacks = s->maps.kstacks;
	else
		bpf_map__set_max_entries(s->maps.kstacks, 1);
	return 0;
}

static void cfi_destroy(struct walker *w)
{
	cfi_bpf__destroy(w->skel);
}

/* A program of this run's mode: SW_GS_LEGACY's, or as getstack's are named */
#define CFI_PROG(w, s, base) ((w)->cfl ? (s)->progs.base##_cfl :	\
			      WALKER_GS_PROG(w, s, base))

static struct bpf_program *cfi_prog(const struct walker *w, enum sw_role role,
				    bool uentry)
{
	const struct cfi_bpf *s = w->skel;

	switch (role) {
	case SW_ROLE_KPROBE:
		return CFI_PROG(w, s, gs_cfi_kprobe);
	case SW_ROLE_TRACEPOINT:
		return CFI_PROG(w, s, gs_cfi_tp);
	case SW_ROLE_UENTRY:
		/*
		 * At an entry without CFI, the entry's own rule still holds;
		 * uentry: the kernel's unwinder (for a process with no tables
		 * yet) does not add the caller there (see calibration).
		 */
		return uentry ? CFI_PROG(w, s, gs_cfi_uprobe_entry) :
				CFI_PROG(w, s, gs_cfi_uprobe_entry_k);
	default:
		return CFI_PROG(w, s, gs_cfi_uprobe);
	}
}

/* The walk programs of this run's mode, by the type their callers have. */
static void walk_progs(const struct walker *w, struct bpf_program **kp,
		       struct bpf_program **tp)
{
	const struct cfi_bpf *s = w->skel;

	if (w->vma_mt) {
		*kp = WALKER_GS_PROG(w, s, gs_cfi_walk_mt_kp);
		*tp = WALKER_GS_PROG(w, s, gs_cfi_walk_mt_tp);
		return;
	}
	if (w->vma) {
		*kp = WALKER_GS_PROG(w, s, gs_cfi_walk_vma_kp);
		*tp = WALKER_GS_PROG(w, s, gs_cfi_walk_vma_tp);
		return;
	}
	/* a frame a program before 4.14 (bpf/cfi.bpf.c, GS_CFL_STEPS_49) */
	if (w->cfl && w->f->version < CFI_V414) {
		*kp = s->progs.gs_cfi_walk_kp_cfl1;
		*tp = s->progs.gs_cfi_walk_tp_cfl1;
		return;
	}
	*kp = CFI_PROG(w, s, gs_cfi_walk_kp);
	*tp = CFI_PROG(w, s, gs_cfi_walk_tp);
}

/* Its slot in the tail-call maps: this run's mode. */
static __u32 walk_slot(const struct walker *w)
{
	/* counting or sending: only its last program differs (cfl_last) */
	if (w->cfl)
		return SW_GS_LEGACY;
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

/* SW_GS_LEGACY's last programs, by caller type: they count, or send */
static void cfl_last(const struct walker *w, struct bpf_program **kp,
		     struct bpf_program **tp)
{
	const struct cfi_bpf *s = w->skel;
	bool emit = w->o.sink == SINK_EMIT;

	*kp = emit ? s->progs.gs_cfl_emit_kp : s->progs.gs_cfl_count_kp;
	*tp = emit ? s->progs.gs_cfl_emit_tp : s->progs.gs_cfl_count_tp;
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

	if (w->cfl) {
		struct bpf_program *last_kp, *last_tp;

		cfl_last(w, &last_kp, &last_tp);
		walker_want(w, last_kp, kp_called);
		walker_want(w, last_tp, tp_called);
	} else {
		walker_getstack_choose(w);
	}
	walk_progs(w, &kp, &tp);
	walker_want(w, s->progs.gs_cfl_carry_kp, w->cfl_carries && kp_called);
	walker_want(w, s->progs.gs_cfl_intern_kp, w->cfl_carries && kp_called);
	walker_want(w, kp, kp_called);
	walker_want(w, tp, w->f->prog_tracepoint && tp_called);
	walker_want_hook(w, s->progs.gs_cfi_fork, !w->cfl);
	walker_want_hook(w, s->progs.gs_cfl_fork, w->cfl);
	walker_want_hook(w, s->progs.gs_cfi_exec, !w->vma_list && !w->cfl);
	walker_want_hook(w, s->progs.gs_cfl_exec, w->cfl);
	walker_want_hook(w, s->progs.gs_cfi_exec_build, w->vma_list);
	walker_want_hook(w, s->progs.gs_cfi_build_next_x, w->vma_list);
	walker_want(w, s->progs.gs_cfi_mmap_enter, w->vma_list);
	walker_want(w, s->progs.gs_cfi_mmap_exit, w->vma_list);
	walker_want(w, s->progs.gs_cfi_build_next_m, w->vma_list);
	walker_want_hook(w, s->progs.gs_cfi_exit, !w->cfl);
	walker_want_hook(w, s->progs.gs_cfl_exit, w->cfl);
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
		err = walker_attach_hook(w, w->cfl ? s->progs.gs_cfl_fork :
					 s->progs.gs_cfi_fork, "sched_process_fork");
	if (!err && w->vma_list)
		err = attach_mmaps(w);
	if (!err)
		err = walker_attach_hook(w, w->vma_list ? s->progs.gs_cfi_exec_build :
					 w->cfl ? s->progs.gs_cfl_exec :
					 s->progs.gs_cfi_exec, "sched_process_exec");
	if (!err)
		err = walker_attach_hook(w, w->cfl ? s->progs.gs_cfl_exit :
					 s->progs.gs_cfi_exit, "sched_process_exit");
	return err;
}

/* p, where it was loaded, into slot of tail-call map m; -1 and errno */
static int set_tail(struct bpf_map *m, __u32 slot, const struct bpf_program *p)
{
	int fd = bpf_program__fd(p);

	if (fd < 0)
		return 0;
	return bpf_map_update_elem(bpf_map__fd(m), &slot, &fd, BPF_ANY);
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
	if (set_tail(s->maps.cfi_tails_kp, slot, kp) ||
	    set_tail(s->maps.cfi_tails_tp, slot, tp))
		return -errno;
	if (!w->cfl)
		return 0;
	/*
	 * SW_GS_LEGACY's count or send, then its interning, past the modes'
	 * slots (bpf/cfi.bpf.c)
	 */
	slot = SW_GS_MODES + 1;
	cfl_last(w, &kp, &tp);
	if (set_tail(s->maps.cfi_tails_kp, slot, kp) ||
	    set_tail(s->maps.cfi_tails_tp, slot, tp) ||
	    set_tail(s->maps.cfi_tails_kp, slot + 1, s->progs.gs_cfl_intern_kp))
		return -errno;
	return 0;
}

bool walker_finds_vmas(const struct walker *w)
{
	return w->vma || w->vma_list;
}

bool walker_builds_lists(const struct walker *w)
{
	return w->vma_list;
}

void walker_print_lists(const struct walker *w, FILE *out)
{
	const struct sw_vma_offs *o = &w->vma_offs;

	if (w->vma_mt)
		fprintf(out, "process mappings: each PC's VMA read from the "
			"process's maple tree (%s: task_struct.mm +%u, the "
			"tree's root +%u, vm_area_struct ", w->vma_list_how,
			o->task_mm, o->mm_mmap);
	else if (w->vma_list)
		fprintf(out, "process lists: built in BPF from their VMAs at "
			"exec and at each mmap of code (%s: task_struct.mm +%u, "
			"mm_struct.mmap +%u, vm_area_struct vm_next +%u vm_flags "
			"+%u ", w->vma_list_how, o->task_mm, o->mm_mmap,
			o->vm_next, o->vm_flags);
	else
		return;
	fprintf(out, "vm_pgoff +%u vm_file +%u, file.f_inode +%u, inode i_ino "
		"+%u i_sb +%u, super_block.s_dev +%u", o->vm_pgoff, o->vm_file,
		o->f_inode, o->i_ino, o->i_sb, o->s_dev);
	if (!w->vma_list)
		fprintf(out, ")\n");
	else if (o->mm_vdso)
		fprintf(out, "; the vDSO by mm_struct.context.vdso +%u)\n", o->mm_vdso);
	else
		fprintf(out, "; the vDSO left out: mm_struct.context.vdso not found)\n");
}

/* SW_GS_LEGACY runs no calibration: its walk adds every caller itself */
static struct bpf_program *cfi_calib_prog(const struct walker *w)
{
	return w->cfl ? NULL : walker_getstack_calib_prog(w);
}

/*
 * A key's user frames, the first ones interned (k->uid, struct
 * sw_cfl_key): each chunk found by id, from the last back to the first.
 * A chunk not found (not to happen: none is removed) leaves out the
 * frames before the next, and the stack is said to be partial.
 */
static void cfl_user_frames(struct walker *w, const struct sw_cfl_key *k,
			    struct key_frames *f)
{
	const struct cfi_bpf *s = w->skel;
	int fd = bpf_map__fd(s->maps.chunk_ids_cfl);
	size_t nu = k->h.nu < SW_MAX_FRAMES ? k->h.nu : SW_MAX_FRAMES;
	size_t chunks = nu ? (nu - 1) / SW_CFL_FRAMES : 0, from = 0;
	struct sw_cfl_chunk c;
	__u64 id = k->uid;

	f->u = k->ip;
	f->nu = nu < SW_CFL_FRAMES ? nu : SW_CFL_FRAMES;
	if (!chunks)
		return;
	for (size_t i = chunks; i-- > 0;) {
		if (!id || bpf_map_lookup_elem(fd, &id, &c)) {
			from = (i + 1) * SW_CFL_FRAMES;
			w->partial++;
			break;
		}
		memcpy(f->ubuf + i * SW_CFL_FRAMES, c.ip, sizeof(c.ip));
		id = c.parent;
	}
	memcpy(f->ubuf + chunks * SW_CFL_FRAMES, k->ip,
	       (nu - chunks * SW_CFL_FRAMES) * sizeof(*k->ip));
	f->u = f->ubuf + from;
	f->nu = nu - from;
}

static void cfl_key_frames(struct walker *w, const void *key, bool counted,
			   struct key_frames *f)
{
	const struct sw_cfl_key *k = key;

	walker_kside_by_id(w, k->kid, k->kcaller, &k->h, f);
	cfl_user_frames(w, k, f);
	(void)counted;
}

static void cfi_key_frames(struct walker *w, const void *key, bool counted,
			   struct key_frames *f)
{
	if (w->cfl)
		cfl_key_frames(w, key, counted, f);
	else
		walker_getstack_key_frames(w, key, counted, f);
}

/*
 * 4.9-4.17: a kprobe or uprobe target's probes that carry its walk on,
 * made first so that they run after the target's (a function's kprobes,
 * an address's uprobe consumers, run newest first: bpf/cfi.bpf.c,
 * gs_cfl_carry_kp); a tracepoint takes one program before 4.15
 */
static int cfi_before_target(struct walker *w, const struct sw_target *tg)
{
	const struct cfi_bpf *s = w->skel;
	int err = 0;

	if (tg->role == SW_ROLE_TRACEPOINT)
		return 0;
	for (unsigned i = 0; i < w->cfl_carries && !err; i++)
		err = walker_attach_spec(w, bpf_program__fd(s->progs.gs_cfl_carry_kp),
					 &tg->spec);
	return err;
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
	.before_target = cfi_before_target,
	.calib_prog = cfi_calib_prog,
	.read_begin = walker_getstack_read_begin,
	.key_frames = cfi_key_frames,
};
