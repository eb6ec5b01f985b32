/* SPDX-License-Identifier: MIT */
/*
 * Where a kernel without BTF keeps the fields that list a task's VMAs and
 * name their files (struct sw_vma_offs), measured on the tool's own
 * process: kernel memory read through a uprobe on ourselves
 * (bpf/peek.bpf.c), searched for values /proc/self says it must hold.
 */
#ifndef SW_VMA_CALIB_H
#define SW_VMA_CALIB_H

#include "walker_int.h"

/*
 * Fills *out, with i_generation 0 (not measured): 0, or -ENOENT when a
 * field was not found as expected (then nothing may use them), or the
 * -errno of a step that failed.  The probe stays attached with w's.
 */
int vma_calib(struct walker *w, struct sw_vma_offs *out);

#endif
