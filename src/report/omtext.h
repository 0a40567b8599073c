/*
 * The pieces of the Prometheus and OpenMetrics text formats that every
 * writer of them shares (latscope export, latscope monitor's /metrics): the
 * fixed ladder of histogram bounds, label escaping, names and seconds.
 */
#ifndef LATSCOPE_REPORT_OMTEXT_H
#define LATSCOPE_REPORT_OMTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The fixed ladder of bucket bounds, 1-2-5 from 1us to 100s, so that series
 * compare between runs, scrapes and hosts whatever our own buckets are.  The
 * label values are the spec's canonical renderings (Go's %g, ".0" added to
 * integers).
 */
struct om_bound {
	uint64_t ns;
	const char *le;
};

#define OM_LADDER_N 25u
extern const struct om_bound om_ladder[OM_LADDER_N];

/*
 * The ladder slot one of our histogram buckets counts toward: the first bound
 * at or above its upper bound high_ns (OM_LADDER_N: above the last, +Inf only).
 * Only the one bucket that straddles a bound X is left out of X, so the count
 * given for X is exact for some bound in [X - w, X], w (one bucket's width) at
 * most X/64.
 */
size_t om_ladder_slot(uint64_t high_ns);

/* A label value with \, " and newline escaped, bytes that are not UTF-8 as
 * U+FFFD.  0, or -1 when the write failed. */
int om_put_label_value(FILE *out, const char *value);

/* prefix + src with [a-zA-Z0-9_] kept and anything else '_': valid in label
 * and metric names after a letter. */
void om_make_name(char *dst, size_t size, const char *prefix, const char *src);

/* Seconds from nanoseconds, exact: "0.00001145", "1.0". */
const char *om_secs(uint64_t ns, char *buf, size_t size);

/* A sum of nanoseconds kept as a double, in seconds. */
const char *om_secs_double(double ns, char *buf, size_t size);

#endif
