// SPDX-License-Identifier: MIT
/* measure COMMAND...: run it; print "WALL_MS MAXRSS_KB" on stderr. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (!pid) {
		execvp(argv[1], &argv[1]);
		_exit(127);
	}
	wait4(pid, &status, 0, &ru);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "%.1f %ld\n", (t1.tv_sec - t0.tv_sec) * 1e3 +
		(t1.tv_nsec - t0.tv_nsec) / 1e6, ru.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
