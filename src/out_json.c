// SPDX-License-Identifier: MIT
/*
 * JSON as the man pages describe it.  Addresses are strings ("0x..."): a
 * kernel address does not fit the 53 bits a JSON number keeps in jq or
 * JavaScript.  Names arrive escaped (untrusted_escape: printable UTF-8),
 * so only the quote and the backslash need JSON's escapes.
 */
#include <errno.h>
#include <stdlib.h>
#include "formats.h"
#include "frame.h"

static void json_str(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void json_frame(FILE *out, const struct sw_frame *f)
{
	fprintf(out, "{\"kind\":\"%s\",\"address\":\"0x%llx\",\"name\":",
		f->kernel ? "kernel" : "user", (unsigned long long)f->addr);
	json_str(out, f->name);
	if (f->named)
		fprintf(out, ",\"offset\":%llu", (unsigned long long)f->offset);
	fputs(",\"module\":", out);
	json_str(out, f->module);
	if (!f->kernel && f->path) {
		fputs(",\"path\":", out);
		json_str(out, f->path);
		fprintf(out, ",\"module_offset\":\"0x%llx\"",
			(unsigned long long)f->module_offset);
	}
	fputc('}', out);
}

/* "frames":[...] of st as fmt shows them. */
static int json_frames(FILE *out, const struct sw_stack *st,
		       struct symbolizer *sym, const struct sw_format *fmt)
{
	struct sw_frame *v;
	size_t n;
	int err = frame_list_get(sym, st, fmt, &v, &n);

	/* valid JSON still, for the error the tool says next */
	if (err) {
		fputs("\"frames\":null", out);
		return err;
	}
	fputs("\"frames\":[", out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		json_frame(out, &v[i]);
	}
	fputc(']', out);
	frame_list_free(v, n);
	return 0;
}

static void json_comm(FILE *out, const char *comm)
{
	char shown[4 * SW_COMM_LEN + 1];

	json_str(out, output_comm(comm, shown, sizeof(shown)));
}

/* The loss counters by name, as the man page lists them. */
static void json_losses(FILE *out, const struct session_losses *l)
{
#define LOST_KEY(cause, name, what) [cause] = name,
	static const char *const key[SW_LOST_NR] = { SW_LOST_CAUSES(LOST_KEY) };
#undef LOST_KEY

	fputs("\"lost\":{", out);
	for (int i = 0; i < SW_LOST_NR; i++)
		fprintf(out, "\"%s\":%llu,", key[i], (unsigned long long)l->lost[i]);
	fprintf(out, "\"truncated_stacks\":%llu,", (unsigned long long)l->cut);
	fprintf(out, "\"partial_stacks\":%llu,\"trace_lines_overwritten\":%llu,"
		"\"mapping_records\":%llu}", (unsigned long long)l->partial,
		(unsigned long long)l->trace_lost,
		(unsigned long long)l->mappings);
}

/* Least frequent first, as the text output; then a fixed order. */
static int by_count(const void *a, const void *b)
{
	const struct sw_stack *x = *(const struct sw_stack *const *)a;
	const struct sw_stack *y = *(const struct sw_stack *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	for (size_t i = 0; i < x->nk && i < y->nk; i++)
		if (x->kip[i] != y->kip[i])
			return x->kip[i] < y->kip[i] ? -1 : 1;
	if (x->nk != y->nk)
		return x->nk < y->nk ? -1 : 1;
	for (size_t i = 0; i < x->nu && i < y->nu; i++)
		if (x->uip[i] != y->uip[i])
			return x->uip[i] < y->uip[i] ? -1 : 1;
	return (x->nu > y->nu) - (x->nu < y->nu);
}

int json_stacks(FILE *out, const struct sw_stacks *s, struct symbolizer *sym,
		   const struct sw_format *fmt, const struct sw_run *run)
{
	const struct sw_stack **v = calloc(s->n ? s->n : 1, sizeof(*v));
	unsigned long long total = 0;
	size_t n = 0;
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].count) {
			v[n++] = &s->v[i];
			total += s->v[i].count;
		}
	qsort(v, n, sizeof(*v), by_count);
	fprintf(out, "{\"tool\":\"%s\",\"pattern\":", run->tool);
	json_str(out, run->pattern);
	fprintf(out, ",\"walker\":\"%s\",\"probes\":%u,", run->walker, run->probes);
	if (run->time)
		fprintf(out, "\"time\":\"%s\",", run->time);
	fprintf(out, "\"seconds\":%.3f,\"total\":%llu,\"stacks\":[",
		run->seconds, total);
	for (size_t i = 0; i < n && !err; i++) {
		fprintf(out, "%s{\"count\":%llu,", i ? "," : "",
			(unsigned long long)v[i]->count);
		if (run->keyed) {
			fputs("\"comm\":", out);
			json_comm(out, v[i]->comm);
			fprintf(out, ",\"pid\":%u,", v[i]->tgid);
		}
		err = json_frames(out, v[i], sym, fmt);
		fputc('}', out);
	}
	fputs("],", out);
	json_losses(out, &run->losses);
	fputs("}\n", out);
	free(v);
	return err;
}

int json_event(FILE *out, const struct sw_event *ev, const char *comm,
		  struct symbolizer *sym, const struct sw_format *fmt)
{
	int err;

	fprintf(out, "{\"time\":%.9f,\"comm\":", ev->ts / 1e9);
	json_comm(out, comm);
	fprintf(out, ",\"pid\":%u,\"tid\":%u,\"cpu\":%u,", ev->stack.tgid,
		ev->tid, ev->cpu);
	err = json_frames(out, &ev->stack, sym, fmt);
	fputs("}\n", out);
	return err;
}
