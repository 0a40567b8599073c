/*
 * Regression-gate expressions for `compare --fail-if`, such as
 *     p99>+10%      p99 more than 10 % above the baseline's, and the verdict calls it real
 *     p99>+10%!     the same compared raw, whether or not the difference is significant
 *     max>200us     max above an absolute 200 us
 *     mean>=+5%     missed>0     above_pct>1.5     p99.9<-20%
 * STAT OP VALUE, no spaces needed (spaces around the parts are allowed).
 */
#ifndef LATSCOPE_CORE_EXPR_H
#define LATSCOPE_CORE_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

enum expr_stat {
	EXPR_MIN, EXPR_MEAN, EXPR_STDDEV, EXPR_P50, EXPR_P90, EXPR_P99, EXPR_P999, EXPR_P9999, EXPR_MAX,
	EXPR_WARM_MAX, EXPR_ABOVE_PCT, EXPR_MISSED, EXPR_COUNT,
	EXPR_SPIKES, EXPR_SPIKES_PER_HOUR, EXPR_MTBF,   /* the leading metric's over a long run (result.h) */
	/* a run of operations' (io's reads, result.h struct op_figures), of the whole run: the
	 * throughput, and the whole machine's CPU time per operation in /proc/stat's categories */
	EXPR_OPS_PER_SEC, EXPR_BYTES_PER_SEC,
	EXPR_CPU_USER_PER_OP, EXPR_CPU_NICE_PER_OP, EXPR_CPU_SYSTEM_PER_OP, EXPR_CPU_IDLE_PER_OP,
	EXPR_CPU_IOWAIT_PER_OP, EXPR_CPU_IRQ_PER_OP, EXPR_CPU_SOFTIRQ_PER_OP, EXPR_CPU_STEAL_PER_OP,
	EXPR_SMIS,                      /* SMIs counted beside the windows, where every run had a source */
};

enum expr_op { EXPR_GT, EXPR_GE, EXPR_LT, EXPR_LE };

enum expr_kind {
	EXPR_ABSOLUTE,                  /* value is in the stat's unit: ns for times, % for above_pct, a count */
	EXPR_RELATIVE,                  /* value is a signed percentage change against the baseline */
};

struct expr {
	enum expr_stat stat;
	enum expr_op op;
	enum expr_kind kind;
	double value;                   /* ns, percent or count (absolute); percent change (relative) */
	bool raw;                       /* relative, written with '!': not judged for significance */
};

/* The mean and the percentiles: a relative gate on them asks the verdict too.
 * The others (max, min, counts) have no verdict: their relative gates compare raw. */
bool expr_stat_judged(enum expr_stat stat);

/*
 * Parse text.  Stats: min mean stddev p50 p90 p99 p99.9 p99.99 max warm_max
 * above_pct missed count spikes spikes_per_hour mtbf ops_per_sec bytes_per_sec
 * cpu_KIND_per_op (KIND user nice system idle iowait irq softirq steal, times), smis (a count).  A time stat takes a duration (ns us ms s; a bare
 * number is microseconds, as for every latency option); above_pct a number
 * (percent, an optional '%'); missed and count a whole number; any stat a
 * signed relative change "+N%" or "-N%" (a fall of 100 % at most), followed
 * by '!' to compare it raw (a stat the verdict cannot judge, see
 * expr_stat_judged, is always compared raw).  Numbers are digits with an optional fraction (15 significant
 * digits, 22 decimals at most; no sign, exponent, nan or inf), read the same
 * in every locale; times and counts go up to 2^53 (exact in the double value).
 * 0, or -EINVAL with err (at least 128 bytes) saying what is wrong; ret is
 * untouched on failure.
 */
int expr_parse(const char *text, struct expr *ret, struct lat_error *err);

/* The stat's name as written in expressions and column lists. */
const char *expr_stat_name(enum expr_stat stat);

/*
 * Does value (this run) fail the gate?  base is the baseline's value (used by
 * relative expressions only): the change is (value - base) / base * 100
 * percent, compared with the expression's signed percentage.  From a baseline
 * of 0 the change is 0 when value is 0 too and +infinity when value is above
 * it, so a relative expression fails when value moved in the direction the
 * operator looks for ("p99>+10%" fails on any rise from 0, "p99<-10%" never
 * does).  A NaN value or base never fails.
 */
bool expr_fails(const struct expr *e, double value, double base);

/* Write the expression back as text ("p99 > +10%"); expr_parse reads it back unchanged. */
void expr_format(const struct expr *e, char *buf, size_t size);

#endif
