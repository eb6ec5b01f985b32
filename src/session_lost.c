// SPDX-License-Identifier: MIT
/* What was lost: the kernel side's counts and the frontend's, said once. */
#include <stdio.h>
#include <string.h>
#include "debuginfod.h"
#include "session_int.h"
#include "output.h"
#include "procs.h"
#include "sideband.h"
#include "symbolize.h"

#define LOST_WHAT(cause, key, what) [cause] = what,
static const char *const lost_what[SW_LOST_NR] = { SW_LOST_CAUSES(LOST_WHAT) };
#undef LOST_WHAT

int session_losses(struct session *s, struct session_losses *l)
{
	int e;

	memset(l, 0, sizeof(*l));
	e = walker_lost(s->w, l->lost);
	if (e)
		return e;
	l->partial = walker_partial(s->w);
	l->cut = walker_cut(s->w);
	l->trace_lost = walker_trace_lost(s->w);
	if (s->sb) {
		l->mappings = sideband_lost(s->sb);
		/*
		 * COMMAND ran (was let go: not when there was nowhere to
		 * print), and of its image nothing came: that was lost too
		 */
		if (!l->mappings && s->o.command && s->cmd.pid > 0 &&
		    s->cmd.go < 0 && !procs_image_seen(s->procs, s->cmd.pid))
			l->mappings = 1;
	}
	return 0;
}

size_t session_loss_line(const struct session *s, const struct session_losses *l,
			 char *line, size_t len)
{
	const __u64 *lost = l->lost;
	__u64 total = 0;
	size_t n;

	line[0] = 0;
	for (int i = 0; i < SW_LOST_NR; i++)
		if (lost_what[i])
			total += lost[i];
	if (!total)
		return 0;
	n = snprintf(line, len, "%llu %s lost:", (unsigned long long)total,
		     s->o.sink == SINK_COUNT ? "stacks" : "events");
	for (int i = 0; i < SW_LOST_NR && n < len; i++)
		if (lost[i] && lost_what[i])
			n += snprintf(line + n, len - n, "%s %llu %s",
				      line[n - 1] != ':' ? "," : "",
				      (unsigned long long)lost[i], lost_what[i]);
	/* --stack-storage-size sizes only the counts and stack maps */
	if (lost[SW_LOST_COUNTS_FULL] || lost[SW_LOST_KCOLLISION] ||
	    lost[SW_LOST_UCOLLISION] || lost[SW_LOST_STACKMAP_FULL] ||
	    lost[SW_LOST_CHUNKS_FULL])
		n += snprintf(line + n, n < len ? len - n : 0,
			      "; raise --stack-storage-size (now %u)",
			      s->o.storage);
	if (lost[SW_LOST_OUTPUT] && n < len)
		n += snprintf(line + n, len - n, "; raise --perf-buffer-pages");
	if (lost[SW_LOST_FOLLOW_FULL] && n < len)
		n += snprintf(line + n, len - n,
			      "; the follow map holds %u threads at once, "
			      "whatever the options: give -p PID to trace "
			      "one process instead", SW_FOLLOW_MAX);
	if (lost[SW_LOST_TAILCALL] && n < len)
		n += snprintf(line + n, len - n,
			      "; the %s walker could not reach its next "
			      "program, which no option changes: try another "
			      "--walker", walkers_name(s->wo.kind));
	return n < len ? n : len - 1;
}

/* Names not read (for want of --file-memory, or their file gone): never silently. */
static void report_cut(struct session *s)
{
	struct symbolizer_cut c;
	char files[64] = "", maps[64] = "";

	symbolizer_cut(s->sym, &c);
	if (c.gone)
		fprintf(stderr, "%s: %llu frame%s [unknown]: their binary, deleted "
			"or replaced at its path (or run from a memfd), could only "
			"be read through its process, which had ended before the "
			"kernel's record of its mapping was read\n", s->o.tool,
			(unsigned long long)c.gone, c.gone == 1 ? " is" : "s are");
	if (c.vdso_unchecked)
		fprintf(stderr, "%s: %llu frame%s in the vDSO of processes that "
			"ended before their copy of it could be compared with the "
			"kernel's %s named from the kernel's\n", s->o.tool,
			(unsigned long long)c.vdso_unchecked,
			c.vdso_unchecked == 1 ? "" : "s",
			c.vdso_unchecked == 1 ? "is" : "are");
	if (!c.files && !c.perfmaps)
		return;
	if (c.files)
		snprintf(files, sizeof(files), "%zu file%s%s", c.files,
			 c.files == 1 ? "" : "s", c.perfmaps ? " and " : "");
	if (c.perfmaps)
		snprintf(maps, sizeof(maps), "%zu perf map%s", c.perfmaps,
			 c.perfmaps == 1 ? "" : "s");
	fprintf(stderr, "%s: %s%s that users other than root can write did not "
		"fit in --file-memory %u MiB, which left %llu frame%s [unknown]; "
		"give more\n", s->o.tool, files, maps, s->o.file_mb,
		(unsigned long long)c.frames, c.frames == 1 ? "" : "s");
}

/* The causes SW_LOST_CAUSES says on lines of their own: the count's format. */
static const char *const own_line[SW_LOST_NR] = {
	[SW_LOST_IA32] = "%llu events of 32-bit tasks not walked: the fp walker "
		"reads 64-bit frames; use --walker getstack or stackmap for them\n",
	[SW_LOST_NO_TABLE] = "the user frames of %llu events were found by frame "
		"pointers where unwind tables were not loaded yet (a process, "
		"or a library, that came after its maps were read), so callers "
		"of code without frame pointers may be missing or wrong\n",
	[SW_LOST_VMA_BUSY] = "%llu events had user frames found by frame "
		"pointers: their process's memory map was being changed when "
		"the walk looked their binaries up\n",
	[SW_LOST_CUT] = "%llu user stacks end early: the walk met CFI it cannot "
		"follow (a CFA from a register other than %%rsp and %%rbp, or an "
		"expression) or a CFA not above the frame's own, and left the "
		"callers beyond out rather than guess them\n",
	[SW_LOST_HOOKS_SKIPPED] = "the kernel skipped %llu runs of the programs "
		"that follow processes as they fork, exec and exit (it runs "
		"none of a perf event while a BPF map syscall holds the CPU): "
		"a thread started then may have gone untraced, or a process "
		"been walked without its unwind tables\n",
};

/* Nothing lost silently: every loss the kernel side counted, said once. */
void session_report_losses(struct session *s)
{
	struct session_losses l;
	char line[1024];

	if (session_losses(s, &l))
		return;
	for (int i = 0; i < SW_LOST_NR; i++)
		if (l.lost[i] && own_line[i])
			fprintf(stderr, own_line[i], (unsigned long long)l.lost[i]);
	if (session_loss_line(s, &l, line, sizeof(line)))
		fprintf(stderr, "%s\n", line);
	if (l.cut && (s->wo.kind == SW_WALKER_GETSTACK ||
		      s->wo.kind == SW_WALKER_STACKMAP))
		fprintf(stderr, "%llu events had stacks that filled the %u frames "
			"the kernel's unwinder gives the %s walker: shown ending "
			"in " OUTPUT_TRUNCATED ", as they may go deeper\n",
			(unsigned long long)l.cut, walker_stack_full(&s->f),
			walkers_name(s->wo.kind));
	else if (l.cut)
		fprintf(stderr, "%llu events had stacks deeper than the %s walker "
			"holds: shown cut, ending in " OUTPUT_TRUNCATED "\n",
			(unsigned long long)l.cut, walkers_name(s->wo.kind));
	if (l.partial)
		fprintf(stderr, "%llu stacks shown without some of their frames: "
			"chunks of them were missing from the chunk map\n",
			(unsigned long long)l.partial);
	if (l.trace_lost)
		fprintf(stderr, "the trace buffer overwrote %llu lines before they "
			"were read: events may be missing; raise "
			"%s/buffer_size_kb\n",
			(unsigned long long)l.trace_lost, s->f.tracefs);
	if (l.mappings)
		fprintf(stderr, "%llu process mapping records lost: some "
			"user frames may show as [unknown]\n",
			(unsigned long long)l.mappings);
	if (s->hooks && s->hooks->end)
		s->hooks->end(s);
	if (s->sym)
		report_cut(s);
	debuginfod_report(s->remote, stderr);
}

