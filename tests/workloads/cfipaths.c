// SPDX-License-Identifier: MIT
/*
 * cfipaths: the three places where a frame-pointer walk loses a caller
 * even in a program built with frame pointers, each reached through two
 * chains that differ only in the frame it loses, a fixed number of times
 * (no argument):
 *
 *   u:cfipaths:frameless   a USDT probe inside a function without a frame
 *     frameless <- leaf_a <- main            1 time
 *     frameless <- leaf_b <- main            2 times
 *   cfipaths:entered       a uprobe on the function's first instruction
 *     entered <- entry_a <- main             3 times
 *     entered <- entry_b <- main             4 times
 *   t:syscalls:sys_enter_getppid   in glibc's syscall(), which has no frame
 *     syscall <- sys_a <- main               5 times
 *     syscall <- sys_b <- main               6 times
 *
 * and main's caller (__libc_start_call_main, [unknown] without libc's
 * debug file) after main in each.  No other getppid() call is made.
 *
 * `cfipaths cut`: instead, two probes where CFI leads no walker of %rsp
 * and %rbp on, each reached once from main:
 *
 *   u:cfipaths:rbxcfa   rbx_cfa: its CFA is %rbx+16 (it aligns %rsp, as
 *                       ld.so's _dl_runtime_resolve does)
 *   u:cfipaths:lowcfa   low_cfa: its CFI puts the CFA at %rsp itself,
 *                       below where its return address is
 *
 * `cfipaths rbp`: instead, a USDT probe where the function has saved the
 * caller's %rbp and cleared it, as code built without frame pointers may
 * use it for anything:
 *
 *   u:cfipaths:rbpsaved    rbp_saved <- saved_a <- main   1 time
 *                          rbp_saved <- saved_b <- main   2 times
 *
 * `cfipaths rooted`: frameless' paths alone, each reached from rooted,
 * which main calls once and which hands leaf_a and leaf_b a frame pointer
 * below its own frame.  A frame-pointer walk from frameless ends there, at
 * rooted, on every run: beyond main it would read whatever glibc's
 * __libc_start_call_main left in %rbp, which differs between runs.
 *
 * `cfipaths null`: the same, but sys_a and sys_b read a byte of
 * /dev/null where they called getppid: the kernel's read_null, three
 * calls below sys_read, sees the same user stacks, 5 and 6 times.
 *
 * `cfipaths fork`: the same, once in a child of fork (no exec) and then,
 * once the child has ended, once in its parent: each path with
 * in_child or in_parent between it and main.
 *
 * `cfipaths forkexec`: the same in a child of fork, once, and only after
 * its parent has run exec: the parent becomes sh, which wakes the child
 * through a pipe once it runs and ends when the child says it is done.
 * The child's mappings are the ones it forked with; its parent's are
 * another program's.
 *
 * `cfipaths race N`: the same N times over in a child of fork and, at the
 * same time, N times in its parent (in_child or in_parent, then race,
 * between each path and main), so that the two hit each probe at once,
 * preempting each other on one CPU.  It ends when both have, non-zero if
 * N is not a count from 1 to 10^6.
 *
 * frameless() is written in assembler, so that no compiler option or
 * version decides whether it gets a frame: it never touches %rbp, and it
 * pushes %rbx, so at its probe the return address is at 8(%rsp), not at
 * (%rsp) where it is at a function's first instruction.  A frame-pointer
 * walk there goes from frameless straight to main; guessing the caller at
 * (%rsp) gets the saved %rbx; only its CFI (.cfi_* directives, which give
 * it the .eh_frame entry a compiler would) says where the return address
 * is.  entered() at its first instruction has not pushed %rbp yet: %rbp
 * is still its caller's, the return address at (%rsp).  glibc's syscall()
 * keeps the caller's %rbp too; a tracepoint's user registers are those at
 * its syscall instruction.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

__asm__(".text\n.globl frameless\n.type frameless, @function\nframeless:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rbx, 0\n"
	STAP_PROBE_ASM(cfipaths, frameless, )
	"	pop %rbx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbx\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size frameless, .-frameless\n");
void frameless(void);

__asm__(".text\n.globl rbx_cfa\n.type rbx_cfa, @function\nrbx_cfa:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rbx, 0\n"
	"	mov %rsp, %rbx\n"
	"	.cfi_def_cfa_register %rbx\n"
	"	and $-64, %rsp\n"
	STAP_PROBE_ASM(cfipaths, rbxcfa, )
	"	mov %rbx, %rsp\n"
	"	.cfi_def_cfa_register %rsp\n"
	"	pop %rbx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbx\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size rbx_cfa, .-rbx_cfa\n");
void rbx_cfa(void);

__asm__(".text\n.globl low_cfa\n.type low_cfa, @function\nlow_cfa:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 0\n"
	STAP_PROBE_ASM(cfipaths, lowcfa, )
	"	pop %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size low_cfa, .-low_cfa\n");
void low_cfa(void);

__asm__(".text\n.globl rbp_saved\n.type rbp_saved, @function\nrbp_saved:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rbp, 0\n"
	"	xor %ebp, %ebp\n"
	STAP_PROBE_ASM(cfipaths, rbpsaved, )
	"	pop %rbp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size rbp_saved, .-rbp_saved\n");
void rbp_saved(void);

__asm__(".text\n.globl rooted\n.type rooted, @function\nrooted:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rbp, 0\n"
	"	lea -4096(%rsp), %rbp\n"
	"	call leaf_a\n"
	"	call leaf_b\n"
	"	call leaf_b\n"
	"	pop %rbp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size rooted, .-rooted\n");
void rooted(void);

volatile int sink;

NOINLINE void entered(void)
{
	sink++;
}

NOINLINE void leaf_a(void)
{
	frameless();
}

NOINLINE void leaf_b(void)
{
	frameless();
}

NOINLINE void saved_a(void)
{
	rbp_saved();
}

NOINLINE void saved_b(void)
{
	rbp_saved();
}

NOINLINE void entry_a(void)
{
	entered();
}

NOINLINE void entry_b(void)
{
	entered();
}

/*
 * sys_a's and sys_b's system call: getppid, or a read of a byte from
 * /dev/null (`cfipaths null`), whose kernel function read_null lies
 * three calls below the system call's own
 */
static long sys_nr = SYS_getppid;
static int null_fd = -1;
static char null_byte;

NOINLINE void sys_a(void)
{
	syscall(sys_nr, null_fd, &null_byte, 1);
}

NOINLINE void sys_b(void)
{
	syscall(sys_nr, null_fd, &null_byte, 1);
}

#define ALL_PATHS() do {			\
	leaf_a();				\
	for (int i = 0; i < 2; i++)		\
		leaf_b();			\
	for (int i = 0; i < 3; i++)		\
		entry_a();			\
	for (int i = 0; i < 4; i++)		\
		entry_b();			\
	for (int i = 0; i < 5; i++)		\
		sys_a();			\
	for (int i = 0; i < 6; i++)		\
		sys_b();			\
} while (0)

NOINLINE void in_child(void)
{
	ALL_PATHS();
}

NOINLINE void in_parent(void)
{
	ALL_PATHS();
}

NOINLINE int race(const char *count)
{
	char *end;
	long n = strtol(count, &end, 10);
	pid_t pid;
	int status;

	if (*end || end == count || n < 1 || n > 1000000)
		return 2;
	pid = fork();
	if (pid < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		if (pid)
			in_parent();
		else
			in_child();
	}
	if (!pid)
		_exit(0);
	return waitpid(pid, &status, 0) != pid || status;
}

static int forkexec(void)
{
	int go[2], done[2];
	pid_t pid;
	char c;

	if (pipe(go) || pipe(done))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		close(go[1]);
		close(done[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		in_child();
		_exit(write(done[1], "\n", 1) != 1);
	}
	close(go[0]);
	close(done[1]);
	if (dup2(go[1], 3) != 3 || dup2(done[0], 4) != 4)
		return 1;
	execl("/bin/sh", "sh", "-c", "echo >&3; read x <&4", (char *)NULL);
	return 1;
}

int main(int argc, char **argv)
{
	pid_t pid;
	int status;

	if (argc > 1 && !strcmp(argv[1], "cut")) {
		rbx_cfa();
		low_cfa();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "rbp")) {
		saved_a();
		for (int i = 0; i < 2; i++)
			saved_b();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "rooted")) {
		rooted();
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "race"))
		return race(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "forkexec"))
		return forkexec();
	if (argc == 2 && !strcmp(argv[1], "null")) {
		sys_nr = SYS_read;
		null_fd = open("/dev/null", O_RDONLY);
		if (null_fd < 0)
			return 1;
	}
	if (argc < 2 || strcmp(argv[1], "fork")) {
		ALL_PATHS();
		return 0;
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		in_child();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || status)
		return 1;
	in_parent();
	return 0;
}
