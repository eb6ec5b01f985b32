// SPDX-License-Identifier: MIT
/*
 * Each field is found by what it holds in a thread of ours, whose pid and
 * tgid differ and whose name we set, and taken only where the calling
 * thread (pid and tgid equal, another name) agrees: task_struct.stack by
 * the stack base it was found from, pid and tgid side by side, comm.
 * thread_info.cpu is where the thread, moved from one CPU to another,
 * holds the one and then the other, and nowhere else does.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "task_calib.h"
#include "../bpf/stackwalk.h"
#include "../compat/attach.h"
#include "peek.skel.h"

/* the task_struct bytes read: 4.x's, in a distribution's config, fit */
#define TASK_BYTES	8192
#define CALIB_NAME	"stackwalk-calib"

struct reader {
	const struct sw_features *f;
	int map_fd;
	__u64 base, task;
	__u8 b[TASK_BYTES];
	pid_t pid, tgid;
	char comm[16];
	int cpus[2];			/* -1: fewer than two CPUs to run on */
	__u8 ti[2][SW_PEEK41_BYTES];	/* thread_info on each */
	int err;
};

static __u32 u32_at(const __u8 *b, size_t off)
{
	__u32 v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* The chunk of our task_struct at off (or, SW_PEEK41_BASE, of our stack's base). */
static int peek_chunk(struct reader *r, __u32 off, __u8 *to)
{
	struct sw_peek41 v = {};
	__u32 zero = 0;

	if (bpf_map_update_elem(r->map_fd, &zero, &v, BPF_ANY))
		return -errno;
	syscall(SYS_getpriority, SW_PEEK41_MAGIC, off, r->f->thread_size);
	if (bpf_map_lookup_elem(r->map_fd, &zero, &v))
		return -errno;
	if (!v.base || !v.task)
		return -ENODATA;
	r->base = v.base;
	r->task = v.task;
	memcpy(to, v.b, sizeof(v.b));
	return 0;
}

static int read_task(struct reader *r)
{
	r->pid = gettid();
	r->tgid = getpid();
	if (prctl(PR_GET_NAME, r->comm))
		return -errno;
	for (__u32 off = 0; off < TASK_BYTES; off += SW_PEEK41_BYTES) {
		int err = peek_chunk(r, off, r->b + off);

		if (err)
			return err;
	}
	return 0;
}

/* This thread's thread_info on two CPUs, moving it from one to the other. */
static int read_cpus(struct reader *r)
{
	cpu_set_t set, one;
	int n = 0, err = 0;

	r->cpus[0] = r->cpus[1] = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			r->cpus[n++] = c;
	for (int i = 0; n == 2 && i < 2 && !err; i++) {
		CPU_ZERO(&one);
		CPU_SET(r->cpus[i], &one);
		err = sched_setaffinity(0, sizeof(one), &one) ? -errno :
		      peek_chunk(r, SW_PEEK41_BASE, r->ti[i]);
	}
	return err;
}

static void *other_thread(void *arg)
{
	struct reader *r = arg;

	r->err = prctl(PR_SET_NAME, CALIB_NAME) ? -errno : read_task(r);
	if (!r->err)
		r->err = read_cpus(r);
	return NULL;
}

/*
 * thread_info.cpu: the one place that held each CPU the thread ran on; 0
 * (the task's word, never the CPU's) with one CPU to run on or no such
 * one place.
 */
static __u32 find_cpu(const struct reader *r)
{
	__u32 at = 0;
	int found = 0;

	for (__u32 off = 8; r->cpus[1] >= 0 && off + 4 <= SW_PEEK41_BYTES; off += 4)
		if (u32_at(r->ti[0], off) == (__u32)r->cpus[0] &&
		    u32_at(r->ti[1], off) == (__u32)r->cpus[1]) {
			at = off;
			found++;
		}
	return found == 1 ? at : 0;
}

static void find(const struct reader *r, __s64 o[3])
{
	size_t n = strlen(r->comm) + 1;

	o[0] = o[1] = o[2] = -1;
	for (size_t off = 0; off + 8 <= TASK_BYTES; off += 8) {
		__u64 w;

		memcpy(&w, r->b + off, sizeof(w));
		if (w == r->base) {
			o[0] = off;
			break;
		}
	}
	for (size_t off = 0; off + 8 <= TASK_BYTES; off += 4)
		if (u32_at(r->b, off) == (__u32)r->pid &&
		    u32_at(r->b, off + 4) == (__u32)r->tgid) {
			o[1] = off;
			break;
		}
	for (size_t off = 0; off + n <= TASK_BYTES; off++)
		if (!memcmp(r->b + off, r->comm, n)) {
			o[2] = off;
			break;
		}
}

static int measure(const struct sw_features *f, int map_fd,
		   struct sw_task_offs *out)
{
	struct reader *t = calloc(2, sizeof(*t)), *self = t + 1;
	__s64 a[3], b[3];
	pthread_t th;
	int err;

	if (!t)
		return -ENOMEM;
	t->f = self->f = f;
	t->map_fd = self->map_fd = map_fd;
	err = -pthread_create(&th, NULL, other_thread, t);
	if (!err) {
		pthread_join(th, NULL);
		err = t->err;
	}
	if (!err)
		err = read_task(self);
	if (!err) {
		find(t, a);
		find(self, b);
		err = -ENOENT;
		/* one answer each, the same from both */
		if (a[0] >= 0 && a[1] >= 0 && a[2] >= 0 && !memcmp(a, b, sizeof(a))) {
			out->stack = a[0];
			out->pid = a[1];
			out->comm = a[2];
			out->cpu = find_cpu(t);
			err = 0;
		}
	}
	free(t);
	return err;
}

int task_calib(const struct sw_features *f, struct sw_task_offs *out)
{
	struct sw_probe_spec spec = { .kind = SW_PROBE_KPROBE,
				      .func = "sys_getpriority" };
	struct sw_attachment a;
	struct peek_bpf *skel;
	int err;

	skel = peek_bpf__open();
	if (!skel)
		return -errno;
	/* the reader of 4.18+ calls a helper 4.1 does not have */
	bpf_program__set_autoload(skel->progs.sw_peek, false);
	err = peek_bpf__load(skel);
	if (!err)
		err = attach_probe(f, bpf_program__fd(skel->progs.sw_peek_v41),
				   &spec, 0, &a);
	if (!err) {
		err = measure(f, bpf_map__fd(skel->maps.peek41), out);
		attach_remove(f, &a);
	}
	peek_bpf__destroy(skel);
	return err;
}
