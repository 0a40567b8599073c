#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/atomicfile.h"

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

int atomic_file_open(const char *path, struct atomic_file *ret)
{
	struct stat st;
	struct atomic_file s = { .fd = -1 };
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

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int atomic_file_write(struct atomic_file *f, const void *data, size_t len)
{
	return f->fd < 0 ? -EBADF : write_all(f->fd, data, len);
}

int atomic_file_commit(struct atomic_file *f)
{
	if (f->fd < 0)
		return -EBADF;
	if (fsync(f->fd) < 0)
		return -errno;
	if (close(f->fd) < 0) {
		f->fd = -1;
		return -errno;
	}
	f->fd = -1;
	if (rename(f->tmp, f->path) < 0)
		return -errno;
	free(f->tmp);
	f->tmp = NULL;
	return fsync_dir_of(f->path);
}

void atomic_file_close(struct atomic_file *sink)
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
