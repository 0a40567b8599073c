/* syscall: cheap system calls, as many as fit; entry and exit are the load. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "load/gen.h"

static int syscall_setup(struct gen_worker *w, struct lat_error *err)
{
	w->fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (w->fd < 0)
		return err_set(err, -errno, "cannot open '/dev/zero': %s", strerror(errno));
	return 0;
}

__attribute__((noreturn))
static void syscall_run(struct gen_worker *w)
{
	struct timespec ts;
	char byte;

	for (;;) {
		for (unsigned i = 0; i < 64; i++) {
			syscall(SYS_getppid);
			/* Through syscall(), not the vDSO, so that it enters the kernel. */
			syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
			if (read(w->fd, &byte, 1) < 0)
				continue;
		}
		duty_pace(&w->duty);
	}
}

const struct gen_ops gen_syscall = { .setup = syscall_setup, .run = syscall_run };
