/* SPDX-License-Identifier: MIT */
/*
 * A probe on ourselves: fire a uprobe at a function whose first
 * instruction has a given shape (push %rbp, endbr64) and report where it
 * was and what its caller's return address was, so the caller can see
 * whether the kernel's user unwinder put the caller in the stack it
 * returned at a function of that shape.
 */
#ifndef SW_CALIB_H
#define SW_CALIB_H

#include <linux/types.h>
#include "../compat/attach.h"
#include "probe.h"

struct sw_calib {
	__u64 target;	/* the probed function, where the stack starts */
	__u64 ret;	/* the return address into its caller */
};

/*
 * Fires the probe once, at a function of the given shape (not
 * SW_SHAPE_OTHER); seq names a tracefs probe event, as sw_attach's.  The
 * attachment is left in *a for the caller to detach with the others at
 * exit, since detaching a uprobe waits out an RCU grace period (~100 ms)
 * that start-up should not pay.
 */
int calib_run(const struct sw_features *f, int prog_fd,
		 enum sw_entry_shape shape, unsigned seq, struct sw_calib *c,
		 struct sw_attachment *a);

/*
 * A uprobe running prog_fd at our own function fn (as calib_run's), left
 * in *a as there.
 */
int calib_attach(const struct sw_features *f, int prog_fd, __u64 fn,
		 unsigned seq, struct sw_attachment *a);

/* Fires a uprobe attached at it with addr as its first argument. */
void sw_calib_peek(__u64 addr);

#endif
