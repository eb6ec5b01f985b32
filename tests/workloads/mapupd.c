// SPDX-License-Identifier: MIT
/*
 * mapupd N: updates one key of a BPF hash map of its own exactly N times
 * through the bpf() syscall.  The kernel runs such an update with BPF
 * programs held off on its CPU, so a kprobe program on the hash map's
 * update function (htab_map_update_elem) is skipped every time: N runs
 * the kernel counts as missed (6.7+), none that reach the program.
 *
 * mapupd N SIZE: the same of an array map's one value of SIZE bytes, N
 * times or, N 0, until killed.  An array's update copies the value with
 * no lock held, programs held off all the while: a kernel that preempts
 * anywhere may run another task on the CPU in the middle of it, and then
 * none of that task's perf events' programs run either.
 *
 * Exits 0, or 1 when the map cannot be made (not root), 2 on a failed
 * update.
 */
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	unsigned size = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	unsigned long long small = 0;
	void *value = size ? calloc(1, size) : &small;
	unsigned int key = 0;
	union bpf_attr a;
	long fd;

	if (!value)
		return 1;
	memset(&a, 0, sizeof(a));
	a.map_type = size ? BPF_MAP_TYPE_ARRAY : BPF_MAP_TYPE_HASH;
	a.key_size = sizeof(key);
	a.value_size = size ? size : sizeof(small);
	/*
	 * a hash's update takes a new element before it frees the old:
	 * a full preallocated one (4.6, 4.7) has none to take
	 */
	a.max_entries = size ? 1 : 2;
	fd = bpf(BPF_MAP_CREATE, &a);
	if (fd < 0)
		return 1;
	for (int i = 0; i < n || (size && !n); i++) {
		memset(&a, 0, sizeof(a));
		a.map_fd = fd;
		a.key = (unsigned long)&key;
		a.value = (unsigned long)value;
		if (bpf(BPF_MAP_UPDATE_ELEM, &a))
			return 2;
	}
	return 0;
}
