#include "probe/timer.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "core/nstime.h"
#include "probe/dlgrid.h"
#include "trace/eventlist.h"

const clockid_t timer_clock_ids[TIMER_CLOCKS] = { CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_TAI, CLOCK_BOOTTIME };

struct timer_state {
	clockid_t clock;                /* of the deadlines and the readings */
	int fd;                         /* timerfd mode */
	timer_t timer;                  /* posix mode */
	bool have_timer;
	sigset_t waitset;               /* posix mode: the timer's signal and the runner's wakeup */
};

static int timer_setup(struct probe_thread *t)
{
	const struct timer_params *tp = t->pp;
	struct timer_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->fd = -1;
	s->clock = timer_clock_ids[tp->clock];
	t->priv = s;
	switch ((enum timer_mode)tp->mode) {
	case TIMER_NANOSLEEP:
		return 0;
	case TIMER_TIMERFD:
		s->fd = timerfd_create(s->clock, TFD_CLOEXEC);
		if (s->fd < 0) {
			int e = errno;
			snprintf(t->err, sizeof(t->err), "timerfd_create: %s", strerror(e));
			free(s);
			t->priv = NULL;
			return -e;
		}
		return 0;
	case TIMER_POSIX: {
		struct sigevent sev = {
			.sigev_notify = SIGEV_THREAD_ID,
			.sigev_signo = SIGRTMIN,
		};
		sev._sigev_un._tid = gettid();
		sigemptyset(&s->waitset);
		sigaddset(&s->waitset, SIGRTMIN);
		sigaddset(&s->waitset, SIGUSR2);
		/* Taken by sigwaitinfo, so they must stay pending rather than run a handler. */
		pthread_sigmask(SIG_BLOCK, &s->waitset, NULL);
		if (timer_create(s->clock, &sev, &s->timer) < 0) {
			int e = errno;
			snprintf(t->err, sizeof(t->err), "timer_create: %s", strerror(e));
			free(s);
			t->priv = NULL;
			return -e;
		}
		s->have_timer = true;
		return 0;
	}
	}
	return -EINVAL;
}

static void timer_teardown(struct probe_thread *t)
{
	struct timer_state *s = t->priv;

	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	if (s->have_timer)
		timer_delete(s->timer);
	free(s);
	t->priv = NULL;
}

static int arm(struct timer_state *s, int mode, uint64_t first, uint64_t interval)
{
	struct itimerspec its = { .it_value = ns_to_ts(first), .it_interval = ns_to_ts(interval) };

	if (mode == TIMER_TIMERFD)
		return timerfd_settime(s->fd, TFD_TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
	if (mode == TIMER_POSIX)
		return timer_settime(s->timer, TIMER_ABSTIME, &its, NULL) < 0 ? -errno : 0;
	return 0;
}

/*
 * Wait for the deadline.  0 with *ret_expired = deadlines the kernel saw pass
 * (0 when it does not tell), or -EINTR when the runner's wakeup came first.
 */
static inline int wait_deadline(struct timer_state *s, int mode, clockid_t clk, uint64_t deadline,
				uint64_t *ret_expired)
{
	*ret_expired = 0;
	if (mode == TIMER_NANOSLEEP) {
		struct timespec ts = ns_to_ts(deadline);
		return -clock_nanosleep(clk, TIMER_ABSTIME, &ts, NULL);
	}
	if (mode == TIMER_TIMERFD) {
		uint64_t n;
		if (read(s->fd, &n, sizeof(n)) != (ssize_t)sizeof(n))
			return -errno;
		*ret_expired = n;
		return 0;
	}
	siginfo_t si;
	int sig = sigwaitinfo(&s->waitset, &si);
	if (sig < 0)
		return -errno;
	if (sig != SIGRTMIN)
		return -EINTR;
	*ret_expired = (uint64_t)si.si_overrun + 1u;
	return 0;
}

/* The measured CPUs below cpu: cpu is the Nth. */
static uint64_t rank_of(const struct cpuset *cpus, unsigned cpu)
{
	uint64_t below = 0;
	for (unsigned c = 0; c < cpu; c++)
		below += cpuset_has(cpus, c);
	return below;
}

uint64_t timer_interval_of(const struct timer_params *tp, const struct cpuset *cpus, unsigned cpu)
{
	return tp->interval_ns + rank_of(cpus, cpu) * tp->distance_ns;
}

uint64_t timer_phase_of(const struct timer_params *tp, const struct cpuset *cpus, unsigned cpu)
{
	const uint64_t interval = timer_interval_of(tp, cpus, cpu);

	if (!tp->aligned_offset_ns || !interval)
		return 0;
	/* (N * offset) mod interval, the product kept small: N < CPUSET_MAX */
	return rank_of(cpus, cpu) % interval * (tp->aligned_offset_ns % interval) % interval;
}

/*
 * The chosen clock's time at CLOCK_MONOTONIC's 0, as of now (wrapping: a
 * clock behind CLOCK_MONOTONIC adds its difference modulo 2^64): the run's
 * deadlines in that clock are the monotonic ones plus this.
 */
static uint64_t clock_offset(clockid_t clk)
{
	uint64_t a = mono_ns(), c = clock_ns(clk), b = mono_ns();
	return c - (a + (b - a) / 2u);
}

/*
 * The loop; always_inline: one copy for CLOCK_MONOTONIC, as the probe always
 * was, and one for another clock, which reads CLOCK_MONOTONIC beside it for
 * the recorder (windows, the end, the trace are monotonic).  The deadlines
 * keep the offset the clock had at the start, so a step of the clock during
 * the run shows as latency, as it would for any program that waits on it.
 */
static inline __attribute__((always_inline)) void timer_loop(struct probe_thread *t, bool mono)
{
	const struct timer_params *tp = t->pp;
	struct timer_state *s = t->priv;
	struct recorder *rec = &t->rec;
	const uint64_t interval = timer_interval_of(tp, &t->rp->cpus, t->cpu);
	const uint64_t loops = t->rp->loops;
	const int mode = tp->mode;
	const clockid_t clk = mono ? CLOCK_MONOTONIC : s->clock;
	const uint64_t off = mono ? 0 : clock_offset(clk);
	const uint64_t co_period = tp->co_correct ? interval : 0;   /* --co-correct: missed periods get values */
	/* deadlines at phase + k * interval: windows hold whole periods; without
	 * --aligned-offset every CPU's are on the same instants (--aligned) */
	uint64_t next = t->origin_ns + timer_phase_of(tp, &t->rp->cpus, t->cpu);
	uint64_t wakeups = 0;

	int rc = arm(s, mode, next + off, interval);
	if (rc < 0) {
		t->run_rc = rc;
		snprintf(t->err, sizeof(t->err), "arming the timer: %s", strerror(-rc));
		return;
	}
	while (next < t->end_ns) {
		uint64_t expired;
		rc = wait_deadline(s, mode, clk, next + off, &expired);
		const uint64_t woke = clock_ns(clk);
		const uint64_t now = mono ? woke : mono_ns();

		if (atomic_load_explicit(t->stop, memory_order_relaxed))
			break;
		if (rc == -EINTR)
			continue;       /* interrupted before the deadline: wait for it again */
		if (__builtin_expect(rc < 0, 0)) {
			t->run_rc = rc;
			snprintf(t->err, sizeof(t->err), "waiting for the deadline: %s", strerror(-rc));
			break;
		}

		uint64_t lat = woke > next + off ? woke - (next + off) : 0;
		/* Deadlines that passed while we were late; the kernel's count wins where it keeps one. */
		uint64_t missed = expired ? expired - 1u : lat / interval;
		/* Deadlines past the end of the run were never due. */
		if (missed && t->end_ns - next <= missed * interval)
			missed = (t->end_ns - next - 1u) / interval;

		rec_sample(rec, &(struct rec_sample){ .now_ns = now, .v = { lat }, .nv = 1, .at_ns = now,
						      .keeps = REC_KEEP_SPANS | REC_KEEP_LIN, .from_ns = next,
						      .missed = missed, .period_ns = co_period });
		next += (missed + 1u) * interval;
		if (loops && ++wakeups >= loops)
			break;
	}
	/* Stop the kernel timer before teardown so no late expiry is left pending. */
	arm(s, mode, 0, 0);
}

static void timer_run(struct probe_thread *t)
{
	const struct timer_params *tp = t->pp;
	if (tp->clock == TIMER_CLOCK_MONOTONIC)
		timer_loop(t, true);
	else
		timer_loop(t, false);
}

/*
 * Under SCHED_DEADLINE (sched(7)): each job records a sample and gives up the
 * rest of its runtime with sched_yield, so the kernel runs the thread again at
 * its next period's start; the latency is the clock read after sched_yield
 * returns minus that start.  The kernel's period starts are not visible: the
 * thread sleeps past its deadline to a period of the run's origin (woken
 * after its deadline, the kernel starts its period 0 at the wakeup), that
 * wakeup is period 0's job, and the grid of starts is estimated from the
 * jobs' readings and a second read just before each sched_yield, where the
 * kernel decides the next period (dlgrid.c; arithmetic only, no system call).
 */
static void timer_run_deadline(struct probe_thread *t)
{
	const struct timer_params *tp = t->pp;
	struct recorder *rec = &t->rec;
	const uint64_t period = t->rp->dl.period_ns;
	const uint64_t loops = t->rp->loops;
	const uint64_t co_period = tp->co_correct ? period : 0;
	uint64_t wakeups = 0;
	struct dlgrid g;
	/* the run's origin, moved as the timer's deadlines are by --aligned-offset */
	const uint64_t origin = t->origin_ns + timer_phase_of(tp, &t->rp->cpus, t->cpu);
	/* Past the deadline the kernel gave the thread when it became a deadline task. */
	struct timespec start = ns_to_ts(dlgrid_init(&g, origin, mono_ns() + period, period,
						     t->rp->dl.deadline_ns, t->end_ns));

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &start, NULL) == EINTR)
		if (atomic_load_explicit(t->stop, memory_order_relaxed))
			return;
	for (;;) {
		const uint64_t now = mono_ns();
		struct dlgrid_job j;

		if (atomic_load_explicit(t->stop, memory_order_relaxed))
			break;
		if (!dlgrid_job(&g, now, &j)) {
			rec_missed(rec, j.missed);
			break;
		}
		rec_sample(rec, &(struct rec_sample){ .now_ns = now, .v = { j.lat_ns }, .nv = 1, .at_ns = now,
						      .keeps = REC_KEEP_SPANS | REC_KEEP_LIN, .from_ns = j.from_ns,
						      .missed = j.missed, .period_ns = co_period });
		if ((loops && ++wakeups >= loops) || g.next >= t->end_ns)
			break;
		dlgrid_yield(&g, mono_ns());
		sched_yield();
	}
}

static clockid_t timer_clock_of(const void *pp)
{
	return timer_clock_ids[((const struct timer_params *)pp)->clock];
}

static const char *const timer_metrics[] = { "latency" };

static const struct probe_trace timer_trace = {
	.kind = PROBE_TRACE_PARTS,
	/* the hrtimer that wakes the thread, what held the CPU, and the return from
	 * its sleep, which shows it running where a switch from idle goes untraced */
	.events = TRACE_WANT_TIMER | TRACE_WANT_SCHED | TRACE_WANT_IRQ | TRACE_WANT_SLEEP_EXIT,
	.events_per_sec = 20000,        /* about ten events a wakeup, at a 0.5 ms period */
};

const struct probe_ops timer_probe = {
	.name = "timer",
	.title = "timer wakeup latency",
	.about = "timer wakeup latency: how late a periodic timer wakes the measuring thread",
	.nmetrics = 1,
	.metric_names = timer_metrics,
	.unit_ns = 1000,
	.trace = &timer_trace,
	.suite_share = 5,
	.clock_of = timer_clock_of,
	.setup = timer_setup,
	.run = timer_run,
	.run_deadline = timer_run_deadline,
	.teardown = timer_teardown,
};
