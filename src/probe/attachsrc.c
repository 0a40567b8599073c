#include "probe/attachsrc.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/nstime.h"
#include "core/units.h"
#include "core/parse.h"
#include "probe/loopring.h"
#include "probe/uprobe.h"

/* Calls a thread must make before the run when the period is estimated: 16 intervals. */
#define ESTIMATE_CALLS 17u
/* How long to look for calls: the least, and the most when the period is given or estimated. */
#define LOOK_MIN_NS   (200u * NS_PER_MS)
#define LOOK_GIVEN_NS (5u * NS_PER_SEC)
#define LOOK_EST_NS   (10u * NS_PER_SEC)
#define LOOK_STEP_NS  (50u * NS_PER_MS)

static void nap(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NS_PER_SEC),
			       .tv_nsec = (long)(ns % NS_PER_SEC) };
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static bool exited(const struct attach_src *s)
{
	struct pollfd p = { .fd = s->pidfd, .events = POLLIN };
	return poll(&p, 1, 0) == 1;
}

static int open_pid(struct attach_src *s, pid_t pid, const char *opt, struct lat_error *err)
{
	if (pid <= 0 || kill(pid, 0) < 0) {
		if (pid > 0 && errno == EPERM)
			return err_set(err, -EPERM,
				       "%s: process %d is not yours (attaching to another user's "
				       "process needs "
				       "root)",
				       opt, (int)pid);
		return err_set(err, -ESRCH, "%s: no process %d", opt, (int)pid);
	}
	s->pid = pid;
	s->pidfd = pidfd_open(pid, 0);
	if (s->pidfd < 0)
		return err_set(err, -errno, "%s: cannot watch process %d: %s", opt, (int)pid,
			       strerror(errno));
	return 0;
}

/* --tid's threads, each a thread of the process.  The count, or -errno with err filled. */
static int wanted_tids(const struct attach_want *p, pid_t pid, pid_t *out, size_t cap,
		       struct lat_error *err)
{
	size_t n = 0;
	for (unsigned i = 0; p->tids && i < p->tids->n; i++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s", p->tids->items[i]);
		for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			int64_t v;
			char path[64];
			struct stat st;
			if (parse_i64(tok, &v) < 0 || v <= 0 || v > INT32_MAX)
				return err_set(err, -EINVAL,
					       "option '--tid': '%s' is not a thread id", tok);
			snprintf(path, sizeof(path), "/proc/%d/task/%lld", (int)pid, (long long)v);
			if (stat(path, &st) < 0)
				return err_set(err, -ESRCH,
					       "option '--tid': %lld is not a thread of process %d",
					       (long long)v, (int)pid);
			if (n == cap)
				return err_set(err, -E2BIG, "option '--tid': more than %zu threads",
					       cap);
			out[n++] = (pid_t)v;
		}
	}
	return (int)n;
}

static bool in(const pid_t *set, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == tid)
			return true;
	return false;
}

/* The thread's kernel prio, as trace events give it. */
static int prio_of(pid_t tid)
{
	struct sched_param sp;
	const int policy = sched_getscheduler(tid);
	if ((policy == SCHED_FIFO || policy == SCHED_RR) && sched_getparam(tid, &sp) == 0)
		return 99 - sp.sched_priority;
	errno = 0;
	const int nice = getpriority(PRIO_PROCESS, (id_t)tid);
	return errno ? 120 : 120 + nice;
}

/* The thread's home: the one CPU it may run on, else seen. */
static void place(struct attach_thread *th, unsigned seen)
{
	cpu_set_t set;
	th->prio = prio_of(th->tid);
	th->cpu = seen;
	th->pinned = false;
	if (sched_getaffinity(th->tid, sizeof(set), &set) == 0 && CPU_COUNT(&set) == 1) {
		for (unsigned c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				th->cpu = c;
				th->pinned = true;
				break;
			}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Until the threads have called it enough (or the time to look is up): the threads seen. */
static int look(struct attach_src *s, const struct attach_want *p, const pid_t *want,
		size_t nwant, struct uprobe_seen *seen, size_t *ret_n, struct lat_error *err)
{
	const uint64_t start = mono_ns();
	const uint64_t most = p->period_ns ? (LOOK_GIVEN_NS > 3u * p->period_ns ? LOOK_GIVEN_NS
										: 3u * p->period_ns)
					   : LOOK_EST_NS;
	size_t n = 0;

	for (;;) {
		nap(LOOK_STEP_NS);
		if (exited(s))
			return err_set(err, -ESRCH, "process %d ended before anything was measured",
				       (int)s->pid);
		int r = uprobe_seen(s->up, seen, ATTACH_THREADS);
		if (r < 0)
			return err_set(err, r, "cannot read which threads called %s: %s", p->func,
				       strerror(-r));
		n = 0;
		bool enough = true;
		for (int i = 0; i < r; i++) {
			if (nwant && !in(want, nwant, seen[i].tid))
				continue;
			if (!p->period_ns && seen[i].calls < ESTIMATE_CALLS)
				enough = false;
			seen[n++] = seen[i];
		}
		const uint64_t took = mono_ns() - start;
		if (n && enough && took >= LOOK_MIN_NS &&
		    (!p->period_ns || took >= 3u * p->period_ns))
			break;
		if (took >= most)
			break;
	}
	*ret_n = n;
	if (n == 0) {
		char d[32];
		fmt_duration(most, d, sizeof(d));
		return err_set(err, -ENODATA, "%s %d did not call %s in %s",
			       nwant ? "no chosen thread of process" : "process", (int)s->pid,
			       p->func, d);
	}
	return 0;
}

/* The intervals between the first calls' due times, or else their entries: how many. */
static size_t intervals(const struct uprobe_seen *seen, size_t n, bool due, uint64_t *iv)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 1; j < seen[i].nfirst; j++) {
			const uint64_t *t = due ? seen[i].first_due : seen[i].first;
			if (t[j - 1u] && t[j] > t[j - 1u])
				iv[k++] = t[j] - t[j - 1u];
		}
	return k;
}

/* The median interval of the threads' first calls: exact from the due times of their sleeps
 * (a loop on absolute times asks for whole periods), else from when the calls came. */
static int estimate(struct attach_src *s, const struct uprobe_seen *seen, size_t n,
		    const char *what, struct lat_error *err)
{
	uint64_t iv[ATTACH_THREADS * 31u];
	size_t k = intervals(seen, n, true, iv);
	s->from_due = k >= 4u;
	if (!s->from_due)
		k = intervals(seen, n, false, iv);
	if (k < 4u)
		return err_set(err, -ENODATA,
			       "%s was called %zu times in %us: too few to estimate its period; "
			       "give --period",
			       what, k + n, (unsigned)(LOOK_EST_NS / NS_PER_SEC));
	qsort(iv, k, sizeof(iv[0]), cmp_u64);
	s->period_ns = iv[k / 2u];
	s->estimated = true;
	s->intervals = k;
	return 0;
}

static int open_uprobe(struct attach_src *s, const struct attach_want *p, struct lat_error *err)
{
	pid_t want[ATTACH_THREADS];
	struct uprobe_seen *seen = calloc(ATTACH_THREADS, sizeof(*seen));
	size_t n = 0;
	int r;

	if (!seen)
		return err_set(err, -ENOMEM, "out of memory");
	if ((r = open_pid(s, p->pid, "option '--pid'", err)) < 0 ||
	    (r = wanted_tids(p, s->pid, want, ATTACH_THREADS, err)) < 0)
		goto out;
	const size_t nwant = (size_t)r;
	if ((r = uprobe_open(s->pid, p->func, &s->up, err)) < 0 ||
	    (r = look(s, p, want, nwant, seen, &n, err)) < 0)
		goto out;
	if (!p->period_ns && (r = estimate(s, seen, n, p->func, err)) < 0)
		goto out;
	s->n = n;
	for (size_t i = 0; i < n; i++) {
		s->th[i].tid = seen[i].tid;
		place(&s->th[i], seen[i].cpu);
	}
	snprintf(s->where, sizeof(s->where), "%s in %s, process %d", p->func, uprobe_where(s->up),
		 (int)s->pid);
	r = 0;
out:
	free(seen);
	return r;
}

static int open_loop(struct attach_src *s, const struct attach_want *p, struct lat_error *err)
{
	pid_t want[ATTACH_THREADS];
	int r = loopring_open(p->loop, &s->lr, err);

	s->loop = true;
	if (r < 0)
		return r;
	if ((r = open_pid(s, loopring_pid(s->lr), "option '--loop'", err)) < 0 ||
	    (r = wanted_tids(p, s->pid, want, ATTACH_THREADS, err)) < 0)
		return r;
	const size_t nwant = (size_t)r;
	const uint64_t start = mono_ns();
	while (loopring_nthreads(s->lr) == 0 && mono_ns() - start < LOOK_GIVEN_NS && !exited(s))
		nap(LOOK_STEP_NS);
	for (size_t i = 0; i < loopring_nthreads(s->lr) && s->n < ATTACH_THREADS; i++) {
		struct loopring_thread lt;
		if (loopring_thread(s->lr, i, &lt) < 0 || lt.closed ||
		    (nwant && !in(want, nwant, lt.tid)))
			continue;
		struct attach_thread *th = &s->th[s->n++];
		th->tid = lt.tid;
		th->slot = i;
		place(th, lt.cpu >= 0 ? (unsigned)lt.cpu : 0u);
		if (!p->period_ns && !s->period_ns)
			s->period_ns = lt.period_ns;
	}
	if (s->n == 0)
		return err_set(err, -ENODATA, "option '--loop': no thread of loop %s is running%s",
			       p->loop, nwant ? " among those --tid names" : "");
	if (p->period_ns)
		s->period_ns = p->period_ns;
	if (!s->period_ns)
		return err_set(err, -EINVAL,
			       "option '--loop': loop %s declares no period; give --period",
			       p->loop);
	snprintf(s->where, sizeof(s->where), "loop %s, process %d", p->loop, (int)s->pid);
	return 0;
}

int attachsrc_open(const struct attach_want *p, struct attach_src **ret, struct lat_error *err)
{
	struct attach_src *s = calloc(1, sizeof(*s));
	int r;

	*ret = NULL;
	if (!s)
		return err_set(err, -ENOMEM, "out of memory");
	s->pidfd = -1;
	s->period_ns = p->period_ns;
	r = p->loop ? open_loop(s, p, err) : open_uprobe(s, p, err);
	if (r < 0) {
		attachsrc_close(s);
		return r;
	}
	cpuset_clear(&s->cpus);
	for (size_t i = 0; i < s->n; i++)
		cpuset_add(&s->cpus, s->th[i].cpu);
	for (size_t i = 0; i < s->n; i++)
		s->th[i].worker = (unsigned)attachsrc_worker(s, s->th[i].cpu);
	*ret = s;
	return 0;
}

int attachsrc_worker(const struct attach_src *s, unsigned cpu)
{
	int idx = 0;
	for (int c = cpuset_next(&s->cpus, 0); c >= 0;
	     c = cpuset_next(&s->cpus, (unsigned)c + 1u), idx++)
		if ((unsigned)c == cpu)
			return idx;
	return -1;
}

int attachsrc_start(struct attach_src *s, struct lat_error *err)
{
	if (s->loop) {
		for (size_t i = 0; i < s->n; i++)
			loopring_skip_to_now(s->lr, s->th[i].slot);
		return 0;
	}
	for (size_t i = 0; i < s->n; i++) {
		int r = uprobe_route(s->up, s->th[i].tid, s->th[i].worker);
		if (r < 0)
			return err_set(err, r, "cannot route thread %d's calls: %s",
				       (int)s->th[i].tid, strerror(-r));
	}
	return uprobe_start(s->up, (unsigned)cpuset_count(&s->cpus), err);
}

void attachsrc_close(struct attach_src *s)
{
	if (!s)
		return;
	uprobe_close(s->up);
	if (s->lr)
		loopring_close(s->lr);
	if (s->pidfd >= 0)
		close(s->pidfd);
	free(s);
}
