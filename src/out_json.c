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
#include "output.h"

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

/*
 * A frame; by_process false: a user frame without its address, which
 * differs between processes that run the same code (its path and
 * module_offset say where it is).
 */
static void json_frame(FILE *out, const struct sw_frame *f, bool by_process)
{
	fprintf(out, "{\"kind\":\"%s\",", f->kernel ? "kernel" : "user");
	if (f->kernel || by_process)
		fprintf(out, "\"address\":\"0x%llx\",", (unsigned long long)f->addr);
	fputs("\"name\":", out);
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
		       struct symbolizer *sym, const struct sw_format *fmt,
		       bool by_process)
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
		json_frame(out, &v[i], by_process);
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

/* st's object but for its count: comm (keyed), pid (-P), its frames. */
static int show(const struct sw_stack *st, struct symbolizer *sym,
		const struct sw_format *fmt, const struct sw_run *run,
		char **text)
{
	size_t len;
	FILE *m = open_memstream(text, &len);
	int err;

	if (!m)
		return -errno;
	if (run->keyed) {
		fputs("\"comm\":", m);
		json_comm(m, st->comm);
		fputc(',', m);
	}
	if (run->keyed && run->per_pid)
		fprintf(m, "\"pid\":%u,", st->tgid);
	err = json_frames(m, st, sym, fmt, run->per_pid);
	if (fclose(m) && !err)
		err = -ENOMEM;
	return err;
}

/*
 * Stacks whose objects would be the same are one, their counts added:
 * without -P, those of one comm and the same frames in any processes, as
 * the text output merges what prints the same.
 */
int json_stacks(FILE *out, const struct sw_stacks *s, struct symbolizer *sym,
		   const struct sw_format *fmt, const struct sw_run *run)
{
	struct output_shown *v = calloc(s->n ? s->n : 1, sizeof(*v));
	unsigned long long total = 0;
	size_t n = 0, m;
	int err = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n && !err; i++) {
		if (!s->v[i].count)
			continue;
		err = show(&s->v[i], sym, fmt, run, &v[n].text);
		v[n++].count = s->v[i].count;
		total += s->v[i].count;
	}
	/* on an error, freed below, not shown */
	m = err ? n : output_merge(v, n);
	fprintf(out, "{\"tool\":\"%s\",\"pattern\":", run->tool);
	json_str(out, run->pattern);
	fprintf(out, ",\"walker\":\"%s\",\"probes\":%u,", run->walker, run->probes);
	if (run->time)
		fprintf(out, "\"time\":\"%s\",", run->time);
	fprintf(out, "\"seconds\":%.3f,\"total\":%llu,\"stacks\":[",
		run->seconds, total);
	for (size_t i = 0; i < m; i++) {
		if (!err)
			fprintf(out, "%s{\"count\":%llu,%s}", i ? "," : "",
				v[i].count, v[i].text);
		free(v[i].text);
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
	err = json_frames(out, &ev->stack, sym, fmt, true);
	fputs("}\n", out);
	return err;
}
