/* Worker processes: one per CPU of a spec, children of the supervisor. */
#ifndef LATSCOPE_LOAD_WORKER_H
#define LATSCOPE_LOAD_WORKER_H

#include <sys/types.h>

#include "load/gen.h"

/*
 * Fork a worker that pins itself to cpu, sets up its generator and reports on
 * ready_fd (MSG_READY or MSG_ERROR, both carrying id), then runs until killed.
 * Returns its pid, or -errno when fork fails.
 */
pid_t worker_spawn(const struct load_spec *spec, const struct gen_shared *shared, unsigned cpu, unsigned index,
		   unsigned id, int ready_fd);

#endif
