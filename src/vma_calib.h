/* SPDX-License-Identifier: MIT */
/*
 * Where a kernel without BTF keeps the fields that reach a task's VMAs
 * (a list before 6.1, a maple tree since) and name their files (struct
 * sw_vma_offs), measured on the tool's own process: kernel memory read
 * through a uprobe on ourselves (bpf/peek.bpf.c), searched for values
 * /proc/self says it must hold.
 */
#ifndef SW_VMA_CALIB_H
#define SW_VMA_CALIB_H

#include "walker_int.h"

/*
 * Fills *out, with i_generation 0 (not measured): 0, or -ENOENT when a
 * field was not found as expected (then nothing may use them), or the
 * -errno of a step that failed.  *tree: the VMAs are a maple tree, whose
 * root is at out->mm_mmap (vm_next and vm_flags are then not measured);
 * looked for only where tree_ok.  The probe stays attached with w's.
 */
int vma_calib(struct walker *w, struct sw_vma_offs *out, bool tree_ok, bool *tree);

/* Only out->mm_vdso, where BTF gave the rest (task_mm among them). */
int vma_calib_vdso(struct walker *w, struct sw_vma_offs *out);

#endif
