/* A table of text cells, printed boxed (like hand-made mailing-list tables), as markdown or as CSV. */
#ifndef LATSCOPE_REPORT_TABLE_H
#define LATSCOPE_REPORT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum table_format { TABLE_TEXT, TABLE_MARKDOWN, TABLE_CSV };

struct table {
	size_t ncols, nrows, caprows;   /* row 0 is the header */
	char **cells;                   /* nrows * ncols, malloc'ed strings */
	bool *right;                    /* per column: right-aligned (numbers) */
};

int table_init(struct table *t, size_t ncols);
/* A new empty row; its index, or -ENOMEM. */
long table_add_row(struct table *t);
int table_set(struct table *t, size_t row, size_t col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void table_align_right(struct table *t, size_t col);
/* Cells are shown terminal-safe (core/termtext.h); in markdown a '|' is "\|".  -ENOMEM. */
int table_print(FILE *out, const struct table *t, enum table_format format);
void table_free(struct table *t);

#endif
