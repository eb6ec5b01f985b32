/* SPDX-License-Identifier: MIT */
/*
 * Keeps a struct procs current from the kernel's own mmap/comm/fork/exit
 * records (a perf dummy event per CPU), so that a process which exits
 * before anyone reads its /proc/PID/maps can still be symbolized.
 *
 * Open it before the processes of interest start, drain it whenever its
 * fds poll readable, and drain it once more before symbolizing.
 */
#ifndef SW_SIDEBAND_H
#define SW_SIDEBAND_H

#include <stdbool.h>
#include <stdint.h>

struct procs;
struct sideband;

#define SIDEBAND_DEFAULT_PAGES 64

/*
 * Ring buffers of pages data pages (a power of two; 0 for the default) on
 * every online CPU, feeding procs, which must outlive the sideband.
 * Needs CAP_PERFMON or perf_event_paranoid <= 0 (system-wide events).
 */
int sideband_open(struct procs *procs, struct sideband **out,
		   unsigned int pages);
void sideband_free(struct sideband *sb);

/* The event fds, for poll(POLLIN); returns their number. */
int sideband_fds(const struct sideband *sb, const int **fds);

/*
 * Applies the complete records now in the buffers to procs, in time order
 * across CPUs.  Records that came while it read, and may yet be preceded
 * by others not written when it read their CPU's buffer, are held for the
 * next drain (sideband_holding): drain again within SIDEBAND_HOLD_MS then.
 * Returns the number of records applied or a negative errno.
 */
int sideband_drain(struct sideband *sb);
bool sideband_holding(const struct sideband *sb);
#define SIDEBAND_HOLD_MS 10

/*
 * fn hears of each new executable mapping as it is applied, while the
 * process most likely still lives (to open what only it can see).
 */
struct proc_map;
typedef void (*sideband_map_fn)(void *ctx, uint32_t pid, const struct proc_map *m);
void sideband_on_map(struct sideband *sb, sideband_map_fn fn, void *ctx);
/*
 * Drain on a thread of its own, whenever records come, until
 * sideband_background_stop: for start-up, while the caller is busy
 * loading programs and nothing else may drain.  procs (and whatever
 * sideband_on_map's fn touches) belongs to that thread meanwhile.
 */
int sideband_background(struct sideband *sb);
void sideband_background_stop(struct sideband *sb);

#ifdef SIDEBAND_TEST_HOOK
/* tests/unit/test_syms.c: records written between two rings' copies */
void sideband_test_hook(int ring);
#endif

/* Records the kernel dropped because a buffer was full, so far. */
uint64_t sideband_lost(const struct sideband *sb);

#endif /* SW_SIDEBAND_H */
