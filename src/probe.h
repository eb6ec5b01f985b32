/* SPDX-License-Identifier: MIT */
/*
 * Probe patterns as bcc's stackcount takes them, and what they resolve to:
 *
 *   func, p::func        kernel function (kprobe)
 *   lib:func, p:lib:func user function in a library or executable (uprobe)
 *   t:cat:event          kernel tracepoint
 *   u:lib:probe          USDT probe
 *
 * Names take '*' wildcards, or regular expressions with -r.
 */
#ifndef SW_PROBE_H
#define SW_PROBE_H

#include <regex.h>
#include <stdbool.h>
#include <sys/types.h>
#include "../compat/attach.h"
#include "insn.h"

enum sw_pattern_type {
	SW_PAT_KPROBE,
	SW_PAT_UPROBE,
	SW_PAT_TRACEPOINT,
	SW_PAT_USDT,
};

struct sw_pattern {
	enum sw_pattern_type type;
	char *lib;		/* as given */
	char *libpath;		/* resolved */
	char *name;		/* function, event, probe: glob or regex */
	char *category;		/* tracepoint category glob */
	bool regex;
	regex_t re, cat_re;
};

/* Which program a target needs: where the event fires decides the walk. */
enum sw_role {
	SW_ROLE_KPROBE,		/* kernel function entry */
	SW_ROLE_TRACEPOINT,
	SW_ROLE_UENTRY,		/* user function entry: caller at *sp */
	SW_ROLE_UINSIDE,	/* USDT: inside a function */
	/* the same where the %rbp chain misses the caller: by its uframe */
	SW_ROLE_USHIFT,
};

/*
 * How a user function's first instruction looks to kernels' user
 * unwinders: at a uprobe there, 6.11+ add the caller themselves when it
 * is push %rbp, and when it is endbr64 only if built with IBT.  Each is
 * measured on its own (see calib.h).
 */
enum sw_entry_shape {
	SW_SHAPE_OTHER,		/* no kernel adds the caller */
	SW_SHAPE_PUSH_RBP,
	SW_SHAPE_ENDBR64,
	SW_SHAPES,
};

struct sw_target {
	struct sw_probe_spec spec;
	enum sw_role role;
	char *name;
	enum sw_entry_shape shape;	/* SW_ROLE_UENTRY only */
	/*
	 * USDT semaphore (file offset, 0: none) the tracer must set itself:
	 * kernels before 4.20 do not (spec.ref_ctr_off is theirs to set).
	 */
	unsigned long semaphore;
	/*
	 * A uprobe's instruction the kernel would refuse or misrun (insn.h):
	 * never attached, and its attach_err says it was not.
	 */
	enum insn_verdict refused;
	int attach_err;		/* -errno the kernel refused it with, 0: attached */
	/*
	 * SW_ROLE_UINSIDE: where its caller is, by its CFI, when the %rbp
	 * chain misses it (uframe.h; 0: it does not, or nothing tells),
	 * and the key of that rule.
	 */
	__u32 uframe, uframe_key;
	bool uframe_read, uframe_clash;
};

struct sw_targets {
	struct sw_target *v;
	size_t n;
	unsigned matched;	/* what "Tracing N functions" counts */
	/*
	 * The failure was the pattern's own (t:foo has no event): a usage
	 * error, seen only once no library named "t" turned up.
	 */
	bool malformed;
	/*
	 * -p PID maps this file as it was before it was deleted or replaced
	 * on disk: the probes are in PID's copy (struct sw_pattern's libpath,
	 * a /proc/PID/map_files path), not in the file now at this path.
	 */
	char *replaced;
};

/* On error, err holds one line naming the problem and what to do. */
int probe_pattern_parse(const char *s, bool regex, struct sw_pattern *p,
		     char *err, size_t errlen);
/* Whether this kernel can run BPF on the pattern's kind of probe. */
int probe_pattern_check(const struct sw_pattern *p, const struct sw_features *f,
		     char *err, size_t errlen);
struct ksyms;
struct debuginfod;
/*
 * kallsyms: the kernel's symbols, for kernel functions (else unused);
 * remote: where to ask for a stripped binary's debug file (NULL: nowhere).
 */
int probe_targets_resolve(const struct sw_pattern *p,
		       const struct sw_features *f, struct ksyms *kallsyms,
		       struct debuginfod *remote, pid_t pid,
		       struct sw_targets *out, char *err, size_t errlen);
void probe_pattern_free(struct sw_pattern *p);
void probe_targets_free(struct sw_targets *t);

#endif
