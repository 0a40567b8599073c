#include "report/table.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/termtext.h"

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

static void row(FILE *out, const struct table *t, char *const *shown, const size_t *w, size_t r)
{
	for (size_t c = 0; c < t->ncols; c++)
		fprintf(out, t->right[c] && r ? "| %*s " : "| %-*s ", (int)w[c], shown[r * t->ncols + c]);
	fputs("|\n", out);
}

static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"")) {
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

/* A cell as the format shows it: terminal-safe text (a label or host from an
 * imported run may hold anything), and in markdown a '|' that stays in its cell. */
static char *shown_cell(const char *cell, enum table_format format)
{
	char *safe = term_escape_dup(cell), *out;
	size_t pipes = 0, n = 0;

	if (!safe || format != TABLE_MARKDOWN || !strchr(safe, '|'))
		return safe;
	for (const char *p = safe; *p; p++)
		pipes += *p == '|';
	out = malloc(strlen(safe) + pipes + 1u);
	for (const char *p = safe; out && *p; p++) {
		if (*p == '|')
			out[n++] = '\\';
		out[n++] = *p;
	}
	if (out)
		out[n] = '\0';
	free(safe);
	return out;
}

static void free_shown(char **shown, size_t n)
{
	for (size_t i = 0; shown && i < n; i++)
		free(shown[i]);
	free(shown);
}

int table_print(FILE *out, const struct table *t, enum table_format format)
{
	size_t ncells = t->nrows * t->ncols;
	size_t *w = calloc(t->ncols ? t->ncols : 1, sizeof(*w));
	char **shown = calloc(ncells ? ncells : 1, sizeof(*shown));

	if (!w || !shown) {
		free(w);
		free(shown);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ncells; i++)
		if (!(shown[i] = shown_cell(cell(t, i / t->ncols, i % t->ncols), format))) {
			free(w);
			free_shown(shown, ncells);
			return -ENOMEM;
		}
	for (size_t i = 0; i < ncells; i++)
		if (strlen(shown[i]) > w[i % t->ncols])
			w[i % t->ncols] = strlen(shown[i]);
	switch (format) {
	case TABLE_TEXT:
		rule(out, w, t->ncols);
		row(out, t, shown, w, 0);
		rule(out, w, t->ncols);
		for (size_t r = 1; r < t->nrows; r++)
			row(out, t, shown, w, r);
		rule(out, w, t->ncols);
		break;
	case TABLE_MARKDOWN:
		row(out, t, shown, w, 0);
		for (size_t c = 0; c < t->ncols; c++) {
			fputs("| ", out);
			for (size_t k = 0; k < (w[c] > 3 ? w[c] : 3); k++)
				fputc(k + 1u == (w[c] > 3 ? w[c] : 3) && t->right[c] ? ':' : '-', out);
			fputc(' ', out);
		}
		fputs("|\n", out);
		for (size_t r = 1; r < t->nrows; r++)
			row(out, t, shown, w, r);
		break;
	case TABLE_CSV:
		for (size_t r = 0; r < t->nrows; r++) {
			for (size_t c = 0; c < t->ncols; c++) {
				if (c)
					fputc(',', out);
				csv_field(out, shown[r * t->ncols + c]);
			}
			fputs("\r\n", out);
		}
		break;
	}
	free(w);
	free_shown(shown, ncells);
	return 0;
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
