// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tracefs.h"

#define TRACEFS		"/sys/kernel/tracing"
#define DEBUGFS		"/sys/kernel/debug"
#define DEBUG_TRACING	DEBUGFS "/tracing"

bool tracefs_has(const char *tracefs, const char *file)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", tracefs, file);
	return access(p, F_OK) == 0;
}

static bool mounted(const char *dir)
{
	return tracefs_has(dir, "events");
}

/*
 * 4.1+ has tracefs at /sys/kernel/tracing, automounted under debugfs too;
 * before that only debugfs.  An old kernel is driven the old way (the
 * legacy flag): through debugfs.
 */
int tracefs_find(char *path, size_t len, bool legacy)
{
	const char *first = legacy ? DEBUG_TRACING : TRACEFS;
	const char *second = legacy ? TRACEFS : DEBUG_TRACING;
	const char *found = mounted(first) ? first :
			    mounted(second) ? second : NULL;

	if (!found)
		return -ENOENT;
	snprintf(path, len, "%s", found);
	return 0;
}

int tracefs_mount(char *path, size_t len, bool legacy)
{
	const char *found = NULL;

	if (!tracefs_find(path, len, legacy) &&
	    (!legacy || !strcmp(path, DEBUG_TRACING)))
		return 0;
	if (legacy && !mount("debugfs", DEBUGFS, "debugfs", 0, NULL) &&
	    mounted(DEBUG_TRACING))
		found = DEBUG_TRACING;
	else if (!tracefs_find(path, len, legacy))
		return 0;
	else if (!mount("tracefs", TRACEFS, "tracefs", 0, NULL) && mounted(TRACEFS))
		found = TRACEFS;
	else if (!mount("debugfs", DEBUGFS, "debugfs", 0, NULL) &&
		 mounted(DEBUG_TRACING))
		found = DEBUG_TRACING;
	if (!found)
		return -ENOENT;
	snprintf(path, len, "%s", found);
	return 0;
}

static int append(const char *tracefs, const char *file, const char *line)
{
	char p[512];
	ssize_t n;
	int fd, err = 0;

	snprintf(p, sizeof(p), "%s/%s", tracefs, file);
	fd = open(p, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, line, strlen(line));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

static const char *events_file(enum sw_probe_event kind)
{
	return kind == SW_EV_UPROBE ? "uprobe_events" : "kprobe_events";
}

int tracefs_add_probe(const char *tracefs, enum sw_probe_event kind,
			 const char *target, unsigned long offset,
			 unsigned long ref_ctr_off, unsigned seq,
			 char *name, size_t name_len)
{
	char line[4352];

	snprintf(name, name_len, "sw_%d_%u", (int)getpid(), seq);
	switch (kind) {
	case SW_EV_KPROBE:
	case SW_EV_KRETPROBE:
		snprintf(line, sizeof(line), "%c:%s/%s %s\n",
			 kind == SW_EV_KPROBE ? 'p' : 'r', SW_EVENT_GROUP,
			 name, target);
		break;
	case SW_EV_UPROBE:
		if (ref_ctr_off)
			snprintf(line, sizeof(line), "p:%s/%s %s:0x%lx(0x%lx)\n",
				 SW_EVENT_GROUP, name, target, offset,
				 ref_ctr_off);
		else
			snprintf(line, sizeof(line), "p:%s/%s %s:0x%lx\n",
				 SW_EVENT_GROUP, name, target, offset);
		break;
	}
	return append(tracefs, events_file(kind), line);
}

int tracefs_remove_probe(const char *tracefs, enum sw_probe_event kind,
			    const char *name)
{
	char line[256];

	snprintf(line, sizeof(line), "-:%s/%s\n", SW_EVENT_GROUP, name);
	return append(tracefs, events_file(kind), line);
}

int tracefs_event_id(const char *tracefs, const char *group,
			const char *name)
{
	char p[512], buf[32];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/events/%s/%s/id", tracefs, group, name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	buf[n] = 0;
	return atoi(buf);
}

static bool owner_alive(int pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* Lines look like "p:stackwalk/sw_123_4 /bin/true:0x1040". */
static int remove_stale_in(const char *tracefs, const char *file,
			   enum sw_probe_event kind)
{
	char p[512], line[4352], name[128];
	int removed = 0, pid;
	FILE *f;
	unsigned seq;

	snprintf(p, sizeof(p), "%s/%s", tracefs, file);
	f = fopen(p, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *ev = strchr(line, ':');

		if (!ev || strncmp(ev + 1, SW_EVENT_GROUP "/", strlen(SW_EVENT_GROUP) + 1))
			continue;
		ev += 1 + strlen(SW_EVENT_GROUP) + 1;
		if (sscanf(ev, "sw_%d_%u", &pid, &seq) != 2 || owner_alive(pid))
			continue;
		snprintf(name, sizeof(name), "sw_%d_%u", pid, seq);
		if (!tracefs_remove_probe(tracefs, kind, name))
			removed++;
	}
	fclose(f);
	return removed;
}

int tracefs_remove_stale(const char *tracefs)
{
	return remove_stale_in(tracefs, "kprobe_events", SW_EV_KPROBE) +
	       remove_stale_in(tracefs, "uprobe_events", SW_EV_UPROBE);
}
