#include "probe/runner.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/array.h"
#include "core/nstime.h"
#include "core/units.h"
#include "probe/clockstep.h"
#include "probe/context.h"
#include "probe/tracerun.h"
#include "probe/trigger.h"
#include "sys/cpuidle.h"
#include "sys/filehold.h"
#include "sys/cpus.h"
#include "sys/prep.h"

#define THREAD_STACK   (256u * 1024u)
#define STACK_PREFAULT (64u * 1024u)
#define CLOCK_SAMPLES  1000
#define START_LEAD_NS  (5u * NS_PER_MS)    /* time for every thread to be waiting at origin */
/* The main thread drains windows this often: a quarter window, within bounds.
 * Every wakeup costs CPU time on a machine that could otherwise idle. */
#define TICK_MIN_NS    (10u * NS_PER_MS)
#define TICK_MAX_NS    (250u * NS_PER_MS)
#define ACTION_TICK_NS (20u * NS_PER_MS)   /* with --on-threshold: how soon a noted sample is acted on */
#define STOP_GRACE_NS  (2u * NS_PER_SEC)   /* past the end, stop threads that did not notice */
#define CONTEXT_DELAY_NS (2u * NS_PER_MS)  /* after a window's end, when its context is read */

enum gate_state { GATE_WAIT, GATE_GO, GATE_ABORT };

struct worker {
	struct probe_thread t;
	struct runner *rn;
	pthread_t tid;
	bool created;
	int sched_rc;
	int slack_rc;
	int setup_rc;
	struct stats clock_cost;
	uint64_t stopped_ns;            /* when run returned */
	pid_t kernel_tid;               /* for its context switch counts */
	long final_invol;               /* its preemptions, read as it ends; -1: unknown */
};

struct runner {
	const struct probe_ops *ops;
	const struct run_params *rp;
	struct result *res;
	const struct runner_hooks *hooks;
	size_t n;
	struct worker *w;
	cpu_set_t *dl_span;             /* POLICY_DEADLINE: the affinity the threads widen to */
	size_t dl_span_size;

	pthread_mutex_t lock;           /* the start gate only; never taken while measuring */
	pthread_cond_t cond;
	size_t ready;
	enum gate_state gate;

	atomic_bool stop;
	atomic_uint finished;
	unsigned started;               /* threads past the gate; set before it opens */
	pthread_t main_thread;
	struct run_context *ctx;        /* NULL: no context sampling */
	uint64_t ctx_index;             /* the next window whose context is due */
	struct trace_run *trace;        /* NULL: not tracing */
	struct trigger_watch *trig;     /* NULL: no --on-threshold action */
	struct spike_ring *ring;        /* --on-threshold trace; NULL: none */
	char ring_why[160];             /* why there is none */
	bool watch_clock;               /* the probe follows another clock than CLOCK_MONOTONIC */
	clockid_t clock;                /* which */
	struct clock_step step;         /* its steps, read at window ends */
	uint64_t next_step_check;       /* CLOCK_MONOTONIC */
};

static void on_wakeup_signal(int sig)
{
	(void)sig;      /* only there to make blocking calls return EINTR */
}

static int policy_of(int kind)
{
	switch ((enum sched_policy_kind)kind) {
	case POLICY_FIFO: return SCHED_FIFO;
	case POLICY_RR: return SCHED_RR;
	case POLICY_OTHER: return SCHED_OTHER;
	case POLICY_DEADLINE: break;    /* sched_apply_deadline */
	}
	return SCHED_OTHER;
}

const char *sched_policy_name(int kind)
{
	return kind == POLICY_FIFO ? "SCHED_FIFO" : kind == POLICY_RR ? "SCHED_RR" :
	       kind == POLICY_DEADLINE ? "SCHED_DEADLINE" : "SCHED_OTHER";
}

static void measure_clock(struct stats *s)
{
	for (int i = 0; i < CLOCK_SAMPLES; i++) {
		uint64_t a = mono_ns();
		uint64_t b = mono_ns();
		stats_add(s, b - a);
	}
}

static void *measure_thread(void *arg)
{
	struct worker *w = arg;
	struct runner *rn = w->rn;
	const struct run_params *rp = rn->rp;
	sigset_t wake;
	enum gate_state gate;

	sigemptyset(&wake);
	sigaddset(&wake, SIGUSR2);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	w->kernel_tid = gettid();

	if (rp->policy == POLICY_DEADLINE)
		w->sched_rc = sched_apply_deadline(rp->dl.runtime_ns, rp->dl.deadline_ns, rp->dl.period_ns, rn->dl_span,
						   rn->dl_span_size);
	else if (rp->policy != POLICY_OTHER)
		w->sched_rc = sched_apply(policy_of(rp->policy), (int)rp->priority);
	w->slack_rc = slack_set(run_timer_slack(rp));
	stack_prefault(STACK_PREFAULT);
	w->setup_rc = rn->ops->setup ? rn->ops->setup(&w->t) : 0;
	measure_clock(&w->clock_cost);

	pthread_mutex_lock(&rn->lock);
	rn->ready++;
	pthread_cond_broadcast(&rn->cond);
	while (rn->gate == GATE_WAIT)
		pthread_cond_wait(&rn->cond, &rn->lock);
	gate = rn->gate;
	pthread_mutex_unlock(&rn->lock);

	if (gate == GATE_GO && w->setup_rc == 0) {
		rec_start(&w->t.rec, w->t.origin_ns);
		if (rp->policy == POLICY_DEADLINE)
			rn->ops->run_deadline(&w->t);
		else
			rn->ops->run(&w->t);
		w->stopped_ns = mono_ns();
		rec_finish(&w->t.rec, w->stopped_ns);
		measure_clock(&w->clock_cost);
	}
	/* The last window's context is read after the thread is gone from /proc. */
	struct rusage ru;
	w->final_invol = getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : -1;
	if (w->setup_rc == 0 && rn->ops->teardown)
		rn->ops->teardown(&w->t);
	/* The last one out wakes the main thread rather than leaving it to its tick. */
	if (atomic_fetch_add(&rn->finished, 1u) + 1u == rn->started && gate == GATE_GO)
		pthread_kill(rn->main_thread, SIGUSR2);
	return NULL;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

void runner_stop_signals(sigset_t *ret)
{
	sigemptyset(ret);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++) {
		struct sigaction sa;
		/* A blocked signal is kept pending even when ignored: under nohup a
		 * SIGHUP would still stop the run, so an ignored SIGHUP stays so.  The
		 * others count even when ignored: a shell script's '&' ignores SIGINT
		 * and SIGQUIT, and 'kill -INT' must still stop that run (as cyclictest's
		 * own handlers do). */
		if (stop_signals[i] == SIGHUP && sigaction(SIGHUP, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			continue;
		sigaddset(ret, stop_signals[i]);
	}
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	case SIGQUIT: return "SIGQUIT";
	case SIGUSR1: return "SIGUSR1";
	default: return "a signal";
	}
}

/* The thread whose wakeups the worker measures: its own, or the one its probe names. */
static pid_t measured_tid(const struct worker *w)
{
	return w->t.measured_tid ? w->t.measured_tid : w->kernel_tid;
}

static int start_threads(struct runner *rn, struct lat_error *err)
{
	pthread_attr_t attr;
	int r = pthread_attr_init(&attr);

	if (r)
		return -r;
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	for (size_t i = 0; i < rn->n; i++) {
		struct worker *w = &rn->w[i];
		struct cpuset one;
		size_t size;
		cpuset_clear(&one);
		cpuset_add(&one, w->t.cpu);
		cpu_set_t *set = cpus_mask_alloc(&one, &size);
		if (!set) {
			r = ENOMEM;
			break;
		}
		/* Start on the CPU: the thread never runs, not even its setup, elsewhere. */
		r = pthread_attr_setaffinity_np(&attr, size, set);
		CPU_FREE(set);
		if (r == 0)
			r = pthread_create(&w->tid, &attr, measure_thread, w);
		if (r) {
			err_set(err, 0, "cannot start the measuring thread on cpu %u: %s", w->t.cpu, strerror(r));
			break;
		}
		w->created = true;
	}
	pthread_attr_destroy(&attr);
	return -r;
}

/* Wait for every created thread to reach the gate, then open or close it. */
static size_t gate_wait_ready(struct runner *rn)
{
	size_t created = 0;
	for (size_t i = 0; i < rn->n; i++)
		created += rn->w[i].created;
	pthread_mutex_lock(&rn->lock);
	while (rn->ready < created)
		pthread_cond_wait(&rn->cond, &rn->lock);
	pthread_mutex_unlock(&rn->lock);
	return created;
}

static void gate_open(struct runner *rn, enum gate_state state)
{
	pthread_mutex_lock(&rn->lock);
	rn->gate = state;
	pthread_cond_broadcast(&rn->cond);
	pthread_mutex_unlock(&rn->lock);
}

static void format_cpus(const struct runner *rn, bool (*pick)(const struct worker *), char *buf, size_t size)
{
	struct cpuset set;
	cpuset_clear(&set);
	for (size_t i = 0; i < rn->n; i++)
		if (pick(&rn->w[i]))
			cpuset_add(&set, rn->w[i].t.cpu);
	cpuset_format(&set, buf, size);
}

static bool sched_failed(const struct worker *w)
{
	return w->sched_rc < 0;
}

/* What the probes' setups used instead of what was asked: each text once, with the CPUs that say it. */
static void setup_notes(struct runner *rn)
{
	for (size_t i = 0; i < rn->n; i++) {
		const char *note = rn->w[i].t.note;
		bool said = false;
		for (size_t k = 0; k < i && !said; k++)
			said = strcmp(rn->w[k].t.note, note) == 0;
		if (!note[0] || said)
			continue;
		struct cpuset set;
		char cpus[128];
		cpuset_clear(&set);
		for (size_t k = i; k < rn->n; k++)
			if (strcmp(rn->w[k].t.note, note) == 0)
				cpuset_add(&set, rn->w[k].t.cpu);
		cpuset_format(&set, cpus, sizeof(cpus));
		result_note(rn->res, "%s (cpu %s)", note, cpus);
	}
}

/* Why the kernel would not run the threads under SCHED_DEADLINE, in one line:
 * a deadline probe's wait (sched_yield) means nothing under another policy. */
static int deadline_refused(const struct runner *rn, int rc, struct lat_error *err)
{
	const struct run_params *rp = rn->rp;
	char rt[32], per[32];
	const char *why;

	fmt_duration(rp->dl.runtime_ns, rt, sizeof(rt));
	fmt_duration(rp->dl.period_ns, per, sizeof(per));
	switch (rc) {
	case -EPERM:
		why = geteuid() != 0 ? "needs root or CAP_SYS_NICE" :
		      "the threads' affinity does not cover their root domain (a cpuset partition or isolcpus narrows it)";
		break;
	case -EBUSY:
		return err_set(err, rc, "SCHED_DEADLINE refused: admission control has no bandwidth for %zu threads of "
			       "runtime %s every %s (the limit is kernel.sched_rt_runtime_us of every "
			       "kernel.sched_rt_period_us on each CPU, less what other deadline tasks hold)", rn->n, rt, per);
	case -ENOSYS:
		why = "this kernel has no sched_setattr";
		break;
	case -EINVAL:
		why = "the kernel refused the reservation (see kernel.sched_deadline_period_min_us and _max_us; a kernel "
		      "before 3.14 has no SCHED_DEADLINE)";
		break;
	default:
		why = strerror(-rc);
		break;
	}
	return err_set(err, rc, "SCHED_DEADLINE refused: %s", why);
}

/* Record what could not be applied; with --strict that is an error. */
static int check_threads(struct runner *rn, struct lat_error *err)
{
	struct result *res = rn->res;
	const struct run_params *rp = rn->rp;
	int sched_rc = 0;

	for (size_t i = 0; i < rn->n; i++) {
		struct worker *w = &rn->w[i];
		if (w->setup_rc < 0) {
			err_set(err, 0, "%s setup failed on cpu %u: %s", rn->ops->name, w->t.cpu,
				  w->t.err[0] ? w->t.err : strerror(-w->setup_rc));
			return w->setup_rc;
		}
		if (w->sched_rc < 0)
			sched_rc = w->sched_rc;
	}
	if (rp->policy == POLICY_DEADLINE && sched_rc < 0)
		return deadline_refused(rn, sched_rc, err);

	setup_notes(rn);
	res->applied.timer_slack = true;
	for (size_t i = 0; i < rn->n; i++)
		res->applied.timer_slack &= rn->w[i].slack_rc == 0;
	res->applied.rt_policy = rp->policy != POLICY_OTHER && sched_rc == 0;
	if (sched_rc < 0) {
		char cpus[128];
		format_cpus(rn, sched_failed, cpus, sizeof(cpus));
		result_note(res, "not applied: %s priority %llu on cpu %s (%s%s); measuring at normal priority",
			    sched_policy_name(rp->policy), (unsigned long long)rp->priority, cpus, strerror(-sched_rc),
			    sched_rc == -EPERM ? ": needs root or CAP_SYS_NICE" : "");
		if (rp->strict) {
			err_set(err, 0, "--strict: %s priority %llu not applied: %s", sched_policy_name(rp->policy),
				  (unsigned long long)rp->priority, strerror(-sched_rc));
			return sched_rc;
		}
	}
	return 0;
}

static int lock_memory(struct runner *rn, struct lat_error *err)
{
	int r = memlock_all();
	struct rlimit rl;

	rn->res->applied.memlock = r == 0;
	if (r == 0)
		return 0;
	if ((r == -ENOMEM || r == -EPERM) && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		result_note(rn->res, "not applied: memory lock (%s: RLIMIT_MEMLOCK is %llu KiB; raise it with "
			    "'ulimit -l' or run as root); page faults may add latency",
			    strerror(-r), (unsigned long long)rl.rlim_cur / 1024u);
	else
		result_note(rn->res, "not applied: memory lock (%s); page faults may add latency", strerror(-r));
	if (rn->rp->strict) {
		return err_set(err, r, "--strict: memory lock not applied: %s", strerror(-r));
	}
	return 0;
}

static int hold_pmqos(struct runner *rn, int *fd, struct lat_error *err)
{
	if (rn->rp->no_pm_qos)
		return 0;
	int r = pmqos_hold(fd);
	rn->res->applied.pm_qos = r == 0;
	if (r == 0)
		return 0;
	result_note(rn->res, "not applied: PM QoS hold at 0 us on /dev/cpu_dma_latency (%s); idle states may add latency",
		    strerror(-r));
	if (rn->rp->strict) {
		return err_set(err, r, "--strict: PM QoS not applied: cannot open '/dev/cpu_dma_latency': %s", strerror(-r));
	}
	return 0;
}

/* A run killed with SIGKILL left idle states disabled: put them back first.
 * Then, with --deepest-idle-state, disable those deeper than N; an explicit
 * request that cannot be met is an error, not a note. */
static int limit_idle(struct runner *rn, struct cpuidle_hold *h, struct lat_error *err)
{
	const struct run_params *rp = rn->rp;
	struct cpuidle_stale st;
	struct lat_error why;

	unsigned tuned = 0;
	/* latscope tune's settings of a tune killed with SIGKILL (sys/filehold.h): any root run puts them back */
	if (geteuid() == 0 && file_hold_restore_stale(NULL, &tuned, &why) < 0)
		result_note(rn->res, "settings a killed latscope tune left changed could not be restored: %s", why.msg);
	else if (tuned)
		result_note(rn->res, "restored the settings of %u latscope tune run%s that were killed", tuned,
			    tuned == 1 ? "" : "s");
	int r = cpuidle_restore_stale(NULL, &st, &why);
	if (st.files)
		result_note(rn->res, "restored %u idle state%s that latscope pid %ld, killed, left disabled", st.states,
			    st.states == 1 ? "" : "s", st.pid);
	if (r < 0)
		result_note(rn->res, "idle states a killed latscope left disabled could not be restored: %s", why.msg);
	if (!rp->limit_idle)
		return 0;
	if ((r = cpuidle_limit(NULL, &rp->cpus, (unsigned)rp->deepest_idle_state, h, err)) < 0)
		return err_prefix(err, r, "--deepest-idle-state %llu: ", (unsigned long long)rp->deepest_idle_state);
	snprintf(rn->res->applied.idle_states, sizeof(rn->res->applied.idle_states), "%s", h->fact);
	if (h->limited)
		result_info(rn->res, "--deepest-idle-state %llu: %s", (unsigned long long)rp->deepest_idle_state, h->fact);
	else
		result_note(rn->res, "--deepest-idle-state %llu: %s", (unsigned long long)rp->deepest_idle_state, h->fact);
	return 0;
}

static void release_idle(struct runner *rn, struct cpuidle_hold *h)
{
	struct lat_error why;
	if (cpuidle_restore(h, &why) < 0)
		result_note(rn->res, "idle states not restored: %s (the next run as root retries)", why.msg);
}

/* Keep the main thread off the measured CPUs when another CPU is there for it. */
static int move_main(struct runner *rn, struct cpuset *saved, bool *moved)
{
	struct cpuset allowed, rest;
	int r = cpus_allowed(saved);

	*moved = false;
	if (r < 0)
		return r;
	allowed = *saved;
	cpuset_diff(&rest, &allowed, &rn->rp->cpus);
	if (cpuset_count(&rest) == 0) {
		result_info(rn->res, "the main thread shares the measured CPUs: no other CPU is available to it");
		return 0;
	}
	r = cpus_pin(&rest);
	*moved = r == 0;
	rn->res->applied.main_moved = *moved;
	return r;
}

static void start_context(struct runner *rn)
{
	pid_t *tids = calloc(rn->n, sizeof(*tids));
	int r = tids ? 0 : -ENOMEM;

	for (size_t i = 0; tids && i < rn->n; i++)
		tids[i] = measured_tid(&rn->w[i]);
	if (r == 0)
		r = context_start(&rn->ctx, &rn->rp->cpus, tids, &(struct smi_env){ .sysroot = rn->rp->sysroot });
	free(tids);
	if (r < 0) {
		rn->ctx = NULL;
		result_note(rn->res, "not counting interrupts, softirqs and steal time: %s", strerror(-r));
	} else {
		context_smi(rn->ctx, rn->res);
	}
}

static int drain(struct runner *rn)
{
	for (size_t i = 0; i < rn->n; i++) {
		struct recorder *rec = &rn->w[i].t.rec;
		struct cpu_result *cr = &rn->res->cpus[i];
		const struct hist *h;
		const struct rec_window *win;
		/* cyclictest's running figures, for its live lines; the bins come back after the run */
		if (cr->lin)
			rec_lin_figures(rec, cr->lin);
		while ((win = rec_peek(rec, &h))) {
			int r = result_add_window(rn->res, cr, win, h);
			rec_release(rec);
			if (r < 0)
				return r;
			if (rn->hooks && rn->hooks->window)
				rn->hooks->window(rn->hooks->ctx, rn->res, cr, &cr->win[cr->nwin - 1u]);
		}
	}
	return 0;
}

static void request_stop(struct runner *rn)
{
	atomic_store(&rn->stop, true);
	for (size_t i = 0; i < rn->n; i++)
		if (rn->w[i].created)
			pthread_kill(rn->w[i].tid, SIGUSR2);
}

/* The probe's clock against CLOCK_MONOTONIC, on the main thread: a step shows as latency. */
static void watch_clock_start(struct runner *rn, const void *pp)
{
	struct clock_reading r;

	rn->clock = rn->ops->clock_of ? rn->ops->clock_of(pp) : CLOCK_MONOTONIC;
	rn->watch_clock = rn->clock != CLOCK_MONOTONIC;
	if (!rn->watch_clock)
		return;
	clock_read_against_mono(rn->clock, &r);
	clock_step_start(&rn->step, &r);
	rn->next_step_check = rn->res->origin_ns + rn->rp->window_ns;
}

static void check_clock(struct runner *rn)
{
	struct clock_reading r;
	clock_read_against_mono(rn->clock, &r);
	clock_step_check(&rn->step, &r);
	while (rn->next_step_check <= r.mono_after)
		rn->next_step_check += rn->rp->window_ns;
}

/* Once, after the run: what the steps were. */
static void note_clock_steps(struct runner *rn)
{
	char size[32], at[32];
	const struct clock_step *cs = &rn->step;

	if (!rn->watch_clock)
		return;
	check_clock(rn);
	if (cs->steps == 0)
		return;
	fmt_duration(cs->largest < 0 ? -(uint64_t)cs->largest : (uint64_t)cs->largest, size, sizeof(size));
	/* The first reading comes before the gate opens: "after the start" is from the origin. */
	uint64_t seen = cs->origin + cs->largest_at;
	fmt_duration(seen > rn->res->origin_ns ? seen - rn->res->origin_ns : 0, at, sizeof(at));
	/* Forward, the deadlines it jumped over come due at once; back, they come that much later. */
	result_note(rn->res, "%s stepped during the run (%u step%s against CLOCK_MONOTONIC, the largest %s %s, seen "
		    "%s after the start): %s", clock_id_name(rn->clock), cs->steps, cs->steps == 1 ? "" : "s",
		    cs->largest < 0 ? "back" : "forward", size, at,
		    cs->largest < 0 ? "the threads slept that much longer, and those deadlines were neither measured nor "
				      "counted as missed" : "the latencies near it are the step, not late wakeups");
}

/* --on-threshold trace: the last seconds of kernel events, to explain a
 * sample while the run goes on.  The ring matches deadlines on CLOCK_MONOTONIC. */
static void start_ring(struct runner *rn, const void *pp)
{
	struct lat_error why = { { 0 } };
	const bool mono = !rn->ops->clock_of || rn->ops->clock_of(pp) == CLOCK_MONOTONIC;

	if (!rn->ops->trace || rn->ops->trace->kind != PROBE_TRACE_PARTS || !mono)
		snprintf(rn->ring_why, sizeof(rn->ring_why), "not traced: the spike ring explains wakeups of timers "
			 "on CLOCK_MONOTONIC only");
	else if (rn->rp->policy == POLICY_DEADLINE)
		snprintf(rn->ring_why, sizeof(rn->ring_why), "not traced: deadline threads wait on no timer and "
			 "may run on any CPU, and the spike ring explains timer wakeups on the measured CPUs");
	else if (spike_ring_start(&rn->rp->cpus, 0, &rn->ring, &why) < 0)
		snprintf(rn->ring_why, sizeof(rn->ring_why), "not traced: %.140s", why.msg);
	if (!rn->ring)
		result_note(rn->res, "--on-threshold trace: %s", rn->ring_why);
	else
		tracerun_note_mount(rn->res, spike_ring_mounted(rn->ring));
}

/* The ring's instance, and a mount of its, go: what could not be undone is a note. */
static void stop_ring(struct runner *rn)
{
	struct lat_error note = { { 0 } };
	int r = spike_ring_stop(rn->ring, &note);

	rn->ring = NULL;
	tracerun_note_unmount(rn->res, r, note.msg);
}

/* The samples the threads noted above the trigger: true when one stops the run. */
static bool watch_triggers(struct runner *rn)
{
	bool stop = false;
	for (size_t i = 0; rn->trig && i < rn->n; i++)
		stop |= trigger_watch_poll(rn->trig, &rn->w[i].t.rec, rn->w[i].t.cpu, rn->w[i].kernel_tid);
	return stop;
}

/* After join: what was seen and done, in the result. */
static void finish_triggers(struct runner *rn)
{
	uint64_t above = 0;
	if (!rn->trig)
		return;
	(void)watch_triggers(rn);       /* noted after the last tick: the run is over, a stop has nothing to end */
	for (size_t i = 0; i < rn->n; i++)
		above += rec_trigger_count(&rn->w[i].t.rec);
	trigger_watch_finish(rn->trig, rn->res, above);
}

static int supervise(struct runner *rn, size_t started, uint64_t end_ns)
{
	sigset_t stopsigs;
	bool stopping = false;
	int r;

	runner_stop_signals(&stopsigs);
	sigaddset(&stopsigs, SIGUSR2);          /* the measuring threads are done */
	if (rn->rp->period_signal)
		sigaddset(&stopsigs, SIGUSR1);
	uint64_t tick_ns = rn->rp->window_ns / 4u;
	/* Context is read just after each window's end, so it belongs to that window. */
	uint64_t next_ctx = rn->res->origin_ns + rn->rp->window_ns + CONTEXT_DELAY_NS;
	tick_ns = tick_ns < TICK_MIN_NS ? TICK_MIN_NS : tick_ns > TICK_MAX_NS ? TICK_MAX_NS : tick_ns;
	if (rn->trig && tick_ns > ACTION_TICK_NS)
		tick_ns = ACTION_TICK_NS;
	while (atomic_load(&rn->finished) < started) {
		uint64_t now = mono_ns(), wait = tick_ns;
		if (rn->ctx && next_ctx > now && next_ctx - now < wait)
			wait = next_ctx - now;
		struct timespec tick = ns_to_ts(wait);
		siginfo_t si;
		int sig = sigtimedwait(&stopsigs, &si, &tick);
		if (sig > 0 && sig != SIGUSR2 && !stopping) {
			rn->res->interrupted = true;
			snprintf(rn->res->stop_reason, sizeof(rn->res->stop_reason), "signal %s", signal_name(sig));
			stopping = true;
			request_stop(rn);
		}
		if (!stopping && end_ns != UINT64_MAX && mono_ns() > end_ns + STOP_GRACE_NS) {
			stopping = true;
			request_stop(rn);
		}
		if (rn->ctx && mono_ns() >= next_ctx && !stopping) {
			if (context_sample(rn->ctx, rn->ctx_index) < 0) {
				context_free(rn->ctx);      /* better no context than a wrong one */
				rn->ctx = NULL;
				result_note(rn->res, "stopped counting interrupts and steal time: /proc could not be read");
			}
			rn->ctx_index++;
			next_ctx += rn->rp->window_ns;
		}
		if (rn->watch_clock && mono_ns() >= rn->next_step_check)
			check_clock(rn);
		if ((r = drain(rn)) < 0)
			return r;
		if (rn->ctx && context_apply(rn->ctx, rn->res) < 0) {
			context_free(rn->ctx);
			rn->ctx = NULL;
			result_note(rn->res, "stopped counting interrupts and steal time: out of memory");
		}
		if (watch_triggers(rn) && !stopping) {
			rn->res->interrupted = true;
			snprintf(rn->res->stop_reason, sizeof(rn->res->stop_reason), "%s", RESULT_STOP_THRESHOLD);
			stopping = true;
			request_stop(rn);
		}
		if (rn->hooks && rn->hooks->tick && rn->hooks->tick(rn->hooks->ctx, rn->res) && !stopping) {
			rn->res->interrupted = true;
			stopping = true;
			request_stop(rn);
		}
	}
	/* Threads that stop on a window's end do so just before its context is due. */
	if (rn->ctx && !stopping && mono_ns() + CONTEXT_DELAY_NS >= next_ctx && context_sample(rn->ctx, rn->ctx_index) == 0)
		rn->ctx_index++;
	return 0;
}

static int collect_last(struct runner *rn)
{
	int r = drain(rn);
	if (r < 0)
		return r;
	for (size_t i = 0; i < rn->n; i++) {
		struct worker *w = &rn->w[i];
		struct cpu_result *cr = &rn->res->cpus[i];
		const struct hist *h;
		const struct rec_window *win = rec_last(&w->t.rec, &h);
		unsigned ntop;
		const struct rec_event *top = rec_largest(&w->t.rec, &ntop);

		stats_merge(&cr->clock_cost, &w->clock_cost);
		result_set_top(cr, top, ntop);
		if (win->m[0].st.n == 0 && win->missed == 0)
			continue;
		if ((r = result_add_window(rn->res, cr, win, h)) < 0)
			return r;
		if (rn->hooks && rn->hooks->window)
			rn->hooks->window(rn->hooks->ctx, rn->res, cr, &cr->win[cr->nwin - 1u]);
	}
	return 0;
}

/* Tracing is asked for, not needed: without it the run goes on, and says why. */
static void start_trace(struct runner *rn)
{
	struct lat_error why;
	struct tracerun_thread *th = calloc(rn->n, sizeof(*th));
	for (size_t i = 0; th && i < rn->n; i++)
		th[i] = (struct tracerun_thread){ .cpu = rn->w[i].t.cpu, .tid = measured_tid(&rn->w[i]) };
	if (!rn->trace || !th) {
		result_note(rn->res, TRACERUN_NOT_TRACED "out of memory; measuring without the decomposition");
	} else if (tracerun_start(rn->trace, rn->rp, rn->ops, th, rn->n, &why) < 0) {
		result_note(rn->res, TRACERUN_NOT_TRACED "%s; measuring without the decomposition", why.msg);
	} else {
		tracerun_note_mount(rn->res, tracerun_mounted(rn->trace));
		if (tracerun_fallback(rn->trace))
			result_info(rn->res, "--trace: traced with tracefs, as the BPF backend could not be used: %s",
				    tracerun_fallback(rn->trace));
	}
	free(th);
}

static void finish_trace(struct runner *rn)
{
	struct lat_error why;
	struct tracerun_thread *th = calloc(rn->n, sizeof(*th));
	if (!th) {
		result_note(rn->res, TRACERUN_NOT_TRACED "out of memory");
		return;
	}
	for (size_t i = 0; i < rn->n; i++)
		th[i] = (struct tracerun_thread){ rn->w[i].t.cpu, measured_tid(&rn->w[i]), rec_spans(&rn->w[i].t.rec),
						  rn->res->cpus[i].lin ? &rn->w[i].t.rec.lin : NULL };
	if (tracerun_finish(rn->trace, th, rn->n, rn->res, &why) < 0)
		result_note(rn->res, "the trace could not be read: %s", why.msg);
	free(th);
}

/*
 * SCHED_DEADLINE threads cannot be pinned: the kernel admits only a task whose
 * affinity covers its root domain, so each widens to every online CPU once it
 * has started on its own (sys/prep.h); the kernel narrows that to what a
 * cpuset allows.  Not the main thread's affinity: a caller may have pinned it.
 */
static int deadline_span(struct runner *rn, struct lat_error *err)
{
	struct cpuset allowed;
	int r;

	if (!rn->ops->run_deadline)
		return err_set(err, -EINVAL, "internal: probe %s has no SCHED_DEADLINE loop", rn->ops->name);
	if ((r = cpus_online(&allowed)) < 0)
		return err_set(err, r, "cannot read the online CPUs: %s", strerror(-r));
	rn->dl_span = cpus_mask_alloc(&allowed, &rn->dl_span_size);
	if (!rn->dl_span)
		return err_set(err, -ENOMEM, "out of memory");
	char list[128];
	cpuset_format(&allowed, list, sizeof(list));
	result_note(rn->res, "--policy deadline: threads not pinned (the kernel admits SCHED_DEADLINE only for a "
		    "thread allowed on its whole root domain); each starts on its CPU, then runs on any of %s", list);
	return 0;
}

static int init_workers(struct runner *rn, const void *pp)
{
	uint64_t thresholds[REC_MAX_METRICS];
	size_t i = 0;

	for (unsigned m = 0; m < REC_MAX_METRICS; m++)
		thresholds[m] = m == 0 ? rn->rp->threshold_ns : REC_NO_THRESHOLD;
	rn->w = calloc(rn->n, sizeof(*rn->w));
	if (!rn->w)
		return -ENOMEM;
	cpuset_foreach(cpu, &rn->rp->cpus) {
		struct worker *w = &rn->w[i];
		w->rn = rn;
		w->t.rp = rn->rp;
		w->t.pp = pp;
		w->t.cpu = (unsigned)cpu;
		w->t.stop = &rn->stop;
		w->t.end_ns = UINT64_MAX;
		stats_reset(&w->clock_cost);
		int r = rec_init(&w->t.rec, rn->res->nmetrics, thresholds, rn->rp->window_ns);
		if (r == 0 && rn->rp->on_threshold.n)
			rec_set_trigger(&w->t.rec, run_trigger(rn->rp));
		if (r == 0 && rn->rp->trace)
			r = rec_log_init(&w->t.rec, rn->rp->trace_log_cap);
		if (r < 0)
			return r;
		/* Its bins are the recorder's for the run: the measuring thread writes only its own memory. */
		if (rn->res->cpus[i].lin)
			rec_lin_take(&w->t.rec, rn->res->cpus[i].lin);
		i++;
	}
	return 0;
}

static void free_workers(struct runner *rn)
{
	if (!rn->w)
		return;
	for (size_t i = 0; i < rn->n; i++) {
		/* Every path: the result gets cyclictest's histogram back, counted to the end. */
		if (rn->res->cpus[i].lin)
			rec_lin_give(&rn->w[i].t.rec, rn->res->cpus[i].lin);
		rec_free(&rn->w[i].t.rec);
	}
	free(rn->w);
	rn->w = NULL;
}

/* What the run changed in this process, and puts back on every path. */
struct run_saved {
	struct sigaction old_sa;
	sigset_t old_mask;
	struct cpuset main_cpus;
	bool main_moved, locked;
	int pmqos_fd;
	struct cpuidle_hold idle;
};

/* Stop signals are taken by the main thread only, synchronously; every
 * thread created after this inherits the blocked mask. */
static void block_signals(struct run_saved *sv)
{
	struct sigaction wake_sa = { .sa_handler = on_wakeup_signal };
	sigset_t block;

	runner_stop_signals(&block);
	sigaddset(&block, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &block, &sv->old_mask);
	sigemptyset(&wake_sa.sa_mask);
	sigaction(SIGUSR2, &wake_sa, &sv->old_sa);
}

static void restore_signals(const struct run_saved *sv)
{
	/* A wakeup sent to this thread may still be pending: take it before the
	 * old disposition (by default, terminate) comes back. */
	sigset_t usr2;
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	struct timespec zero = { 0, 0 };
	while (sigtimedwait(&usr2, NULL, &zero) == SIGUSR2)
		;
	sigaction(SIGUSR2, &sv->old_sa, NULL);
	pthread_sigmask(SIG_SETMASK, &sv->old_mask, NULL);
}

/* The system settings and recorders, while this is still the only thread. */
static int prepare(struct runner *rn, const void *pp, struct run_saved *sv, struct lat_error *err)
{
	int r;

	memlock_prepare();
	if (rn->rp->policy == POLICY_DEADLINE && (r = deadline_span(rn, err)) < 0)
		return r;
	if ((r = hold_pmqos(rn, &sv->pmqos_fd, err)) < 0)
		return r;
	if ((r = limit_idle(rn, &sv->idle, err)) < 0)
		return r;
	if ((r = init_workers(rn, pp)) < 0)
		return err_set(err, r, "cannot prepare the recorders: %s", strerror(-r));
	if (rn->rp->trace)
		tracerun_prepare(&rn->trace);   /* still one thread: it forks */
	if (action_list_has(&rn->rp->on_threshold, ACTION_TRACE))
		start_ring(rn, pp);             /* so does this */
	return 0;
}

/* Start the threads and take them to the gate, the run's origin set; the
 * gate is left to the caller.  *started: the threads that reached it. */
static int start_run(struct runner *rn, const void *pp, struct run_saved *sv, size_t *started, uint64_t *end_ns,
		     struct lat_error *err)
{
	struct result *res = rn->res;
	int r = start_threads(rn, err);

	*started = gate_wait_ready(rn);
	if (r < 0 || (r = check_threads(rn, err)) < 0 || (r = lock_memory(rn, err)) < 0)
		return r;
	sv->locked = res->applied.memlock;
	if (move_main(rn, &sv->main_cpus, &sv->main_moved) < 0)
		result_note(res, "the main thread could not be moved off the measured CPUs");
	if (rn->rp->trace)
		start_trace(rn);
	for (size_t i = 0; i < rn->n; i++)
		res->cpus[i].tid = measured_tid(&rn->w[i]);
	if (rn->hooks && rn->hooks->prepared)
		rn->hooks->prepared(rn->hooks->ctx, res);

	res->origin_ns = mono_ns() + START_LEAD_NS;
	res->start_realtime_ns = realtime_ns() + START_LEAD_NS;
	*end_ns = rn->rp->duration_ns ? res->origin_ns + rn->rp->duration_ns : UINT64_MAX;
	for (size_t i = 0; i < rn->n; i++) {
		rn->w[i].t.origin_ns = res->origin_ns;
		rn->w[i].t.end_ns = *end_ns;
	}
	if (trigger_watch_start(&rn->trig, rn->rp, res->origin_ns, rn->ring, rn->ring_why) < 0)
		return err_set(err, -ENOMEM, "cannot prepare --on-threshold: out of memory");
	rn->started = (unsigned)*started;
	rn->main_thread = pthread_self();
	if (!rn->rp->no_context)
		start_context(rn);
	watch_clock_start(rn, pp);
	return 0;
}

/* After join: how long the run took and why it ended. */
static void note_end(struct runner *rn)
{
	struct result *res = rn->res;
	uint64_t last = res->origin_ns;

	for (size_t i = 0; i < rn->n; i++)
		if (rn->w[i].stopped_ns > last)
			last = rn->w[i].stopped_ns;
	res->elapsed_ns = last - res->origin_ns;
	if (!res->interrupted)
		snprintf(res->stop_reason, sizeof(res->stop_reason), "%s", rn->rp->duration_ns ? "duration" : "loops");
	for (size_t i = 0; i < rn->n; i++) {
		const struct probe_thread *t = &rn->w[i].t;
		if (t->run_rc == 0)
			continue;
		result_note(res, "cpu %u stopped measuring early: %s", t->cpu, t->err);
		res->interrupted = true;
		res->failed = true;
		snprintf(res->stop_reason, sizeof(res->stop_reason), "error on cpu %u", t->cpu);
	}
}

/* After join of a run that went: the last windows and context into the result. */
static int finish_run(struct runner *rn, struct lat_error *err)
{
	struct result *res = rn->res;
	int r;

	note_end(rn);
	finish_triggers(rn);
	note_clock_steps(rn);
	if ((r = collect_last(rn)) < 0)
		err_set(err, 0, "cannot keep the results: %s", strerror(-r));
	uint64_t last_window = res->elapsed_ns / rn->rp->window_ns;
	for (size_t i = 0; rn->ctx && i < rn->n; i++)
		if (rn->w[i].final_invol >= 0 && !rn->w[i].t.measured_tid)   /* another's thread: still there */
			context_thread_ended(rn->ctx, i, (uint64_t)rn->w[i].final_invol);
	if (r == 0 && rn->ctx &&
	    context_finish(rn->ctx, res, last_window > rn->ctx_index ? last_window : rn->ctx_index) < 0)
		result_note(res, "interrupts and steal time of the last window could not be read");
	return r;
}

/* From the threads' start to their join, and what the run leaves in the result. */
static int measure(struct runner *rn, const void *pp, struct run_saved *sv, struct lat_error *err)
{
	size_t started = 0;
	uint64_t end_ns = UINT64_MAX;
	int r = start_run(rn, pp, sv, &started, &end_ns, err);

	if (r < 0) {
		gate_open(rn, GATE_ABORT);
	} else {
		gate_open(rn, GATE_GO);
		if ((r = supervise(rn, started, end_ns)) < 0) {
			request_stop(rn);
			err_set(err, 0, "cannot keep the results: %s", strerror(-r));
		}
	}
	for (size_t i = 0; i < rn->n; i++)
		if (rn->w[i].created)
			pthread_join(rn->w[i].tid, NULL);
	if (r == 0 && rn->gate == GATE_GO)
		r = finish_run(rn, err);
	if (r == 0 && rn->gate == GATE_GO && tracerun_active(rn->trace))
		finish_trace(rn);
	context_free(rn->ctx);
	trigger_watch_free(rn->trig);
	return r;
}

/* Every path: the system and this process as they were before the run. */
static void restore(struct runner *rn, struct run_saved *sv)
{
	tracerun_free(rn->trace, rn->res);      /* the tracefs instance, and a mount of latscope's */
	stop_ring(rn);
	if (sv->main_moved)
		cpus_pin(&sv->main_cpus);
	if (sv->locked)
		memlock_release();
	pmqos_release(&sv->pmqos_fd);
	release_idle(rn, &sv->idle);
	free_workers(rn);
	if (rn->dl_span)
		CPU_FREE(rn->dl_span);
	restore_signals(sv);
}

int runner_run(const struct probe_ops *ops, const struct run_params *rp, const void *pp,
	       struct result *res, const struct runner_hooks *hooks, struct lat_error *err)
{
	struct runner rn = {
		.ops = ops, .rp = rp, .res = res, .hooks = hooks,
		.n = cpuset_count(&rp->cpus),
		.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
		.gate = GATE_WAIT,
	};
	struct run_saved sv = { .pmqos_fd = -1 };
	int r;

	cpuidle_hold_init(&sv.idle);
	err->msg[0] = '\0';
	atomic_init(&rn.stop, false);
	atomic_init(&rn.finished, 0u);
	if (rn.n == 0 || rn.n != res->ncpus || probe_metrics(ops, pp) != res->nmetrics) {
		return err_set(err, -EINVAL, "internal: %zu CPUs for %zu results", rn.n, res->ncpus);
	}
	res->threshold_ns = rp->threshold_ns;
	res->warmup = rp->warmup;

	block_signals(&sv);
	if ((r = prepare(&rn, pp, &sv, err)) == 0)
		r = measure(&rn, pp, &sv, err);
	restore(&rn, &sv);
	return r;
}
