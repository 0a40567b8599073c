#include "report/junit.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/utf8.h"
#include "sys/atomicfile.h"

/* XML 1.0's Char production, less what UTF-8 cannot hold anyway. */
static int xml_char(uint32_t cp)
{
	return cp == 0x9 || cp == 0xa || cp == 0xd || (cp >= 0x20 && cp != 0xfffe && cp != 0xffff);
}

/*
 * In an attribute, tab, newline and carriage return are written as references,
 * or a parser would normalize them to spaces; in text only carriage return is,
 * which a parser would otherwise turn into a newline.
 */
static void put_escaped(FILE *out, const char *text, int attr)
{
	const unsigned char *s = (const unsigned char *)text;

	while (*s) {
		uint32_t cp;
		size_t n = utf8_decode(s, &cp);

		if (n == 0) {
			fputs("\xef\xbf\xbd", out);
			s++;
			continue;
		}
		switch (cp) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		case '\r': fputs("&#13;", out); break;
		case '\t': fputs(attr ? "&#9;" : "\t", out); break;
		case '\n': fputs(attr ? "&#10;" : "\n", out); break;
		default:
			if (xml_char(cp))
				fwrite(s, 1, n, out);
			break;
		}
		s += n;
	}
}

static void put_attr(FILE *out, const char *name, const char *value)
{
	fprintf(out, " %s=\"", name);
	put_escaped(out, value, 1);
	fputc('"', out);
}

static void put_document(FILE *out, const char *suite, const struct junit_case *cases, size_t n)
{
	size_t failures = 0;

	for (size_t i = 0; i < n; i++)
		failures += cases[i].failed;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", out);
	put_attr(out, "name", suite);
	fprintf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\">\n <testsuite", n, failures);
	put_attr(out, "name", suite);
	fprintf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\">\n", n, failures);
	for (size_t i = 0; i < n; i++) {
		const struct junit_case *c = &cases[i];
		fputs("  <testcase", out);
		put_attr(out, "classname", c->classname ? c->classname : suite);
		put_attr(out, "name", c->name);
		if (!c->failed) {
			fputs("/>\n", out);
			continue;
		}
		fputs(">\n   <failure", out);
		if (c->message)
			put_attr(out, "message", c->message);
		if (c->detail) {
			fputc('>', out);
			put_escaped(out, c->detail, 0);
			fputs("</failure>\n", out);
		} else {
			fputs("/>\n", out);
		}
		fputs("  </testcase>\n", out);
	}
	fputs(" </testsuite>\n</testsuites>\n", out);
}

int junit_write(const char *path, const char *suite, const struct junit_case *cases, size_t n)
{
	struct atomic_file file = { .fd = -1 };
	int r;

	if (!path)
		return -EINVAL;
	if ((r = atomic_file_open(path, &file)) == 0)
		r = junit_write_to(&file, suite, cases, n);
	atomic_file_close(&file);
	return r;
}

int junit_write_to(struct atomic_file *sink, const char *suite, const struct junit_case *cases, size_t n)
{
	char *text = NULL;
	size_t len;
	int r;

	if (!sink || !suite || (n && !cases))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!cases[i].name)
			return -EINVAL;
	/* Built in memory first: the only failure there is memory, and the file is written once. */
	FILE *mem = open_memstream(&text, &len);
	if (!mem)
		return -ENOMEM;
	put_document(mem, suite, cases, n);
	int bad = ferror(mem);
	if (fclose(mem) != 0 || bad) {
		free(text);
		return -ENOMEM;
	}
	if ((r = atomic_file_write(sink, text, len)) == 0)
		r = atomic_file_commit(sink);
	free(text);
	return r;
}
