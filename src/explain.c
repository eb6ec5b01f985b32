// SPDX-License-Identifier: MIT
/*
 * stacksnoop --explain: what the frame-pointer walker read, frame by frame,
 * and why it stopped, in words: enough to learn frame-pointer walking from.
 */
#include <stdio.h>
#include <stdlib.h>
#include "explain.h"
#include "fp_key.h"
#include "output.h"

/* A frame's name into a (freed first), whole; "?" when out of memory. */
static const char *what(struct symbolizer *sym, bool kernel, __u32 tgid,
			__u64 addr, bool is_return, char **a)
{
	free(*a);
	*a = output_frame_name(sym, kernel, tgid, addr, is_return, true, true);
	return *a ? *a : "?";
}

/* The frame pointer frame i's saved %rbp pointed to, or where the walk ended. */
static __u64 saved_fp(const struct sw_fp_explain *x, size_t i)
{
	return i + 1 < SW_FP_XDEPTH && x->fp[i + 1] ? x->fp[i + 1] : x->last;
}

static void why_stop(FILE *out, const char *pfx, const struct sw_fp_explain *x,
		     bool kernel, size_t n)
{
	switch (kernel ? x->h.kstop : x->h.ustop) {
	case SW_STOP_END:
		if (x->last)
			fprintf(out, "%sstop: the saved %%rbp %llx is not a frame "
				"(not 8-byte aligned): the kernel\n%s      marks the "
				"registers it saved on entry that way; the chain "
				"ends there\n", pfx, (unsigned long long)x->last, pfx);
		else
			fprintf(out, "%sstop: the saved %%rbp is 0, which marks "
				"the outermost frame\n", pfx);
		break;
	case SW_STOP_UNREADABLE:
		fprintf(out, "%sstop: nothing can be read at %%rbp = %llx: code "
			"built without frame pointers\n%s      used %%rbp for "
			"something else, so the chain breaks there\n", pfx,
			(unsigned long long)x->last, pfx);
		break;
	case SW_STOP_LEFT_KERNEL:
		fprintf(out, "%sstop: the frame at %llx returns below "
			"__START_KERNEL_map: the chain has\n%s      left the "
			"kernel for the user stack of the task\n", pfx,
			(unsigned long long)x->last, pfx);
		break;
	case SW_STOP_ROOT:
		fprintf(out, "%sstop: the frame returns into ret_from_fork, where "
			"every task's kernel stack\n%s      begins: there is no "
			"frame beyond it\n", pfx, pfx);
		break;
	case SW_STOP_DEPTH:
		fprintf(out, "%sstop: %zu frames read, all the walker holds (its "
			"depth fits 4.x's BPF limits);\n%s      the chain goes "
			"on at %%rbp = %llx\n", pfx, n, pfx,
			(unsigned long long)x->last);
		break;
	default:
		fprintf(out, "%sstop: no walk\n", pfx);
		break;
	}
}

void explain_print(FILE *out, const struct sw_event *ev,
		      struct symbolizer *sym, const struct sw_explain_how *how)
{
	const struct sw_fp_explain *x = ev->explain;
	const char *pfx = "    ";
	bool kernel = !how->user;
	__u32 tgid = ev->stack.tgid;
	size_t n = kernel ? ev->stack.nk : ev->stack.nu, i = 0;
	char *a = NULL, b[32];

	fprintf(out, "  how the %s stack was walked:\n", kernel ? "kernel" : "user");
	if (how->tracepoint) {
		fprintf(out, "%sa tracepoint hands BPF no registers: the walk "
			"starts at the BPF program's own\n%sframe (the JIT keeps "
			"its frame pointer in %%rbp), so the tracing code's\n%s"
			"frames come first, then the traced code's\n", pfx, pfx, pfx);
	} else {
		fprintf(out, "%s%%rip = %llx %s: where the %s fired\n", pfx,
			(unsigned long long)x->ret[0],
			what(sym, kernel, tgid, x->ret[0], false, &a),
			how->entry ? (kernel ? "kprobe" : "uprobe") : "probe");
		i = 1;
	}
	/* sp: where the walk read the caller (a USDT probe's uframes rule) */
	if ((how->entry || x->sp) && n > 1) {
		if (how->entry)
			fprintf(out, "%sat a function's first instruction it has "
				"not pushed %%rbp yet: the return\n%saddress into "
				"its caller is on top of the stack, and %%rbp is "
				"still the caller's\n", pfx, pfx);
		else
			fprintf(out, "%sthe function keeps no %%rbp frame here: "
				"its CFI row at the probe puts\n%sthe return "
				"address into its caller at CFA-8, CFA an offset "
				"from %%rsp\n", pfx, pfx);
		fprintf(out, "%s  [%s = %llx] = %llx %s\n", pfx,
			how->entry ? "%rsp" : "CFA-8", (unsigned long long)x->sp,
			(unsigned long long)x->ret[1],
			what(sym, kernel, tgid, x->ret[1], true, &a));
		i = 2;
	}
	if (i < n)
		fprintf(out, "%sthen frame by frame from %%rbp: [%%rbp] holds the "
			"caller's saved %%rbp, [%%rbp+8]\n%sthe return address "
			"into the caller\n", pfx, pfx);
	for (; i < n; i++) {
		snprintf(b, sizeof(b), "%llx", (unsigned long long)saved_fp(x, i));
		fprintf(out, "%s  [%%rbp = %llx] = %-16s [+8] = %llx %s\n", pfx,
			(unsigned long long)x->fp[i], b,
			(unsigned long long)x->ret[i],
			what(sym, kernel, tgid, x->ret[i], i > 0, &a));
	}
	free(a);
	why_stop(out, pfx, x, kernel, n);
}
