/*
 * Stored runs as a gnuplot script with its data inside: the leading metric's
 * histogram on a log count axis, one curve per CPU for one run, one per run
 * (merged over its CPUs) for several.  `gnuplot FILE` draws it (SVG by
 * default; -e 'term="pngcairo"; outfile="x.png"' for another terminal).
 *
 * latscope's buckets are log-linear (their width grows with the value, at most
 * 1/64 of it), so each is drawn as a box of its real width and height its
 * count, rather than resampled into bins it was not measured in.
 */
#ifndef LATSCOPE_REPORT_GNUPLOT_H
#define LATSCOPE_REPORT_GNUPLOT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "result/result.h"

/*
 * The axis is in the probe's own unit (us, or ns for noise).  -EINVAL for
 * n == 0, a NULL result, or runs of different probes or leading metrics (one
 * axis, one unit); -EIO for a failed write.  err says why.
 */
int gnuplot_write(FILE *out, const struct result *const *results, const int64_t *ids, size_t n, struct lat_error *err);

#endif
