/*
 * A self-contained HTML document: one file with its style inline, nothing
 * loaded from anywhere (no scripts, fonts, images or links).  Writing goes to
 * a FILE; errors show in ferror() of it.
 */
#ifndef LATSCOPE_REPORT_HTML_H
#define LATSCOPE_REPORT_HTML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

void html_begin(FILE *out, const char *title);
void html_end(FILE *out);

/* Text, formatted then escaped. */
void html_text(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* prefix then name as an id attribute's value: characters outside [A-Za-z0-9_-] become '-'. */
void html_id(FILE *out, const char *prefix, const char *name);
/* <tag class="cls">text</tag>, the text escaped; cls may be NULL. */
void html_elem(FILE *out, const char *tag, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A legend entry: a swatch of colour (and dash pattern) and its name. */
void html_legend_item(FILE *out, const char *colour, const char *dash, const char *name);

/* A table with a header row of n names; each row is html_row_begin, cells, html_row_end. */
void html_table_begin(FILE *out, const char *cls, const char *const *head, size_t n);
void html_row_begin(FILE *out);
/* A cell, its text escaped; numbers are aligned right. */
void html_cell(FILE *out, bool number, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void html_row_end(FILE *out);
void html_table_end(FILE *out);

#endif
