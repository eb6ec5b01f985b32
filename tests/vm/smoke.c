/* VM smoke check: run as /stackwalk/run-tests inside a test VM (built
 * `gcc -static` by smoke.sh). Prints one "FACT key=value" line per fact and
 * exits non-zero if something the tools cannot do without is missing. */
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

static int failed;

static int exists(const char *path) { return access(path, F_OK) == 0; }

static void need(const char *key, const char *path)
{
	int ok = exists(path);
	printf("FACT %s=%s\n", key, ok ? "yes" : "no");
	if (!ok)
		failed = 1;
}

/* kern_version must equal LINUX_VERSION_CODE for kprobe programs before
 * 5.0; derive it from `uname -r` as old loaders do (sublevel capped at 255,
 * like the kernel's own macro since 4.9.256). */
static unsigned kernel_version_code(const char *release)
{
	unsigned a = 0, b = 0, c = 0;
	sscanf(release, "%u.%u.%u", &a, &b, &c);
	return (a << 16) + (b << 8) + (c > 255 ? 255 : c);
}

static void bpf_load(unsigned kver)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insns = (unsigned long)prog;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	attr.kern_version = kver;
	attr.log_buf = (unsigned long)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	int fd = syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0) {
		printf("FACT bpf_prog_load_kprobe=FAIL (%m) log: %s\n", log);
		failed = 1;
	} else {
		printf("FACT bpf_prog_load_kprobe=ok (fd %d, kern_version 0x%x)\n", fd, kver);
		close(fd);
	}
}

static void print_file(const char *key, const char *path)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		snprintf(buf, sizeof(buf), "unreadable\n");
	if (f)
		fclose(f);
	printf("FACT %s=%s", key, buf);
}

/* Which unwinder is built in: orc_find is ORC's, update_stack_state the
 * frame-pointer unwinder's; unwind_next_frame is in both. GCC may rename a
 * static function (orc_find.part.0), so a ".suffix" still counts. */
static void kallsyms(const char *const *names, int n)
{
	char found[8][128] = { { 0 } };
	char line[512], sym[128];
	FILE *f = fopen("/proc/kallsyms", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %*s %127s", sym) != 1)
			continue;
		for (int i = 0; i < n; i++) {
			size_t len = strlen(names[i]);
			if (!strncmp(sym, names[i], len) &&
			    (sym[len] == 0 || sym[len] == '.') &&
			    (!found[i][0] || strlen(sym) < strlen(found[i])))
				strcpy(found[i], sym);
		}
	}
	if (f)
		fclose(f);
	for (int i = 0; i < n; i++)
		printf("FACT kallsyms_%s=%s\n", names[i], found[i][0] ? found[i] : "no");
}

int main(void)
{
	struct utsname u;
	uname(&u);
	printf("FACT uname_r=%s\n", u.release);
	printf("FACT cpus_online=%ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	bpf_load(kernel_version_code(u.release));
	need("kprobe_events", "/sys/kernel/tracing/kprobe_events");
	need("uprobe_events", "/sys/kernel/tracing/uprobe_events");
	need("tp_sys_enter_getppid", "/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id");
	printf("FACT proc_config_gz=%s\n", exists("/proc/config.gz") ? "yes" : "no");
	printf("FACT kprobe_pmu=%s\n", exists("/sys/bus/event_source/devices/kprobe") ? "yes" : "no");
	print_file("bpf_jit_enable", "/proc/sys/net/core/bpf_jit_enable");
	static const char *const syms[] = { "orc_find", "update_stack_state", "unwind_next_frame" };
	kallsyms(syms, 3);
	printf("FACT smoke=%s\n", failed ? "FAIL" : "ok");
	return failed;
}
