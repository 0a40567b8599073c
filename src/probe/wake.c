/*
 * The waker is the runner's measuring thread; the sleeper is a second thread
 * this probe starts on its own CPU.  Per wakeup the waker reads the clock just
 * before and just after its wake call (t0, t1); the sleeper reads it first
 * thing after its wait returns (t2) and publishes it with the wakeup's number.
 * With --pingpong the sleeper answers at once through a second channel and the
 * waker reads the clock when the answer arrives (t3).
 *
 * A wakeup is only measured once the sleeper has said it is about to block
 * (armed): waking a thread that is still running measures nothing.
 */
#include "probe/wake.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/nstime.h"
#include "sys/cpus.h"
#include "sys/prep.h"

#define SLEEPER_STACK    (128u * 1024u)
#define SLEEPER_PREFAULT (32u * 1024u)
#define SPIN_LIMIT       2000u          /* pauses or yields before a waker waiting for the sleeper sleeps */
#define BACKOFF_NS       (20u * NS_PER_US)
#define REPLY_POLL_NS    (100u * NS_PER_MS)  /* a condition variable ignores signals: how often to look at stop */

_Static_assert(sizeof(atomic_uint) == sizeof(uint32_t), "a futex word is 32 bits");

/* One direction of wakeups. */
struct chan {
	atomic_uint word;               /* futex: the futex word; cond: the flag; every wake bumps it */
	int rfd, wfd;                   /* eventfd: one fd twice; pipe: its two ends */
	bool have_cond;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

struct wake_state {
	struct chan fwd, back;
	int via;
	bool pingpong;
	bool same_cpu;
	pthread_t tid;
	bool started;
	/* Written by the sleeper, read by the waker: a line of their own. */
	_Alignas(64) _Atomic uint64_t armed;    /* the wakeup the sleeper is about to block for */
	_Atomic uint64_t done;          /* the last wakeup whose t2 is published */
	_Atomic uint64_t t2;
	atomic_int failed;              /* -errno: the sleeper stopped on an error */
	_Alignas(64) atomic_bool quit;  /* teardown asks the sleeper to leave */
};

static int chan_open(struct chan *c, int via)
{
	int fds[2], r;
	pthread_condattr_t ca;

	switch ((enum wake_via)via) {
	case WAKE_FUTEX:
		return 0;
	case WAKE_EVENTFD:
		c->rfd = c->wfd = eventfd(0, EFD_CLOEXEC);
		return c->rfd < 0 ? -errno : 0;
	case WAKE_PIPE:
		if (pipe2(fds, O_CLOEXEC) < 0)
			return -errno;
		c->rfd = fds[0];
		c->wfd = fds[1];
		return 0;
	case WAKE_COND:
		if ((r = pthread_mutex_init(&c->lock, NULL)))
			return -r;
		/* Monotonic, so the waker's timed waits are not moved by a clock step. */
		if ((r = pthread_condattr_init(&ca)) == 0) {
			r = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
			if (r == 0)
				r = pthread_cond_init(&c->cond, &ca);
			pthread_condattr_destroy(&ca);
		}
		if (r) {
			pthread_mutex_destroy(&c->lock);
			return -r;
		}
		c->have_cond = true;
		return 0;
	}
	return -EINVAL;
}

static void chan_close(struct chan *c)
{
	if (c->rfd >= 0)
		close(c->rfd);
	if (c->wfd >= 0 && c->wfd != c->rfd)
		close(c->wfd);
	c->rfd = c->wfd = -1;
	if (c->have_cond) {
		pthread_cond_destroy(&c->cond);
		pthread_mutex_destroy(&c->lock);
		c->have_cond = false;
	}
}

static long futex(atomic_uint *word, int op, unsigned val)
{
	return syscall(SYS_futex, (void *)word, op, val, NULL, NULL, 0);
}

static int put(int fd, const void *buf, size_t n)
{
	ssize_t w;
	while ((w = write(fd, buf, n)) < 0 && errno == EINTR)
		;
	return w == (ssize_t)n ? 0 : w < 0 ? -errno : -EIO;
}

static inline int chan_wake(struct chan *c, int via)
{
	static const uint64_t one = 1;
	unsigned w;

	switch ((enum wake_via)via) {
	case WAKE_FUTEX:
		atomic_fetch_add_explicit(&c->word, 1u, memory_order_release);
		return futex(&c->word, FUTEX_WAKE_PRIVATE, 1) < 0 ? -errno : 0;
	case WAKE_EVENTFD:
		return put(c->wfd, &one, sizeof(one));
	case WAKE_PIPE:
		return put(c->wfd, "w", 1);
	case WAKE_COND:
		pthread_mutex_lock(&c->lock);
		w = atomic_load_explicit(&c->word, memory_order_relaxed);
		atomic_store_explicit(&c->word, w + 1u, memory_order_relaxed);
		pthread_mutex_unlock(&c->lock);
		/* Signalled after unlocking, so the woken thread does not find the lock still held. */
		return -pthread_cond_signal(&c->cond);
	}
	return -EINVAL;
}

/*
 * Block until the channel's next wake; *ret_ns is the clock read as soon as
 * the wait returned.  0, -EINTR (a signal), -ETIMEDOUT (cond, past until) or
 * -errno.  until: cond only, NULL for no limit.
 */
static inline int chan_wait(struct chan *c, int via, unsigned *seen, const struct timespec *until, uint64_t *ret_ns)
{
	union { uint64_t n; char c; } buf;
	ssize_t got;
	unsigned w;
	int r = 0;

	switch ((enum wake_via)via) {
	case WAKE_FUTEX:
		for (;;) {
			w = atomic_load_explicit(&c->word, memory_order_acquire);
			if (w != *seen) {
				*ret_ns = mono_ns();
				*seen = w;
				return 0;
			}
			/* EAGAIN: the word moved before the kernel looked; read it again. */
			if (futex(&c->word, FUTEX_WAIT_PRIVATE, w) < 0 && errno != EAGAIN)
				return -errno;
		}
	case WAKE_EVENTFD:
	case WAKE_PIPE: {
		size_t want = via == WAKE_EVENTFD ? sizeof(buf.n) : 1u;
		got = read(c->rfd, &buf, want);
		*ret_ns = mono_ns();
		return got == (ssize_t)want ? 0 : got < 0 ? -errno : -EIO;
	}
	case WAKE_COND:
		pthread_mutex_lock(&c->lock);
		while (r == 0 && atomic_load_explicit(&c->word, memory_order_relaxed) == *seen)
			r = until ? pthread_cond_timedwait(&c->cond, &c->lock, until) : pthread_cond_wait(&c->cond, &c->lock);
		*ret_ns = mono_ns();
		*seen = atomic_load_explicit(&c->word, memory_order_relaxed);
		pthread_mutex_unlock(&c->lock);
		return -r;
	}
	return -EINVAL;
}

static void *sleeper_main(void *arg)
{
	struct wake_state *s = arg;
	unsigned seen = 0;
	uint64_t k = 0, t2;
	int r;

	stack_prefault(SLEEPER_PREFAULT);
	for (;;) {
		atomic_store_explicit(&s->armed, k + 1u, memory_order_release);
		r = chan_wait(&s->fwd, s->via, &seen, NULL, &t2);
		if (atomic_load_explicit(&s->quit, memory_order_acquire))
			break;
		if (r == -EINTR)
			continue;
		if (r == 0) {
			atomic_store_explicit(&s->t2, t2, memory_order_relaxed);
			atomic_store_explicit(&s->done, ++k, memory_order_release);
			if (!s->pingpong)
				continue;
			/* Armed before answering: on one CPU the answer lets the waker
			 * run at once, and finding the sleeper unarmed it would yield
			 * back, two switches a round trip that perf's loop does not
			 * make.  Every channel counts its wakeups, so one sent before
			 * the wait is not lost. */
			atomic_store_explicit(&s->armed, k + 1u, memory_order_release);
			if ((r = chan_wake(&s->back, s->via)) == 0)
				continue;
		}
		atomic_store_explicit(&s->failed, r, memory_order_release);
		/* A waker waiting for the answer would wait forever: it finds failed instead. */
		if (s->pingpong)
			chan_wake(&s->back, s->via);
		break;
	}
	return NULL;
}

/* Pinned to cpu, with the waker's policy and priority, whatever the runner could apply. */
static int start_sleeper(struct wake_state *s, unsigned cpu)
{
	pthread_attr_t attr;
	struct cpuset one;
	sigset_t all, old;
	size_t size;
	cpu_set_t *set;
	int r = pthread_attr_init(&attr);

	if (r)
		return -r;
	cpuset_clear(&one);
	cpuset_add(&one, cpu);
	set = cpus_mask_alloc(&one, &size);
	r = set ? 0 : ENOMEM;
	if (r == 0)
		r = pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
	if (r == 0)
		r = pthread_attr_setstacksize(&attr, SLEEPER_STACK);
	if (r == 0)
		r = pthread_attr_setaffinity_np(&attr, size, set);
	if (r == 0) {
		/* The runner's stop signal is for the waker: the sleeper starts with every signal blocked. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		r = pthread_create(&s->tid, &attr, sleeper_main, s);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (set)
		CPU_FREE(set);
	pthread_attr_destroy(&attr);
	s->started = r == 0;
	return -r;
}

static void free_state(struct wake_state *s)
{
	chan_close(&s->fwd);
	chan_close(&s->back);
	free(s);
}

static int wake_setup(struct probe_thread *t)
{
	const struct wake_params *wp = t->pp;
	struct wake_state *s;
	int r;

	if ((r = posix_memalign((void **)&s, 64, sizeof(*s))))
		return -r;
	memset(s, 0, sizeof(*s));
	s->fwd.rfd = s->fwd.wfd = s->back.rfd = s->back.wfd = -1;
	s->via = wp->via;
	s->pingpong = wp->pingpong;
	s->same_cpu = wp->sleeper_cpu == t->cpu;
	atomic_init(&s->fwd.word, 0u);
	atomic_init(&s->back.word, 0u);
	atomic_init(&s->armed, 0u);
	atomic_init(&s->done, 0u);
	atomic_init(&s->t2, 0u);
	atomic_init(&s->failed, 0);
	atomic_init(&s->quit, false);
	if ((r = chan_open(&s->fwd, s->via)) < 0 || (s->pingpong && (r = chan_open(&s->back, s->via)) < 0)) {
		snprintf(t->err, sizeof(t->err), "cannot open the wakeup channel: %s", strerror(-r));
		free_state(s);
		return r;
	}
	if ((r = start_sleeper(s, wp->sleeper_cpu)) < 0) {
		snprintf(t->err, sizeof(t->err), "cannot start the sleeping thread on cpu %u: %s", wp->sleeper_cpu,
			 strerror(-r));
		free_state(s);
		return r;
	}
	t->priv = s;
	return 0;
}

static void wake_teardown(struct probe_thread *t)
{
	struct wake_state *s = t->priv;

	if (!s)
		return;
	if (s->started) {
		/* Wake it once more: it sees quit and leaves. */
		atomic_store_explicit(&s->quit, true, memory_order_release);
		chan_wake(&s->fwd, s->via);
		pthread_join(s->tid, NULL);
	}
	free_state(s);
	t->priv = NULL;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static bool stopping(const struct probe_thread *t)
{
	return atomic_load_explicit(t->stop, memory_order_relaxed);
}

/* Sleep until ns; true when the runner said stop (its signal interrupts the sleep). */
static bool sleep_until(const struct probe_thread *t, uint64_t ns)
{
	struct timespec ts = ns_to_ts(ns);
	if (stopping(t))
		return true;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		if (stopping(t))
			return true;
	return false;
}

/*
 * Wait, outside every measured span, until the sleeper's counter *v reaches
 * want.  0, 1 when the runner said stop first, or the sleeper's -errno.
 */
static int await_sleeper(const struct probe_thread *t, struct wake_state *s, _Atomic uint64_t *v, uint64_t want)
{
	for (unsigned spins = 0; atomic_load_explicit(v, memory_order_acquire) < want; spins++) {
		int e = atomic_load_explicit(&s->failed, memory_order_acquire);
		if (e)
			return e;
		if (stopping(t))
			return 1;
		/*
		 * On one CPU the sleeper, runnable and not yet armed, runs only when
		 * the waker gives way: yielding keeps the CPU from going idle, which
		 * would make the next wakeup one from idle.  Sleep when that fails.
		 */
		if (spins >= SPIN_LIMIT) {
			struct timespec ts = ns_to_ts(BACKOFF_NS);
			clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		} else if (s->same_cpu) {
			sched_yield();
		} else {
			cpu_relax();
		}
	}
	return 0;
}

/* The first deadline on the grid from prev by interval that is after now. */
static uint64_t next_deadline(uint64_t prev, uint64_t interval, uint64_t now)
{
	uint64_t next = prev + interval;
	if (next <= now)
		next += ((now - next) / interval + 1u) * interval;
	return next;
}

/* The one-way latency: from just before the wake call to the sleeper's first clock read. */
static inline uint64_t one_way(uint64_t t0, uint64_t t2)
{
	return t2 > t0 ? t2 - t0 : 0;   /* one clock for both CPUs: only a broken one goes back */
}

static void fail(struct probe_thread *t, const struct wake_state *s, int rc, const char *what)
{
	int e = atomic_load_explicit(&s->failed, memory_order_acquire);
	t->run_rc = e ? e : rc;
	snprintf(t->err, sizeof(t->err), "%s: %s", e ? "the sleeping thread's wait" : what, strerror(-t->run_rc));
}

/*
 * Wake the sleeper for round k + 1 once it is armed, t0 and t1 around the
 * call: 0, 1 on stop or when the call failed (said in t->err), or -errno of
 * the sleeper's wait.
 */
static inline __attribute__((always_inline)) int wake_armed(struct probe_thread *t, struct wake_state *s,
							     uint64_t k, uint64_t *t0, uint64_t *t1)
{
	int r = await_sleeper(t, s, &s->armed, k + 1u);
	if (r != 0)
		return r;
	*t0 = mono_ns();
	r = chan_wake(&s->fwd, s->via);
	*t1 = mono_ns();
	if (__builtin_expect(r < 0, 0)) {
		fail(t, s, r, "waking the sleeping thread");
		return 1;
	}
	return 0;
}

/* One wakeup every interval: the sleeper is blocked when it comes, and its t2 is read before the next. */
static void wake_run(struct probe_thread *t)
{
	const struct wake_params *wp = t->pp;
	struct wake_state *s = t->priv;
	struct recorder *rec = &t->rec;
	const uint64_t interval = wp->interval_ns ? wp->interval_ns : NS_PER_MS, loops = t->rp->loops;
	uint64_t next = t->origin_ns, k = 0;
	int r;

	if (sleep_until(t, next))
		return;
	for (;;) {
		uint64_t t0, t1;
		if ((r = wake_armed(t, s, k, &t0, &t1)) != 0)
			break;
		k++;
		next = next_deadline(next, interval, t1);
		bool last = (loops && k >= loops) || next >= t->end_ns;
		if (!last)
			sleep_until(t, next);
		/* Stopped meanwhile: a wakeup the sleeper already answered still counts. */
		if ((r = await_sleeper(t, s, &s->done, k)) != 0)
			break;
		uint64_t now = mono_ns();
		uint64_t lat = one_way(t0, atomic_load_explicit(&s->t2, memory_order_relaxed));
		rec_sample(rec, &(struct rec_sample){ .now_ns = now, .v = { lat, t1 - t0 }, .nv = 2, .at_ns = t0 });
		if (last || stopping(t))
			return;
	}
	if (r < 0)
		fail(t, s, r, "the sleeping thread's wait");
}

/* Wait for the sleeper's answer; 0 with *ret_t3, 1 on stop, or -errno. */
static int wait_answer(const struct probe_thread *t, struct wake_state *s, unsigned *seen, uint64_t from,
		       uint64_t *ret_t3)
{
	struct timespec until = ns_to_ts(from + REPLY_POLL_NS);
	for (;;) {
		int r = chan_wait(&s->back, s->via, seen, &until, ret_t3);
		if (__builtin_expect(r == 0, 1))
			return 0;
		if (stopping(t))
			return 1;
		if (r == -ETIMEDOUT)
			until = ns_to_ts(mono_ns() + REPLY_POLL_NS);
		else if (r != -EINTR)
			return r;
	}
}

/* Wake, and take the answer back: t2 - t0 one way, t3 - t0 the round trip. */
static void wake_pingpong_run(struct probe_thread *t)
{
	const struct wake_params *wp = t->pp;
	struct wake_state *s = t->priv;
	struct recorder *rec = &t->rec;
	const uint64_t interval = wp->interval_ns, loops = t->rp->loops;
	uint64_t next = t->origin_ns, k = 0, t3 = 0;
	unsigned seen = 0;
	int r;

	if (sleep_until(t, next))
		return;
	for (;;) {
		uint64_t t0, t1;
		if ((r = wake_armed(t, s, k, &t0, &t1)) != 0)
			break;
		k++;
		if ((r = wait_answer(t, s, &seen, t1, &t3)) != 0) {
			if (r < 0)
				fail(t, s, r, "waiting for the answer");
			return;
		}
		/* Published before the answer was sent: no wait here. */
		if ((r = await_sleeper(t, s, &s->done, k)) != 0)
			break;
		uint64_t lat = one_way(t0, atomic_load_explicit(&s->t2, memory_order_relaxed));
		rec_sample(rec, &(struct rec_sample){ .now_ns = t3, .v = { lat, t1 - t0, t3 - t0 }, .nv = 3,
						      .at_ns = t0 });
		if ((loops && k >= loops) || t3 >= t->end_ns || stopping(t))
			return;
		if (interval) {
			next = next_deadline(next, interval, t3);
			if (next >= t->end_ns || sleep_until(t, next))
				return;
		}
	}
	if (r < 0)
		fail(t, s, r, "the sleeping thread's wait");
}

static const char *const wake_metrics[] = { "latency", "wake_call", "roundtrip" };

/* One probe: --pingpong adds the round trip to latency and wake_call. */
static unsigned wake_metrics_for(const void *pp)
{
	return ((const struct wake_params *)pp)->pingpong ? 3u : 2u;
}

static void wake_any_run(struct probe_thread *t)
{
	if (((const struct wake_params *)t->pp)->pingpong)
		wake_pingpong_run(t);
	else
		wake_run(t);
}

const struct probe_ops wake_probe = {
	.name = "wake",
	.title = "thread wakeup latency",
	.about = "thread wakeup latency: from the wake call until the woken thread runs",
	.nmetrics = 3,
	.metric_names = wake_metrics,
	.metrics_for = wake_metrics_for,
	.min_metrics = 2,                /* without ping-pong */
	.unit_ns = 1000,
	.suite_share = 2,
	.setup = wake_setup,
	.run = wake_any_run,
	.teardown = wake_teardown,
};
