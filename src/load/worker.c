#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/array.h"
#include "load/child.h"
#include "load/msg.h"
#include "load/worker.h"
#include "sys/cpus.h"

static void report_error(int ready_fd, unsigned id, const struct load_spec *spec, int r, const struct lat_error *why)
{
	struct load_msg m = { .type = MSG_ERROR, .error = -r, .worker = id, .why = *why };

	err_prefix(&m.why, r, "%s: ", load_kind_name(spec->kind));
	msg_send(ready_fd, &m);
}

__attribute__((noreturn))
static void worker_main(const struct load_spec *spec, const struct gen_shared *shared, unsigned cpu,
			unsigned index, unsigned id, int ready_fd)
{
	const struct gen_ops *ops = gen_ops_for(spec->kind);
	struct gen_worker w = { .spec = spec, .shared = shared, .cpu = cpu, .index = index, .fd = -1 };
	int keep[] = { ready_fd, shared->fd };
	struct cpuset one;
	struct lat_error why = { "" };  /* whole: it goes down the pipe */
	int r;

	child_close_fds(keep, ARRAY_SIZE(keep));
	cpuset_clear(&one);
	cpuset_add(&one, cpu);
	r = cpus_pin(&one);
	if (r < 0) {
		err_set(&why, 0, "cannot pin a worker to CPU %u: %s", cpu, strerror(-r));
		report_error(ready_fd, id, spec, r, &why);
		_exit(1);
	}
	r = ops->setup(&w, &why);
	if (r < 0) {
		report_error(ready_fd, id, spec, r, &why);
		_exit(1);
	}
	struct load_msg ready = { .type = MSG_READY, .worker = id };
	if (msg_send(ready_fd, &ready) < 0)
		_exit(1);
	close(ready_fd);
	duty_init(&w.duty, spec->intensity_pct);
	ops->run(&w);
	_exit(1);
}

pid_t worker_spawn(const struct load_spec *spec, const struct gen_shared *shared, unsigned cpu, unsigned index,
		   unsigned id, int ready_fd)
{
	/* A worker outliving its supervisor would be load nobody stops. */
	pid_t pid = child_fork(SIGKILL);

	if (pid == 0)
		worker_main(spec, shared, cpu, index, id, ready_fd);
	return pid;
}
