// SPDX-License-Identifier: MIT
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>
#include "elf_image.h"
#include "untrusted.h"

#define PAGE 4096ULL
/*
 * What libelf keeps for each section it is handed (its Elf_Scn, about 200
 * bytes in elfutils): a file of headers alone must not cost more than it
 * is charged.
 */
#define SCN_COST 256

struct span {
	uint64_t start, end;
};

struct elf_image {
	int fd;			/* ELF_IMAGE_CODE on a copy; else -1 */
	bool copy;		/* read in part, not mapped */
	char *base;		/* the file's bytes at their offsets */
	size_t size;
	uint32_t crc;
	uint64_t held;		/* charged to *budget */
	struct untrusted_budget *budget, own;
	struct span *spans;	/* of a copy: what was read */
	size_t nr_spans;
};

/* The sections read besides symbol tables, their strings and notes. */
static const char *const wanted_names[] = {
	".gnu_debuglink", ".gnu_debugdata", ".eh_frame", ".eh_frame_hdr",
	".debug_frame", ".zdebug_frame",
};

bool elf_image_charge(struct elf_image *img, uint64_t n)
{
	if (!img->copy)
		return true;
	if (!untrusted_charge(img->budget, n))
		return false;
	img->held += n;
	return true;
}

/* [start, start + len) of the file into the image, charged by the page. */
static int fill(struct elf_image *img, int fd, uint64_t start, uint64_t len)
{
	uint64_t end, got;
	struct span *v;

	if (start >= img->size || !len)
		return 0;
	end = len > img->size - start ? img->size : start + len;
	if (!elf_image_charge(img, ((end + PAGE - 1) & ~(PAGE - 1)) -
				   (start & ~(PAGE - 1))))
		return -EDQUOT;
	v = realloc(img->spans, (img->nr_spans + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	img->spans = v;
	for (got = start; got < end;) {
		ssize_t n = pread(fd, img->base + got, end - got, got);

		if (n < 0 && errno == EINTR)
			continue;
		/* truncated meanwhile: what was read may be torn */
		if (n <= 0)
			return -EIO;
		got += n;
	}
	img->spans[img->nr_spans++] = (struct span){ start, end };
	return 0;
}

/* The headers' fields either class has, from the image. */
struct hdrs {
	bool is64;
	uint64_t phoff, shoff;
	size_t phnum, shnum, phent, shent, shstrndx;
};

static void get_shdr(const struct elf_image *img, const struct hdrs *h,
		     size_t i, GElf_Shdr *sh)
{
	const char *p = img->base + h->shoff + i * h->shent;

	if (h->is64) {
		memcpy(sh, p, sizeof(*sh));
		return;
	}
	Elf32_Shdr s;

	memcpy(&s, p, sizeof(s));
	*sh = (GElf_Shdr){ s.sh_name, s.sh_type, s.sh_flags, s.sh_addr,
			   s.sh_offset, s.sh_size, s.sh_link, s.sh_info,
			   s.sh_addralign, s.sh_entsize };
}

static void get_phdr(const struct elf_image *img, const struct hdrs *h,
		     size_t i, GElf_Phdr *ph)
{
	const char *p = img->base + h->phoff + i * h->phent;

	if (h->is64) {
		memcpy(ph, p, sizeof(*ph));
		return;
	}
	Elf32_Phdr s;

	memcpy(&s, p, sizeof(s));
	*ph = (GElf_Phdr){ s.p_type, s.p_flags, s.p_offset, s.p_vaddr,
			   s.p_paddr, s.p_filesz, s.p_memsz, s.p_align };
}

/* The ELF header, and the first section header for counts past 0xff00. */
static int read_ehdr(struct elf_image *img, int fd, struct hdrs *h)
{
	const unsigned char *id = (const unsigned char *)img->base;
	GElf_Shdr sh0;
	int err;

	err = fill(img, fd, 0, sizeof(Elf64_Ehdr));
	if (err)
		return err;
	/* libelf takes a foreign byte order, which no process here runs */
	if (img->size < sizeof(Elf32_Ehdr) || memcmp(id, ELFMAG, SELFMAG) ||
	    id[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
			    ELFDATA2LSB : ELFDATA2MSB) ||
	    (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64))
		return -ENOEXEC;
	h->is64 = id[EI_CLASS] == ELFCLASS64;
	if (h->is64) {
		Elf64_Ehdr e;

		memcpy(&e, id, sizeof(e));
		*h = (struct hdrs){ true, e.e_phoff, e.e_shoff, e.e_phnum,
				    e.e_shnum, e.e_phentsize, e.e_shentsize,
				    e.e_shstrndx };
	} else {
		Elf32_Ehdr e;

		memcpy(&e, id, sizeof(e));
		*h = (struct hdrs){ false, e.e_phoff, e.e_shoff, e.e_phnum,
				    e.e_shnum, e.e_phentsize, e.e_shentsize,
				    e.e_shstrndx };
	}
	/* entries of another size are libelf's to refuse */
	if (h->phent != (h->is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		h->phnum = 0;
	if (!h->shoff || h->shent != (h->is64 ? sizeof(Elf64_Shdr) :
				      sizeof(Elf32_Shdr)) ||
	    h->shoff >= img->size || img->size - h->shoff < h->shent) {
		h->shnum = 0;
		return 0;
	}
	err = fill(img, fd, h->shoff, h->shent);
	if (err)
		return err;
	get_shdr(img, h, 0, &sh0);
	if (!h->shnum)
		h->shnum = sh0.sh_size;
	if (h->shstrndx == SHN_XINDEX)
		h->shstrndx = sh0.sh_link;
	if (h->phnum == PN_XNUM)
		h->phnum = sh0.sh_info;
	/* the headers that are in the file */
	if (h->shnum > (img->size - h->shoff) / h->shent)
		h->shnum = (img->size - h->shoff) / h->shent;
	return 0;
}

static bool wanted(const struct elf_image *img, const GElf_Shdr *sh,
		   const GElf_Shdr *names)
{
	const char *name;
	size_t left;

	if (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM ||
	    sh->sh_type == SHT_NOTE)
		return true;
	if (!names || sh->sh_name >= names->sh_size ||
	    names->sh_offset >= img->size)
		return false;
	left = img->size - names->sh_offset;
	if (sh->sh_name >= left)
		return false;
	name = img->base + names->sh_offset + sh->sh_name;
	left -= sh->sh_name;
	for (size_t i = 0; i < sizeof(wanted_names) / sizeof(*wanted_names); i++)
		if (!strncmp(name, wanted_names[i], left) &&
		    strnlen(name, left) < left)
			return true;
	return false;
}

static int fill_section(struct elf_image *img, int fd, const GElf_Shdr *sh)
{
	return sh->sh_type == SHT_NOBITS ? 0 :
	       fill(img, fd, sh->sh_offset, sh->sh_size);
}

/* What the readers of a copy use; see the top of elf_image.h. */
static int read_parts(struct elf_image *img, int fd)
{
	GElf_Shdr sh, names, link;
	struct hdrs h = {};
	bool have_names;
	int err;

	err = read_ehdr(img, fd, &h);
	if (err)
		return err;
	if (h.phnum)
		err = fill(img, fd, h.phoff, (uint64_t)h.phnum * h.phent);
	if (!err && h.shnum && !elf_image_charge(img, (uint64_t)h.shnum * SCN_COST))
		err = -EDQUOT;
	if (!err && h.shnum)
		err = fill(img, fd, h.shoff, (uint64_t)h.shnum * h.shent);
	/* a PT_NOTE names the build-id where no section header does */
	for (size_t i = 0; !err && i < h.phnum && h.phoff < img->size &&
	     (i + 1) * h.phent <= img->size - h.phoff; i++) {
		GElf_Phdr ph;

		get_phdr(img, &h, i, &ph);
		if (ph.p_type == PT_NOTE)
			err = fill(img, fd, ph.p_offset, ph.p_filesz);
	}
	have_names = h.shstrndx && h.shstrndx < h.shnum;
	if (have_names && !err) {
		get_shdr(img, &h, h.shstrndx, &names);
		err = fill_section(img, fd, &names);
	}
	for (size_t i = 1; !err && i < h.shnum; i++) {
		get_shdr(img, &h, i, &sh);
		if (!wanted(img, &sh, have_names ? &names : NULL))
			continue;
		err = fill_section(img, fd, &sh);
		if (!err && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) &&
		    sh.sh_link && sh.sh_link < h.shnum) {
			get_shdr(img, &h, sh.sh_link, &link);
			err = fill_section(img, fd, &link);
		}
	}
	return err;
}

/* The CRC32 of the whole file, a piece at a time. */
static int crc_file(int fd, uint64_t size, uint32_t *crc)
{
	unsigned char buf[65536];
	uint64_t off = 0;

	*crc = crc32(0, Z_NULL, 0);
	while (off < size) {
		ssize_t n = pread(fd, buf, size - off < sizeof(buf) ?
				  size - off : sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		*crc = crc32(*crc, buf, n);
		off += n;
	}
	return 0;
}

/*
 * A writable private mapping: the kernel plants the int3 of anyone's
 * system-wide uprobe on this file in every read-only executable-able
 * mapping of it, ours included, and a probed instruction would then read
 * as 0xcc.  Nothing is written, so the pages stay shared.
 */
static Elf *open_mapped(struct elf_image *img, int fd, int flags)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);

	/*
	 * Pull everything in (a no-op when mapped) and let go of the fd, so
	 * that hundreds of libraries do not use up the fds.
	 */
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_cntl(elf, ELF_C_FDREAD)) {
		elf_cntl(elf, ELF_C_FDDONE);
		img->base = elf_rawfile(elf, &img->size);
		if (img->base) {
			if (flags & ELF_IMAGE_CRC32)
				img->crc = crc32(crc32(0, Z_NULL, 0),
						 (const Bytef *)img->base, img->size);
			return elf;
		}
	}
	if (elf)
		elf_end(elf);
	return NULL;
}

/*
 * read() returns the page cache's bytes, never a uprobe's int3, and a copy
 * cannot be truncated under us.
 */
static Elf *open_copy(struct elf_image *img, int fd, int flags, int *err)
{
	Elf *elf;

	img->copy = true;
	img->base = mmap(NULL, img->size ? img->size : 1, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (img->base == MAP_FAILED) {
		img->base = NULL;
		*err = -ENOMEM;
		return NULL;
	}
	/* a huge page would be filled for a few bytes read into it */
	madvise(img->base, img->size ? img->size : 1, MADV_NOHUGEPAGE);
	*err = read_parts(img, fd);
	if (!*err && (flags & ELF_IMAGE_CRC32))
		*err = crc_file(fd, img->size, &img->crc);
	if (*err)
		return NULL;
	elf = elf_memory(img->base, img->size);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		return elf;
	if (elf)
		elf_end(elf);
	*err = -ENOEXEC;
	return NULL;
}

Elf *elf_image_open(const char *path, int flags, struct elf_image **out,
		    int *err, struct untrusted_skip *sk)
{
	struct elf_image *img;
	struct stat st;
	Elf *elf;
	int fd;

	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		*err = -ENOTSUP;
		return NULL;
	}
	img = calloc(1, sizeof(*img));
	if (!img) {
		*err = -ENOMEM;
		return NULL;
	}
	img->fd = -1;
	img->own.limit = UNTRUSTED_BUDGET_DEFAULT;
	img->budget = sk && sk->budget ? sk->budget : &img->own;
	fd = untrusted_open(path, 0, &st, sk);
	if (fd < 0) {
		*err = fd;
		free(img);
		return NULL;
	}
	*err = -ENOEXEC;
	if (untrusted_only_root(fd, &st)) {
		elf = open_mapped(img, fd, flags);
	} else {
		img->size = st.st_size;
		elf = open_copy(img, fd, flags, err);
	}
	if (elf && img->copy && (flags & ELF_IMAGE_CODE))
		img->fd = fd;
	else
		close(fd);
	if (!elf) {
		elf_image_free(img);
		return NULL;
	}
	*out = img;
	return elf;
}

void elf_image_free(struct elf_image *img)
{
	if (!img)
		return;
	if (img->copy && img->base)
		munmap(img->base, img->size ? img->size : 1);
	if (img->fd >= 0)
		close(img->fd);
	untrusted_release(img->budget, img->held);
	free(img->spans);
	free(img);
}

ssize_t elf_image_read(const struct elf_image *img, uint64_t offset, void *buf,
		       size_t len)
{
	bool whole = !img->copy;
	ssize_t n;

	if (offset >= img->size)
		return offset == img->size ? 0 : -ERANGE;
	if (len > img->size - offset)
		len = img->size - offset;
	if (img->fd >= 0) {
		do
			n = pread(img->fd, buf, len, offset);
		while (n < 0 && errno == EINTR);
		return n < 0 ? -errno : n;
	}
	for (size_t i = 0; i < img->nr_spans && !whole; i++)
		whole = offset >= img->spans[i].start &&
			offset + len <= img->spans[i].end;
	if (!whole)
		return -ENODATA;
	memcpy(buf, img->base + offset, len);
	return len;
}

uint32_t elf_image_crc32(const struct elf_image *img)
{
	return img->crc;
}

struct untrusted_budget *elf_image_budget(const struct elf_image *img)
{
	return img->copy ? img->budget : NULL;
}
