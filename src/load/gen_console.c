/* console: lines of text to a terminal, or to a new pty the supervisor drains. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "load/console_dev.h"
#include "load/gen.h"

static int open_pty(struct gen_shared *ret, struct lat_error *err)
{
	int fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return err_set(err, -errno, "cannot open a new pty: %s", strerror(errno));
	if (grantpt(fd) < 0 || unlockpt(fd) < 0)
		r = -errno;
	else
		r = -ptsname_r(fd, ret->tty, sizeof(ret->tty));    /* returns the error itself */
	if (r < 0) {
		close(fd);
		return err_set(err, r, "cannot set up a new pty: %s", strerror(-r));
	}
	int slave = open(ret->tty, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0) {
		r = -errno;
		close(fd);
		return err_set(err, r, "cannot open '%s': %s", ret->tty, strerror(-r));
	}
	/* Never blocks the supervisor: it reads whatever is there and moves on. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	ret->master_fd = fd;
	ret->slave_fd = slave;
	return 0;
}

static int console_prepare(const struct load_spec *spec, struct gen_shared *ret, struct lat_error *err)
{
	if (!*spec->path)
		return open_pty(ret, err);
	/* Check once here, so that a bad device fails with one clear message. */
	int fd = console_dev_open(spec->path, err);
	if (fd < 0)
		return fd;
	close(fd);
	strcpy(ret->tty, spec->path);
	return 0;
}

static int console_setup(struct gen_worker *w, struct lat_error *err)
{
	/* The only way a console load opens what it writes into: a terminal or /dev/kmsg. */
	int fd = console_dev_open(w->shared->tty, err);
	if (fd < 0)
		return fd;
	w->fd = fd;
	return 0;
}

__attribute__((noreturn))
static void console_run(struct gen_worker *w)
{
	char line[128];

	for (unsigned long n = 0;; n++) {
		int len = snprintf(line, sizeof(line),
				   "latscope console load: cpu %u line %lu the quick brown fox jumps over the lazy dog\n",
				   w->cpu, n);
		/* Blocking on a slow UART is the point: that is the serial-console effect. */
		if (write(w->fd, line, (size_t)len) < 0 && errno != EINTR && errno != EAGAIN)
			_exit(1);
		duty_pace(&w->duty);
	}
}

const struct gen_ops gen_console = { .prepare = console_prepare, .setup = console_setup, .run = console_run };
