/* The generators behind load_spec kinds, as run by the supervisor and its workers. */
#ifndef LATSCOPE_LOAD_GEN_H
#define LATSCOPE_LOAD_GEN_H

#include <stddef.h>

#include "core/error.h"
#include "load/duty.h"
#include "load/load.h"

/* What the supervisor prepares once per spec, before it forks the workers. */
struct gen_shared {
	int fd;                         /* io: the scratch file, already unlinked; else -1 */
	int master_fd;                  /* console on a new pty: the side the supervisor drains; else -1 */
	int slave_fd;                   /* held by the supervisor so the master never reports a hangup */
	char tty[LOAD_PATH_MAX];        /* console: the device the workers write to */
};

/* One worker process, pinned to one CPU. */
struct gen_worker {
	const struct load_spec *spec;
	const struct gen_shared *shared;
	unsigned cpu;
	unsigned index;                 /* among the workers of its spec */
	struct duty duty;
	int fd;                         /* opened by setup, -1 when unused */
	void *buf;                      /* allocated by setup */
	size_t buf_size;
};

struct gen_ops {
	/* In the supervisor; NULL when there is nothing to share.  err names no generator. */
	int (*prepare)(const struct load_spec *spec, struct gen_shared *ret, struct lat_error *err);
	/* In the worker, before it reports ready: allocate, open, start threads. */
	int (*setup)(struct gen_worker *w, struct lat_error *err);
	/* The load itself; never returns (the supervisor kills the worker). */
	void (*run)(struct gen_worker *w) __attribute__((noreturn));
};

const struct gen_ops *gen_ops_for(enum load_kind kind);

void gen_shared_init(struct gen_shared *s);
void gen_shared_release(struct gen_shared *s);

extern const struct gen_ops gen_cpu, gen_mem, gen_syscall, gen_sched, gen_io, gen_console;

#endif
