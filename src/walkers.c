// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "walkers.h"

/*
 * auto's order: the first that runs is the most exact and the cheapest;
 * cfi first, as only it finds callers without frame pointers.
 */
static const struct walker_desc *const walkers_auto[] = {
	&walker_cfi41, &walker_cfi, &walker_getstack, &walker_stackmap,
	&walker_fp,
};

/* d is not this kernel's walker of its kind */
static bool other_era(const struct sw_features *f, const struct walker_desc *d)
{
	return d->stand_in && walker_cfi_runs(f);
}

const struct walker_desc *walkers_get(const struct sw_features *f,
				      enum sw_walker kind)
{
	for (size_t i = 0; i < sizeof(walkers_auto) / sizeof(walkers_auto[0]); i++)
		if (walkers_auto[i]->kind == kind && !other_era(f, walkers_auto[i]))
			return walkers_auto[i];
	return NULL;
}

const char *walkers_name(enum sw_walker kind)
{
	for (size_t i = 0; i < sizeof(walkers_auto) / sizeof(walkers_auto[0]); i++)
		if (walkers_auto[i]->kind == kind)
			return walkers_auto[i]->name;
	return "auto";
}

int walkers_parse(const char *s, enum sw_walker *kind)
{
	const struct walker_desc *d;

	if (!strcmp(s, "auto")) {
		*kind = SW_WALKER_AUTO;
		return 0;
	}
	for (size_t i = 0; i < sizeof(walkers_auto) / sizeof(walkers_auto[0]); i++) {
		d = walkers_auto[i];
		if (!strcmp(s, d->name)) {
			*kind = d->kind;
			return 0;
		}
	}
	return -EINVAL;
}

const struct walker_desc *walkers_pick(const struct sw_features *f,
				       const struct walker_need *n,
				       const struct walker_desc *after,
				       const char **why, char *msg, size_t len)
{
	size_t i = 0;

	while (after && i < sizeof(walkers_auto) / sizeof(walkers_auto[0]))
		if (walkers_auto[i++] == after)
			break;
	for (; i < sizeof(walkers_auto) / sizeof(walkers_auto[0]); i++) {
		const struct walker_desc *d = walkers_auto[i];

		if (other_era(f, d))
			continue;
		if (!d->refuse(f, n, msg, len)) {
			*why = d->why(f, n);
			return d;
		}
	}
	return NULL;
}

int walkers_explain(const struct sw_features *f, enum sw_walker asked,
		    bool kprobe, enum sw_walker *kind, const char **why,
		    char *msg, size_t len)
{
	struct walker_need user = { .ustack = true, .explain = true, .events = true };
	const struct walker_desc *cfi = walkers_get(f, SW_WALKER_CFI);
	bool rules;

	if (asked != SW_WALKER_AUTO && asked != SW_WALKER_FP &&
	    asked != SW_WALKER_CFI) {
		snprintf(msg, len, "--explain shows the cfi or fp walker's steps; "
			 "drop --walker %s", walkers_name(asked));
		return 2;
	}
	/* user frames: the unwind rule of each, where cfi runs */
	rules = asked != SW_WALKER_FP && !kprobe && cfi &&
		!cfi->refuse(f, &user, msg, len);
	if (asked == SW_WALKER_CFI && !rules) {
		if (kprobe)
			snprintf(msg, len, "--walker cfi --explain: a kernel "
				 "event's stack is the kernel's; drop --walker cfi");
		return 1;
	}
	/* fp's reads come in records of their own; cfi's events also by trace_pipe */
	if (!rules && (!f->helper_output || !f->map_perf_array)) {
		snprintf(msg, len, "--explain needs bpf_perf_event_output (4.4+), "
			 "which this kernel lacks");
		return 1;
	}
	*kind = rules ? SW_WALKER_CFI : SW_WALKER_FP;
	*why = rules ? "--explain shows the cfi walker's rules" :
		       "--explain shows the fp walker's reads";
	return 0;
}

bool walkers_refused(const struct walker_desc *d, const char *why, char *msg,
		     size_t len)
{
	snprintf(msg, len, "--walker %s: %s; use --walker auto", d->name, why);
	return true;
}

bool walkers_refuse_helper(const struct walker_desc *d,
			   const struct sw_features *f,
			   const struct walker_need *n, bool has,
			   const char *lacks, char *msg, size_t len)
{
	if (!f->bpf)
		return walkers_refused(d, "this kernel refuses BPF programs "
				       "(CONFIG_BPF_EVENTS, or run as root)", msg, len);
	if (f->legacy)
		return walkers_refused(d, "forced legacy mode runs the fp walker only",
				       msg, len);
	if (!has)
		return walkers_refused(d, lacks, msg, len);
	/*
	 * The kernel's user unwinder starts from the saved user %rbp, which
	 * the syscall fast path leaves stale; the fp walker takes the user's
	 * %rbp from the end of the kernel's frame chain instead.
	 */
	if (n && n->kernel_event && n->ustack && f->syscall_fastpath) {
		snprintf(msg, len, "--walker %s: this kernel's syscall fast path "
			 "leaves a stale %%rbp in the saved user registers, so its "
			 "unwinder gets user frames of kernel events wrong; use "
			 "--walker fp, or -K", d->name);
		return true;
	}
	return false;
}
