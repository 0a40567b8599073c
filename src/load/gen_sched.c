/*
 * sched: hackbench-like wakeups.  A ring of threads on one CPU, each blocked in
 * read() on its pipe until the previous one writes a byte: every hop is a wakeup
 * and a context switch.  Several bytes circulate, so the run queue is never empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "load/gen.h"

#define RING_THREADS 8u      /* the worker's own thread is member 0 */
#define RING_TOKENS 4u

struct ring {
	int fds[RING_THREADS][2];      /* member i reads fds[i][0] and writes fds[(i + 1) % n][1] */
};

struct member {
	struct ring *ring;
	unsigned i;
};

static void pass(const struct ring *ring, unsigned i)
{
	char byte;

	while (read(ring->fds[i][0], &byte, 1) < 0 && errno == EINTR)
		;
	while (write(ring->fds[(i + 1) % RING_THREADS][1], &byte, 1) < 0 && errno == EINTR)
		;
}

__attribute__((noreturn))
static void *member_main(void *arg)
{
	const struct member *m = arg;

	for (;;)
		pass(m->ring, m->i);
}

static int sched_setup(struct gen_worker *w, struct lat_error *err)
{
	struct ring *ring = malloc(sizeof(*ring));
	struct member *members = calloc(RING_THREADS, sizeof(*members));

	if (!ring || !members)
		return err_set(err, -ENOMEM, "out of memory");
	for (unsigned i = 0; i < RING_THREADS; i++)
		if (pipe2(ring->fds[i], O_CLOEXEC) < 0)
			return err_set(err, -errno, "cannot create a pipe: %s", strerror(errno));
	/* Threads inherit the worker's CPU affinity and policy.  Nothing is freed on
	 * failure: the worker exits at once. */
	for (unsigned i = 1; i < RING_THREADS; i++) {
		pthread_t t;
		members[i] = (struct member){ .ring = ring, .i = i };
		int r = pthread_create(&t, NULL, member_main, &members[i]);
		if (r)
			return err_set(err, -r, "cannot start a thread: %s", strerror(r));
		pthread_detach(t);
	}
	w->buf = ring;
	return 0;
}

__attribute__((noreturn))
static void sched_run(struct gen_worker *w)
{
	const struct ring *ring = w->buf;
	char tokens[RING_TOKENS];

	memset(tokens, 0, sizeof(tokens));
	if (write(ring->fds[1][1], tokens, sizeof(tokens)) < 0)
		_exit(1);
	/* Member 0 paces the ring: while it sleeps, the tokens pile up at its pipe. */
	for (;;) {
		pass(ring, 0);
		duty_pace(&w->duty);
	}
}

const struct gen_ops gen_sched = { .setup = sched_setup, .run = sched_run };
