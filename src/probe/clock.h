/*
 * The clock probe: what it costs to read each clock, per CPU, whether the
 * kernel serves it in user space (vDSO) or by a system call, its resolution,
 * and whether it ever went backwards, on a CPU or across CPUs.
 *
 * Each measuring thread reads every clock twice back to back, round after
 * round; the difference is one sample of that clock's metric.  Beside the
 * samples it keeps what the histograms cannot say (struct clk_seen), and
 * publishes its latest reads in a slot of its own on the run's board, where
 * the other threads compare them with their own reads now and then.
 */
#ifndef LATSCOPE_PROBE_CLOCK_H
#define LATSCOPE_PROBE_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/cpuset.h"
#include "core/nstime.h"
#include "probe/probe.h"

/* The clocks, in metric order; the TSC last, so that a run without it records a prefix. */
enum clk_kind { CLK_MONOTONIC, CLK_MONOTONIC_RAW, CLK_REALTIME, CLK_TAI, CLK_BOOTTIME, CLK_TSC, CLK_KINDS };

/* How a clock's read reaches its value. */
enum clk_served { CLK_SERVED_UNKNOWN, CLK_SERVED_VDSO, CLK_SERVED_SYSCALL, CLK_SERVED_INSTRUCTION };

/* The value of a pair that went backwards: not a sample. */
#define CLK_NO_SAMPLE REC_NO_VALUE
/* How often a thread compares its clocks with another CPU's latest reads. */
#define CLK_CROSS_EVERY_NS (100u * NS_PER_US)

/* What one thread saw of one clock, beyond its samples.  Values in the clock's
 * own unit: ns, or cycles for the TSC. */
struct clk_seen {
	uint64_t min_step;              /* smallest non-zero difference of two back-to-back reads; UINT64_MAX: none */
	uint64_t same;                  /* back-to-back reads that gave the same value */
	uint64_t backwards;             /* reads earlier than the read before them, on this CPU */
	uint64_t back_max;              /* by how much, at most */
	uint64_t cross_checks;          /* reads compared with another CPU's latest read */
	uint64_t cross_backwards;       /* of which earlier than it */
	int64_t cross_margin;           /* smallest (own read - the other CPU's); negative: went backwards; INT64_MAX: none */
	uint64_t syscall_min_ns;        /* two back-to-back syscall(SYS_clock_gettime) reads, in setup; 0: not measured */
	uint64_t syscall_p50_ns;
	int served;                     /* enum clk_served */
};

/* One clock over every measured CPU, folded by the last thread to finish.  In ns. */
struct clk_total {
	unsigned cpus;                  /* CPUs folded in */
	unsigned served;                /* bit (1 << enum clk_served) for each verdict a CPU gave */
	uint64_t backwards;             /* reads earlier than the read before them, every CPU */
	uint64_t back_max_ns;
	int back_cpu;                   /* the CPU of back_max_ns; -1: none */
	uint64_t cross_checks, cross_backwards;
	int64_t cross_margin_ns;        /* INT64_MAX: no check */
	int margin_cpu;                 /* the CPU that read it; -1: none */
	uint64_t syscall_min_ns;        /* over the CPUs; UINT64_MAX: not measured */
	uint64_t syscall_p50_lo_ns, syscall_p50_hi_ns;
	uint64_t cycle_ps_lo, cycle_ps_hi;      /* the TSC: one cycle, as calibrated on each CPU */
};

struct clk_thread;                      /* a measuring thread's own state (probe/clock.c) */

/*
 * What the threads of a run share.  Its owner (the command's parameters)
 * keeps it for the whole run; zeroed before it.  dir is indexed by the CPU's
 * position among the measured ones: each thread's state, with the slot where
 * it publishes its latest reads.  The last thread to tear down folds every
 * thread's findings into total and frees their states.
 */
struct clk_board {
	_Atomic unsigned live;          /* threads set up and not yet torn down */
	struct clk_thread *dir[CPUSET_MAX];
	struct clk_total total[CLK_KINDS];
};

struct clock_params {
	bool tsc;                       /* the TSC is usable here (cycles_reliable) and measured */
	struct clk_board *board;        /* set by the command before the run */
};

extern const struct probe_ops clock_probe;
extern const char *const clk_names[CLK_KINDS];
extern const clockid_t clk_ids[CLK_KINDS - 1];

/* What a seen and a total start as: nothing seen, no check. */
void clk_seen_reset(struct clk_seen *s);
void clk_total_reset(struct clk_total *t);

/* Fold what the thread on cpu saw of clock k into t; cycle_ps converts the TSC's cycles. */
void clk_total_add(struct clk_total *t, const struct clk_seen *s, unsigned cpu, unsigned k, uint64_t cycle_ps);

/*
 * One pair of reads a then b, after prev (the clock's read before a; 0 for
 * none): counts the steps and what went backwards in s, and returns b - a, or
 * CLK_NO_SAMPLE when b is earlier than a.
 */
static inline uint64_t clk_step(struct clk_seen *s, uint64_t prev, uint64_t a, uint64_t b)
{
	if (__builtin_expect(a < prev, 0)) {
		s->backwards++;
		s->back_max = prev - a > s->back_max ? prev - a : s->back_max;
	}
	if (__builtin_expect(b < a, 0)) {
		s->backwards++;
		s->back_max = a - b > s->back_max ? a - b : s->back_max;
		return CLK_NO_SAMPLE;
	}
	uint64_t d = b - a;
	if (d == 0)
		s->same++;
	else if (d < s->min_step)
		s->min_step = d;
	return d;
}

/*
 * One comparison across CPUs: theirs was read by another CPU and handed over
 * (a release store, an acquire load) before mine was read here, so a clock
 * that agrees between CPUs gives mine >= theirs.  theirs 0: nothing to compare.
 */
static inline void clk_cross(struct clk_seen *s, uint64_t theirs, uint64_t mine)
{
	if (!theirs)
		return;
	s->cross_checks++;
	int64_t margin = mine >= theirs ? (mine - theirs > INT64_MAX ? INT64_MAX : (int64_t)(mine - theirs))
					: (theirs - mine > INT64_MAX ? INT64_MIN : -(int64_t)(theirs - mine));
	s->cross_backwards += margin < 0;
	if (margin < s->cross_margin)
		s->cross_margin = margin;
}

/*
 * How the kernel serves each of the n clocks ids here, in ret[i]:
 * CLK_SERVED_VDSO or CLK_SERVED_SYSCALL.  A helper thread forbids itself the
 * clock_gettime system call (a seccomp filter that fails it with EDOM) and
 * reads each clock through the C library: a read that still succeeds made no
 * system call.  0, or -errno when the filter cannot be installed (no seccomp,
 * or an architecture it is not written for): then every ret[i] is
 * CLK_SERVED_UNKNOWN.
 */
int clk_served_by(const clockid_t *ids, unsigned n, int *ret);

/* The guess when seccomp cannot tell: a read at most half a system call's cost makes none. */
int clk_served_by_timing(uint64_t read_p50_ns, uint64_t syscall_p50_ns);

#endif
