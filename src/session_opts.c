// SPDX-License-Identifier: MIT
/* The options both tools share: parsed, checked, defaulted. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "session_int.h"
#include "untrusted.h"
#include "version.h"

#define DEFAULT_STORAGE 16384
/* 1M rows: a python3.11 process with its libraries needs ~110,000 */
#define DEFAULT_UNWIND_MB 8

int session_die(const char *tool, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tool);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int session_parse_long(const char *s, long min, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	if (errno || end == s || *end || *v < min || *v > max)
		return -EINVAL;
	return 0;
}

/* The releases forced legacy mode emulates: before the stack helpers. */
static bool legacy_in_range(__u32 v)
{
	return v >= SW_KVERSION(4, 1, 0) && v < SW_KVERSION(4, 6, 0);
}

/*
 * Whether cpu is in the kernel's list of online CPUs ("0-3,5"), copied
 * into list: 1 or 0, or -errno when the list cannot be read.
 */
static int cpu_online(int cpu, char *list, size_t len)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	const char *p = list;
	int e = 0;

	if (!f)
		return -errno;
	if (!fgets(list, len, f))
		e = -EIO;
	fclose(f);
	if (e)
		return e;
	list[strcspn(list, "\n")] = 0;
	while (*p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			return -EINVAL;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		if (cpu >= lo && cpu <= hi)
			return 1;
		p = end + (*end == ',');
	}
	return 0;
}

/* Options are what comes before "--"; COMMAND, what follows it. */
void session_opts_init(struct session_opts *o, const char *tool, char **argv,
		       int *argc)
{
	memset(o, 0, sizeof(*o));
	o->tool = tool;
	o->cpu = -1;
	o->storage = DEFAULT_STORAGE;
	o->unwind_mb = DEFAULT_UNWIND_MB;
	o->file_mb = UNTRUSTED_BUDGET_DEFAULT >> 20;
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--")) {
			o->command = &argv[i + 1];
			*argc = i;
			break;
		}
	}
}

int session_option(struct session_opts *o, int c, const char *arg)
{
	const char *t = o->tool;
	long v;

	switch (c) {
	case 'p':
		if (session_parse_long(arg, 1, INT_MAX, &v))
			return session_die(t, "invalid PID '%s'; give a process id", arg) + 1;
		o->pid = v;
		return 0;
	case 'c':
		if (session_parse_long(arg, 0, INT_MAX, &v))
			return session_die(t, "invalid CPU '%s'; give a CPU number", arg) + 1;
		o->cpu = v;
		return 0;
	case 'D':
		if (session_parse_long(arg, 1, INT_MAX, &v))
			return session_die(t, "invalid duration '%s'; give a whole "
					   "number of seconds", arg) + 1;
		o->duration = v;
		return 0;
	case 'r': o->regexp = true; return 0;
	case 'K': o->kernel_only = true; return 0;
	case 'U': o->user_only = true; return 0;
	case OPT_DEBUG: o->debug = true; return 0;
	case OPT_NO_DEMANGLE: o->no_demangle = true; return 0;
	case OPT_NO_DEBUGINFOD: o->no_debuginfod = true; return 0;
	case OPT_FEATURES: o->kernel_features = true; return 0;
	case OPT_VERSION:
		/* as -h does: nothing else on the line matters */
		printf("%s (stackwalk) %s\n", t, STACKWALK_VERSION);
		exit(0);
	case OPT_WALKER:
		if (walkers_parse(arg, &o->walker))
			return session_die(t, "unknown walker '%s'; use auto, "
					   "cfi, getstack, stackmap or fp", arg) + 1;
		return 0;
	case OPT_STORAGE:
		if (session_parse_long(arg, 1, 1 << 24, &v))
			return session_die(t, "invalid stack storage size '%s'; "
					   "give a number of stacks", arg) + 1;
		o->storage = v;
		return 0;
	case OPT_UNWIND_MEMORY:
		if (session_parse_long(arg, 1, 1024, &v))
			return session_die(t, "invalid --unwind-memory '%s'; give "
					   "MiB for unwind tables, 1 to 1024", arg) + 1;
		o->unwind_mb = v;
		return 0;
	case OPT_FILE_MEMORY:
		if (session_parse_long(arg, 1, 4096, &v))
			return session_die(t, "invalid --file-memory '%s'; give "
					   "MiB for other users' files, 1 to "
					   "4096", arg) + 1;
		o->file_mb = v;
		return 0;
	case OPT_LEGACY:
		if (kversion_parse(arg ? arg : "4.4", &o->legacy) ||
		    !legacy_in_range(o->legacy))
			return session_die(t, "--legacy=%s: give a release from 4.1 "
					   "to 4.5, e.g. --legacy=4.4", arg) + 1;
		return 0;
	default:
		return 1;
	}
}

int session_unknown(const struct session_opts *o, int c, char **argv)
{
	if (c == ':')
		return session_die(o->tool, "option '%s' needs an argument; see "
				   "%s --help", argv[optind - 1], o->tool) + 1;
	if (optopt)
		return session_die(o->tool, "unknown option '-%c'; see %s --help",
				   optopt, o->tool) + 1;
	return session_die(o->tool, "unknown option '%s'; see %s --help",
			   argv[optind - 1], o->tool) + 1;
}

/* A 0-or-1 variable of the environment, for the tests: true if bad, said. */
static bool env_flag(const char *tool, const char *name, const char *what,
		     bool *on)
{
	const char *env = getenv(name);

	if (env && *env && strcmp(env, "0") && strcmp(env, "1")) {
		session_die(tool, "%s=%s: give 1 to %s, or 0", name, env, what);
		return true;
	}
	*on = env && !strcmp(env, "1");
	return false;
}

int session_args_done(struct session_opts *o, int ind, int argc, char **argv)
{
	const char *env = getenv("STACKWALK_LEGACY"), *t = o->tool;
	char cpus[256];

	if (env && *env && !o->legacy &&
	    (kversion_parse(env, &o->legacy) || !legacy_in_range(o->legacy)))
		return session_die(t, "STACKWALK_LEGACY=%s: give a release from "
				   "4.1 to 4.5, e.g. STACKWALK_LEGACY=4.4", env) + 1;
	if (env_flag(t, "STACKWALK_SMALL_KEYS", "count with hash keys of at "
		     "most 512 bytes, as on 4.18-5.10", &o->small_keys) ||
	    env_flag(t, "STACKWALK_NO_FIND_VMA", "walk as a kernel without "
		     "bpf_find_vma does", &o->no_find_vma) ||
	    env_flag(t, "STACKWALK_NO_LINKS", "attach every probe alone, as "
		     "before multi-probe links", &o->no_links) ||
	    env_flag(t, "STACKWALK_NO_VMA_LISTS", "hold COMMAND while its "
		     "loader runs, as where BPF cannot list a process's VMAs",
		     &o->no_vma_lists))
		return 2;	/* a usage error, said */
	env = getenv("STACKWALK_WALK_STATE");
	if (env && *env && strcmp(env, "cpu") && strcmp(env, "task"))
		return session_die(t, "STACKWALK_WALK_STATE=%s: give cpu or task "
				   "to keep each walk's state per CPU or per "
				   "thread, whatever the kernel", env) + 1;
	o->walk_state = !env || !*env ? 0 : !strcmp(env, "cpu") ? 1 : 2;
	/* for the tests: a buffer small enough to fill at will */
	env = getenv("STACKWALK_SIDEBAND_PAGES");
	if (env && *env) {
		long v;

		if (session_parse_long(env, 1, 1 << 16, &v) || (v & (v - 1)))
			return session_die(t, "STACKWALK_SIDEBAND_PAGES=%s: give a "
					   "power of two pages, at most 65536", env) + 1;
		o->sideband_pages = v;
	}
	if (o->kernel_features)
		return 0;
	if (ind >= argc)
		return session_die(t, "no pattern given; e.g. %s "
				   "t:sched:sched_switch (see %s --help)", t, t) + 1;
	if (ind + 1 < argc)
		return session_die(t, "unexpected argument '%s'; give one "
				   "pattern, and a command after --", argv[ind + 1]) + 1;
	o->pattern = argv[ind];
	if (o->command && !o->command[0])
		return session_die(t, "no command after --; e.g. %s PATTERN -- ls", t) + 1;
	if (o->kernel_only && o->user_only)
		return session_die(t, "-K and -U are mutually exclusive; %s",
				   o->own_side ? "-d shows both" :
				   "both stacks are the default") + 1;
	if (o->command && o->pid)
		return session_die(t, "-p and -- COMMAND both choose what to "
				   "trace; give one") + 1;
	if (o->legacy && o->walker != SW_WALKER_AUTO && o->walker != SW_WALKER_FP)
		return session_die(t, "--walker %s: forced legacy mode runs the fp "
				   "walker only; drop --walker",
				   walkers_name(o->walker)) + 1;
	if (o->legacy)
		o->walker = SW_WALKER_FP;
	/* a CPU that is not there would count nothing, silently */
	if (o->cpu >= 0 && !cpu_online(o->cpu, cpus, sizeof(cpus)))
		return session_die(t, "-c %d: this machine's online CPUs are %s; "
				   "give one of them", o->cpu, cpus) + 1;
	return 0;
}

