// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include "attach.h"

static int perf_open(struct perf_event_attr *attr, int pid)
{
	attr->size = sizeof(*attr);
	attr->sample_period = 1;
	attr->wakeup_events = 1;
	/*
	 * pid -1, cpu 0: the program runs for every task on every CPU.  A
	 * uprobe opened for one process is only armed in its address space.
	 */
	return syscall(__NR_perf_event_open, attr, pid ? pid : -1, pid ? -1 : 0,
		       -1, PERF_FLAG_FD_CLOEXEC);
}

static int open_pmu(const struct sw_features *f,
		    const struct sw_probe_spec *s)
{
	struct perf_event_attr attr = {};

	if (s->kind == SW_PROBE_UPROBE) {
		attr.type = f->uprobe_pmu_type;
		attr.config1 = (uintptr_t)s->path;
		attr.config2 = s->offset;
		if (s->ref_ctr_off)
			attr.config |= (__u64)s->ref_ctr_off << f->uprobe_ref_ctr_shift;
	} else {
		attr.type = f->kprobe_pmu_type;
		attr.config1 = (uintptr_t)s->func;
		/* bit 0 of config is "retprobe" in the kprobe PMU's format */
		attr.config = s->kind == SW_PROBE_KRETPROBE;
	}
	return perf_open(&attr, s->pid);
}

static int open_tracepoint(int id, int pid)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.config = id,
	};

	return perf_open(&attr, pid);
}

static bool use_pmu(const struct sw_features *f, enum sw_probe_kind k)
{
	if (k == SW_PROBE_UPROBE)
		return f->pmu_uprobe;
	return f->pmu_kprobe;
}

int attach_probe(const struct sw_features *f, int prog_fd,
	      const struct sw_probe_spec *s, unsigned seq,
	      struct sw_attachment *a)
{
	const char *target = s->kind == SW_PROBE_UPROBE ? s->path : s->func;
	int id, err;

	memset(a, 0, sizeof(*a));
	a->perf_fd = -1;
	if (s->kind == SW_PROBE_RAW_TRACEPOINT) {
		a->perf_fd = bpf_raw_tracepoint_open(s->event, prog_fd);
		a->link = a->perf_fd >= 0;
		return a->perf_fd < 0 ? -errno : 0;
	}
	if (s->kind == SW_PROBE_TRACEPOINT) {
		id = tracefs_event_id(f->tracefs, s->category, s->event);
		if (id < 0)
			return id;
		a->perf_fd = open_tracepoint(id, 0);
	} else if (use_pmu(f, s->kind)) {
		a->perf_fd = open_pmu(f, s);
	} else {
		if (!f->tracefs[0])
			return -ENOENT;
		a->ev_kind = s->kind == SW_PROBE_UPROBE ? SW_EV_UPROBE :
			     s->kind == SW_PROBE_KRETPROBE ? SW_EV_KRETPROBE :
			     SW_EV_KPROBE;
		err = tracefs_add_probe(f->tracefs, a->ev_kind, target,
					   s->offset, s->ref_ctr_off, seq,
					   a->ev_name, sizeof(a->ev_name));
		if (err)
			return err;
		a->tracefs_event = true;
		id = tracefs_event_id(f->tracefs, SW_EVENT_GROUP, a->ev_name);
		if (id < 0) {
			err = id;
			goto fail;
		}
		a->perf_fd = open_tracepoint(id, s->pid);
	}
	if (a->perf_fd < 0) {
		err = -errno;
		goto fail;
	}
	if (ioctl(a->perf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd) ||
	    ioctl(a->perf_fd, PERF_EVENT_IOC_ENABLE, 0)) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	attach_remove(f, a);
	return err;
}

void attach_remove(const struct sw_features *f, struct sw_attachment *a)
{
	if (a->perf_fd >= 0) {
		if (!a->link)
			ioctl(a->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
		close(a->perf_fd);
		a->perf_fd = -1;
	}
	if (a->tracefs_event) {
		/* the event must have no perf users left to be removable */
		tracefs_remove_probe(f->tracefs, a->ev_kind, a->ev_name);
		a->tracefs_event = false;
	}
}

/*
 * BPF_LINK_CREATE for uprobe_multi (6.6) and kprobe_multi (5.18), laid
 * out as the kernel's union bpf_attr has them: Debian 12's headers and
 * libbpf 1.1 predate the first.  The kernel takes a shorter attr as
 * zero-extended.
 */
struct umulti_attr {
	__u32 prog_fd, target_fd, attach_type, flags;
	__aligned_u64 path, offsets, ref_ctr_offsets, cookies;
	__u32 cnt, flags2, pid;
};

struct kmulti_attr {
	__u32 prog_fd, target_fd, attach_type, flags;
	__u32 flags2, cnt;
	__aligned_u64 syms, addrs, cookies;
};

int attach_link_multi(int prog_fd, const struct sw_multi *m)
{
	struct umulti_attr u = {
		.prog_fd = prog_fd, .attach_type = SW_TRACE_UPROBE_MULTI,
		.path = (uintptr_t)m->path, .offsets = (uintptr_t)m->offsets,
		.ref_ctr_offsets = (uintptr_t)m->ref_ctr_offs, .cnt = m->n,
		.pid = m->pid,
	};
	struct kmulti_attr k = {
		.prog_fd = prog_fd, .attach_type = SW_TRACE_KPROBE_MULTI,
		.cnt = m->n, .syms = (uintptr_t)m->syms,
	};
	int fd = m->syms ? syscall(__NR_bpf, BPF_LINK_CREATE, &k, sizeof(k)) :
			   syscall(__NR_bpf, BPF_LINK_CREATE, &u, sizeof(u));

	return fd < 0 ? -errno : fd;
}

int attach_multi_probes(int prog_fd, const struct sw_multi *m,
		    struct sw_attachment *a)
{
	memset(a, 0, sizeof(*a));
	a->perf_fd = attach_link_multi(prog_fd, m);
	a->link = a->perf_fd >= 0;
	return a->perf_fd < 0 ? a->perf_fd : 0;
}

const char *attach_why(enum sw_probe_kind k, int err, bool brief)
{
	switch (-err) {
	case SW_ENOTSUPP:
		/* uprobes: an instruction they cannot step out of line, e.g. lock-prefixed */
		if (k == SW_PROBE_UPROBE)
			return brief ? "not supported" : "uprobes cannot be placed "
			       "on its first instruction (ENOTSUPP)";
		return brief ? "not supported" : "the kernel cannot probe it (ENOTSUPP)";
	case EOPNOTSUPP:
		return brief ? "not supported" : "the kernel cannot probe it (EOPNOTSUPP)";
	case EPERM:
	case EACCES:
		/* e.g. irq_vectors:irq_work_exit: perf sampling it would recurse */
		if (k == SW_PROBE_TRACEPOINT)
			return brief ? "not permitted" : "the kernel does not let "
			       "perf sample this tracepoint (EPERM)";
		return brief ? "not permitted" : "the kernel does not permit "
		       "probing it (EPERM)";
	case EINVAL:
		return brief ? "refused" : "the kernel refuses a probe there (EINVAL)";
	case ENOENT:
		return brief ? "gone" : "it no longer exists (ENOENT)";
	case EBUSY:
		return brief ? "busy" : "another probe holds it (EBUSY)";
	case EEXIST:
		/* before 4.15 a tracepoint's event takes one BPF program */
		if (k == SW_PROBE_TRACEPOINT)
			return brief ? "taken" : "this kernel runs one BPF program "
			       "a tracepoint (before 4.15), and the tool follows "
			       "processes through it (the cfi walker, or the "
			       "children of -- COMMAND); trace it with --walker "
			       "stackmap and no COMMAND";
		return brief ? "taken" : "another BPF program holds it (EEXIST)";
	case EMFILE:
		return "too many open files: each probe takes one; raise ulimit -n";
	default:
		return strerror(-err);
	}
}

bool attach_target_err(int err)
{
	return err != -ENOMEM && err != -EMFILE && err != -ENFILE;
}
