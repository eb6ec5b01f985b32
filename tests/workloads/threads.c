// SPDX-License-Identifier: MIT
/*
 * threads: a second thread prints "tid T" (its thread id), then for each
 * number N read from stdin calls work() through via_a() N times and prints
 * "done N".  -p T must trace the process, not match nothing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

volatile int sink;

NOINLINE void work(void)
{
	sink++;
}

NOINLINE void via_a(void)
{
	work();
}

static void *worker(void *arg)
{
	int n;

	(void)arg;
	printf("tid %d\n", gettid());
	fflush(stdout);
	while (scanf("%d", &n) == 1) {
		for (int i = 0; i < n; i++)
			via_a();
		printf("done %d\n", n);
		fflush(stdout);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
