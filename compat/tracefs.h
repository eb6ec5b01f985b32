/* SPDX-License-Identifier: MIT */
/*
 * tracefs: where it is (mounting it if need be), and the dynamic kprobe and
 * uprobe events that kernels before 4.17 need in order to attach BPF.
 *
 * Our events are "stackwalk/sw_<pid>_<n>": recognisably ours, and naming
 * the process that owns them, so that a run killed with SIGKILL leaves
 * entries the next run can tell are stale and remove.
 */
#ifndef SW_TRACEFS_H
#define SW_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SW_EVENT_GROUP "stackwalk"

/* Where tracefs is mounted (legacy: debugfs's first), or -ENOENT. */
int tracefs_find(char *path, size_t len, bool legacy);
/* The same, mounting tracefs or debugfs when neither is. */
int tracefs_mount(char *path, size_t len, bool legacy);
bool tracefs_has(const char *tracefs, const char *file);

enum sw_probe_event { SW_EV_KPROBE, SW_EV_KRETPROBE, SW_EV_UPROBE };

/*
 * Create a probe event; *name gets "sw_<pid>_<seq>".  For uprobes, target
 * is the binary's path and offset its file offset; ref_ctr_off (0: none)
 * makes the kernel maintain a USDT semaphore.  For kprobes, target is the
 * function.
 */
int tracefs_add_probe(const char *tracefs, enum sw_probe_event kind,
			 const char *target, unsigned long offset,
			 unsigned long ref_ctr_off, unsigned seq,
			 char *name, size_t name_len);
int tracefs_remove_probe(const char *tracefs, enum sw_probe_event kind,
			    const char *name);
/* The perf tracepoint id of events/<group>/<name>. */
int tracefs_event_id(const char *tracefs, const char *group,
			const char *name);
/* Remove our events whose owning process is gone; returns how many. */
int tracefs_remove_stale(const char *tracefs);

#endif
