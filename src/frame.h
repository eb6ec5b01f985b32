/* SPDX-License-Identifier: MIT */
/*
 * One frame of a counted stack or an event, named the way every output
 * names it (text, folded, JSON, pprof, SVG), with what the machine-read
 * formats add: the module, the offsets and the mapping the address is in.
 */
#ifndef SW_FRAME_H
#define SW_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "walker.h"

struct symbolizer;
struct sw_format;

struct sw_frame {
	__u64 addr;
	bool kernel;
	bool named;		/* name is a symbol's, not "[unknown]" */
	/*
	 * The strings are escaped as untrusted_escape does (printable UTF-8,
	 * no backslash but ours), and freed by sw_frame_release.
	 */
	char *name;		/* the symbol, or "[unknown]" */
	char *module;		/* kernel module or file's basename; NULL: none */
	char *path;		/* user: the mapped file as the kernel named it */
	__u64 offset;		/* from the symbol's start (named frames) */
	__u64 module_offset;	/* user: ELF vaddr in module (symbolize.h) */
	/* user: the mapping (symbolize.h); the kernel has none */
	__u64 map_start, map_end, map_pgoff;
	const uint8_t *build_id;	/* the symbolizer's */
	size_t build_id_size;
};

/* 0, or -ENOMEM (f is then empty, and safe to release). */
int frame_get(struct symbolizer *sym, bool kernel, __u32 tgid, __u64 addr,
		 bool is_return, struct sw_frame *f);
void frame_release(struct sw_frame *f);

/*
 * The frames of st that fmt shows, leaf first: the kernel's, then the
 * user's, as the text output lists them (fmt->kernel, fmt->user and
 * fmt->trim_tracepoint count; the rest of fmt does not).  *v is for
 * sw_frames_free; 0, -ENOMEM, or -EINTR (fmt->stoppable, a signal waiting).
 */
int frame_list_get(struct symbolizer *sym, const struct sw_stack *st,
		  const struct sw_format *fmt, struct sw_frame **v, size_t *n);
void frame_list_free(struct sw_frame *v, size_t n);

#endif
