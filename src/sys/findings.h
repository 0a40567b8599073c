/*
 * Findings: a table of rules over a fingerprint, each saying what it saw
 * (with the values), why that matters for latency, and what to change.
 * Rules fire only on what is known: an unreadable file never fires one.
 */
#ifndef LATSCOPE_SYS_FINDINGS_H
#define LATSCOPE_SYS_FINDINGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/cpuset.h"
#include "sys/fingerprint.h"

enum severity { SEVERITY_INFO, SEVERITY_WARNING, SEVERITY_PROBLEM };

#define FINDING_TEXT_MAX 512

struct finding {
	const char *id;                 /* stable, kebab-case: "serial-console" */
	enum severity severity;
	char saw[FINDING_TEXT_MAX];     /* what was seen, with the values */
	const char *why;                /* why it matters for latency */
	char fix[FINDING_TEXT_MAX];     /* what to change */
};

/* What a measurement adds to the picture; NULL when nothing was measured (latscope sys). */
struct findings_context {
	const struct cpuset *measured;  /* the CPUs measured; NULL: none */
	bool pm_qos_held;               /* latscope held /dev/cpu_dma_latency while measuring */
	uint64_t period_ns;             /* the measured wakeups' period; 0: none */
	uint64_t timer_slack_ns;        /* the measuring threads' timer slack where the kernel honoured it
					   (SCHED_OTHER threads); 0: none (real-time threads get none) */
	bool smis_counted;              /* the run counted SMIs on the measured CPUs ... */
	uint64_t smis;                  /* ... this many */
};

/* A slack or slop of this share of the period or more is large against it (percent). */
#define FINDINGS_LARGE_SHARE 10u
/* The period judged without a measurement: latscope timer's default interval. */
#define FINDINGS_DEFAULT_PERIOD_NS 1000000u

/*
 * Run every rule over fp.  The findings that fire are sorted most severe
 * first (rules of one severity in table order) and the first max of them
 * written to out, so max = N gives the top N.  Returns how many fired, which
 * may be more than max.
 */
size_t findings_evaluate(const struct fingerprint *fp, const struct findings_context *ctx,
			 struct finding *out, size_t max);

/* The number of rules, and rule i's id (NULL past the end): enough room for
 * every finding, and a way to list them. */
size_t findings_rule_count(void);
const char *findings_rule_id(size_t i);

const char *severity_name(enum severity s);     /* "info", "warning", "problem" */

/* [{"id", "severity", "saw", "why", "fix"}, ...]; NULL when out of memory. */
json_t *findings_to_json(const struct finding *f, size_t n);

#endif
