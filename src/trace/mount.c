#include "trace/mount.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/names.h"

enum tracefs_where tracefs_where(FILE *mounts, char *dir, size_t size)
{
	char point[4096], type[64], debugfs[4096] = "";
	char *line = NULL;
	size_t cap = 0;
	enum tracefs_where w = TRACEFS_ABSENT;

	dir[0] = '\0';
	while (w != TRACEFS_MOUNTED && getline(&line, &cap, mounts) > 0) {
		if (sscanf(line, "%*s %4095s %63s", point, type) != 2)
			continue;
		if (strcmp(type, "tracefs") == 0) {
			w = TRACEFS_MOUNTED;
			if (strlen(point) >= size || snprintf(dir, size, "%s", point) < 0)
				dir[0] = '\0';
		} else if (strcmp(type, "debugfs") == 0 && !debugfs[0]) {
			snprintf(debugfs, sizeof(debugfs), "%s", point);
		}
	}
	free(line);
	if (w == TRACEFS_ABSENT && debugfs[0]) {
		w = TRACEFS_IN_DEBUGFS;
		int n = snprintf(dir, size, "%s/tracing", strcmp(debugfs, "/") == 0 ? "" : debugfs);
		if (n < 0 || (size_t)n >= size)
			dir[0] = '\0';
	}
	return w;
}

/* Whether process pid is alive in this mount namespace: unknown counts as yes.
 * A process gone (a zombie too) has no ns/mnt: its run is over, and the next
 * run removes its instance. */
static bool alive_in_mount_ns(long pid)
{
	char path[64];
	struct stat self, other;

	snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", pid);
	if (stat("/proc/self/ns/mnt", &self) < 0 || stat(path, &other) < 0)
		return errno != ENOENT;
	return self.st_ino == other.st_ino && self.st_dev == other.st_dev;
}

bool tracefs_in_use(const char *dir, char *why, size_t size)
{
	char path[4096 + 16];
	unsigned long self_ns = trace_pidns(), owner_ns;
	long pid;
	bool used = false;
	struct dirent *e;

	why[0] = '\0';
	snprintf(path, sizeof(path), "%s/instances", dir);
	DIR *d = opendir(path);
	if (!d)
		return false;
	while (!used && (e = readdir(d)) != NULL) {
		if (trace_instance_parse(e->d_name, &owner_ns, &pid) < 0 || !trace_instance_judgeable(owner_ns, self_ns))
			continue;
		if (!alive_in_mount_ns(pid))
			continue;       /* gone, or it sees tracefs through a mount of its own */
		used = true;
		snprintf(why, size, "the instance '%s' of latscope process %ld is in it", e->d_name, pid);
	}
	closedir(d);
	return used;
}

int tracefs_mount(struct tracefs_mount *m, struct lat_error *err)
{
	m->ours = false;
	FILE *f = fopen("/proc/self/mounts", "re");
	if (!f) {
		int r = -errno;
		return err_set(err, r, "cannot read '/proc/self/mounts': %s", strerror(-r));
	}
	enum tracefs_where w = tracefs_where(f, m->dir, sizeof(m->dir));
	fclose(f);
	if (w == TRACEFS_MOUNTED)
		return 0;
	if (w == TRACEFS_IN_DEBUGFS && m->dir[0]) {
		/* Opening the directory makes the kernel mount it: its mount, not ours. */
		int fd = open(m->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		return 0;
	}
	snprintf(m->dir, sizeof(m->dir), "%s", TRACEFS_MOUNT_DIR);
	if (mount("nodev", m->dir, "tracefs", 0, NULL) < 0) {
		int r = errno;
		return err_set(err, -ENODEV, "tracefs is not mounted and cannot be mounted at '%s': %s%s", m->dir,
			       strerror(r), r == EPERM || r == EACCES ? " (mounting it needs root)"
					    : r == ENODEV   ? " (this kernel has no tracefs)"
							    : "");
	}
	m->ours = true;
	return 0;
}

int tracefs_unmount(struct tracefs_mount *m, struct lat_error *note)
{
	char why[320];

	if (!m->ours)
		return 1;
	m->ours = false;
	if (tracefs_in_use(m->dir, why, sizeof(why))) {
		return err_set(note, -EBUSY, "left tracefs mounted at '%s', which latscope had mounted: %s", m->dir,
			       why);
	}
	if (umount2(m->dir, UMOUNT_NOFOLLOW) < 0) {
		int r = errno;
		return err_set(note, -r, "left tracefs mounted at '%s', which latscope had mounted: %s%s", m->dir,
			       r == EBUSY ? "a process has a file open in it" : "cannot unmount it: ",
			       r == EBUSY ? "" : strerror(r));
	}
	return err_set(note, 0, "unmounted tracefs from '%s', which latscope had mounted", m->dir);
}
