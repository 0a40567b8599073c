#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "result/json.h"

static int fsync_dir_of(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return -errno;
	int r = fsync(fd) < 0 ? -errno : 0;
	close(fd);
	return r;
}

int json_sink_open(const char *path, struct json_sink *ret)
{
	struct stat st;
	struct json_sink s = { .fd = -1 };
	char *dcopy = NULL, *bcopy = NULL;
	int r;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return -EISDIR;
	dcopy = strdup(path);
	bcopy = strdup(path);
	s.path = strdup(path);
	if (!dcopy || !bcopy || !s.path) {
		r = -ENOMEM;
		goto fail;
	}
	if (asprintf(&s.tmp, "%s/.%s.tmp-%ld", dirname(dcopy), basename(bcopy), (long)getpid()) < 0) {
		s.tmp = NULL;
		r = -ENOMEM;
		goto fail;
	}
	s.fd = open(s.tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (s.fd < 0) {
		r = -errno;
		goto fail;
	}
	free(dcopy);
	free(bcopy);
	*ret = s;
	return 0;
fail:
	free(dcopy);
	free(bcopy);
	free(s.path);
	free(s.tmp);
	return r;
}

int json_sink_commit(struct json_sink *sink, const json_t *doc)
{
	if (sink->fd < 0)
		return -EBADF;
	if (json_dumpfd(doc, sink->fd, JSON_INDENT(1) | JSON_REAL_PRECISION(12)) < 0)
		return -EIO;
	ssize_t n = write(sink->fd, "\n", 1);
	if (n < 0 || fsync(sink->fd) < 0)
		return -errno;
	if (n != 1)
		return -EIO;
	if (close(sink->fd) < 0) {
		sink->fd = -1;
		return -errno;
	}
	sink->fd = -1;
	if (rename(sink->tmp, sink->path) < 0)
		return -errno;
	free(sink->tmp);
	sink->tmp = NULL;
	return fsync_dir_of(sink->path);
}

void json_sink_close(struct json_sink *sink)
{
	/* An open sink always has its temporary file; a zeroed one has fd 0, which is not ours. */
	if (sink->tmp && sink->fd >= 0)
		close(sink->fd);
	sink->fd = -1;
	if (sink->tmp)
		unlink(sink->tmp);
	free(sink->tmp);
	free(sink->path);
	sink->tmp = NULL;
	sink->path = NULL;
}
