#include "report/table.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int table_init(struct table *t, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->right = calloc(ncols ? ncols : 1, sizeof(*t->right));
	if (!t->right)
		return -ENOMEM;
	return table_add_row(t) < 0 ? -ENOMEM : 0;
}

long table_add_row(struct table *t)
{
	if (t->nrows == t->caprows) {
		size_t cap = t->caprows ? t->caprows * 2u : 8u;
		char **cells = realloc(t->cells, cap * t->ncols * sizeof(*cells));
		if (!cells)
			return -ENOMEM;
		t->cells = cells;
		t->caprows = cap;
	}
	for (size_t c = 0; c < t->ncols; c++)
		t->cells[t->nrows * t->ncols + c] = NULL;
	return (long)t->nrows++;
}

int table_set(struct table *t, size_t row, size_t col, const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	free(t->cells[row * t->ncols + col]);
	t->cells[row * t->ncols + col] = s;
	return 0;
}

void table_align_right(struct table *t, size_t col)
{
	t->right[col] = true;
}

static const char *cell(const struct table *t, size_t r, size_t c)
{
	const char *s = t->cells[r * t->ncols + c];
	return s ? s : "";
}

static void rule(FILE *out, const size_t *w, size_t ncols)
{
	for (size_t c = 0; c < ncols; c++) {
		fputc('+', out);
		for (size_t k = 0; k < w[c] + 2u; k++)
			fputc('-', out);
	}
	fputs("+\n", out);
}

static void row(FILE *out, const struct table *t, const size_t *w, size_t r, const char *sep, const char *end)
{
	for (size_t c = 0; c < t->ncols; c++)
		fprintf(out, t->right[c] && r ? "%s %*s " : "%s %-*s ", sep, (int)w[c], cell(t, r, c));
	fputs(end, out);
}

static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void table_print(FILE *out, const struct table *t, enum table_format format)
{
	size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof(*w));
	if (!w)
		return;
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			if (strlen(cell(t, r, c)) > w[c])
				w[c] = strlen(cell(t, r, c));
	switch (format) {
	case TABLE_TEXT:
		rule(out, w, t->ncols);
		row(out, t, w, 0, "|", "|\n");
		rule(out, w, t->ncols);
		for (size_t r = 1; r < t->nrows; r++)
			row(out, t, w, r, "|", "|\n");
		rule(out, w, t->ncols);
		break;
	case TABLE_MARKDOWN:
		row(out, t, w, 0, "|", "|\n");
		for (size_t c = 0; c < t->ncols; c++) {
			fputs("| ", out);
			for (size_t k = 0; k < (w[c] > 3 ? w[c] : 3); k++)
				fputc(k + 1u == (w[c] > 3 ? w[c] : 3) && t->right[c] ? ':' : '-', out);
			fputc(' ', out);
		}
		fputs("|\n", out);
		for (size_t r = 1; r < t->nrows; r++)
			row(out, t, w, r, "|", "|\n");
		break;
	case TABLE_CSV:
		for (size_t r = 0; r < t->nrows; r++) {
			for (size_t c = 0; c < t->ncols; c++) {
				if (c)
					fputc(',', out);
				csv_field(out, cell(t, r, c));
			}
			fputs("\r\n", out);
		}
		break;
	}
	free(w);
}

void table_free(struct table *t)
{
	if (t->cells)
		for (size_t i = 0; i < t->nrows * t->ncols; i++)
			free(t->cells[i]);
	free(t->cells);
	free(t->right);
	memset(t, 0, sizeof(*t));
}
