// SPDX-License-Identifier: MIT
/*
 * stackcount --svg: the counts as a flame graph in one SVG file, its
 * script inline, that a browser opens as it is.  Each stack is a column of
 * frames, root at the bottom: the process (when stacks are kept per
 * process, as folded output puts it first), the user frames outermost
 * first, a "--" where the kernel's begin, the kernel frames.  Columns that
 * start alike share their frames, so a frame's width is the count of every
 * stack through it.
 *
 * The boxes are laid out here, as the folded stacks would be merged: sort
 * the stacks by their frames, then each frame of a stack opens where the
 * previous stack's frames differ, and closes where the next one's do.
 * The script only redraws them when zooming and colours them in a search.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "formats.h"
#include "frame.h"
#include "vec.h"

/* What a box is, for its colour; also its class in the document. */
enum kind { ROOT, PROC, USER, DELIM, KERNEL };
static const char kind_class[] = "rpudk";

#define WIDTH		1200
#define PAD		10		/* left and right of the graph */
#define FRAME_H		16		/* a box and the gap above it */
#define TOP		70		/* title, subtitle, controls */
#define BOTTOM		34		/* the details line */
#define FONT_SIZE	12
#define CHAR_W		7.0		/* about, in Verdana at FONT_SIZE */
#define MIN_W		0.1		/* narrower boxes are left out */

struct node {
	enum kind kind;
	const char *name;
};

struct path {
	struct node *v;
	size_t n;
	__u64 count;
};

/* One box of the graph, in counts: [start, start + count) at depth. */
struct box {
	size_t depth;
	__u64 start, count;
	struct node node;
};

struct graph {
	struct path *paths;
	size_t npaths;
	struct sw_frame **frames;	/* each path's, freed at the end */
	size_t *nframes;
	char (*comm)[4 * SW_COMM_LEN + 1];
	struct box *boxes;
	size_t nboxes, cap;
	__u64 total;
};

static const char delim_name[] = "--";

static int cmp_node(const struct node *a, const struct node *b)
{
	int c = strcmp(a->name, b->name);

	return c ? c : (int)a->kind - (int)b->kind;
}

static int cmp_path(const void *a, const void *b)
{
	const struct path *x = a, *y = b;

	for (size_t i = 0; i < x->n && i < y->n; i++) {
		int c = cmp_node(&x->v[i], &y->v[i]);

		if (c)
			return c;
	}
	return (x->n > y->n) - (x->n < y->n);
}

/* The frames of st, root first, in the kinds that colour them. */
static int path_of(struct graph *g, size_t i, const struct sw_stack *st,
		   struct symbolizer *sym, const struct sw_format *fmt,
		   bool keyed)
{
	struct path *p = &g->paths[i];
	struct sw_frame *f;
	size_t n, nk = 0;
	int err = frame_list_get(sym, st, fmt, &f, &n);

	if (err)
		return err;
	g->frames[i] = f;
	g->nframes[i] = n;
	p->v = calloc(n + 2, sizeof(*p->v));
	if (!p->v)
		return -ENOMEM;
	p->count = st->count;
	if (keyed) {
		output_comm(st->comm, g->comm[i], sizeof(g->comm[i]));
		p->v[p->n++] = (struct node){ PROC, g->comm[i] };
	}
	while (nk < n && f[nk].kernel)
		nk++;
	for (size_t j = n; j-- > nk;)
		p->v[p->n++] = (struct node){ USER, f[j].name };
	if (nk && nk < n)
		p->v[p->n++] = (struct node){ DELIM, delim_name };
	for (size_t j = nk; j-- > 0;) {
		char *name;

		/* named as the text output names it: func [module] */
		if (f[j].named && f[j].module) {
			if (asprintf(&name, "%s [%s]", f[j].name, f[j].module) < 0)
				return -ENOMEM;
			free(f[j].name);
			f[j].name = name;
		}
		p->v[p->n++] = (struct node){ KERNEL, f[j].name };
	}
	return 0;
}

static int add_box(struct graph *g, size_t depth, __u64 start, __u64 count,
		   struct node node)
{
	if (VEC_GROW(g->boxes, g->nboxes, g->cap, 256))
		return -ENOMEM;
	g->boxes[g->nboxes++] = (struct box){ depth, start, count, node };
	return 0;
}

/*
 * The boxes of the sorted paths: a path's frames below its common prefix
 * with the previous path continue that path's boxes.
 */
static int layout(struct graph *g)
{
	const struct path *prev = NULL;
	__u64 *open = NULL, x = 0;
	size_t depth = 0;
	int err = 0;

	for (size_t i = 0; i < g->npaths; i++)
		depth = g->paths[i].n > depth ? g->paths[i].n : depth;
	open = calloc(depth + 1, sizeof(*open));
	if (!open)
		return -ENOMEM;
	for (size_t i = 0; i <= g->npaths && !err; i++) {
		const struct path *p = i < g->npaths ? &g->paths[i] : NULL;
		size_t same = 0;

		while (p && prev && same < p->n && same < prev->n &&
		       !cmp_node(&p->v[same], &prev->v[same]))
			same++;
		for (size_t d = prev ? prev->n : 0; d-- > same && !err;)
			err = add_box(g, d + 1, open[d], x - open[d], prev->v[d]);
		for (size_t d = same; p && d < p->n; d++)
			open[d] = x;
		if (p)
			x += p->count;
		prev = p;
	}
	free(open);
	return err ? err : add_box(g, 0, 0, g->total,
				   (struct node){ ROOT, "all" });
}

static void xml(FILE *out, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(s[i], out);
		}
	}
}

/* Characters of s (UTF-8) in its first n bytes. */
static size_t chars(const char *s, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n && s[i]; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* The label that fits w pixels: the name, cut with "..", or nothing. */
static void label(FILE *out, const char *name, double w)
{
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0, len = strlen(name);
	size_t cut = 0, c = 0;

	if (chars(name, len) <= fit) {
		xml(out, name, len);
		return;
	}
	if (fit < 3)
		return;
	/* fit - 2 characters, then ".." */
	while (name[cut] && c < fit - 2) {
		c++;
		cut++;
		while (((unsigned char)name[cut] & 0xc0) == 0x80)
			cut++;
	}
	xml(out, name, cut);
	fputs("..", out);
}

/*
 * Kernel frames warm (orange to red), user frames cool (blue to teal):
 * the family says the side, and within it a name keeps its colour.
 */
static void colour(FILE *out, const struct node *n)
{
	uint32_t h = 2166136261u;
	double a, b, c;

	for (const char *s = n->name; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	a = (h & 0x3ff) / 1023.0;
	b = (h >> 10 & 0x3ff) / 1023.0;
	c = (h >> 20 & 0x3ff) / 1023.0;
	switch (n->kind) {
	case KERNEL:
		fprintf(out, "rgb(%d,%d,%d)", 215 + (int)(40 * a),
			85 + (int)(120 * b), 25 + (int)(55 * c));
		break;
	case USER:
		fprintf(out, "rgb(%d,%d,%d)", 45 + (int)(100 * a),
			125 + (int)(100 * b), 195 + (int)(60 * c));
		break;
	case PROC:
		fprintf(out, "rgb(%d,%d,%d)", 175 + (int)(30 * a),
			165 + (int)(25 * b), 200 + (int)(20 * c));
		break;
	case DELIM:
		fputs("rgb(70,70,70)", out);
		break;
	default:
		fputs("rgb(200,200,200)", out);
	}
}

static double px(const struct graph *g, __u64 at)
{
	/*
	 * Whole pixels, rounded as Math.round does in the script: a box's
	 * edges are crisp, its width within 1 px of its share.
	 */
	return PAD + (double)(long long)((double)at * (WIDTH - 2 * PAD) / g->total + 0.5);
}

static void write_box(FILE *out, const struct graph *g, const struct box *b,
		      double y0)
{
	double x = px(g, b->start), w = px(g, b->start + b->count) - x;
	double y = y0 - (double)b->depth * FRAME_H;

	fprintf(out, "<g class=\"f %c\" data-s=\"%llu\" data-c=\"%llu\" "
		"data-d=\"%zu\"><title>", kind_class[b->node.kind],
		(unsigned long long)b->start, (unsigned long long)b->count,
		b->depth);
	xml(out, b->node.name, SIZE_MAX);
	fprintf(out, " (%llu event%s, %.2f%%)</title><rect x=\"%.0f\" y=\"%.0f\" "
		"width=\"%.0f\" height=\"%d\" fill=\"", (unsigned long long)b->count,
		b->count == 1 ? "" : "s", 100.0 * b->count / g->total, x, y, w,
		FRAME_H - 1);
	colour(out, &b->node);
	fprintf(out, "\"/><text x=\"%.0f\" y=\"%.0f\">", x + 3, y + FRAME_H - 5);
	label(out, b->node.name, w);
	fputs("</text></g>\n", out);
}

/* Whether b is wide enough to be drawn at all. */
static bool drawn(const struct graph *g, const struct box *b)
{
	return g->total && (double)b->count * (WIDTH - 2 * PAD) / g->total >= MIN_W;
}

/*
 * The deepest box drawn: a stack too narrow to see must not make the
 * graph pages tall and empty above what can be seen.
 */
static size_t drawn_depth(const struct graph *g)
{
	size_t depth = 0;

	for (size_t i = 0; i < g->nboxes; i++)
		if (drawn(g, &g->boxes[i]) && g->boxes[i].depth > depth)
			depth = g->boxes[i].depth;
	return depth;
}

static void write_svg(FILE *out, const struct graph *g, const struct sw_run *run)
{
	size_t depth = drawn_depth(g);
	int height = TOP + (int)(depth + 1) * FRAME_H + BOTTOM;
	double y0 = TOP + (double)depth * FRAME_H;	/* the root's top */

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" "
		"data-pad=\"%d\" data-total=\"%llu\">\n", WIDTH, height, WIDTH,
		height, PAD, (unsigned long long)g->total);
	fprintf(out, "<style>\n"
		"text { font: %dpx Verdana, sans-serif; fill: #000; }\n"
		"g.f text { pointer-events: none; }\n"
		"g.f rect { shape-rendering: crispEdges; }\n"
		"g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
		"g.d text { fill: #fff; }\n"
		"g.hidden { display: none; }\n"
		"g.above rect { opacity: 0.5; }\n"
		"#title { font-size: 17px; text-anchor: middle; }\n"
		"#sub { fill: #555; text-anchor: middle; }\n"
		"#reset { cursor: pointer; display: none; fill: #06c; }\n"
		"#matched { text-anchor: end; }\n"
		"</style>\n", FONT_SIZE);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f4\"/>\n");
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"24\">%s ", WIDTH / 2, run->tool);
	xml(out, run->pattern, SIZE_MAX);
	fprintf(out, ": %llu event%s in %.*f s</text>\n",
		(unsigned long long)g->total, g->total == 1 ? "" : "s",
		run->seconds < 10 ? 2 : 0, run->seconds);
	fprintf(out, "<text id=\"sub\" x=\"%d\" y=\"44\">walker %s, %u probe%s%s",
		WIDTH / 2, run->walker, run->probes, run->probes == 1 ? "" : "s",
		*run->lost_line ? "; " : "");
	xml(out, run->lost_line, SIZE_MAX);
	fputs("</text>\n", out);
	/* the colour families, named */
	fprintf(out, "<rect x=\"%d\" y=\"34\" width=\"12\" height=\"12\" "
		"fill=\"rgb(240,150,60)\"/><text x=\"%d\" y=\"44\">kernel</text>\n"
		"<rect x=\"%d\" y=\"34\" width=\"12\" height=\"12\" "
		"fill=\"rgb(90,185,228)\"/><text x=\"%d\" y=\"44\">user</text>\n",
		PAD, PAD + 16, PAD + 70, PAD + 86);
	fprintf(out, "<text id=\"reset\" x=\"%d\" y=\"24\">Reset zoom</text>\n", PAD);
	fprintf(out, "<foreignObject x=\"%d\" y=\"8\" width=\"230\" height=\"26\">"
		"<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" "
		"type=\"search\" placeholder=\"Search (regular expression)\" "
		"style=\"width:220px;font:12px Verdana,sans-serif\"/>"
		"</foreignObject>\n", WIDTH - PAD - 230);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", PAD,
		height - 12);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n",
		WIDTH - PAD, height - 12);
	fprintf(out, "<g id=\"frames\">\n");
	for (size_t i = 0; i < g->nboxes; i++) {
		const struct box *b = &g->boxes[i];

		if (drawn(g, b))
			write_box(out, g, b, y0);
	}
	fprintf(out, "</g>\n<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n"
		"</svg>\n", sw_svg_script);
}

int svg_write(FILE *out, const struct sw_stacks *s, struct symbolizer *sym,
		 const struct sw_format *fmt, const struct sw_run *run)
{
	struct graph g = {};
	size_t n = s->n ? s->n : 1;
	int err = 0;

	g.paths = calloc(n, sizeof(*g.paths));
	g.frames = calloc(n, sizeof(*g.frames));
	g.nframes = calloc(n, sizeof(*g.nframes));
	g.comm = calloc(n, sizeof(*g.comm));
	if (!g.paths || !g.frames || !g.nframes || !g.comm)
		err = -ENOMEM;
	for (size_t i = 0; i < s->n && !err; i++) {
		if (!s->v[i].count)
			continue;
		err = path_of(&g, g.npaths++, &s->v[i], sym, fmt, run->keyed);
		g.total += s->v[i].count;
	}
	if (!err) {
		qsort(g.paths, g.npaths, sizeof(*g.paths), cmp_path);
		err = layout(&g);
	}
	if (!err)
		write_svg(out, &g, run);
	for (size_t i = 0; g.paths && i < g.npaths; i++) {
		free(g.paths[i].v);
		frame_list_free(g.frames[i], g.nframes[i]);
	}
	free(g.paths);
	free(g.frames);
	free(g.nframes);
	free(g.comm);
	free(g.boxes);
	if (!err && ferror(out))
		err = -EIO;
	return err;
}
