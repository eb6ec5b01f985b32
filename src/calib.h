/* SPDX-License-Identifier: MIT */
/*
 * A probe on ourselves: fire a uprobe at a function that starts with
 * push %rbp and report where it was and what its caller's return address
 * was, so the caller can see whether the kernel's user unwinder put the
 * caller in the stack it returned.
 */
#ifndef SW_CALIB_H
#define SW_CALIB_H

#include <linux/types.h>
#include "../compat/kfeatures.h"

struct sw_calib {
	__u64 target;	/* the probed function, where the stack starts */
	__u64 ret;	/* the return address into its caller */
};

int sw_calib_run(const struct sw_features *f, int prog_fd, struct sw_calib *c);

#endif
