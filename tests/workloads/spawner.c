// SPDX-License-Identifier: MIT
/*
 * spawner N [PROGRAM]: runs PROGRAM (default /bin/true) N times, two at a
 * time, and waits for every one: N unrelated processes, each with the fork,
 * exec, mmaps and exit a tracer's process model hears of.  Prints "spawned
 * N" once all have exited.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0, started = 0, done = 0;
	char *prog = argc > 2 ? argv[2] : "/bin/true";
	char *args[] = { prog, NULL };
	int running = 0, ws;
	pid_t pid;

	while (done < n) {
		while (running < 2 && started < n) {
			if (posix_spawn(&pid, prog, NULL, NULL, args, environ)) {
				perror("posix_spawn");
				return 1;
			}
			started++;
			running++;
		}
		if (wait(&ws) < 0) {
			perror("wait");
			return 1;
		}
		running--;
		done++;
	}
	printf("spawned %ld\n", done);
	return 0;
}
