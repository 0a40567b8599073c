/*
 * --until: a stopping rule on the tail of a run (result/tail.h), judged
 * between windows on what the result holds so far.
 *     level(1h) < 100us     the latency exceeded once an hour is below 100 us
 *     rate(>100us) < 1/h    latencies above 100 us come less than once an hour
 * Both are decided at 95 %: "below" when every CPU's upper bound is under
 * the limit, "above" when one CPU's lower bound is over it, else "open".
 * The exact Poisson interval of the samples counted above the latency
 * decides first (it needs no model); the fit decides only when its
 * assumption tests call it reliable, so a rule never stops on a fit the
 * summary would mark "not reliable", on the interval that holds both the
 * chosen threshold's and the highest's (tail_at_top), and only within its
 * reach (TAIL_REACH times the time observed): a longer period is "above"
 * when the level at the reach is, never "below" by the fit.  Pure
 * computation: no I/O.
 */
#ifndef LATSCOPE_RESULT_UNTIL_H
#define LATSCOPE_RESULT_UNTIL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "result/result.h"
#include "result/tail.h"

enum until_kind { UNTIL_LEVEL, UNTIL_RATE };
enum until_decision { UNTIL_OPEN = 0, UNTIL_BELOW = 1, UNTIL_ABOVE = 2 };

struct until {
	int kind;	 /* enum until_kind */
	unsigned period; /* UNTIL_LEVEL: the tail period's index (tail_period_name) */
	uint64_t x_ns;	 /* LEVEL: the limit; RATE: the latency whose rate is judged */
	double per_hour; /* the rate limit: LEVEL once per its period; RATE as given */
	char text[96];	 /* written back: "level(1h) < 100us", "rate(>100us) < 1/h" */
};

/* One CPU's judgement. */
struct until_cpu {
	int cpu;
	int decision; /* enum until_decision */
	bool is_rate; /* value is a rate per hour above x_ns (else a level in ns) */
	bool counted; /* value comes from the samples counted, not from the fit */
	struct tail_interval value;
	double at_s;   /* > 0: value is the level once per at_s, the fit's reach */
	double more_s; /* open: about how much longer the current rate needs; NaN: unknown */
	char why[192]; /* open: what keeps it open */
};

struct until_state {
	int decision;	      /* enum until_decision */
	struct until_cpu at;  /* above: the first CPU above; below: the closest to the limit;
			      * open: the CPU furthest from a decision */
	double more_s;	      /* open: the longest of the open CPUs' (NaN if one is unknown) */
	uint64_t observed_ns; /* the longest a CPU has observed */
};

/*
 * "level(P) < DUR" (P one of 1s 1min 1h 1day 1year) or "rate(>DUR) < N/U"
 * (N digits with an optional fraction, U one of s min h day year); a bare
 * DUR is microseconds; spaces around the parts are allowed.  0, or -EINVAL
 * with err saying what is wrong.
 */
int until_parse(const char *text, struct until *ret, struct lat_error *err);

/* Judge u on res as it stands (while measuring or finalized): 0 with ret
 * filled, or -ENOMEM with err. */
int until_judge(const struct until *u, const struct result *res, struct until_state *ret,
		struct lat_error *err);

/* "cpu 1: level(1h) 85us (95 % 60us-140us)", for the live line and the end. */
void until_describe(const struct until *u, const struct until_cpu *c, char *buf, size_t size);

/* "below", "above" or "undecided". */
const char *until_decision_name(int decision);

/* The result's "until" object (doc/result-schema.md); NULL on no memory. */
json_t *until_to_json(const struct until *u, const struct until_state *s);

#endif
