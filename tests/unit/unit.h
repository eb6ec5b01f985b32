/* SPDX-License-Identifier: MIT OR GPL-2.0 */
/*
 * What the unit tests share.  CHECK, their one assertion, counts, and on
 * failure says where, what and why, then carries on; each test ends by
 * printing "N passed, M failed".
 */
#ifndef SW_UNIT_H
#define SW_UNIT_H

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/types.h>

static int passed __attribute__((unused)), failed __attribute__((unused));

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (cond) {                                                \
			passed++;                                          \
		} else {                                                   \
			failed++;                                          \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                               \
			printf("\n");                                      \
		}                                                          \
	} while (0)

/*
 * Start the fixture at path with pipes for its stdin (*in, to close when
 * it should end) and its stdout (*out).  Returns its pid, or -1.
 */
static inline pid_t unit_spawn(const char *path, int *in, FILE **out)
{
	int to[2], from[2];
	pid_t pid;

	*in = -1;
	*out = NULL;
	/* close-on-exec: a later child must not hold this one's stdin open */
	if (pipe2(to, O_CLOEXEC))
		return -1;
	if (pipe2(from, O_CLOEXEC)) {
		close(to[0]);
		close(to[1]);
		return -1;
	}
	pid = fork();
	if (!pid) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	*in = to[1];
	*out = pid > 0 ? fdopen(from[0], "r") : NULL;
	if (!*out) {
		close(from[0]);
		close(to[1]);
		return -1;
	}
	return pid;
}

#endif
