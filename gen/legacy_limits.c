// SPDX-License-Identifier: MIT
/*
 * legacy_limits: refuse a BPF object that a 4.1-4.5 kernel would refuse.
 *
 * Run at build time on bpf/fp.bpf.o (the walker for old kernels), and by
 * the tests on objects built to break each rule.  The limits are those a
 * 4.4 kernel enforces (see the README's Kernels section); programs named *_v41
 * are held to 4.1's helpers.  The verifier walk is bounded without
 * assuming any state pruning: every path from the first instruction to an
 * exit is counted in full, so an object that passes here passes there.
 * A 4.4 verifier's budget is not a per-program count a test could read
 * back from the kernel; bounding it from the object is the only check that
 * runs without one.
 *
 * Usage: legacy_limits OBJECT.o   (prints one line per violation)
 *        legacy_limits --insns OBJECT.o
 *        legacy_limits --pruned OBJECT.o
 * --insns holds an object for 4.18-5.1 (getstack's, the cfi walk's) to the
 * one limit of 4.x those kernels still keep: 4,096 instructions a program;
 * a program named *_vma_* calls bpf_find_vma, so loads on 5.17+ only.
 * --pruned holds a 4.1-4.8 object (bpf/cfi41.bpf.c) to every limit but
 * the walk's: its many branches each end the walk, and it loads because
 * the verifier prunes the paths that rejoin, which this count does not
 * model; the VM tests load it on the real 4.1.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <gelf.h>
#include <fcntl.h>
#include <unistd.h>

#define MAX_INSNS	4096
#define MAX_WALK	32768
#define MAX_STACK	512
#define MAX_KEY		512

enum { HELPERS_41, HELPERS_44 };

/* tracing helpers by the release that brought them */
static bool helper_allowed(int id, int level)
{
	switch (id) {
	case BPF_FUNC_map_lookup_elem:
	case BPF_FUNC_map_update_elem:
	case BPF_FUNC_map_delete_elem:
	case BPF_FUNC_probe_read:
	case BPF_FUNC_ktime_get_ns:
	case BPF_FUNC_trace_printk:
		return true;				/* 4.1 */
	case BPF_FUNC_get_smp_processor_id:	/* 4.1's sockets only */
	case BPF_FUNC_tail_call:
	case BPF_FUNC_get_current_pid_tgid:
	case BPF_FUNC_get_current_uid_gid:
	case BPF_FUNC_get_current_comm:		/* 4.2 */
	case BPF_FUNC_perf_event_read:		/* 4.3 */
	case BPF_FUNC_perf_event_output:	/* 4.4 */
		return level >= HELPERS_44;
	default:
		return false;
	}
}

struct report {
	const char *obj;
	bool insns_only;
	bool pruned;		/* --pruned */
	int violations;
};

static void violation(struct report *r, const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void violation(struct report *r, const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stdout, "%s: %s: ", r->obj, prog);
	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	r->violations++;
}

static bool is_jump(const struct bpf_insn *in)
{
	__u8 cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

	return (cls == BPF_JMP || cls == BPF_JMP32) &&
	       op != BPF_CALL && op != BPF_EXIT;
}

/*
 * Successors of insn i in the control-flow graph: the next instruction
 * and, for a jump, its target.  Returns how many (0 for exit).
 */
static int successors(const struct bpf_insn *in, size_t i, size_t out[2])
{
	__u8 cls = BPF_CLASS(in[i].code), op = BPF_OP(in[i].code);
	size_t next = i + (in[i].code == (BPF_LD | BPF_IMM | BPF_DW) ? 2 : 1);

	if ((cls == BPF_JMP || cls == BPF_JMP32) && op == BPF_EXIT)
		return 0;
	if (!is_jump(&in[i])) {
		out[0] = next;
		return 1;
	}
	out[0] = i + 1 + in[i].off;
	if (op == BPF_JA)
		return 1;
	out[1] = next;
	return 2;
}

/*
 * What a 4.x verifier walks over every path from the first instruction to
 * an exit, with no pruning assumed: f(i) = 1 + the sum of f over i's
 * successors.  A 4.x kernel rejects any cycle (a "back-edge") but accepts
 * jumps backwards to code already explored, which clang emits when it
 * merges identical tails; so this is a depth-first search over the graph,
 * not a pass in instruction order.  Returns 0 when there is a cycle, and
 * saturates instead of overflowing.
 */
struct walk {
	const struct bpf_insn *in;
	size_t n;
	unsigned long long *f;
	unsigned char *state;	/* 0 new, 1 on the DFS stack, 2 done */
	size_t *stack, *edge;
};

#define WALK_CAP (1ULL << 40)

static unsigned long long walk_bound(const struct bpf_insn *in, size_t n,
				     bool *cycle)
{
	struct walk w = { .in = in, .n = n };
	unsigned long long r = WALK_CAP;
	size_t sp = 0;

	*cycle = false;
	w.f = calloc(n, sizeof(*w.f));
	w.state = calloc(n, 1);
	w.stack = calloc(n, sizeof(*w.stack));
	w.edge = calloc(n, sizeof(*w.edge));
	if (!w.f || !w.state || !w.stack || !w.edge || !n)
		goto out;
	w.stack[sp++] = 0;
	w.state[0] = 1;
	while (sp) {
		size_t i = w.stack[sp - 1], succ[2];
		int ns = successors(in, i, succ);

		if (w.edge[i] < (size_t)ns) {
			size_t t = succ[w.edge[i]++];

			if (t >= n)
				continue;	/* falls off the end: the kernel refuses it too */
			if (w.state[t] == 1) {
				*cycle = true;
				goto out;
			}
			if (w.state[t] == 0) {
				w.state[t] = 1;
				w.stack[sp++] = t;
			}
			continue;
		}
		w.f[i] = 1;
		for (int k = 0; k < ns; k++)
			if (succ[k] < n)
				w.f[i] += w.f[succ[k]];
		if (w.f[i] > WALK_CAP)
			w.f[i] = WALK_CAP;
		w.state[i] = 2;
		sp--;
	}
	r = w.f[0];
out:
	free(w.f);
	free(w.state);
	free(w.stack);
	free(w.edge);
	return r;
}

/* Deepest r10-relative access, following r10 copies through adds. */
static int stack_depth(const struct bpf_insn *in, size_t n)
{
	long long base[11];	/* register = r10 + base[reg], or LLONG_MAX */
	long long deepest = 0;
	size_t i;
	int r;

	for (r = 0; r < 11; r++)
		base[r] = r == 10 ? 0 : (1LL << 62);
	for (i = 0; i < n; i++) {
		__u8 cls = BPF_CLASS(in[i].code);
		int dst = in[i].dst_reg, src = in[i].src_reg;
		long long at = 1LL << 62;

		if (cls == BPF_STX || cls == BPF_ST)
			at = base[dst] + in[i].off;
		else if (cls == BPF_LDX)
			at = base[src] + in[i].off;
		else if (cls == BPF_ALU64 && in[i].code == (BPF_ALU64 | BPF_MOV | BPF_X))
			base[dst] = base[src];
		else if (cls == BPF_ALU64 && in[i].code == (BPF_ALU64 | BPF_ADD | BPF_K))
			base[dst] += base[dst] < (1LL << 61) ? in[i].imm : 0;
		else if (cls == BPF_ALU64 || cls == BPF_ALU || cls == BPF_LD)
			base[dst] = 1LL << 62;
		else if (cls == BPF_JMP && BPF_OP(in[i].code) == BPF_CALL)
			for (r = 0; r <= 5; r++)
				base[r] = 1LL << 62;
		if (at < deepest)
			deepest = at;
		/* a pointer into the stack handed to a helper counts too */
		if (cls == BPF_ALU64 && base[dst] < deepest)
			deepest = base[dst];
	}
	return (int)-deepest;
}

/*
 * Where a map look-up's result, or a copy of it, is stored to the stack
 * before the jump that checks it for NULL: 4.1's and 4.14's verifiers keep
 * no link between the stored copy and the checked register, and refuse a
 * read through the copy filled back ("invalid mem access").  Followed in
 * straight code from the call; returns the store's index, or n.
 */
static size_t unchecked_spill(const struct bpf_insn *in, size_t n, size_t call)
{
	unsigned held = 1u << 0;	/* registers holding the result */

	for (size_t i = call + 1; i < n && held; i++) {
		__u8 cls = BPF_CLASS(in[i].code), op = BPF_OP(in[i].code);
		int dst = in[i].dst_reg, src = in[i].src_reg;

		if (cls == BPF_STX && src < 32 && (held >> src & 1) && dst == 10)
			return i;
		if (cls == BPF_JMP) {
			if (op == BPF_CALL) {
				held &= ~0x3fu;	/* r0-r5 clobbered */
				continue;
			}
			return n;	/* the check, or a branch: stop looking */
		}
		if (cls == BPF_ALU64 && in[i].code == (BPF_ALU64 | BPF_MOV | BPF_X)) {
			held = (held & ~(1u << dst)) | ((held >> src & 1) << dst);
			continue;
		}
		if (cls == BPF_ALU64 || cls == BPF_ALU || cls == BPF_LDX ||
		    cls == BPF_LD)
			held &= ~(1u << dst);
	}
	return n;
}

static void check_program(struct report *r, const struct bpf_program *prog)
{
	const struct bpf_insn *in = bpf_program__insns(prog);
	size_t n = bpf_program__insn_cnt(prog), i;
	const char *name = bpf_program__name(prog);
	/*
	 * --pruned: its own programs (cfi41_*), not the follow hooks it
	 * shares, nor those for 4.2+ (*_v42: tail calls), uprobes (*_v43)
	 * and perf output (*_v44)
	 */
	int level = strstr(name, "_v41") || (r->pruned && !strncmp(name, "cfi41_", 6) &&
					     !strstr(name, "_v42") && !strstr(name, "_v43") &&
					     !strstr(name, "_v44")) ?
		    HELPERS_41 : HELPERS_44;
	unsigned long long walked;
	bool cycle;
	int depth;

	if (n > MAX_INSNS && !(r->insns_only && strstr(name, "_vma_")))
		violation(r, name, "%zu instructions, 4.x allows %d", n, MAX_INSNS);
	if (r->insns_only)
		return;
	for (i = 0; i < n; i++) {
		__u8 cls = BPF_CLASS(in[i].code), op = BPF_OP(in[i].code);

		if (cls == BPF_JMP32)
			violation(r, name, "insn %zu: 32-bit jump (5.1+)", i);
		if (cls == BPF_JMP && (op == BPF_JLT || op == BPF_JLE ||
				       op == BPF_JSLT || op == BPF_JSLE))
			violation(r, name, "insn %zu: jump opcode 0x%02x is 4.14+",
				  i, in[i].code);
		if (cls == BPF_STX && BPF_MODE(in[i].code) == BPF_ATOMIC &&
		    in[i].imm != BPF_ADD)
			violation(r, name, "insn %zu: atomic op 0x%x is 5.12+",
				  i, in[i].imm);
		if (cls == BPF_JMP && op == BPF_CALL &&
		    in[i].src_reg != BPF_PSEUDO_CALL &&
		    in[i].imm == BPF_FUNC_map_lookup_elem &&
		    unchecked_spill(in, n, i) < n)
			violation(r, name, "insn %zu: a map value stored to the "
				  "stack before its NULL check, which 4.1 and "
				  "4.14 then lose: look it up again",
				  unchecked_spill(in, n, i));
		if (cls == BPF_JMP && op == BPF_CALL) {
			if (in[i].src_reg == BPF_PSEUDO_CALL)
				violation(r, name, "insn %zu: call to a BPF function "
					  "(4.16+): inline it", i);
			else if (!helper_allowed(in[i].imm, level))
				violation(r, name, "insn %zu: helper %d is not in %s",
					  i, in[i].imm,
					  level == HELPERS_41 ? "4.1" : "4.4");
		}
	}
	walked = walk_bound(in, n, &cycle);
	if (cycle)
		violation(r, name, "a loop: 4.x verifiers refuse back-edges");
	else if (walked > MAX_WALK && !r->pruned)
		violation(r, name, "verifier may walk %llu instructions, "
			  "4.x allows %d", walked, MAX_WALK);
	depth = stack_depth(in, n);
	if (depth > MAX_STACK)
		violation(r, name, "%d bytes of stack, 4.x allows %d", depth,
			  MAX_STACK);
	printf("%s: %s: %zu insns, %d stack bytes, %llu walked\n", r->obj,
	       name, n, depth, cycle ? 0 : walked);
}

static void check_maps(struct report *r, struct bpf_object *obj)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		enum bpf_map_type t = bpf_map__type(map);

		if (bpf_map__is_internal(map)) {
			violation(r, name, "global data (5.2+): use an array map");
			continue;
		}
		if (t != BPF_MAP_TYPE_HASH && t != BPF_MAP_TYPE_ARRAY &&
		    t != BPF_MAP_TYPE_PROG_ARRAY &&
		    t != BPF_MAP_TYPE_PERF_EVENT_ARRAY)
			violation(r, name, "map type %d is newer than 4.4", t);
		if (bpf_map__key_size(map) > MAX_KEY)
			violation(r, name, "%u-byte key, 4.x allows %d",
				  bpf_map__key_size(map), MAX_KEY);
		if (bpf_map__map_flags(map))
			violation(r, name, "map flags 0x%x are newer than 4.4",
				  bpf_map__map_flags(map));
	}
}

/* CO-RE relocations live in .BTF.ext; 4.x kernels have no BTF to apply them. */
static void check_core(struct report *r, const char *path)
{
	struct { __u16 magic; __u8 version, flags; __u32 hdr_len;
		 __u32 fi_off, fi_len, li_off, li_len, cr_off, cr_len; } h;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t strndx;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY);
	elf_version(EV_CURRENT);
	elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getshdrstrndx(elf, &strndx)) {
		violation(r, "object", "cannot read ELF");
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) ||
		    strcmp(elf_strptr(elf, strndx, sh.sh_name), ".BTF.ext"))
			continue;
		d = elf_getdata(scn, NULL);
		memset(&h, 0, sizeof(h));
		if (d && d->d_size >= 8)
			memcpy(&h, d->d_buf, d->d_size < sizeof(h) ? d->d_size : sizeof(h));
		if (h.hdr_len >= sizeof(h) && h.cr_len > 0)
			violation(r, "object", "CO-RE relocations (%u bytes): "
				  "4.x kernels have no BTF", h.cr_len);
	}
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

int main(int argc, char **argv)
{
	bool insns_only = argc == 3 && !strcmp(argv[1], "--insns");
	bool pruned = argc == 3 && !strcmp(argv[1], "--pruned");
	struct report r = { .obj = argv[argc - 1], .insns_only = insns_only,
			    .pruned = pruned };
	struct bpf_program *prog;
	struct bpf_object *obj;

	if (argc != 2 && !insns_only && !pruned) {
		fprintf(stderr, "usage: legacy_limits [--insns | --pruned] OBJECT.o\n");
		return 2;
	}
	libbpf_set_print(quiet);
	obj = bpf_object__open_file(r.obj, NULL);
	if (!obj) {
		fprintf(stderr, "legacy_limits: cannot open %s: %s\n", r.obj,
			strerror(errno));
		return 2;
	}
	bpf_object__for_each_program(prog, obj)
		check_program(&r, prog);
	if (!insns_only) {
		check_maps(&r, obj);
		check_core(&r, r.obj);
	}
	bpf_object__close(obj);
	if (r.violations)
		printf("%s: %d violation(s) of 4.x limits\n", r.obj, r.violations);
	return r.violations ? 1 : 0;
}
