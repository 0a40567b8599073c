/* io: fsync'd writes and uncached reads on a scratch file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "load/gen.h"

#define IO_BLOCK (64u << 10)
#define IO_REGION (UINT64_C(4) << 20)       /* each worker cycles through its own 4 MiB */

static int io_prepare(const struct load_spec *spec, struct gen_shared *ret, struct lat_error *err)
{
	char name[LOAD_PATH_MAX + 32];

	snprintf(name, sizeof(name), "%s/latscope-load-XXXXXX", spec->path);
	int fd = mkostemp(name, O_CLOEXEC);
	if (fd < 0)
		return err_set(err, -errno, "cannot create a scratch file in '%s': %s", spec->path,
				strerror(errno));
	/* Gone from the directory at once: the workers keep the inode through fd, and
	 * no way of dying, not even the supervisor's, can leave the file behind. */
	unlink(name);
	ret->fd = fd;
	return 0;
}

static int io_setup(struct gen_worker *w, struct lat_error *err)
{
	void *buf;
	int r = posix_memalign(&buf, 4096, IO_BLOCK);

	if (r)
		return err_set(err, -r, "out of memory");
	memset(buf, 0x5a, IO_BLOCK);
	w->buf = buf;
	w->buf_size = IO_BLOCK;
	return 0;
}

__attribute__((noreturn))
static void io_run(struct gen_worker *w)
{
	int fd = w->shared->fd;
	off_t base = (off_t)(w->index * IO_REGION), at = 0;

	for (;;) {
		off_t off = base + at;
		if (pwrite(fd, w->buf, w->buf_size, off) < 0 || fsync(fd) < 0)
			_exit(1);
		/* Drop the block from the page cache so the read goes to the device. */
		posix_fadvise(fd, off, (off_t)w->buf_size, POSIX_FADV_DONTNEED);
		if (pread(fd, w->buf, w->buf_size, off) < 0)
			_exit(1);
		at = (at + (off_t)w->buf_size) % (off_t)IO_REGION;
		duty_pace(&w->duty);
	}
}

const struct gen_ops gen_io = { .prepare = io_prepare, .setup = io_setup, .run = io_run };
