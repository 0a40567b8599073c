/*
 * One thread per CPU reads each clock twice back to back, round after round:
 * the difference is one sample of that clock's read cost.  Between rounds it
 * publishes its latest reads for the other CPUs and, every
 * CLK_CROSS_EVERY_NS, compares another CPU's latest reads with its own.
 */
#include "probe/clock.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/array.h"
#include "probe/cycles.h"

#define CALIBRATE_NS  (20u * NS_PER_MS)
#define SYSCALL_PAIRS 301               /* direct system call reads per clock, in setup: an odd count has a median */
#define HELPER_STACK  (64u * 1024u)

/* The system call the C library's clock_gettime makes when the vDSO cannot serve. */
#ifdef SYS_clock_gettime64
#define CLK_SYS_GETTIME SYS_clock_gettime64
#else
#define CLK_SYS_GETTIME SYS_clock_gettime
#endif

#if defined(__x86_64__) && !defined(__ILP32__)
#define CLK_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__i386__)
#define CLK_AUDIT_ARCH AUDIT_ARCH_I386
#elif defined(__aarch64__)
#define CLK_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

_Static_assert(CLK_KINDS <= REC_MAX_METRICS, "a result holds every clock as a metric");

const char *const clk_names[CLK_KINDS] = { "monotonic", "monotonic_raw", "realtime", "tai", "boottime", "tsc" };
const clockid_t clk_ids[CLK_KINDS - 1] = { CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_REALTIME, CLOCK_TAI,
					   CLOCK_BOOTTIME };

void clk_seen_reset(struct clk_seen *s)
{
	*s = (struct clk_seen){ .min_step = UINT64_MAX, .cross_margin = INT64_MAX, .served = CLK_SERVED_UNKNOWN };
}

void clk_total_reset(struct clk_total *t)
{
	*t = (struct clk_total){ .back_cpu = -1, .cross_margin_ns = INT64_MAX, .margin_cpu = -1,
				 .syscall_min_ns = UINT64_MAX, .syscall_p50_lo_ns = UINT64_MAX,
				 .cycle_ps_lo = UINT64_MAX };
}

/* v of clock k in ns: the TSC's are cycles of cycle_ps picoseconds. */
static uint64_t in_ns(unsigned k, uint64_t v, uint64_t cycle_ps)
{
	return k == CLK_TSC ? (uint64_t)((cycles_u128)v * cycle_ps / 1000u) : v;
}

void clk_total_add(struct clk_total *t, const struct clk_seen *s, unsigned cpu, unsigned k, uint64_t cycle_ps)
{
	t->cpus++;
	t->served |= 1u << s->served;
	if (s->backwards && (t->back_cpu < 0 || in_ns(k, s->back_max, cycle_ps) > t->back_max_ns)) {
		t->back_max_ns = in_ns(k, s->back_max, cycle_ps);
		t->back_cpu = (int)cpu;
	}
	t->backwards += s->backwards;
	t->cross_checks += s->cross_checks;
	t->cross_backwards += s->cross_backwards;
	if (s->cross_checks) {
		uint64_t mag = in_ns(k, s->cross_margin < 0 ? -(uint64_t)s->cross_margin : (uint64_t)s->cross_margin,
				     cycle_ps);
		int64_t m = mag > INT64_MAX ? (s->cross_margin < 0 ? INT64_MIN : INT64_MAX)
					    : s->cross_margin < 0 ? -(int64_t)mag : (int64_t)mag;
		if (m < t->cross_margin_ns || t->margin_cpu < 0) {
			t->cross_margin_ns = m;
			t->margin_cpu = (int)cpu;
		}
	}
	if (s->syscall_p50_ns) {
		t->syscall_min_ns = s->syscall_min_ns < t->syscall_min_ns ? s->syscall_min_ns : t->syscall_min_ns;
		t->syscall_p50_lo_ns = s->syscall_p50_ns < t->syscall_p50_lo_ns ? s->syscall_p50_ns : t->syscall_p50_lo_ns;
		t->syscall_p50_hi_ns = s->syscall_p50_ns > t->syscall_p50_hi_ns ? s->syscall_p50_ns : t->syscall_p50_hi_ns;
	}
	if (k == CLK_TSC) {
		t->cycle_ps_lo = cycle_ps < t->cycle_ps_lo ? cycle_ps : t->cycle_ps_lo;
		t->cycle_ps_hi = cycle_ps > t->cycle_ps_hi ? cycle_ps : t->cycle_ps_hi;
	}
}

/* ---- vDSO or system call ---- */

struct served_job {
	const clockid_t *ids;
	unsigned n;
	int *ret;
	int rc;
};

static void *served_helper(void *arg)
{
	struct served_job *job = arg;
#ifdef CLK_AUDIT_ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CLK_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clock_gettime, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CLK_SYS_GETTIME, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EDOM & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = { .len = (unsigned short)ARRAY_SIZE(f), .filter = f };
	struct timespec ts;

	/* Both bind this thread alone, and end with it. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		job->rc = -errno;
		return NULL;
	}
	/* The filter must bite, or a successful read proves nothing. */
	if (syscall(CLK_SYS_GETTIME, CLOCK_MONOTONIC, &ts) == 0 || errno != EDOM) {
		job->rc = -ENOTSUP;
		return NULL;
	}
	for (unsigned i = 0; i < job->n; i++) {
		errno = 0;
		job->ret[i] = clock_gettime(job->ids[i], &ts) == 0 ? CLK_SERVED_VDSO
			    : errno == EDOM ? CLK_SERVED_SYSCALL : CLK_SERVED_UNKNOWN;
	}
	job->rc = 0;
#else
	job->rc = -ENOTSUP;
#endif
	return NULL;
}

int clk_served_by(const clockid_t *ids, unsigned n, int *ret)
{
	struct served_job job = { .ids = ids, .n = n, .ret = ret, .rc = -ECHILD };
	pthread_attr_t attr;
	pthread_t tid;
	int r;

	for (unsigned i = 0; i < n; i++)
		ret[i] = CLK_SERVED_UNKNOWN;
	if ((r = pthread_attr_init(&attr)) != 0)
		return -r;
	pthread_attr_setstacksize(&attr, HELPER_STACK);
	r = pthread_create(&tid, &attr, served_helper, &job);
	pthread_attr_destroy(&attr);
	if (r != 0)
		return -r;
	pthread_join(tid, NULL);
	if (job.rc < 0)
		for (unsigned i = 0; i < n; i++)
			ret[i] = CLK_SERVED_UNKNOWN;
	return job.rc;
}

int clk_served_by_timing(uint64_t read_p50_ns, uint64_t syscall_p50_ns)
{
	if (!syscall_p50_ns)
		return CLK_SERVED_UNKNOWN;
	return 2u * read_p50_ns <= syscall_p50_ns ? CLK_SERVED_VDSO : CLK_SERVED_SYSCALL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The same two reads as a sample, each a direct system call: what the vDSO spares. */
static void syscall_cost(clockid_t id, struct clk_seen *s)
{
	uint64_t d[SYSCALL_PAIRS];
	struct timespec a, b;

	for (unsigned i = 0; i < SYSCALL_PAIRS; i++) {
		if (syscall(CLK_SYS_GETTIME, id, &a) < 0 || syscall(CLK_SYS_GETTIME, id, &b) < 0)
			return;         /* not measured: stays 0 */
		d[i] = ts_to_ns(&b) >= ts_to_ns(&a) ? ts_to_ns(&b) - ts_to_ns(&a) : 0;
	}
	qsort(d, SYSCALL_PAIRS, sizeof(d[0]), cmp_u64);
	s->syscall_min_ns = d[0];
	s->syscall_p50_ns = d[SYSCALL_PAIRS / 2u];
}

/* ---- the probe ---- */

/*
 * A measuring thread's state.  Its first cache line is the slot where it
 * publishes its latest reads for the other threads (release stores, acquire
 * loads): no other thread's data shares that line.
 */
struct clk_thread {
	_Alignas(64) _Atomic uint64_t published[CLK_KINDS];     /* 0: nothing read yet */
	_Alignas(64) unsigned index;    /* this CPU's position among the measured ones */
	unsigned n;                     /* how many are measured */
	unsigned cpu;
	struct cycles_scale scale;
	uint64_t last[CLK_KINDS];       /* each clock's latest read */
	struct clk_seen seen[CLK_KINDS];
};

static int clk_setup(struct probe_thread *t)
{
	const struct clock_params *p = t->pp;
	struct clk_thread *s = aligned_alloc(64, (sizeof(*s) + 63u) / 64u * 64u);
	int served[CLK_KINDS - 1];

	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	s->n = cpuset_count(&t->rp->cpus);
	s->cpu = t->cpu;
	for (unsigned c = 0; c < t->cpu; c++)
		s->index += cpuset_has(&t->rp->cpus, c);
	for (unsigned k = 0; k < CLK_KINDS; k++) {
		atomic_init(&s->published[k], 0);
		clk_seen_reset(&s->seen[k]);
	}
	/* On the measuring CPU: a counter that differs between CPUs is calibrated where it is read. */
	if (p->tsc && cycles_calibrate(&s->scale, CALIBRATE_NS) < 0) {
		snprintf(t->err, sizeof(t->err), "the cycle counter did not advance while calibrating");
		free(s);
		return -EIO;
	}
	clk_served_by(clk_ids, CLK_KINDS - 1u, served);         /* unknown when it cannot tell: said after the run */
	for (unsigned k = 0; k < CLK_KINDS - 1u; k++) {
		s->seen[k].served = served[k];
		syscall_cost(clk_ids[k], &s->seen[k]);
	}
	s->seen[CLK_TSC].served = CLK_SERVED_INSTRUCTION;
	/* Every setup ends before the runner opens its start gate, and every
	 * teardown begins after it: the others find this state from the first
	 * read on, and live cannot reach 0 before the last teardown. */
	p->board->dir[s->index] = s;
	atomic_fetch_add(&p->board->live, 1u);
	t->priv = s;
	return 0;
}

/* The last thread out folds every thread's findings into the board's totals and frees their states. */
static void clk_teardown(struct probe_thread *t)
{
	const struct clock_params *p = t->pp;
	struct clk_board *b = p->board;

	t->priv = NULL;         /* the board's now: another thread may still read its slot */
	if (atomic_fetch_sub(&b->live, 1u) != 1u)
		return;
	for (unsigned k = 0; k < CLK_KINDS; k++)
		clk_total_reset(&b->total[k]);
	for (unsigned i = 0; i < CPUSET_MAX; i++) {
		struct clk_thread *s = b->dir[i];
		if (!s)
			continue;
		for (unsigned k = 0; k < (p->tsc ? CLK_KINDS : CLK_KINDS - 1u); k++)
			clk_total_add(&b->total[k], &s->seen[k], s->cpu, k, s->scale.ns_per_cycle_x1000);
		free(s);
		b->dir[i] = NULL;
	}
}

static inline __attribute__((always_inline)) uint64_t clk_read(enum clk_kind k)
{
	if (k == CLK_TSC)
		return cycles_read();
	struct timespec ts;
	clock_gettime(clk_ids[k], &ts);
	return ts_to_ns(&ts);
}

/* One sample of clock k: two reads back to back, and what they say of the clock. */
static inline __attribute__((always_inline)) uint64_t clk_pair(struct clk_thread *s, enum clk_kind k)
{
	uint64_t a = clk_read(k);
	uint64_t b = clk_read(k);
	uint64_t d = clk_step(&s->seen[k], s->last[k], a, b);
	s->last[k] = b;
	return d;
}

/* Another CPU's latest reads against this CPU's own, read after them. */
static void clk_cross_all(struct clk_thread *s, struct clk_thread *theirs, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		uint64_t v = atomic_load_explicit(&theirs->published[k], memory_order_acquire);
		clk_cross(&s->seen[k], v, clk_read((enum clk_kind)k));
	}
}

/* The loop; always_inline: one copy with the TSC and one without. */
static inline __attribute__((always_inline)) void clk_spin(struct probe_thread *t, struct clk_thread *s, bool tsc)
{
	const struct clock_params *p = t->pp;
	struct recorder *rec = &t->rec;
	const unsigned n = tsc ? CLK_KINDS : CLK_KINDS - 1u;
	const uint64_t loops = t->rp->loops, end = t->end_ns;
	const struct cycles_scale scale = s->scale;
	uint64_t next_cross = t->origin_ns + CLK_CROSS_EVERY_NS, rounds = 0;
	unsigned peer = s->index;

	for (;;) {
		struct rec_sample smp = { .nv = n, .gaps = true, .untimed = true };
		uint64_t *d = smp.v;
		d[CLK_MONOTONIC] = clk_pair(s, CLK_MONOTONIC);
		d[CLK_MONOTONIC_RAW] = clk_pair(s, CLK_MONOTONIC_RAW);
		d[CLK_REALTIME] = clk_pair(s, CLK_REALTIME);
		d[CLK_TAI] = clk_pair(s, CLK_TAI);
		d[CLK_BOOTTIME] = clk_pair(s, CLK_BOOTTIME);
		if (tsc) {
			uint64_t c = clk_pair(s, CLK_TSC);
			d[CLK_TSC] = c == CLK_NO_SAMPLE ? c : cycles_to_ns(&scale, c);
		}
		const uint64_t now = s->last[CLK_MONOTONIC];
		smp.now_ns = smp.at_ns = now;
		rec_sample(rec, &smp);
		for (unsigned k = 0; k < n; k++)
			atomic_store_explicit(&s->published[k], s->last[k], memory_order_release);
		if (__builtin_expect(now >= next_cross, 0)) {
			if (s->n > 1u) {
				peer = (peer + 1u) % s->n;
				if (peer == s->index)
					peer = (peer + 1u) % s->n;
				if (p->board->dir[peer])
					clk_cross_all(s, p->board->dir[peer], n);
			}
			next_cross = now + CLK_CROSS_EVERY_NS;
		}
		if (now >= end || (loops && ++rounds >= loops) || atomic_load_explicit(t->stop, memory_order_relaxed))
			return;
	}
}

static void clk_run(struct probe_thread *t)
{
	const struct clock_params *p = t->pp;
	/* Start with the other CPUs at the run's origin; a stop signal ends the
	 * sleep early and the loop sees it after one round. */
	struct timespec at = ns_to_ts(t->origin_ns);
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
	if (p->tsc)
		clk_spin(t, t->priv, true);
	else
		clk_spin(t, t->priv, false);
}

/* The TSC is the last metric: without it, the prefix of the others. */
static unsigned clk_metrics_for(const void *pp)
{
	return ((const struct clock_params *)pp)->tsc ? CLK_KINDS : CLK_KINDS - 1u;
}

const struct probe_ops clock_probe = {
	.name = "clock",
	.title = "clock read cost",
	.about = "clock read cost: two back-to-back reads of each clock, per CPU",
	.nmetrics = CLK_KINDS,
	.metric_names = clk_names,
	.metrics_for = clk_metrics_for,
	.min_metrics = CLK_KINDS - 1,    /* without the TSC */
	.unit_ns = 1,
	.suite_share = 0,
	.setup = clk_setup,
	.run = clk_run,
	.teardown = clk_teardown,
};
