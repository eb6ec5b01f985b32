/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * The unwind tables and the processes' lists, laid out as bpf/cfi.h says:
 * the maps every cfi walk reads (bpf/cfi_walk.bpf.h, bpf/cfi41.bpf.c).
 */
#ifndef SW_CFI_MAPS_BPF_H
#define SW_CFI_MAPS_BPF_H

#include "cfi.h"

/* sizes the frontend sets before loading (bpf_map__set_max_entries) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_cfi_row);
} cfi_rows SEC(".maps");

/*
 * Not preallocated: a value replaced while a walk reads it is freed after
 * an RCU grace period, never handed straight to the next update (the
 * frontend replaces a process's list when it maps more).  4.1 takes no
 * flag, and allocates each element so: bpf/cfi41.bpf.c sets them 0.
 */
#ifndef SW_CFI_PROCS_FLAGS
#define SW_CFI_PROCS_FLAGS	BPF_F_NO_PREALLOC
#endif
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SW_CFI_PROCS_MAX);
	__uint(map_flags, SW_CFI_PROCS_FLAGS);
	__type(key, __u32);
	__type(value, struct sw_cfi_proc);
} cfi_procs SEC(".maps");

#endif /* SW_CFI_MAPS_BPF_H */
