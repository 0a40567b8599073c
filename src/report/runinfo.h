/* One run of the HTML report in words: command, load, system, notes, parameters, findings, fingerprint. */
#ifndef LATSCOPE_REPORT_RUNINFO_H
#define LATSCOPE_REPORT_RUNINFO_H

#include <stdint.h>
#include <stdio.h>

#include "result/result.h"

void runinfo_write(FILE *out, int64_t id, const struct result *res, const char *colour);

#endif
