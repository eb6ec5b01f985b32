// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "frame.h"
#include "interrupt.h"
#include "output.h"
#include "untrusted.h"

/* A growable string. */
struct buf {
	char *s;
	size_t len, cap;
};

static int put(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if (b->len + n < b->cap)
			break;
		size_t cap = (b->cap + n + 1) * 2;
		char *s = realloc(b->s, cap);

		if (!s)
			return -ENOMEM;
		b->s = s;
		b->cap = cap;
	}
	b->len += n;
	return 0;
}

const char *output_how_name(unsigned int how)
{
	static const char *const names[] = {
		[SW_HOW_REGS] = "regs", [SW_HOW_CFI] = "cfi",
		[SW_HOW_FP] = "fp", [SW_HOW_SIGNAL] = "signal",
	};

	return how < sizeof(names) / sizeof(names[0]) ? names[how] : "?";
}

/*
 * Whether user frame i is a return address, named at addr - 1 (inside the
 * call): not the first, nor one a signal frame saved, which is the
 * interrupted instruction itself (a fault on a function's first byte is
 * in that function, not the one before).
 */
bool output_user_return(const struct sw_stack *st, size_t i)
{
	return i > 0 && !(st->has_how && sw_how_get(st->uhow, i) == SW_HOW_SIGNAL);
}

char *output_frame_name(struct symbolizer *sym, bool kernel, __u32 tgid,
		    __u64 addr, bool is_return, bool offset, bool verbose)
{
	struct sw_frame f;
	char *out = NULL;
	int err;

	if (frame_get(sym, kernel, tgid, addr, is_return, &f))
		return NULL;
	if (!f.named && verbose && f.module)
		err = asprintf(&out, "[unknown] (%s+0x%llx)", f.module,
			       (unsigned long long)f.module_offset);
	else if (!f.named)
		err = asprintf(&out, "[unknown]");
	/* whole, however long: a C++ template's name can run to pages */
	else if (offset && kernel && f.module)
		err = asprintf(&out, "%s+0x%llx [%s]", f.name,
			       (unsigned long long)f.offset, f.module);
	else if (offset)
		err = asprintf(&out, "%s+0x%llx", f.name, (unsigned long long)f.offset);
	else if (kernel && f.module)
		err = asprintf(&out, "%s [%s]", f.name, f.module);
	else
		err = asprintf(&out, "%s", f.name);
	frame_release(&f);
	return err < 0 ? NULL : out;
}

const char *output_comm(const char *comm, char *buf, size_t len)
{
	char raw[SW_COMM_LEN + 1];

	snprintf(raw, sizeof(raw), "%.*s", SW_COMM_LEN, comm);
	return untrusted_escape(buf, len, raw);
}

/*
 * The fp walker starts a tracepoint's kernel walk from its own frame, so
 * the tracing machinery's frames come first.  The kernel's unwinders start
 * where perf_fetch_caller_regs() ran: in perf_trace_<event> (generic
 * events) or perf_call_bpf_enter/exit (syscalls), whose return address is
 * their first frame.  Drop through that function's frame.
 */
static bool is(const char *fn, const char *name)
{
	size_t n = strlen(name);

	/* gcc's clones keep the name: perf_call_bpf_enter.isra.0 */
	return !strncmp(fn, name, n) && (!fn[n] || fn[n] == '.');
}

static bool fetches_caller_regs(const char *fn)
{
	return is(fn, "perf_call_bpf_enter") || is(fn, "perf_call_bpf_exit") ||
	       (!strncmp(fn, "perf_trace_", 11) &&
		!is(fn, "perf_trace_run_bpf_submit") &&
		strncmp(fn, "perf_trace_buf_", 15));
}

size_t probe_tracepoint_skip(struct symbolizer *sym, const struct sw_stack *st)
{
	for (size_t i = 0; i < st->nk; i++) {
		struct sym_result r = {};

		if (symbolizer_kernel(sym, st->kip[i], true, &r) || !r.name)
			continue;
		if (fetches_caller_regs(r.name))
			return i + 1;
	}
	return 0;
}

/* put() of a frame's name after pre and before post; -ENOMEM */
static int put_frame(struct buf *b, const char *pre, char *name, const char *post)
{
	int err;

	if (!name)
		return -ENOMEM;
	err = put(b, "%s%s%s", pre, name, post);
	free(name);
	return err;
}

/*
 * A folded line's frame: ';' separates frames there, so a name's own is
 * written as \x3b, as untrusted_escape writes the bytes it escapes (and
 * the backslash itself: every \x is ours).  Frees name.
 */
static int put_folded(struct buf *b, const char *sep, char *name)
{
	int err;

	if (!name)
		return -ENOMEM;
	err = put(b, "%s", sep);
	for (const char *p = name, *q; !err && *p; p = q) {
		q = p + strcspn(p, ";");
		err = put(b, "%.*s%s", (int)(q - p), p, *q ? "\\x3b" : "");
		q += !!*q;
	}
	free(name);
	return err;
}

static int render(struct buf *b, const struct sw_stack *st,
		  struct symbolizer *sym, const struct sw_format *fmt)
{
	size_t k0 = fmt->trim_tracepoint ? probe_tracepoint_skip(sym, st) : 0;
	char comm[4 * SW_COMM_LEN + 1];
	int err = 0;

	if (fmt->stoppable && interrupt_pending())
		return -EINTR;
	output_comm(st->comm, comm, sizeof(comm));
	b->len = 0;
	if (b->s)
		b->s[0] = 0;
	if (fmt->folded) {
		const char *sep = "";

		if (fmt->folded_comm) {
			err |= put_folded(b, "", strdup(comm));
			sep = ";";
		}
		if (fmt->user && walker_stack_cut(st->ustop)) {
			err |= put(b, "%s" OUTPUT_TRUNCATED, sep);
			sep = ";";
		}
		for (size_t i = st->nu; fmt->user && i-- > 0; sep = ";")
			err |= put_folded(b, sep, output_frame_name(sym, false,
				   st->tgid, st->uip[i], output_user_return(st, i), false, false));
		if (fmt->delimiter) {
			err |= put(b, "%s-", sep);
			sep = ";";
		}
		if (fmt->kernel && walker_stack_cut(st->kstop)) {
			err |= put(b, "%s" OUTPUT_TRUNCATED, sep);
			sep = ";";
		}
		for (size_t i = st->nk; fmt->kernel && i-- > k0; sep = ";")
			err |= put_folded(b, sep, output_frame_name(sym, true, 0,
				   st->kip[i], i > 0, false, false));
		return err;
	}
	for (size_t i = k0; fmt->kernel && i < st->nk; i++) {
		if (fmt->verbose)
			err |= put(b, "  %-16llx ", (unsigned long long)st->kip[i]);
		else
			err |= put(b, "  ");
		err |= put_frame(b, "", output_frame_name(sym, true, 0, st->kip[i],
			   i > 0, fmt->offset, fmt->verbose), "\n");
	}
	if (fmt->kernel && walker_stack_cut(st->kstop))
		err |= put(b, "  %s" OUTPUT_TRUNCATED "\n", fmt->verbose ? "                 " : "");
	if (fmt->delimiter)
		err |= put(b, "    --\n");
	for (size_t i = 0; fmt->user && i < st->nu; i++) {
		if (fmt->verbose)
			err |= put(b, "  %-16llx ", (unsigned long long)st->uip[i]);
		else
			err |= put(b, "  ");
		if (fmt->verbose && st->has_how)
			err |= put(b, "%-6s ", output_how_name(sw_how_get(st->uhow, i)));
		err |= put_frame(b, "", output_frame_name(sym, false, st->tgid,
			   st->uip[i], output_user_return(st, i), fmt->offset, fmt->verbose), "\n");
	}
	if (fmt->user && walker_stack_cut(st->ustop))
		err |= put(b, "  %s" OUTPUT_TRUNCATED "\n", fmt->verbose ? "                 " : "");
	if (fmt->comm)
		err |= put(b, "    %s [%u]\n", comm, st->tgid);
	return err;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct output_shown *)a)->text,
		      ((const struct output_shown *)b)->text);
}

/* Least frequent first, as bcc prints; ties in a stable, readable order. */
static int by_count(const void *a, const void *b)
{
	const struct output_shown *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? -1 : 1;
	return strcmp(x->text, y->text);
}

size_t output_merge(struct output_shown *v, size_t n)
{
	size_t m = 0;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), by_text);
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(v[m - 1].text, v[i].text)) {
			v[m - 1].count += v[i].count;
			free(v[i].text);
			continue;
		}
		v[m++] = v[i];
	}
	qsort(v, m, sizeof(*v), by_count);
	return m;
}

int output_stacks(FILE *out, const struct sw_stacks *s,
		    struct symbolizer *sym, const struct sw_format *fmt)
{
	struct output_shown *r = calloc(s->n ? s->n : 1, sizeof(*r));
	struct buf b = {};
	size_t n = 0, m = 0;
	int err = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < s->n && !err; i++) {
		if (!s->v[i].count)
			continue;
		err = render(&b, &s->v[i], sym, fmt);
		if (!err && !(r[n].text = strdup(b.s ? b.s : "")))
			err = -ENOMEM;
		if (!err)
			r[n++].count = s->v[i].count;
	}
	m = output_merge(r, n);
	for (size_t i = 0; i < m; i++) {
		if (!err) {
			if (fmt->folded)
				fprintf(out, "%s %llu\n", r[i].text,
					(unsigned long long)r[i].count);
			else
				fprintf(out, "%s    %llu\n\n", r[i].text,
					(unsigned long long)r[i].count);
		}
		free(r[i].text);
	}
	free(r);
	free(b.s);
	return err;
}
