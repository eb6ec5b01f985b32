/* SPDX-License-Identifier: MIT */
/*
 * Names for raw instruction addresses: kernel ones through kallsyms, user
 * ones through the process model (struct procs) and the ELF files it maps.
 * Each file is opened once for the life of the symbolizer, keyed by
 * (device, inode), or by path when the mapping did not say.
 */
#ifndef SW_SYMBOLIZE_H
#define SW_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct procs;
struct symbolizer;

/* Strings live as long as the symbolizer and its procs. */
struct sym_result {
	const char *name;	/* NULL: unknown */
	uint64_t offset;	/* of the address itself from the symbol start */
	/*
	 * Kernel: the module, NULL for the core kernel.  User: the mapped
	 * file's basename ("libc.so.6"), or the kernel's name for a mapping
	 * that is no file ("[vdso]", "//anon"); NULL when nothing is mapped.
	 */
	const char *module;
	const char *path;	/* user: the full mapped path, as module */
	/*
	 * User: where the address falls in the module, as the ELF virtual
	 * address (what objdump and addr2line take; for a PIE or library the
	 * offset from its load base), or the file offset when the file could
	 * not be read.  Kernel: 0.
	 */
	uint64_t module_offset;
	/*
	 * User: the mapping that holds addr ([map_start, map_end) from file
	 * offset map_pgoff; all 0 when none does) and its file's build-id
	 * (build_id_size 0: none, or the file could not be read).
	 */
	uint64_t map_start, map_end, map_pgoff;
	const uint8_t *build_id;
	size_t build_id_size;
};

/* procs is borrowed and must outlive it; NULL for kernel addresses only. */
int symbolizer_new(struct symbolizer **out, struct procs *procs);
void symbolizer_free(struct symbolizer *s);
/* Start reading kallsyms on a thread, to have it when kernel frames come. */
void symbolizer_preload_kernel(struct symbolizer *s);
/*
 * The kernel's symbols, read once (now, if no preload has): the one copy
 * that resolution, probe matching and kernel facts all use.
 */
struct ksyms;
int symbolizer_kernel_symbols(struct symbolizer *s, struct ksyms **out);
/* Open path now, to name any mapping of its inode (a probe's target). */
int symbolizer_add_file(struct symbolizer *s, const char *path);
/* Open now what only tgid can see (another mount namespace). */
struct proc_map;
void symbolizer_prefetch(struct symbolizer *s, uint32_t tgid,
			  const struct proc_map *m);
/*
 * Open now the file that will name addr of tgid (its symbols, its debug
 * file), naming and counting nothing: a later symbolizer_user's work, done
 * ahead.  Only where the process model is kept current meanwhile (the
 * sideband): its maps are read once.  [*lo, *hi): the mapping that holds
 * addr, whose other addresses need no call (empty if none does).
 */
void symbolizer_open_ahead(struct symbolizer *s, uint32_t tgid, uint64_t addr,
			   uint64_t *lo, uint64_t *hi);
/*
 * Called once for each file refused (what: its path, or which part of
 * which file; why: the reason), for the tool to warn: a name that could
 * have been read is [unknown].  Strings last for the call only.
 */
typedef void (*symbolizer_skip_fn)(void *ctx, const char *what,
				   const char *why);
void symbolizer_on_skip(struct symbolizer *s, symbolizer_skip_fn fn,
			 void *ctx);
/*
 * Room for what files and perf maps that users other than root can write
 * make the symbolizer hold (untrusted.h; UNTRUSTED_BUDGET_DEFAULT unless
 * set), all of them together, for the life of the symbolizer.
 */
void symbolizer_set_budget(struct symbolizer *s, uint64_t bytes);
/* Where to ask for the debug files of stripped binaries; borrowed. */
struct debuginfod;
void symbolizer_set_debuginfod(struct symbolizer *s, struct debuginfod *d);
/* What did not fit in that room, for the one line the tool says of it. */
struct symbolizer_cut {
	uint64_t limit;		/* the room, bytes */
	size_t files;		/* ELF files not read, or their symbols not all */
	size_t perfmaps;	/* perf maps read in part */
	uint64_t frames;	/* frames of those shown as [unknown] */
	/*
	 * frames shown as [unknown] because their file, deleted or a memfd,
	 * could only be read through a process that had ended by then
	 */
	uint64_t gone;
	/*
	 * frames named from the kernel's vDSO in a process that ended
	 * before its own copy could be compared with it
	 */
	uint64_t vdso_unchecked;
};
void symbolizer_cut(const struct symbolizer *s, struct symbolizer_cut *c);
/* C++ and Rust names demangled (the default), or kept as in the file. */
void symbolizer_set_demangle(struct symbolizer *s, bool on);

/*
 * Fill *r for addr.  is_return: addr is a return address, so the call
 * before it is what gets named (addr - 1 is looked up); offsets are still
 * those of addr.  Returns 0 when named, -ENOENT when not (with whatever of
 * *r is known), or another negative errno (kallsyms unreadable: -EPERM
 * when its addresses are hidden), which repeats on every later call.
 */
int symbolizer_kernel(struct symbolizer *s, uint64_t addr, bool is_return,
		       struct sym_result *r);
int symbolizer_user(struct symbolizer *s, uint32_t tgid, uint64_t addr,
		     bool is_return, struct sym_result *r);

#endif /* SW_SYMBOLIZE_H */
