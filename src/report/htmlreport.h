/*
 * latscope report: stored runs as one self-contained HTML page with inline SVG
 * plots (distributions, windows over time, noise, I/O), the comparison of
 * `compare` and every run's parameters, system and findings.
 */
#ifndef LATSCOPE_REPORT_HTMLREPORT_H
#define LATSCOPE_REPORT_HTMLREPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "result/result.h"

/* Write the page for n results (n >= 1) with their run ids.  0, or -ENOMEM,
 * or -EIO when out could not be written. */
int html_report_write(FILE *out, const struct result *res, const int64_t *ids, size_t n);

#endif
