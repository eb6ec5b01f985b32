/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * Unwind tables from CFI (.eh_frame, .debug_frame), x86_64: the contract
 * between the frontend, which builds them (src/cfi.c, src/cfi_cache.c), and
 * a BPF walker, which searches them.  Included by both sides.
 *
 * A row says how to step from a frame to its caller for every PC from its
 * own to the next row's.  Each binary has one table, sorted by PC and
 * shared by every process that maps the binary; all tables sit end to end
 * in one array map.  Each process has a sorted list of its executable
 * mappings, each naming its binary's rows.
 *
 * The maps (names and sizes as the frontend creates them):
 *
 *   "cfi_rows"  ARRAY, key __u32 index, value struct sw_cfi_row,
 *               max_entries: the row budget (SW_CFI_ROWS_DEFAULT unless
 *               --unwind-memory says otherwise; a table that does not fit
 *               is reported, never dropped silently).
 *   "cfi_procs" HASH, key __u32 tgid, value struct sw_cfi_proc: the
 *               process's executable mappings with a table, sorted by
 *               start address, SW_CFI_PROCS_MAX processes.
 *
 * A process's mappings are one value: the frontend replaces them whole,
 * and a walk sees the old list or the new one, never a mix.  A slot is
 * reached with a masked index, a variable offset into a map value that
 * 4.9+ verifiers take.
 *
 * How a walker finds the row for an address pc of a process, with no
 * loop (every step the same straight code):
 *
 *   1. the mapping: lo = 0, n = proc->nr; SW_CFI_MAP_STEPS times:
 *        half = n >> 1; m = &proc->maps[(lo + half) & (PROC_MAPS - 1)];
 *        lo += half & -(m->start <= pc);  n -= half;
 *      then m = &proc->maps[lo], and pc must be in [m->start, m->end).
 *      (A walk keeps the last mapping it found: the next frame is most
 *      often in it, and then needs no search.)
 *   2. rel = pc - m->bias, minus 1 for every frame but the first and one
 *      interrupted by a signal: a return address may be the first byte
 *      past a call that ends a function.  rel >= 2^32: no row.
 *   3. the row: base = m->first, n = m->count; SW_CFI_STEPS times:
 *        half = n >> 1; r = cfi_rows[base + half];
 *        base += half & -(r->pc <= rel);  n -= half;
 *      then r = cfi_rows[base]; r->pc > rel (below the first row): no row.
 *   Steps past n == 1 read the same row again and change nothing, so the
 *   count of steps is fixed, not the table's size.  The hot rows (below)
 *   answer most frames before any step.  "a <= b" is taken
 *   without a jump as ((b - a) >> 63) ^ 1 on 64-bit values below 2^32
 *   (rows) or 2^63 (user addresses), so that no path forks and rejoins.
 *
 * Cost: a frame is about 800 instructions (the searches, the rule, its
 * reads), so a walk program takes 4 frames within 4.x's 4096 and tail-
 * calls the next (bpf/cfi.bpf.c).  Run, a frame whose row is hot costs a
 * look-up of its word and of the row, and the reads.
 *
 * Applying a row (sp, bp: the frame's %rsp and %rbp; cfa in bytes is
 * 8 * r->cfa):
 *   SW_CFI_RSP  CFA = sp + cfa
 *   SW_CFI_RBP  CFA = bp + cfa (bp must be known: see SW_CFI_RBP_LOST)
 *   SW_CFI_PLT  CFA = sp + cfa + ((pc & 15) >= r->rbp ? 8 : 0)
 *               (pc itself, not rel: the entries are 16-byte aligned and
 *               a mapping's bias is a multiple of the page size)
 *   then: return address = *(CFA - 8); caller's sp = CFA; caller's bp:
 *     r->rbp < 0: *(CFA + 8 * r->rbp); 0: unchanged; SW_CFI_RBP_LOST: not
 *     known (the next frame cannot use it).  PLT rows leave bp unchanged.
 *   SW_CFI_SIGNAL  a signal trampoline (__restore_rt): the interrupted
 *     registers are in the ucontext at sp: pc = *(sp + SW_CFI_SIG_RIP),
 *     sp = *(sp + SW_CFI_SIG_RSP), bp = *(sp + SW_CFI_SIG_RBP); the next
 *     lookup uses pc itself (it was interrupted, not calling).
 *   SW_CFI_END  the return address is undefined: the outermost frame
 *     (_start, a thread's start); the walk is complete.
 *   SW_CFI_NONE, or no mapping or row: one frame-pointer step (return
 *     address *(bp + 8), sp = bp + 16, bp = *bp) if bp is known, else the
 *     walk ends in [unknown].
 *   SW_CFI_UNKNOWN: the walk ends (SW_STOP_CUT, counted): a frame-pointer
 *     step where CFI says the frame is something else would skip a
 *     caller or make one up.
 *   Every step but a signal frame's must move the CFA above the frame's
 *     own sp; one that does not ends the walk the same way.
 */
#ifndef SW_BPF_CFI_H
#define SW_BPF_CFI_H

#include <linux/types.h>

/* Row search steps: a table holds at most 2^SW_CFI_STEPS rows. */
#define SW_CFI_STEPS		20
#define SW_CFI_TABLE_MAX	(1u << SW_CFI_STEPS)
/* 8 MiB of rows: a python3.11 process needs ~110,000 */
#define SW_CFI_ROWS_DEFAULT	(1u << 20)

/*
 * Hot rows: SW_CFI_HOT words, each the row last found for a
 * (table, address) pair: the word at slot (rel ^ first) % SW_CFI_HOT is
 * tag << 21 | (index - first) << 1 | 1, where tag = first << 20 |
 * rel >> SW_CFI_HOT_BITS (the slot gives the rest of rel), so a word says
 * exactly which pair it is for.  Tables from SW_CFI_HOT_FIRST_MAX on (past
 * 64 MiB of --unwind-memory) are searched each time.
 */
#define SW_CFI_HOT_BITS		12
#define SW_CFI_HOT		(1u << SW_CFI_HOT_BITS)
#define SW_CFI_HOT_FIRST_MAX	(1u << 23)

/* Mapping search steps: a process has at most this many in the maps. */
#define SW_CFI_MAP_STEPS	7
#define SW_CFI_PROC_MAPS	(1u << SW_CFI_MAP_STEPS)
#define SW_CFI_PROCS_MAX	4096

enum sw_cfi_kind {
	SW_CFI_NONE,		/* no CFI covers the PC */
	SW_CFI_RSP,		/* CFA = %rsp + 8 * cfa */
	SW_CFI_RBP,		/* CFA = %rbp + 8 * cfa */
	SW_CFI_PLT,		/* a PLT entry: see above */
	SW_CFI_SIGNAL,		/* a signal frame: registers in the ucontext */
	SW_CFI_END,		/* the return address is undefined: outermost */
	SW_CFI_UNKNOWN,		/* CFI that no row kind expresses */
	SW_CFI_KIND_NR,
};

/* sw_cfi_row.rbp: the caller's %rbp can not be found */
#define SW_CFI_RBP_LOST		1

/*
 * 8 bytes.  pc: offset of the row's first address from its table's base
 * (an ELF virtual address, see sw_cfi_map.bias), so a binary's CFI may
 * span at most 4 GiB.  cfa: in 8-byte units, so at most 512 KiB of
 * frame; CFA offsets that are no multiple of 8 make the row
 * SW_CFI_UNKNOWN.  rbp: where the caller's %rbp was saved, in 8-byte
 * units from the CFA (-1 .. -128), 0 when %rbp is unchanged, or
 * SW_CFI_RBP_LOST; in SW_CFI_PLT rows, the threshold T of the PLT's CFA
 * expression instead (binutils: 11 for lazy PLT entries).
 */
struct sw_cfi_row {
	__u32 pc;
	__u16 cfa;
	__u8 kind;
	__s8 rbp;
};

/*
 * Where the kernel saves the interrupted registers for a handler, read
 * from the layout of struct rt_sigframe: at __restore_rt the handler's ret
 * has popped pretcode, so %rsp points at its struct ucontext, whose
 * uc_mcontext (a struct sigcontext) starts 40 bytes in (uc_flags, uc_link,
 * a 24-byte stack_t), and holds r8-r15, rdi, rsi, rbp, rbx, rdx, rax, rcx,
 * rsp, rip as 8-byte words in that order.  glibc's CFI for __restore_rt
 * names the same offsets; tests/unit/test_cfi.c checks them against the
 * kernel's headers.
 */
#define SW_CFI_SIG_RBP		120
#define SW_CFI_SIG_RSP		160
#define SW_CFI_SIG_RIP		168

/*
 * One executable mapping; a PC in [start, end) uses rows[first, +count).
 * first SW_CFI_UNTABLED (count 0): a file whose table is not in yet, its
 * frames walked by frame pointers and the event counted.
 */
#define SW_CFI_UNTABLED		0xffffffffu
struct sw_cfi_map {
	__u64 start, end;
	/* row pc = address - bias (the load bias plus the table's base) */
	__u64 bias;
	__u32 first, count;
};

/*
 * A process's executable mappings with a table, by start address.  With
 * more than SW_CFI_PROC_MAPS, those kept are the main executable's, then
 * the rest from the highest address down (src/cfi_cache.h says why).
 */
struct sw_cfi_proc {
	__u32 nr;
	__u32 no_room;		/* how many were not kept */
	/*
	 * 1: built in BPF from the process's VMAs (SW_CFG_VMA_LIST), which
	 * rebuilds it after each mmap of code; the frontend replaces it only
	 * with a longer list (src/unwind.c), and then it is the frontend's
	 */
	__u32 built, pad;
	struct sw_cfi_map maps[SW_CFI_PROC_MAPS];
};

/*
 * 5.17+ (bpf_find_vma): a binary's table found from the file that the
 * VMA of a PC maps, in any process, read or not: "cfi_files" HASH, key
 * struct sw_cfi_file_key, value struct sw_cfi_file, SW_CFI_FILES_MAX
 * binaries.  A PC no process list holds (a process the frontend has not
 * read, a library mapped since) is looked up there.
 */
#define SW_CFI_FILES_MAX	4096
#define SW_CFI_FILE_SEGS	4

/* dev: the kernel's own encoding, major << 20 | minor */
struct sw_cfi_file_key {
	__u64 ino;
	__u32 dev, pad;
};

/*
 * A VMA mapping file offset fo (vm_pgoff << 12) at vm_start is in
 * segment s when lo <= fo < end, and its rows' bias (bpf/cfi.h, step 2)
 * is vm_start - fo + delta; count 0: a file without a table (no CFI, or
 * none that fits), whose frames take frame-pointer steps.  gen: the
 * inode's i_generation when
 * gen_known, so that a file with the same inode number later (ext4 reuses
 * them at once) never gets this one's rows.
 */
struct sw_cfi_file {
	__u32 first, count;
	__u32 gen, gen_known;
	__u32 nr, pad;
	struct {
		__u64 lo, end, delta;
	} seg[SW_CFI_FILE_SEGS];
};

#endif /* SW_BPF_CFI_H */
