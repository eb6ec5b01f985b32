// SPDX-License-Identifier: MIT
/*
 * Each field is found by what it must hold in our own process, and taken
 * only where a second, different value agrees: task_struct.mm by the
 * code, data and argument bounds /proc/self/stat gives; the VMA list
 * (or, 6.1+, the maple tree's root) by the ranges of /proc/self/maps, each
 * found in order (or looked up by its start); vm_pgoff and vm_file by
 * every file mapping's offset, vm_flags by every mapping's permissions; a
 * file's inode and its super_block by two files' inode numbers and
 * devices (our executable and a memfd of our own).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "vma_calib.h"
#include "calib.h"
#include "procs.h"
#include "peek.skel.h"

#define MAPS_MAX	64
/* bytes of each VMA searched for vm_pgoff and vm_file */
#define VMA_BYTES	512
/* bytes of mm_struct searched for its list or tree of VMAs */
#define MM_BYTES	256
/* maple tree node types (lib/maple_tree.c), and the levels read at most */
#define MT_LEAF		1
#define MT_RANGE	2
#define MT_ARANGE	3
#define MT_LEVELS	8

struct mapping {
	__u64 start, end, pgoff, ino;
	__u32 dev;		/* as the kernel encodes it: major << 20 | minor */
	__u32 prot;		/* rwxs as vm_flags' low bits (VM_READ ... VM_SHARED) */
};

struct calib {
	struct peek_bpf *skel;
	struct sw_peek v;	/* the last peek */
	__u8 task[SW_PEEK_BYTES];
	struct mapping maps[MAPS_MAX];
	size_t n;
	__u8 vmas[MAPS_MAX][VMA_BYTES];	/* each of ours, in maps order */
	size_t nvmas;
};

static bool kptr(__u64 v)
{
	return v >= 0xffff800000000000ULL && v != ~0ULL;
}

static __u64 word(const __u8 *b, size_t off)
{
	__u64 v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

/* SW_PEEK_BYTES of kernel memory at addr (0: our task) into c->v. */
static int peek(struct calib *c, __u64 addr)
{
	int fd = bpf_map__fd(c->skel->maps.peek);
	__u32 zero = 0;

	memset(&c->v, 0, sizeof(c->v));
	if (bpf_map_update_elem(fd, &zero, &c->v, BPF_ANY))
		return -errno;
	sw_calib_peek(addr);
	if (bpf_map_lookup_elem(fd, &zero, &c->v))
		return -errno;
	return c->v.task && c->v.addr == (addr ? addr : c->v.task) ? 0 : -ENODATA;
}

static int read_maps(struct calib *c)
{
	char line[4352];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -errno;
	c->n = 0;
	while (c->n < MAPS_MAX && fgets(line, sizeof(line), f)) {
		struct proc_map m;

		/* a line without a path is a VMA too; the vsyscall page is none */
		if (!procs_parse_maps_line(line, &m) && !m.end)
			continue;
		if (m.start >= 0xffff800000000000ULL)
			continue;
		c->maps[c->n++] = (struct mapping){ m.start, m.end, m.pgoff, m.ino,
						    m.maj << 20 | m.min, m.prot };
	}
	fclose(f);
	return c->n >= 2 ? 0 : -ENOENT;
}

/*
 * /proc/self/stat's startcode, endcode, start_data, end_data, start_brk,
 * startstack, arg_start, arg_end, env_start, env_end, in mm_struct's
 * order (brk, between start_brk and start_stack, is not in it: -1).
 */
static int stat_bounds(__u64 out[11])
{
	static const int field[11] = { 26, 27, 45, 46, 47, -1, 28, 48, 49, 50, 51 };
	char buf[2048], *p;
	unsigned long long v[52] = { 0 };
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	p++;
	for (int i = 3; i < 52; i++) {
		char *end;

		while (*p == ' ')
			p++;
		if (i == 3) {
			p++;	/* the state letter */
			continue;
		}
		v[i] = strtoull(p, &end, 10);
		if (end == p)
			return -EINVAL;
		p = end;
	}
	for (int i = 0; i < 11; i++)
		out[i] = field[i] < 0 ? ~0ULL : v[field[i]];
	return 0;
}

/*
 * task_struct.mm: a pointer kept twice (mm, active_mm) to the bounds b.
 * Nothing here allocates: our mappings must stay as read.
 */
static int find_mm(struct calib *c, const __u64 b[11], struct sw_vma_offs *o,
		   __u64 *mm)
{
	int err = peek(c, 0);

	if (err)
		return err;
	memcpy(c->task, c->v.b, SW_PEEK_BYTES);
	for (size_t off = 0; off + 16 <= SW_PEEK_BYTES; off += 8) {
		__u64 p = word(c->task, off);

		if (!kptr(p) || word(c->task, off + 8) != p || peek(c, p))
			continue;
		for (size_t q = 0; q + 88 <= SW_PEEK_BYTES; q += 8) {
			size_t i = 0;

			while (i < 11 && (b[i] == ~0ULL || word(c->v.b, q + 8 * i) == b[i]))
				i++;
			if (i == 11) {
				o->task_mm = off;
				*mm = p;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* A VMA of ours at addr is mapping i: its range is where it starts. */
static bool is_vma(struct calib *c, __u64 addr, size_t i)
{
	return i < c->n && kptr(addr) && !peek(c, addr) &&
	       word(c->v.b, 0) == c->maps[i].start &&
	       word(c->v.b, 8) == c->maps[i].end;
}

/*
 * mm_struct.mmap, vm_area_struct.vm_next (vm_start and vm_end are each
 * kernel's first two words), and every VMA of ours read, in order.
 */
static int read_vma_list(struct calib *c, struct sw_vma_offs *o,
			 const __u8 mmb[MM_BYTES])
{
	__u64 first = 0, a;

	o->mm_mmap = ~0u;
	for (size_t off = 0; off < MM_BYTES && o->mm_mmap == ~0u; off += 8)
		if (kptr(word(mmb, off)) && is_vma(c, word(mmb, off), 0)) {
			o->mm_mmap = off;
			first = word(mmb, off);
		}
	if (o->mm_mmap == ~0u)
		return -ENOENT;
	memcpy(c->vmas[0], c->v.b, VMA_BYTES);
	o->vm_next = ~0u;
	for (size_t off = 16; off < VMA_BYTES && o->vm_next == ~0u; off += 8) {
		a = word(c->vmas[0], off);
		if (kptr(a) && is_vma(c, a, 1))
			o->vm_next = off;
	}
	if (o->vm_next == ~0u)
		return -ENOENT;
	o->vm_start = 0;
	o->vm_end = 8;
	a = first;
	for (c->nvmas = 0; a && c->nvmas < c->n; c->nvmas++) {
		if (!is_vma(c, a, c->nvmas))
			return -ENOENT;
		memcpy(c->vmas[c->nvmas], c->v.b, VMA_BYTES);
		a = word(c->v.b, o->vm_next);
	}
	return c->nvmas == c->n ? 0 : -ENOENT;
}

/*
 * The entry of a maple tree (6.1+) at addr, its root entry given, found
 * as the kernel's mtree_load() finds it and as bpf/cfi_walk.bpf.h's
 * cfi_vma_map_mt() does (that comment says how nodes are laid out): 0
 * where there is none, or what was read is no tree.
 */
static __u64 tree_load(struct calib *c, __u64 root, __u64 addr)
{
	__u64 e = root, max = ~0ULL;

	if ((e & 3) != 2 || e <= 4096)
		return 0;
	e &= ~2ULL;
	for (int level = 0; level < MT_LEVELS; level++) {
		__u64 node = e & ~255ULL, type = (e >> 3) & 15, n[32];
		size_t npiv, slot, end, off = 0;

		if (type == MT_ARANGE) {
			npiv = 9;
			slot = 10;
		} else if (type == MT_LEAF || type == MT_RANGE) {
			npiv = 15;
			slot = 16;
		} else {
			return 0;
		}
		if (!kptr(node) || peek(c, node))
			return 0;
		memcpy(n, c->v.b, sizeof(n));
		if (type == MT_ARANGE)
			end = n[30] & 255;
		else if (!n[15])
			end = n[31] & 255;
		else
			end = n[15] == max ? 14 : 15;
		if (end > npiv)
			end = npiv;
		while (off < end && n[1 + off] < addr)
			off++;
		if (off < end)
			max = n[1 + off];
		e = n[slot + off];
		if (type == MT_LEAF)
			return e;
	}
	return 0;
}

/* mm_struct's maple tree root, and every VMA of ours read from it, in order. */
static int read_vma_tree(struct calib *c, struct sw_vma_offs *o,
			 const __u8 mmb[MM_BYTES])
{
	for (size_t off = 0; off < MM_BYTES; off += 8) {
		__u64 root = word(mmb, off);

		if (!is_vma(c, tree_load(c, root, c->maps[0].start), 0))
			continue;
		for (c->nvmas = 0; c->nvmas < c->n; c->nvmas++) {
			if (!is_vma(c, tree_load(c, root, c->maps[c->nvmas].start),
				    c->nvmas))
				break;
			memcpy(c->vmas[c->nvmas], c->v.b, VMA_BYTES);
		}
		if (c->nvmas < c->n)
			continue;
		o->mm_mmap = off;
		o->vm_start = 0;
		o->vm_end = 8;
		o->vm_next = 0;
		return 0;
	}
	return -ENOENT;
}

/* Our VMAs, from the list (4.18-6.0) or, where tree_ok, the tree (6.1+). */
static int read_vmas(struct calib *c, struct sw_vma_offs *o, __u64 mm,
		     bool tree_ok, bool *tree)
{
	__u8 mmb[MM_BYTES];
	int err = peek(c, mm);

	if (err)
		return err;
	memcpy(mmb, c->v.b, sizeof(mmb));
	*tree = false;
	err = read_vma_list(c, o, mmb);
	if (err != -ENOENT || !tree_ok)
		return err;
	*tree = true;
	return read_vma_tree(c, o, mmb);
}

/* vm_pgoff, and vm_file after it: every mapping's offset, a file or NULL. */
static int find_pgoff(struct calib *c, struct sw_vma_offs *o)
{
	for (size_t off = 16; off + 16 <= VMA_BYTES; off += 8) {
		bool ok = true, nonzero = false;

		for (size_t i = 0; i < c->nvmas && ok; i++) {
			__u64 file = word(c->vmas[i], off + 8);

			if (c->maps[i].ino) {
				ok = kptr(file) &&
				     word(c->vmas[i], off) == c->maps[i].pgoff >> 12;
				nonzero |= c->maps[i].pgoff != 0;
			} else {
				ok = file == 0 || kptr(file);
			}
		}
		if (ok && nonzero) {
			o->vm_pgoff = off;
			o->vm_file = off + 8;
			return 0;
		}
	}
	return -ENOENT;
}

/* vm_flags: each mapping's permissions in its low bits. */
static int find_flags(struct calib *c, struct sw_vma_offs *o)
{
	for (size_t off = 16; off + 8 <= VMA_BYTES; off += 8) {
		size_t i = 0;

		while (i < c->nvmas && (word(c->vmas[i], off) & 0xf) == c->maps[i].prot)
			i++;
		if (i == c->nvmas) {
			o->vm_flags = off;
			return 0;
		}
	}
	return -ENOENT;
}

/* Two mappings of different files (index in c->maps), or -ENOENT. */
static int two_files(const struct calib *c, size_t *x, size_t *y)
{
	for (size_t i = 0; i < c->nvmas; i++)
		for (size_t j = i + 1; j < c->nvmas; j++)
			if (c->maps[i].ino && c->maps[j].ino &&
			    c->maps[i].ino != c->maps[j].ino &&
			    c->maps[i].dev != c->maps[j].dev) {
				*x = i;
				*y = j;
				return 0;
			}
	return -ENOENT;
}

/* The inode of mapping i's file, through f_inode at off: 0 if none. */
static __u64 inode_of(struct calib *c, size_t i, const struct sw_vma_offs *o,
		      __u32 off)
{
	__u64 file = word(c->vmas[i], o->vm_file), inode;

	if (peek(c, file))
		return 0;
	inode = word(c->v.b, off);
	return kptr(inode) && !peek(c, inode) ? inode : 0;
}

/* Whether mapping i's inode (its bytes in c->v) says its number and device. */
static bool inode_says(struct calib *c, size_t i, const struct sw_vma_offs *o)
{
	__u64 sb = word(c->v.b, o->i_sb);
	__u32 dev;

	if (word(c->v.b, o->i_ino) != c->maps[i].ino || !kptr(sb) || peek(c, sb))
		return false;
	memcpy(&dev, c->v.b + o->s_dev, sizeof(dev));
	return dev == c->maps[i].dev;
}

/*
 * file.f_inode, inode.i_ino, inode.i_sb, super_block.s_dev: found for
 * one file, then checked against the other.
 */
static int find_inode(struct calib *c, struct sw_vma_offs *o)
{
	__u8 ib[512];
	size_t x, y;
	int err = two_files(c, &x, &y);

	if (err)
		return err;
	for (__u32 f = 0; f < 256; f += 8) {
		if (!inode_of(c, x, o, f))
			continue;
		memcpy(ib, c->v.b, sizeof(ib));
		for (__u32 ino = 0; ino < sizeof(ib); ino += 8) {
			if (word(ib, ino) != c->maps[x].ino)
				continue;
			for (__u32 sb = 0; sb < sizeof(ib); sb += 8) {
				if (!kptr(word(ib, sb)) || peek(c, word(ib, sb)))
					continue;
				for (__u32 dev = 0; dev < 256; dev += 4) {
					struct sw_vma_offs t = *o;

					if (memcmp(c->v.b + dev, &c->maps[x].dev, 4))
						continue;
					t.f_inode = f;
					t.i_ino = ino;
					t.i_sb = sb;
					t.s_dev = dev;
					if (inode_of(c, y, &t, f) && inode_says(c, y, &t)) {
						*o = t;
						return 0;
					}
					/* c->v moved on: this sb's bytes again */
					if (peek(c, word(ib, sb)))
						break;
				}
			}
		}
	}
	return -ENOENT;
}

/*
 * mm_struct's context.vdso: the first word of our mm that holds where our
 * vDSO starts (the auxiliary vector says where), but for the copy of
 * that vector the mm keeps (saved_auxv: the word after AT_SYSINFO_EHDR).
 * The first: the bytes read go on past our mm, maybe into another's with
 * the same vDSO (no address randomization).  0 if none: the build then
 * leaves the vDSO out.
 */
static void find_vdso(struct calib *c, struct sw_vma_offs *o, __u64 mm)
{
	__u64 vdso = getauxval(AT_SYSINFO_EHDR);

	o->mm_vdso = 0;
	if (!vdso || peek(c, mm))
		return;
	for (size_t off = 8; off < SW_PEEK_BYTES && !o->mm_vdso; off += 8)
		if (word(c->v.b, off) == vdso &&
		    word(c->v.b, off - 8) != AT_SYSINFO_EHDR)
			o->mm_vdso = off;
}

/* The reader of kernel memory, on a uprobe of ours that w keeps. */
static int calib_open(struct walker *w, struct calib **out)
{
	struct calib *c = calloc(1, sizeof(*c));
	int err;

	*out = c;
	if (!c)
		return -ENOMEM;
	c->skel = peek_bpf__open();
	if (!c->skel)
		return -errno;
	/* 4.1's reader (src/task_calib.c) */
	bpf_program__set_autoload(c->skel->progs.sw_peek_v41, false);
	err = peek_bpf__load(c->skel);
	if (err)
		return err;
	return walker_self_probe(w, bpf_program__fd(c->skel->progs.sw_peek),
				 (__u64)(unsigned long)sw_calib_peek);
}

static void calib_free(struct calib *c)
{
	/* the probe's attachment is w's: the program may go */
	if (c)
		peek_bpf__destroy(c->skel);
	free(c);
}

int vma_calib_vdso(struct walker *w, struct sw_vma_offs *o)
{
	struct calib *c;
	int err = calib_open(w, &c);

	o->mm_vdso = 0;
	if (!err)
		err = peek(c, 0);
	if (!err && o->task_mm + 8 <= SW_PEEK_BYTES)
		find_vdso(c, o, word(c->v.b, o->task_mm));
	calib_free(c);
	return err;
}

int vma_calib(struct walker *w, struct sw_vma_offs *out, bool tree_ok, bool *tree)
{
	struct sw_vma_offs o = {};
	struct calib *c;
	void *mem = MAP_FAILED;
	__u64 mm = 0, bounds[11];
	int fd = -1, err;

	err = calib_open(w, &c);
	if (err)
		goto out;
	/* a second file, on another device than our executable's */
	fd = memfd_create("stackwalk-calib", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 4096)) {
		err = -errno;
		goto out;
	}
	mem = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	/* what allocates first: read_maps' list must stay true */
	err = stat_bounds(bounds);
	if (!err)
		err = read_maps(c);
	if (!err)
		err = find_mm(c, bounds, &o, &mm);
	if (!err)
		err = read_vmas(c, &o, mm, tree_ok, tree);
	if (!err)
		err = find_pgoff(c, &o);
	/* a tree's reader looks at no flags: a PC's VMA is code */
	if (!err && !*tree)
		err = find_flags(c, &o);
	if (!err)
		err = find_inode(c, &o);
	if (!err && !*tree)
		find_vdso(c, &o, mm);
	if (!err)
		*out = o;
out:
	if (mem != MAP_FAILED)
		munmap(mem, 4096);
	if (fd >= 0)
		close(fd);
	calib_free(c);
	return err;
}
