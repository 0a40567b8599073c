/* Text for people: the run's header, the window lines and the summary table. */
#ifndef LATSCOPE_REPORT_TEXT_H
#define LATSCOPE_REPORT_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "result/result.h"
#include "store/store.h"

/* The run's first lines: "latscope CMD: WHAT on cpu ..." (CMD: the command typed) and the system. */
void text_header(FILE *out, const char *cmd, const struct result *res, const char *what);
/* Notes from index first on; information only when verbose, warnings always. */
void text_notes(FILE *out, const char *cmd, const struct result *res, unsigned first, bool verbose);
void text_window(FILE *out, const struct result *res, const struct cpu_result *cr,
		 const struct result_window *w);
/* separate: a blank line first, after what was printed before it. */
void text_summary(FILE *out, const struct result *res, bool separate);
/* The whole of a stored result for people: where and how it ran, then the summary. */
void text_result(FILE *out, const struct result *res, int64_t id);
/* One line per stored run. */
void text_runs(FILE *out, const struct run_info *runs, size_t n);

#endif
