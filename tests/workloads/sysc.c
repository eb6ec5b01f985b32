// SPDX-License-Identifier: MIT
/*
 * sysc N: enters the kernel through getppid exactly 3N times, from code
 * with frame pointers all the way to the syscall instruction:
 *
 *   raw_getppid <- from_a <- main            N times
 *   raw_getppid <- from_b <- main            2N times
 *
 * glibc's getppid() keeps no frame of its own, so the user stack of a
 * kernel event would lose its caller there; here every user frame of a
 * kprobe or tracepoint inside the syscall is known, and from_a and from_b
 * differ only in the frame behind raw_getppid.
 *
 * sysc N IN [OUT]: the same once a byte has been read from the FIFO IN,
 * so that a tracer may read its maps first and two processes may start
 * together; then, with OUT, a byte written to the FIFO OUT says the calls
 * are done, and it exits on a second byte from IN (alive while a tracer
 * names its frames).
 *
 * sysc vfork N: the same calls made by a child of vfork(), which runs
 * while its parent waits inside the kernel's fork, then exits; the
 * parent makes none.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/syscall.h>

#define NOINLINE __attribute__((noinline))

NOINLINE long raw_getppid(void)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid)
			 : "rcx", "r11", "memory");
	return ret;
}

NOINLINE void from_a(void)
{
	raw_getppid();
}

NOINLINE void from_b(void)
{
	raw_getppid();
}

/* the calls, in a child of vfork(): nothing returns from this frame */
static int in_vfork_child(int n)
{
	pid_t pid = vfork();
	int st;

	if (pid == 0) {
		for (int i = 0; i < n; i++)
			from_a();
		for (int i = 0; i < 2 * n; i++)
			from_b();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 1;
	return !WIFEXITED(st) || WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1, in = -1, out;
	char c = 0;

	if (argc > 2 && !strcmp(argv[1], "vfork"))
		return in_vfork_child(atoi(argv[2]));

	if (argc > 2) {
		in = open(argv[2], O_RDONLY);
		if (in < 0 || read(in, &c, 1) != 1)
			return 1;
	}

	for (int i = 0; i < n; i++)
		from_a();
	for (int i = 0; i < 2 * n; i++)
		from_b();
	if (argc > 3) {
		out = open(argv[3], O_WRONLY);
		if (out < 0 || write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
			return 1;
	}
	return 0;
}
