// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "interrupt.h"
#include "frame.h"
#include "output.h"
#include "symbolize.h"
#include "untrusted.h"

/* names come from files and maps any user can write */
static int escaped(const char *s, char **out)
{
	size_t len;

	*out = NULL;
	if (!s)
		return 0;
	len = 4 * strlen(s) + 1;	/* each byte at most \xNN */
	*out = malloc(len);
	if (!*out)
		return -ENOMEM;
	untrusted_escape(*out, len, s);
	return 0;
}

int frame_get(struct symbolizer *sym, bool kernel, __u32 tgid, __u64 addr,
		 bool is_return, struct sw_frame *f)
{
	struct sym_result r = {};
	int err;

	err = kernel ? symbolizer_kernel(sym, addr, is_return, &r)
		     : symbolizer_user(sym, tgid, addr, is_return, &r);
	*f = (struct sw_frame){
		.addr = addr,
		.kernel = kernel,
		.named = !err && r.name,
		.offset = r.offset,
		.module_offset = r.module_offset,
		.map_start = r.map_start,
		.map_end = r.map_end,
		.map_pgoff = r.map_pgoff,
		.build_id = r.build_id,
		.build_id_size = r.build_id_size,
	};
	if (escaped(f->named ? r.name : "[unknown]", &f->name) ||
	    escaped(r.module, &f->module) || escaped(r.path, &f->path)) {
		frame_release(f);
		return -ENOMEM;
	}
	return 0;
}

void frame_release(struct sw_frame *f)
{
	free(f->name);
	free(f->module);
	free(f->path);
	f->name = f->module = f->path = NULL;
}

void frame_list_free(struct sw_frame *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		frame_release(&v[i]);
	free(v);
}

/* The frame that ends a side cut at the depth limit. */
static int truncated(bool kernel, struct sw_frame *f)
{
	f->kernel = kernel;
	f->name = strdup(OUTPUT_TRUNCATED);
	return f->name ? 0 : -ENOMEM;
}

int frame_list_get(struct symbolizer *sym, const struct sw_stack *st,
		  const struct sw_format *fmt, struct sw_frame **out, size_t *nout)
{
	size_t k0 = fmt->trim_tracepoint ? probe_tracepoint_skip(sym, st) : 0;
	size_t nk = fmt->kernel && st->nk > k0 ? st->nk - k0 : 0;
	size_t nu = fmt->user ? st->nu : 0;
	/* room for a side's OUTPUT_TRUNCATED each */
	struct sw_frame *v = calloc(nk + nu + 2, sizeof(*v));
	bool kcut = fmt->kernel && walker_stack_cut(st->kstop);
	bool ucut = fmt->user && walker_stack_cut(st->ustop);
	size_t n = 0;
	int err = 0;

	*out = NULL;
	*nout = 0;
	if (!v)
		return -ENOMEM;
	if (fmt->stoppable && interrupt_pending()) {
		free(v);
		return -EINTR;
	}
	/* a return address names the call before it: all but where it fired */
	for (size_t i = 0; i < nk && !err; i++)
		err = frame_get(sym, true, 0, st->kip[k0 + i], k0 + i > 0, &v[n++]);
	if (kcut && !err)
		err = truncated(true, &v[n++]);
	for (size_t i = 0; i < nu && !err; i++)
		err = frame_get(sym, false, st->tgid, st->uip[i], output_user_return(st, i), &v[n++]);
	if (ucut && !err)
		err = truncated(false, &v[n++]);
	if (err) {
		frame_list_free(v, n);
		return err;
	}
	*out = v;
	*nout = n;
	return 0;
}
