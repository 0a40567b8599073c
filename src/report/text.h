/* Text for people: the run's header, the window lines and the summary table. */
#ifndef LATSCOPE_REPORT_TEXT_H
#define LATSCOPE_REPORT_TEXT_H

#include <stdio.h>

#include "result/result.h"

void text_header(FILE *out, const struct result *res, const char *what);
void text_notes(FILE *out, const struct result *res);
void text_window(FILE *out, const struct result *res, const struct cpu_result *cr,
		 const struct result_window *w);
void text_summary(FILE *out, const struct result *res);

#endif
