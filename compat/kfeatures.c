// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "kbtf.h"
#include "kfeatures.h"
#include "tracefs.h"

static bool probe_helper(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, id, NULL) == 1;
}

static int read_int(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/*
 * Before 5.11 a hash key is at most MAX_BPF_STACK (512) bytes: creating
 * a hash with a larger key fails with E2BIG.
 */
static bool probe_big_keys(void)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 520, 8, 1, NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * Before 4.9 the verifier takes a pointer into a map value only at the
 * value's start, plus a constant in the load itself: a pointer moved by
 * an offset, fixed or bounded (as the cfi walker's chains index their
 * state), is refused.  A socket filter: no kernel version to give.
 */
static bool probe_map_value_offsets(void)
{
	int map = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 16, 1, NULL);
	struct bpf_insn insn[] = {
		/* *(u32 *)(fp - 4) = 0; r2 = fp - 4 */
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -4 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -4 },
		/* r1 = map; r0 = lookup; if r0 == 0 goto out */
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_0, .off = 5 },
		/* r0 += 4; r1 = *(u32 *)r0; r1 &= 7; r0 += r1; r1 = *(u8 *)r0 */
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_0, .imm = 4 },
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_0 },
		{ .code = BPF_ALU64 | BPF_AND | BPF_K, .dst_reg = BPF_REG_1, .imm = 7 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_X, .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1 },
		{ .code = BPF_LDX | BPF_MEM | BPF_B, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_0 },
		/* out: return 0 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog;

	if (map < 0)
		return false;
	prog = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insn,
			     sizeof(insn) / sizeof(insn[0]), NULL);
	close(map);
	if (prog < 0)
		return false;
	close(prog);
	return true;
}

/* Before 5.5 an array map with BPF_F_MMAPABLE is refused (EINVAL). */
static bool probe_map_mmap(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 8, 512, &o);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * From the kernel's BTF: where task_struct keeps its kernel stack's base
 * (0 when unknown; from 6.13 the JIT may run a program on a per-CPU
 * stack of its own, so its frame pointer no longer finds the task's
 * stack) and its thread id (what a raw sched_process_fork hands over is
 * the child's task), and the fields bpf_find_vma's callback reads (vma_ok).
 */
static void btf_offsets(struct sw_features *f)
{
	static const struct { const char *type, *name; } vma[SW_VMA_FIELDS] = {
		{ "vm_area_struct", "vm_start" }, { "vm_area_struct", "vm_end" },
		{ "vm_area_struct", "vm_pgoff" }, { "vm_area_struct", "vm_file" },
		{ "file", "f_inode" }, { "inode", "i_ino" }, { "inode", "i_sb" },
		{ "inode", "i_generation" }, { "super_block", "s_dev" },
		{ "task_struct", "mm" }, { "mm_struct", "mmap" },
		{ "vm_area_struct", "vm_next" }, { "vm_area_struct", "vm_flags" },
	};
	struct kbtf_member m[2 + SW_VMA_FIELDS] = {
		{ "task_struct", "stack", -1 }, { "task_struct", "pid", -1 },
	};

	for (int i = 0; i < SW_VMA_FIELDS; i++)
		m[2 + i] = (struct kbtf_member){ vma[i].type, vma[i].name, -1 };
	kbtf_members("/sys/kernel/btf/vmlinux", m, 2 + SW_VMA_FIELDS);
	f->task_stack_off = m[0].off > 0 ? m[0].off : 0;
	f->task_pid_off = m[1].off > 0 ? m[1].off : 0;
	f->vma_ok = true;
	for (int i = 0; i < SW_VMA_FIELDS; i++) {
		f->vma_off[i] = m[2 + i].off >= 0 ? m[2 + i].off : 0;
		if (i == SW_VMA_FILE_FIELDS)
			f->vma_list_ok = f->vma_ok;
		f->vma_ok &= i >= SW_VMA_FILE_FIELDS || m[2 + i].off >= 0;
		f->vma_list_ok &= i < SW_VMA_FILE_FIELDS || m[2 + i].off >= 0;
	}
}

/*
 * Whether a kind of multi-probe link exists: the kernel looks at the
 * probes only once it knows the attach type, so a directory's uprobes or
 * a function of no name fail otherwise (EBADF, ENOENT or ESRCH) than an
 * unknown type (EINVAL) or a kernel without fprobe (EOPNOTSUPP).
 * Nothing is attached.
 */
static bool probe_multi(enum sw_probe_kind kind)
{
	struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = attach_multi_type(kind));
	unsigned long off = 0;
	const char *none = "";
	struct sw_multi m = { .n = 1, .path = "/", .offsets = &off };
	int prog, link;

	if (kind == SW_PROBE_KPROBE)
		m.syms = &none;
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", ret0, 2, &o);
	if (prog < 0)
		return false;
	link = attach_link_multi(prog, &m);
	if (link >= 0)
		close(link);
	close(prog);
	return link >= 0 || (link != -EINVAL && link != -EOPNOTSUPP &&
			     link != -SW_ENOTSUPP);
}

/* "/sys/bus/event_source/devices/uprobe/format/ref_ctr_offset": config:32-63 */
static int pmu_field_shift(const char *pmu, const char *field)
{
	char p[256];
	FILE *f;
	int lo = -1;

	snprintf(p, sizeof(p), "/sys/bus/event_source/devices/%s/format/%s",
		 pmu, field);
	f = fopen(p, "r");
	if (!f)
		return -1;
	if (fscanf(f, "config:%d", &lo) != 1)
		lo = -1;
	fclose(f);
	return lo;
}

/*
 * The kernel's build configuration, as a stream of lines: /proc/config.gz
 * (IKCONFIG_PROC) or the distribution's /boot/config-RELEASE.
 */
static gzFile open_config(const char *release)
{
	char p[256];
	gzFile z = gzopen("/proc/config.gz", "r");

	if (z)
		return z;
	snprintf(p, sizeof(p), "/boot/config-%s", release);
	return gzopen(p, "r");	/* zlib reads plain files too */
}

/* The CONFIG_PREEMPT_* choices, as preempt= names them. */
static const struct {
	const char *line, *model;
} models[] = {
	{ "CONFIG_PREEMPT_NONE=y\n", "none" },
	{ "CONFIG_PREEMPT_VOLUNTARY=y\n", "voluntary" },
	{ "CONFIG_PREEMPT=y\n", "full" },
	{ "CONFIG_PREEMPT_LAZY=y\n", "lazy" },
};

/* What a kernel's config says of preemption. */
struct preempt_config {
	bool found;		/* there is a config */
	bool rt, dynamic;
	int model;		/* 1 + an index into models, 0 for none */
};

static void preempt_config_line(struct preempt_config *pc, const char *line)
{
	pc->rt |= !strcmp(line, "CONFIG_PREEMPT_RT=y\n");
	pc->dynamic |= !strcmp(line, "CONFIG_PREEMPT_DYNAMIC=y\n");
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (!strcmp(line, models[i].line))
			pc->model = i + 1;
}

/* A preemption model's name, as preempt= and debugfs give it, copied. */
static void model_word(const char *s, char *out, size_t len)
{
	size_t n = strcspn(s, " )\n");

	snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), s);
}

/*
 * Whether a task can be preempted in kernel code, so in the middle of a
 * uprobe program (6.0+).  debugfs's sched/preempt names the model in use
 * (root may change it there); a PREEMPT_DYNAMIC kernel without it takes
 * preempt= from its command line, else its config's default; a kernel
 * without a config says PREEMPT in uname -v.  "lazy" preempts kernel code
 * at the next tick: as good as full here.
 */
static void read_preempt(struct sw_features *f, const struct preempt_config *pc)
{
	char buf[256] = "", model[16] = "";
	struct utsname u;
	const char *p;
	FILE *in;

	if (f->version < SW_KVERSION(6, 0, 0)) {
		snprintf(f->preempt_why, sizeof(f->preempt_why),
			 "before 6.0, uprobe programs run with preemption off");
		return;
	}
	in = fopen("/sys/kernel/debug/sched/preempt", "r");
	if (in && fgets(buf, sizeof(buf), in) && (p = strchr(buf, '('))) {
		model_word(p + 1, model, sizeof(model));
		snprintf(f->preempt_why, sizeof(f->preempt_why),
			 "%s, debugfs sched/preempt", model);
	}
	if (in)
		fclose(in);
	if (!model[0] && (!pc || pc->dynamic)) {
		in = fopen("/proc/cmdline", "r");
		buf[0] = 0;
		if (in && fgets(buf, sizeof(buf), in) &&
		    (p = strstr(buf, "preempt=")) && (p == buf || p[-1] == ' ')) {
			model_word(p + 8, model, sizeof(model));
			snprintf(f->preempt_why, sizeof(f->preempt_why),
				 "preempt=%s on the kernel command line", model);
		}
		if (in)
			fclose(in);
	}
	if (!model[0] && pc && (pc->rt || pc->model)) {
		snprintf(model, sizeof(model), "%s", pc->rt ? "rt" :
			 models[pc->model - 1].model);
		snprintf(f->preempt_why, sizeof(f->preempt_why), "%s, %s",
			 model, pc->rt ? "CONFIG_PREEMPT_RT=y" :
			 pc->dynamic ? "the config's PREEMPT_DYNAMIC default" :
			 "the kernel's config");
	}
	if (!model[0] && !uname(&u)) {
		/* no config: "PREEMPT_DYNAMIC" leaves it open, so assume it may */
		bool said = strstr(u.version, " PREEMPT") != NULL;

		snprintf(model, sizeof(model), "%s", said ? "full" : "none");
		snprintf(f->preempt_why, sizeof(f->preempt_why), "%s",
			 said ? "uname -v says PREEMPT, no config to say more" :
			 "uname -v does not say PREEMPT, no config");
	}
	f->uprobe_preemptible = strcmp(model, "none") && strcmp(model, "voluntary");
	f->walk_per_task = f->uprobe_preemptible;
}

static void read_config(struct sw_features *f, struct preempt_config *pc)
{
	bool orc = false, fp_unwinder = false, guess = false, fp = false;
	bool kasan = false, fred = false, found;
	char line[256];
	gzFile z;

	z = open_config(f->release);
	found = z != NULL;
	pc->found = found;
	while (z && gzgets(z, line, sizeof(line))) {
		preempt_config_line(pc, line);
		orc |= !strcmp(line, "CONFIG_UNWINDER_ORC=y\n");
		fp_unwinder |= !strcmp(line, "CONFIG_UNWINDER_FRAME_POINTER=y\n");
		guess |= !strcmp(line, "CONFIG_UNWINDER_GUESS=y\n");
		fp |= !strcmp(line, "CONFIG_FRAME_POINTER=y\n");
		kasan |= !strcmp(line, "CONFIG_KASAN=y\n");
		fred |= !strcmp(line, "CONFIG_X86_FRED=y\n");
	}
	if (z)
		gzclose(z);

	/* x86_64: 16 KiB since 3.15, doubled by KASAN; FRED pads the top */
	f->thread_size = kasan ? 32768 : 16384;
	f->stack_padding = fred ? 16 : 0;
	/*
	 * 4.12 moved the JIT's callee-saved registers (rbx, r13-r15, the tail
	 * call count: 40 bytes) above the BPF stack and points %rbp below
	 * them; 4.18 put the frame back where %rbp points (seen on 4.14.5).
	 */
	if (f->version >= SW_KVERSION(4, 12, 0) && f->version < SW_KVERSION(4, 18, 0))
		f->jit_frame_off = 40;

	if (!found)
		return;
	if (orc) {
		f->unwinder = SW_UNWINDER_ORC;
		snprintf(f->unwinder_why, sizeof(f->unwinder_why),
			 "CONFIG_UNWINDER_ORC=y");
	} else if (fp_unwinder || (fp && !guess)) {
		f->unwinder = SW_UNWINDER_FP;
		snprintf(f->unwinder_why, sizeof(f->unwinder_why), "%s",
			 fp_unwinder ? "CONFIG_UNWINDER_FRAME_POINTER=y"
				     : "CONFIG_FRAME_POINTER=y");
	} else {
		f->unwinder = SW_UNWINDER_GUESS;
		snprintf(f->unwinder_why, sizeof(f->unwinder_why),
			 "CONFIG_FRAME_POINTER is not set");
	}
}

/*
 * What kallsyms gives away: the syscall fast path's entry code (4.14.5:
 * entry_SYSCALL_64_fastpath; 4.1: system_call_fastpath), and, without a
 * config, ORC's lookup code.  The caller reads kallsyms, once for all.
 */
static void scan_kallsyms(struct sw_features *f, bool orc_unknown,
			  sw_has_ksym_fn has, void *ctx)
{
	static const char *const orc[] = { "__orc_find", "orc_find" };

	f->syscall_fastpath = has(ctx, "entry_SYSCALL_64_fastpath") ||
			      has(ctx, "system_call_fastpath");
	for (size_t i = 0; orc_unknown && i < 2; i++) {
		if (!has(ctx, orc[i]))
			continue;
		f->unwinder = SW_UNWINDER_ORC;
		snprintf(f->unwinder_why, sizeof(f->unwinder_why),
			 "ORC lookup code (%s) in kallsyms", orc[i]);
		orc_unknown = false;
	}
	if (f->unwinder == SW_UNWINDER_UNKNOWN)
		snprintf(f->unwinder_why, sizeof(f->unwinder_why),
			 "no kernel config to tell (/proc/config.gz, /boot/config-%s)",
			 f->release);
}

/* Clear what the emulated release did not have (the history in the notes). */
static void mask_to(struct sw_features *f, __u32 v)
{
	if (v < SW_KVERSION(4, 2, 0))
		f->helper_pid = f->helper_comm = f->helper_cpu =
			f->helper_tail_call = f->map_prog_array = false;
	if (v < SW_KVERSION(4, 3, 0))
		f->uprobes = f->map_perf_array = false;
	if (v < SW_KVERSION(4, 4, 0))
		f->helper_output = false;
	if (v < SW_KVERSION(4, 6, 0))
		f->map_stack_trace = f->helper_stackid = f->map_percpu = false;
	if (v < SW_KVERSION(4, 7, 0))
		f->prog_tracepoint = false;
	if (v < SW_KVERSION(4, 9, 0))
		f->map_value_offsets = false;
	if (v < SW_KVERSION(4, 14, 0))
		f->prog_syscall_tp = false;
	if (v < SW_KVERSION(4, 17, 0))
		f->pmu_kprobe = f->pmu_uprobe = f->prog_raw_tp = false;
	if (v < SW_KVERSION(4, 18, 0))
		f->helper_get_stack = f->btf = false;
	if (v < SW_KVERSION(4, 20, 0))
		f->uprobe_ref_ctr = false;
	if (v < SW_KVERSION(5, 5, 0))
		f->map_mmap = false;
	if (v < SW_KVERSION(5, 11, 0))
		f->map_big_keys = false;
	if (v < SW_KVERSION(5, 17, 0))
		f->helper_find_vma = f->helper_loop = false;
	if (v < SW_KVERSION(5, 18, 0))
		f->link_kprobe_multi = false;
	if (v < SW_KVERSION(6, 6, 0))
		f->link_uprobe_multi = false;
}

void kfeatures_force_no_links(struct sw_features *f)
{
	f->link_kprobe_multi = f->link_uprobe_multi = false;
	f->no_links_forced = true;
}

void kfeatures_force_no_find_vma(struct sw_features *f)
{
	f->helper_find_vma = false;
	f->no_find_vma_forced = true;
}

void kfeatures_force_no_vma_lists(struct sw_features *f)
{
	f->vma_list_ok = false;
	f->no_vma_lists_forced = true;
}

void kfeatures_force_walk_state(struct sw_features *f, bool per_task)
{
	f->walk_per_task = per_task;
	f->walk_state_forced = true;
}

void kfeatures_force_small_keys(struct sw_features *f)
{
	f->map_big_keys = false;
	f->small_keys_forced = true;
}

/* Which probes BPF can run on: by PMU, or by tracefs's probe event files. */
static void probe_kinds(struct sw_features *f)
{
	f->kprobes = f->pmu_kprobe ||
		     (f->tracefs[0] && tracefs_has(f->tracefs, "kprobe_events"));
	f->uprobes = f->pmu_uprobe ||
		     (f->tracefs[0] && tracefs_has(f->tracefs, "uprobe_events"));
	/*
	 * Before 4.3, PERF_EVENT_IOC_SET_BPF refuses uprobe events, and
	 * before 4.14 syscalls:* events (only 4.14 made them BPF-capable):
	 * neither can be probed without attaching, so the release decides.
	 */
	if (f->version < SW_KVERSION(4, 3, 0))
		f->uprobes = false;
}

int kfeatures_prepare(struct sw_features *f)
{
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
	int err = 0;

	f->memlock_ok = !setrlimit(RLIMIT_MEMLOCK, &inf) ||
			f->version >= SW_KVERSION(5, 11, 0);
	/* legacy mode drives old kernels' way: through debugfs */
	if (!f->tracefs[0] || f->legacy) {
		err = tracefs_mount(f->tracefs, sizeof(f->tracefs), f->legacy != 0);
		if (err)
			f->tracefs[0] = 0;
		probe_kinds(f);
		if (f->legacy)
			mask_to(f, f->legacy);
	}
	return err;
}

/*
 * What holds until the kernel boots again: the BPF program, helper, map
 * and link types it takes, its PMUs, its BTF's offsets, its config and
 * kallsyms' answers.  f's version and release are set.
 */
static void probe_boot(struct sw_features *f, struct preempt_config *pc,
		       sw_has_ksym_fn has, void *ctx)
{
	int v;

	f->prog_kprobe = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_KPROBE, NULL) == 1;
	f->bpf = f->prog_kprobe;
	f->prog_tracepoint =
		libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_TRACEPOINT, NULL) == 1;
	f->prog_raw_tp =
		libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL) == 1;
	if (f->prog_kprobe) {
		f->helper_pid = probe_helper(BPF_FUNC_get_current_pid_tgid);
		f->helper_comm = probe_helper(BPF_FUNC_get_current_comm);
		f->helper_cpu = probe_helper(BPF_FUNC_get_smp_processor_id);
		f->helper_tail_call = probe_helper(BPF_FUNC_tail_call);
		f->helper_output = probe_helper(BPF_FUNC_perf_event_output);
		f->helper_stackid = probe_helper(BPF_FUNC_get_stackid);
		f->helper_get_stack = probe_helper(BPF_FUNC_get_stack);
		f->helper_current_task = f->helper_get_stack ||
			probe_helper(BPF_FUNC_get_current_task);
	}
	f->map_stack_trace = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_STACK_TRACE, NULL) == 1;
	f->map_percpu = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_PERCPU_ARRAY, NULL) == 1;
	f->map_perf_array = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_PERF_EVENT_ARRAY, NULL) == 1;
	f->map_prog_array = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_PROG_ARRAY, NULL) == 1;
	f->map_value_offsets = probe_map_value_offsets();
	f->map_big_keys = probe_big_keys();
	f->map_mmap = probe_map_mmap();
	if (f->prog_kprobe) {
		f->link_uprobe_multi = probe_multi(SW_PROBE_UPROBE);
		f->link_kprobe_multi = probe_multi(SW_PROBE_KPROBE);
	}
	if (!read_int("/sys/bus/event_source/devices/kprobe/type", &v)) {
		f->pmu_kprobe = true;
		f->kprobe_pmu_type = v;
	}
	if (!read_int("/sys/bus/event_source/devices/uprobe/type", &v)) {
		f->pmu_uprobe = true;
		f->uprobe_pmu_type = v;
		f->uprobe_ref_ctr_shift = pmu_field_shift("uprobe", "ref_ctr_offset");
		f->uprobe_ref_ctr = f->uprobe_ref_ctr_shift > 0;
	}
	f->btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	if (f->btf)
		btf_offsets(f);
	/* the VMA walk loops over frames with bpf_loop, of the same release */
	f->helper_loop = f->prog_kprobe && probe_helper(BPF_FUNC_loop);
	f->helper_find_vma = f->helper_loop && f->vma_ok &&
			     probe_helper(BPF_FUNC_find_vma);
	read_config(f, pc);
	/* a long read: only where the answer can matter */
	if (has && (f->version < SW_KVERSION(4, 16, 0) ||
		    f->unwinder == SW_UNWINDER_UNKNOWN))
		scan_kallsyms(f, f->unwinder == SW_UNWINDER_UNKNOWN, has, ctx);
}

/* What may change while the kernel runs: sysctls, mounts, limits. */
static void probe_run(struct sw_features *f, const struct preempt_config *pc)
{
	struct rlimit lim;
	int v;

	/*
	 * Pre-5.11 kernels charge BPF memory to RLIMIT_MEMLOCK, which
	 * kfeatures_prepare() raises: whether it can, a hard limit of
	 * infinity or root's CAP_SYS_RESOURCE tells without trying.
	 */
	f->memlock_ok = f->version >= SW_KVERSION(5, 11, 0) ||
			(!getrlimit(RLIMIT_MEMLOCK, &lim) &&
			 lim.rlim_max == RLIM_INFINITY) || geteuid() == 0;
	if (!read_int("/proc/sys/kernel/perf_event_max_stack", &v) && v > 0)
		f->max_stack = v;
	if (tracefs_find(f->tracefs, sizeof(f->tracefs), f->legacy != 0))
		f->tracefs[0] = 0;
	probe_kinds(f);
	f->prog_syscall_tp = f->prog_tracepoint &&
			     f->version >= SW_KVERSION(4, 14, 0);
	f->jit = !read_int("/proc/sys/net/core/bpf_jit_enable", &v) && v > 0;
	read_preempt(f, pc->found ? pc : NULL);
}

/* What probe_boot found, as kept between runs. */
struct boot_answers {
	struct sw_features f;
	struct preempt_config pc;
};

/*
 * What tells one boot of the kernel from another, and what it lets this
 * process do: a run in a container of fewer capabilities, or after
 * lockdown was raised, gets answers of its own.
 */
static size_t boot_key(char *key, size_t len, const struct sw_features *f)
{
	char id[64] = "", caps[256] = "", lockdown[128] = "", line[256];
	FILE *in = fopen("/proc/sys/kernel/random/boot_id", "r");

	if (in && !fgets(id, sizeof(id), in))
		id[0] = 0;
	if (in)
		fclose(in);
	in = fopen("/proc/self/status", "r");
	while (in && fgets(line, sizeof(line), in))
		if (!strncmp(line, "CapEff:", 7))
			snprintf(caps, sizeof(caps), "%s", line + 7);
	if (in)
		fclose(in);
	in = fopen("/sys/kernel/security/lockdown", "r");
	if (in && !fgets(lockdown, sizeof(lockdown), in))
		lockdown[0] = 0;
	if (in)
		fclose(in);
	if (!id[0] || !caps[0])
		return 0;
	return snprintf(key, len, "boot %scaps %slockdown %s\nrelease %s\n",
			id, caps, lockdown, f->release) + 1;
}

static bool kept_answers(const struct boot_answers *b, const struct sw_features *f)
{
	return b->f.version == f->version &&
	       !memcmp(b->f.release, f->release, sizeof(f->release)) &&
	       b->pc.model >= 0 &&
	       b->pc.model <= (int)(sizeof(models) / sizeof(models[0]));
}

int kfeatures_probe(struct sw_features *f, __u32 legacy, sw_has_ksym_fn has,
		    void *ctx, const struct sw_keep *keep)
{
	struct boot_answers b;
	char key[1024];
	size_t keylen = 0;
	int err;

	memset(f, 0, sizeof(*f));
	err = kversion_running(&f->version, f->release, sizeof(f->release));
	if (err)
		return err;
	if (keep)
		keylen = boot_key(key, sizeof(key), f);
	memset(&b, 0, sizeof(b));
	if (keylen && keep->load(keep->ctx, key, keylen, &b, sizeof(b)) &&
	    kept_answers(&b, f)) {
		*f = b.f;
		/* what a kept copy's strings hold, ended */
		f->unwinder_why[sizeof(f->unwinder_why) - 1] = 0;
		f->kept = true;
	} else {
		memset(&b, 0, sizeof(b));
		probe_boot(f, &b.pc, has, ctx);
		b.f = *f;
		if (keylen)
			keep->store(keep->ctx, key, keylen, &b, sizeof(b));
	}
	f->legacy = legacy;
	probe_run(f, &b.pc);
	if (legacy)
		mask_to(f, legacy);
	return 0;
}

static const char *yes(bool b)
{
	return b ? "yes" : "no";
}

void kfeatures_print(const struct sw_features *f, FILE *out)
{
	static const char *const unw[] = { "unknown", "frame pointers", "ORC",
					   "guess" };

	fprintf(out, "%-34s %s (version code %u.%u.%u)\n", "kernel", f->release,
		f->version >> 16, (f->version >> 8) & 0xff, f->version & 0xff);
	if (f->legacy)
		fprintf(out, "%-34s %u.%u (features newer than it masked off)\n",
			"forced legacy mode", f->legacy >> 16,
			(f->legacy >> 8) & 0xff);
	fprintf(out, "%-34s %s\n", "BPF programs on kprobes", yes(f->prog_kprobe));
	fprintf(out, "%-34s %s\n", "BPF programs on tracepoints (4.7)", yes(f->prog_tracepoint));
	fprintf(out, "%-34s %s\n", "syscalls:* tracepoints (4.14)", yes(f->prog_syscall_tp));
	fprintf(out, "%-34s %s\n", "raw tracepoints (4.17)", yes(f->prog_raw_tp));
	fprintf(out, "%-34s %s\n", "get_current_pid_tgid/comm (4.2)", yes(f->helper_pid && f->helper_comm));
	fprintf(out, "%-34s %s\n", "get_smp_processor_id (4.2)", yes(f->helper_cpu));
	fprintf(out, "%-34s %s\n", "tail calls (4.2)", yes(f->helper_tail_call && f->map_prog_array));
	fprintf(out, "%-34s %s\n", "perf_event_output (4.4)", yes(f->helper_output && f->map_perf_array));
	fprintf(out, "%-34s %s\n", "STACK_TRACE map, get_stackid (4.6)", yes(f->helper_stackid && f->map_stack_trace));
	fprintf(out, "%-34s %s\n", "per-CPU maps (4.6)", yes(f->map_percpu));
	fprintf(out, "%-34s %s\n", "map value offsets (4.9)", yes(f->map_value_offsets));
	fprintf(out, "%-34s %s\n", "get_stack (4.18)", yes(f->helper_get_stack));
	fprintf(out, "%-34s %s%s\n", "hash keys over 512 bytes (5.11)",
		yes(f->map_big_keys),
		f->small_keys_forced ? " (STACKWALK_SMALL_KEYS=1)" : "");
	fprintf(out, "%-34s %s\n", "mmapable array maps (5.5)", yes(f->map_mmap));
	fprintf(out, "%-34s %s\n", "kprobes", yes(f->kprobes));
	fprintf(out, "%-34s %s\n", "BPF on uprobes (4.3)", yes(f->uprobes));
	fprintf(out, "%-34s %s\n", "kprobe PMU (4.17)", yes(f->pmu_kprobe));
	fprintf(out, "%-34s %s\n", "uprobe PMU (4.17)", yes(f->pmu_uprobe));
	fprintf(out, "%-34s %s\n", "USDT semaphores by kernel (4.20)", yes(f->uprobe_ref_ctr));
	fprintf(out, "%-34s %s%s\n", "kprobe_multi links (5.18)",
		yes(f->link_kprobe_multi), f->no_links_forced ?
		" (STACKWALK_NO_LINKS=1)" : "");
	fprintf(out, "%-34s %s%s\n", "uprobe_multi links (6.6)",
		yes(f->link_uprobe_multi), f->no_links_forced ?
		" (STACKWALK_NO_LINKS=1)" : "");
	fprintf(out, "%-34s %s\n", "tracefs", f->tracefs[0] ? f->tracefs :
		"not mounted (mounted when tracing starts)");
	fprintf(out, "%-34s %s (%s)\n", "kernel unwinder", unw[f->unwinder], f->unwinder_why);
	fprintf(out, "%-34s %s\n", "syscall fast path, stale %rbp", yes(f->syscall_fastpath));
	fprintf(out, "%-34s %s\n", "BTF", yes(f->btf));
	fprintf(out, "%-34s %s%s\n", "bpf_find_vma (5.17)", yes(f->helper_find_vma),
		f->no_find_vma_forced ? " (STACKWALK_NO_FIND_VMA=1)" : "");
	fprintf(out, "%-34s %s (%s)\n", "uprobe programs preemptible (6.0)",
		yes(f->uprobe_preemptible), f->preempt_why);
	fprintf(out, "%-34s %s%s\n", "walk state", f->walk_per_task ?
		"per thread" : "per CPU",
		f->walk_state_forced ? " (STACKWALK_WALK_STATE)" : "");
	fprintf(out, "%-34s %s, its frame %u bytes above the BPF frame pointer\n",
		"BPF JIT", yes(f->jit), f->jit_frame_off);
	fprintf(out, "%-34s %s\n", "RLIMIT_MEMLOCK raised or unneeded", yes(f->memlock_ok));
	fprintf(out, "%-34s %u bytes, %u padding\n", "kernel stack (THREAD_SIZE)",
		f->thread_size, f->stack_padding);
	if (f->task_pid_off)
		fprintf(out, "%-34s +%u (BTF)\n", "task_struct.pid", f->task_pid_off);
	else
		fprintf(out, "%-34s unknown (no BTF): %s\n", "task_struct.pid",
			f->prog_tracepoint ? "forks seen through perf events" :
			f->helper_pid ? "measured at start, to see forks at "
					"wake_up_new_task" :
			"measured at start, to find each event's process");
	if (f->task_stack_off)
		fprintf(out, "%-34s +%u (BTF)\n", "task_struct.stack", f->task_stack_off);
	else
		fprintf(out, "%-34s unknown (no BTF): found from the BPF stack\n",
			"task_struct.stack");
	fprintf(out, "%-34s %s\n", "kept by a run since boot", f->kept ?
		"yes: what holds until a reboot, as an earlier run found it" :
		"no: all probed now");
}
