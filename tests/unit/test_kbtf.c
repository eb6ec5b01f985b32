// SPDX-License-Identifier: MIT
/*
 * compat/kbtf.c, the kernel's BTF read in passes, against libbpf's whole
 * parse of the same file: the same offset for each member asked for
 * (anonymous members, nested ones, and ones not there among them), and a
 * cut or damaged file refused, never read past.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include "../../compat/kbtf.h"

static const char *const pairs[][2] = {
	/* what the walkers read */
	{ "task_struct", "stack" }, { "vm_area_struct", "vm_start" },
	{ "vm_area_struct", "vm_end" }, { "vm_area_struct", "vm_pgoff" },
	{ "vm_area_struct", "vm_file" }, { "file", "f_inode" },
	{ "inode", "i_ino" }, { "inode", "i_sb" }, { "inode", "i_generation" },
	{ "super_block", "s_dev" },
	/* members behind anonymous structs and unions */
	{ "qstr", "hash" }, { "qstr", "len" }, { "qstr", "name" },
	{ "mm_struct", "mmap_base" }, { "mm_struct", "pgd" },
	{ "page", "flags" }, { "page", "mapping" }, { "sk_buff", "len" },
	{ "sk_buff", "data" }, { "task_struct", "pid" },
	{ "task_struct", "comm" }, { "task_struct", "mm" },
	{ "dentry", "d_name" }, { "cred", "uid" },
	/* not there */
	{ "task_struct", "no_such_member" }, { "no_such_struct", "stack" },
};
#define N (sizeof(pairs) / sizeof(pairs[0]))

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/sys/kernel/btf/vmlinux";
	struct kbtf_member v[N], ref[N];
	char tmp[] = "/tmp/kbtf.XXXXXX";
	FILE *in, *out;
	char *data;
	size_t size;
	int fd, err;

	for (size_t i = 0; i < N; i++)
		v[i] = ref[i] = (struct kbtf_member){ pairs[i][0], pairs[i][1], 0 };
	err = kbtf_members_libbpf(path, ref, N);
	CHECK(!err, "libbpf reads %s: %d", path, err);
	err = kbtf_members(path, v, N);
	CHECK(!err, "kbtf_members: %d", err);
	for (size_t i = 0; i < N; i++)
		CHECK(v[i].off == ref[i].off, "%s.%s: %ld, libbpf %ld", pairs[i][0],
		      pairs[i][1], v[i].off, ref[i].off);
	CHECK(v[0].off >= 0 && v[N - 1].off == -1 && v[N - 2].off == -1,
	      "some found, the missing ones not");

	/* the same file cut short at several places, and its magic broken */
	in = fopen(path, "r");
	data = malloc(64 << 20);
	size = in && data ? fread(data, 1, 64 << 20, in) : 0;
	if (in)
		fclose(in);
	CHECK(size > 4096, "read %s whole", path);
	fd = mkstemp(tmp);
	CHECK(fd >= 0, "temporary file");
	for (int cut = 0; fd >= 0 && size > 4096 && cut < 5; cut++) {
		size_t len = cut == 4 ? size : size / 5 * cut + 11;

		if (cut == 4)
			data[0] ^= 0xff;
		out = fopen(tmp, "w");
		fwrite(data, 1, len, out);
		fclose(out);
		for (size_t i = 0; i < N; i++)
			v[i].off = 0;
		err = kbtf_members(tmp, v, N);
		CHECK(err == -EINVAL && v[0].off == -1,
		      "a file of %zu of %zu bytes%s: refused (%d)", len, size,
		      cut == 4 ? ", magic broken" : "", err);
	}
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	err = kbtf_members("/nonexistent/vmlinux", v, N);
	CHECK(err == -ENOENT && v[0].off == -1, "no file: %d", err);
	free(data);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
