#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/error.h"
#include "load/console_dev.h"

/* /dev/kmsg is minor 11 of the memory devices (the kernel's drivers/char/mem.c). */
#define KMSG_MAJOR 1u
#define KMSG_MINOR 11u

static bool is_kmsg(dev_t rdev)
{
	return major(rdev) == KMSG_MAJOR && minor(rdev) == KMSG_MINOR;
}

/*
 * 1 when rdev belongs to a tty driver, 0 when not, or -errno.  By the kernel's
 * own list (lines "NAME NODE MAJOR MINOR[-MINOR] TYPE"), not by opening it:
 * opening a device runs its driver, and some act on open alone (a watchdog starts).
 */
static int is_tty_number(dev_t rdev, struct lat_error *err)
{
	char line[256];
	int found = 0;

	FILE *f = fopen("/proc/tty/drivers", "re");
	if (!f)
		return err_set(err, -errno, "cannot read '/proc/tty/drivers': %s", strerror(errno));
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned maj, lo, hi;
		int n = sscanf(line, "%*s %*s %u %u-%u", &maj, &lo, &hi);
		if (n < 2)
			continue;
		if (n == 2)
			hi = lo;
		found = major(rdev) == maj && minor(rdev) >= lo && minor(rdev) <= hi;
	}
	fclose(f);
	return found;
}

static const char *kind_of(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFBLK:
		return "a block device";
	case S_IFCHR:
		return "a character device";
	case S_IFIFO:
		return "a fifo";
	case S_IFSOCK:
		return "a socket";
	}
	return "no device";
}

/* What the O_PATH descriptor fd leads to (symlinks followed) must take lines: ret gets its stat. */
static int check_target(int fd, const char *path, struct stat *ret, struct lat_error *err)
{
	if (fstat(fd, ret) < 0)
		return err_set(err, -errno, "cannot stat '%s': %s", path, strerror(errno));
	if (S_ISCHR(ret->st_mode)) {
		if (is_kmsg(ret->st_rdev))
			return 0;
		int r = is_tty_number(ret->st_rdev, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	return err_set(err, -ENOTTY, "dev '%s' is %s, not a terminal or /dev/kmsg", path,
		       kind_of(ret->st_mode));
}

/* O_PATH resolves the path (symlinks too) to an inode without running any driver. */
static int open_path(const char *path, struct lat_error *err)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	return fd < 0 ? err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno)) : fd;
}

int console_dev_check(const char *path, struct lat_error *err)
{
	struct stat st;
	int fd = open_path(path, err);

	if (fd < 0)
		return fd;
	int r = check_target(fd, path, &st, err);
	close(fd);
	return r;
}

int console_dev_open(const char *path, struct lat_error *err)
{
	struct stat checked, got;
	char self[64];
	int fd = open_path(path, err);

	if (fd < 0)
		return fd;
	int r = check_target(fd, path, &checked, err);
	if (r < 0) {
		close(fd);
		return r;
	}
	/*
	 * Reopen the inode just checked through its descriptor, not the path again,
	 * so that a path changed meanwhile (a symlink now leading to a disk) cannot
	 * slip in.  No O_CREAT or O_TRUNC; O_NONBLOCK so that a serial line without
	 * carrier cannot hold the open.
	 */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	int w = open(self, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	r = w < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return err_set(err, r, "cannot open '%s': %s", path, strerror(-r));
	/* And once more on the descriptor that writes, before it writes anything. */
	if (fstat(w, &got) < 0 || !S_ISCHR(got.st_mode) || got.st_rdev != checked.st_rdev ||
	    !(is_kmsg(got.st_rdev) || isatty(w))) {
		close(w);
		return err_set(err, -ENOTTY, "dev '%s' is not a terminal or /dev/kmsg", path);
	}
	/* Blocking writes: a slow UART holding the writer is the serial-console effect. */
	fcntl(w, F_SETFL, fcntl(w, F_GETFL) & ~O_NONBLOCK);
	return w;
}
