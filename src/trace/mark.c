#include "trace/mark.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "trace/mount.h"

static int write_file(const char *dir, const char *name, const char *text, struct lat_error *err)
{
	char path[4096];
	size_t len = strlen(text);
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return err_set(err, -ENAMETOOLONG, "tracefs path too long: '%s'", dir);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	ssize_t n = write(fd, text, len);
	int e = n < 0 ? errno : EIO;
	close(fd);
	if (n != (ssize_t)len)
		return err_set(err, -e, "cannot write '%s': %s", path, strerror(e));
	return 0;
}

int trace_mark_and_stop(FILE *mounts, const char *text, struct lat_error *err)
{
	char dir[4096];
	int r;

	/* debugfs' "tracing" mounts itself when opened, as the kernel's own trace's way in */
	if (tracefs_where(mounts, dir, sizeof(dir)) == TRACEFS_ABSENT || !dir[0])
		return err_set(err, -ENODEV, "no tracefs is mounted: nothing traced to mark");
	if ((r = write_file(dir, "trace_marker", text, err)) < 0)
		return r;
	return write_file(dir, "tracing_on", "0", err);
}
