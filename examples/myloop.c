/*
 * myloop: a periodic program that says where its cycle starts with
 * latscope/loop.h (doc/loop.md), so that `latscope attach --loop NAME` can
 * measure it from outside.  The example of the header, and the program the
 * integration tests of `latscope attach` measure.
 *
 *   myloop [--period US] [--duration SEC | --cycles N] [--loop NAME]
 *          [--cpu N] [--fifo PRIO] [--threads N] [--dump FILE]
 *
 * Each of --threads threads (default 1) sleeps to absolute deadlines --period
 * microseconds apart (default 1000) with clock_nanosleep(TIMER_ABSTIME,
 * CLOCK_MONOTONIC).  At the top of each cycle it reads the clock once, with
 * ls_loop_wake_due (which records the time and the deadline in the loop's
 * ring when --loop NAME opened one, and only reads the clock otherwise): its
 * lateness is that time minus the deadline.  Then it calls control_step(), a real function with a
 * symbol of its own, so that `latscope attach --pid PID --func control_step`
 * can put a uprobe on it.  A wake later than a whole period counts the
 * deadlines it skipped as missed, and the next deadline is the first one
 * still ahead.  --cpu pins every thread to CPU N, --fifo runs them at
 * SCHED_FIFO PRIO (and locks memory).
 *
 * After every thread's first cycle it prints "ready PID" (flushed).  It runs
 * --duration seconds, or --cycles cycles per thread, or until SIGINT or
 * SIGTERM; then it prints one JSON line:
 *
 *   {"cycles": N, "missed": M, "lateness_ns": {"p50": .., "p99": .., "max": .., "min": ..},
 *    "step_ns": {"p50": .., "p99": ..}, "realtime_minus_monotonic_ns": D,
 *    "threads": [{"tid": T, "cycles": N}, ...]}
 *
 * step_ns is the time from the top of the cycle to control_step's return (what
 * a uprobe on it adds shows there); D lines CLOCK_MONOTONIC up with
 * CLOCK_REALTIME.  --dump FILE writes every kept cycle as a line "WAKE_NS
 * LATENESS_NS" (CLOCK_MONOTONIC), for a test that compares cycles one by one.
 *
 * min and max over every cycle; p50 and p99 exact (nearest rank) over the
 * samples kept: every one, up to 4 Mi per thread (the newest, beyond).
 * Exit status 0, 1 on an error, 2 on bad usage, each said on stderr.
 *
 * Built by meson (examples/meson.build) with -fno-omit-frame-pointer and
 * unstripped; by hand:  cc -O2 $(pkg-config --cflags latscope-loop) myloop.c -o myloop -pthread
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <latscope/loop.h>

#define NS_PER_US    UINT64_C(1000)
#define NS_PER_SEC   UINT64_C(1000000000)
#define KEEP_MAX     ((size_t)1 << 22) /* samples kept per thread */
#define KEEP_ENDLESS ((size_t)1 << 20) /* ... when the run has no end */

struct options {
	uint64_t period_ns;
	uint64_t duration_ns; /* 0: none */
	uint64_t cycles;      /* per thread; 0: none */
	const char *loop;
	int cpu;  /* -1: any */
	int fifo; /* 0: SCHED_OTHER */
	unsigned threads;
	const char *dump; /* NULL: none */
};

/* A little controller: a PI loop holding a simulated first-order plant at its
 * setpoint, through a short FIR filter of the measurement. */
struct controller {
	double setpoint, kp, ki;
	double integral, output, plant;
	double history[16];
	unsigned at;
};

struct worker {
	pthread_t thread;
	const struct options *opt;
	struct ls_loop loop;
	struct controller ctl;
	pid_t tid;
	int error;	  /* -errno of ls_loop_open, the affinity or the policy */
	char failed[160]; /* what failed, and why */
	uint64_t cycles, missed, min, max;
	uint64_t *kept, *woke, *step; /* per kept sample: lateness, wake time, step time */
	size_t cap, nkept; /* nkept counts every sample; kept[] holds the newest cap */
};

static atomic_bool stop;
static atomic_uint started;  /* threads past their first cycle, or failed */
static atomic_uint finished; /* threads out of their loop */

/* Exported and never inlined, for a uprobe: one step of the controller, given
 * the cycle's lateness as a disturbance.  Returns the new output. */
double control_step(struct controller *c, uint64_t lateness_ns);

__attribute__((noinline, used)) double control_step(struct controller *c, uint64_t lateness_ns)
{
	double measured = 0.0;

	c->history[c->at++ % 16u] = c->plant;
	for (unsigned k = 0; k < 16u; k++)
		measured += c->history[k] / 16.0;
	double error = c->setpoint - measured;
	c->integral += error;
	c->output = c->kp * error + c->ki * c->integral;
	c->plant += 0.05 * (c->output - c->plant) + (double)(lateness_ns % 1000u) * 1e-9;
	return c->output;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void keep(struct worker *w, uint64_t lateness, uint64_t woke)
{
	w->kept[w->nkept % w->cap] = lateness;
	w->woke[w->nkept % w->cap] = woke;
	w->nkept++;
	if (w->cycles == 0 || lateness < w->min)
		w->min = lateness;
	if (lateness > w->max)
		w->max = lateness;
	w->cycles++;
}

static int fail(struct worker *w, const char *what, int error)
{
	const char *why = strerror(-error);

	if (error == -EBUSY && w->opt->loop)
		why = "another running program has a loop of that name";
	snprintf(w->failed, sizeof(w->failed), "%s: %s", what, why);
	w->error = error;
	atomic_fetch_add(&started, 1);
	return error;
}

static int setup_thread(struct worker *w)
{
	const struct options *opt = w->opt;

	w->tid = (pid_t)syscall(SYS_gettid);
	if (opt->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(opt->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0)
			return fail(w, "cannot run on the CPU of --cpu", -errno);
	}
	if (opt->fifo > 0) {
		struct sched_param sp = { .sched_priority = opt->fifo };
		int r = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
		if (r != 0)
			return fail(w, "cannot run at SCHED_FIFO (--fifo)", -r);
	}
	/* After the affinity: the slot records the CPU the thread opened it on. */
	if (opt->loop) {
		int r = ls_loop_open(&w->loop, opt->loop, opt->period_ns);
		if (r < 0) {
			char what[96];
			snprintf(what, sizeof(what), "cannot open loop '%s'", opt->loop);
			return fail(w, what, r);
		}
	}
	return 0;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	const struct options *opt = w->opt;
	const uint64_t period = opt->period_ns;

	if (setup_thread(w) < 0) {
		atomic_fetch_add(&finished, 1);
		return NULL;
	}
	uint64_t next = mono_ns() + period;
	const uint64_t end = opt->duration_ns ? next - period + opt->duration_ns : UINT64_MAX;
	while (!atomic_load_explicit(&stop, memory_order_relaxed) && next <= end &&
	       (opt->cycles == 0 || w->cycles < opt->cycles)) {
		struct timespec ts = { .tv_sec = (time_t)(next / NS_PER_SEC),
				       .tv_nsec = (long)(next % NS_PER_SEC) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		/* The top of the cycle: one clock read, recorded in the loop's ring with the deadline
		 * when --loop opened it. */
		uint64_t now = ls_loop_wake_due(&w->loop, next);
		uint64_t lateness = now > next ? now - next : 0;
		keep(w, lateness, now);
		control_step(&w->ctl, lateness);
		w->step[(w->nkept - 1u) % w->cap] = mono_ns() - now;
		if (w->cycles == 1)
			atomic_fetch_add(&started, 1);
		uint64_t skipped = lateness / period;
		w->missed += skipped;
		next += (skipped + 1) * period;
	}
	ls_loop_close(&w->loop);
	if (w->cycles == 0)
		atomic_fetch_add(&started, 1);
	atomic_fetch_add(&finished, 1);
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Nearest rank: the smallest sample with at least pct % of them at or below it. */
static uint64_t rank(const uint64_t *sorted, size_t n, unsigned pct)
{
	size_t k = (n * pct + 99u) / 100u;
	return sorted[k > 0 ? k - 1 : 0];
}

static int report(struct worker *ws, unsigned n)
{
	uint64_t cycles = 0, missed = 0, min = UINT64_MAX, max = 0;
	size_t total = 0;

	for (unsigned i = 0; i < n; i++) {
		cycles += ws[i].cycles;
		missed += ws[i].missed;
		total += ws[i].nkept < ws[i].cap ? ws[i].nkept : ws[i].cap;
		if (ws[i].cycles > 0 && ws[i].min < min)
			min = ws[i].min;
		if (ws[i].max > max)
			max = ws[i].max;
	}
	uint64_t *all = malloc((total ? total : 1) * sizeof(*all));
	if (!all) {
		fprintf(stderr, "myloop: out of memory\n");
		return 1;
	}
	size_t at = 0;
	for (unsigned i = 0; i < n; i++) {
		size_t k = ws[i].nkept < ws[i].cap ? ws[i].nkept : ws[i].cap;
		memcpy(all + at, ws[i].kept, k * sizeof(*all));
		at += k;
	}
	qsort(all, total, sizeof(*all), by_value);
	printf("{\"cycles\": %" PRIu64 ", \"missed\": %" PRIu64 ", \"lateness_ns\": ", cycles,
	       missed);
	if (total > 0)
		printf("{\"p50\": %" PRIu64 ", \"p99\": %" PRIu64 ", \"max\": %" PRIu64
		       ", \"min\": %" PRIu64 "}",
		       rank(all, total, 50), rank(all, total, 99), max, min);
	else
		printf("{\"p50\": null, \"p99\": null, \"max\": null, \"min\": null}");
	/* the step times, sorted in the same buffer */
	at = 0;
	for (unsigned i = 0; i < n; i++) {
		size_t k = ws[i].nkept < ws[i].cap ? ws[i].nkept : ws[i].cap;
		memcpy(all + at, ws[i].step, k * sizeof(*all));
		at += k;
	}
	qsort(all, total, sizeof(*all), by_value);
	if (total > 0)
		printf(", \"step_ns\": {\"p50\": %" PRIu64 ", \"p99\": %" PRIu64 "}", rank(all, total, 50),
		       rank(all, total, 99));
	else
		printf(", \"step_ns\": {\"p50\": null, \"p99\": null}");
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	const uint64_t mono = mono_ns();
	printf(", \"realtime_minus_monotonic_ns\": %" PRIu64,
	       (uint64_t)rt.tv_sec * NS_PER_SEC + (uint64_t)rt.tv_nsec - mono);
	printf(", \"threads\": [");
	for (unsigned i = 0; i < n; i++)
		printf("%s{\"tid\": %ld, \"cycles\": %" PRIu64 "}", i ? ", " : "", (long)ws[i].tid,
		       ws[i].cycles);
	printf("]}\n");
	free(all);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

#define USAGE                                                                                \
	"usage: myloop [--period US] [--duration SEC | --cycles N] [--loop NAME] [--cpu N] " \
	"[--fifo PRIO] "                                                                     \
	"[--threads N] [--dump FILE]\n"

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "myloop: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n" USAGE);
	return 2;
}

/* A whole decimal number in [lo, hi]: 0, or -1. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *ret)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*ret = v;
	return 0;
}

/* --dump: every kept cycle, "WAKE_NS LATENESS_NS", oldest first per thread. */
static int dump(const struct worker *ws, unsigned n, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "myloop: --dump %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		const size_t k = ws[i].nkept < ws[i].cap ? ws[i].nkept : ws[i].cap;
		const size_t first = ws[i].nkept - k;
		for (size_t j = first; j < ws[i].nkept; j++)
			fprintf(f, "%" PRIu64 " %" PRIu64 "\n", ws[i].woke[j % ws[i].cap], ws[i].kept[j % ws[i].cap]);
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "myloop: --dump %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

static int parse(int argc, char **argv, struct options *opt)
{
	static const struct option longs[] = {
		{ "period", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'D' },
		{ "cycles", required_argument, NULL, 'n' },
		{ "loop", required_argument, NULL, 'l' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "fifo", required_argument, NULL, 'f' },
		{ "threads", required_argument, NULL, 't' },
		{ "dump", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	*opt = (struct options){ .period_ns = 1000 * NS_PER_US, .cpu = -1, .threads = 1 };
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64(optarg, 1, 10000000, &v) < 0)
				return usage("--period '%s': a whole number of microseconds, 1 to "
					     "10000000",
					     optarg);
			opt->period_ns = v * NS_PER_US;
			break;
		case 'D': {
			char *end;
			errno = 0;
			double s = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' || !(s > 0.0 && s <= 1e6))
				return usage(
					"--duration '%s': seconds, more than 0 and at most 1000000",
					optarg);
			opt->duration_ns = (uint64_t)(s * 1e9);
			break;
		}
		case 'n':
			if (parse_u64(optarg, 1, UINT64_MAX, &opt->cycles) < 0)
				return usage("--cycles '%s': a whole number, at least 1", optarg);
			break;
		case 'l': {
			char shm_name[LS_LOOP_SHM_NAME_SIZE];
			if (ls_loop_shm_name(shm_name, optarg) < 0)
				return usage(
					"--loop '%s': 1 to 64 of A-Z, a-z, 0-9, '_', '.' and '-'",
					optarg);
			opt->loop = optarg;
			break;
		}
		case 'c':
			if (parse_u64(optarg, 0, CPU_SETSIZE - 1, &v) < 0)
				return usage("--cpu '%s': a CPU number", optarg);
			opt->cpu = (int)v;
			break;
		case 'f':
			if (parse_u64(optarg, 1, 99, &v) < 0)
				return usage("--fifo '%s': a priority, 1 to 99", optarg);
			opt->fifo = (int)v;
			break;
		case 't':
			if (parse_u64(optarg, 1, LS_LOOP_SLOTS, &v) < 0)
				return usage("--threads '%s': 1 to 64", optarg);
			opt->threads = (unsigned)v;
			break;
		case 'd':
			opt->dump = optarg;
			break;
		case 'h':
			fputs(USAGE "A periodic program that marks the top of its cycle for "
				    "latscope attach "
				    "--loop NAME (see the head of examples/myloop.c).\n",
			      stdout);
			return 1;
		default: return usage("%s", "bad usage");
		}
	}
	if (optind < argc)
		return usage("unexpected argument '%s'", argv[optind]);
	if (opt->duration_ns && opt->cycles)
		return usage("%s", "--duration and --cycles: one or the other");
	return 0;
}

/* Samples kept per thread: every one of a bounded run, up to KEEP_MAX. */
static size_t keep_cap(const struct options *opt)
{
	uint64_t want = opt->cycles	   ? opt->cycles
			: opt->duration_ns ? opt->duration_ns / opt->period_ns + 1
					   : KEEP_ENDLESS;
	return want < KEEP_MAX ? (size_t)want : KEEP_MAX;
}

int main(int argc, char **argv)
{
	struct options opt;
	sigset_t sigs;
	int r = parse(argc, argv, &opt);

	if (r != 0)
		return r == 1 ? 0 : r;
	if (opt.fifo > 0 && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
		fprintf(stderr, "myloop: cannot lock memory (going on): %s\n", strerror(errno));
	struct worker *ws = calloc(opt.threads, sizeof(*ws));
	if (!ws) {
		fprintf(stderr, "myloop: out of memory\n");
		return 1;
	}
	size_t cap = keep_cap(&opt);
	for (unsigned i = 0; i < opt.threads; i++) {
		ws[i].opt = &opt;
		ws[i].loop = (struct ls_loop)LS_LOOP_INIT;
		ws[i].ctl = (struct controller){ .setpoint = 1.0, .kp = 0.4, .ki = 0.05 };
		ws[i].cap = cap;
		ws[i].kept = malloc(cap * sizeof(uint64_t));
		ws[i].woke = malloc(cap * sizeof(uint64_t));
		ws[i].step = malloc(cap * sizeof(uint64_t));
		if (!ws[i].kept || !ws[i].woke || !ws[i].step) {
			fprintf(stderr, "myloop: out of memory for %zu samples\n", cap);
			return 1;
		}
		/* faulted in before the loop */
		memset(ws[i].kept, 0, cap * sizeof(uint64_t));
		memset(ws[i].woke, 0, cap * sizeof(uint64_t));
		memset(ws[i].step, 0, cap * sizeof(uint64_t));
	}

	/* The threads run with SIGINT and SIGTERM blocked; this one waits for them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	for (unsigned i = 0; i < opt.threads; i++) {
		r = pthread_create(&ws[i].thread, NULL, run, &ws[i]);
		if (r != 0) {
			fprintf(stderr, "myloop: cannot start a thread: %s\n", strerror(r));
			atomic_store(&stop, true);
			for (unsigned j = 0; j < i; j++)
				pthread_join(ws[j].thread, NULL);
			return 1;
		}
	}
	/* "ready" once every thread is past its first cycle, also when the run was over by then */
	bool ready = false;
	for (;;) {
		bool done =
			atomic_load(&finished) == opt.threads; /* each started before it finished */
		if (!ready && atomic_load(&started) == opt.threads) {
			ready = true;
			for (unsigned i = 0; i < opt.threads; i++)
				if (ws[i].error)
					atomic_store(&stop, true);
			if (!atomic_load(&stop)) {
				printf("ready %ld\n", (long)getpid());
				fflush(stdout);
			}
		}
		if (done)
			break;
		struct timespec wait = { 0, ready ? 50000000 : 2000000 };
		if (sigtimedwait(&sigs, NULL, &wait) > 0)
			atomic_store(&stop, true);
	}
	for (unsigned i = 0; i < opt.threads; i++)
		pthread_join(ws[i].thread, NULL);
	for (unsigned i = 0; i < opt.threads; i++) {
		if (ws[i].error) {
			fprintf(stderr, "myloop: %s\n", ws[i].failed);
			return 1;
		}
	}
	r = report(ws, opt.threads);
	if (r == 0 && opt.dump)
		r = dump(ws, opt.threads, opt.dump);
	for (unsigned i = 0; i < opt.threads; i++) {
		free(ws[i].kept);
		free(ws[i].woke);
		free(ws[i].step);
	}
	free(ws);
	return r;
}
