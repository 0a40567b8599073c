#include "report/html.h"

#include <stdarg.h>
#include <stdlib.h>

#include "report/svg.h"

/* System fonts only: a named web font would be a download. */
static const char style[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#222;background:#fff}"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ccc}"
	"h3{font-size:15px;margin:16px 0 4px}"
	".figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:12px 20px}"
	"figure{margin:0}figcaption{font-size:13px;color:#444;margin:2px 0}"
	"svg.plot{width:100%;height:auto;display:block}"
	"svg .area{fill:#fafafa}svg .frame{fill:none;stroke:#888}svg .grid{stroke:#e3e3e3}"
	"svg text{font:11px system-ui,sans-serif;fill:#333}svg .axis{font-size:12px}"
	"svg .note{font-size:12px;font-weight:600}svg .mark{font-size:11px;font-weight:600}"
	".legend{display:flex;flex-wrap:wrap;gap:2px 14px;font-size:12px;margin:2px 0 6px}"
	".legend span{display:inline-flex;align-items:center;gap:4px}"
	"table{border-collapse:collapse;font-size:12px;margin:4px 0 8px}"
	"th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}"
	"th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	".warn{color:#a33;font-weight:600}.muted{color:#666}ul{margin:4px 0}"
	"details{margin:4px 0}summary{cursor:pointer}";

void html_begin(FILE *out, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", out);
	svg_escape(out, title);
	fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n", style);
}

void html_end(FILE *out)
{
	fputs("</body>\n</html>\n", out);
}

static void vtext(FILE *out, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void vtext(FILE *out, const char *fmt, va_list ap)
{
	char small[512], *buf = small;
	va_list copy;

	va_copy(copy, ap);
	int len = vsnprintf(small, sizeof(small), fmt, ap);
	if (len >= (int)sizeof(small) && (buf = malloc((size_t)len + 1u)) != NULL)
		vsnprintf(buf, (size_t)len + 1u, fmt, copy);
	va_end(copy);
	if (!buf) {
		/* Out of memory: the cut text, and the failure for whoever checks the file. */
		svg_escape(out, small);
		return;
	}
	svg_escape(out, buf);
	if (buf != small)
		free(buf);
}

void html_text(FILE *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vtext(out, fmt, ap);
	va_end(ap);
}

void html_elem(FILE *out, const char *tag, const char *cls, const char *fmt, ...)
{
	va_list ap;
	if (cls)
		fprintf(out, "<%s class=\"%s\">", tag, cls);
	else
		fprintf(out, "<%s>", tag);
	va_start(ap, fmt);
	vtext(out, fmt, ap);
	va_end(ap);
	fprintf(out, "</%s>\n", tag);
}

void html_legend_item(FILE *out, const char *colour, const char *dash, const char *name)
{
	fprintf(out, "<span><svg width=\"26\" height=\"10\" aria-hidden=\"true\"><line x1=\"1\" y1=\"5\" x2=\"25\" y2=\"5\" "
		"stroke=\"%s\" stroke-width=\"3\"%s%s%s/></svg>", colour, dash && *dash ? " stroke-dasharray=\"" : "",
		dash && *dash ? dash : "", dash && *dash ? "\"" : "");
	svg_escape(out, name);
	fputs("</span>\n", out);
}

void html_table_begin(FILE *out, const char *cls, const char *const *head, size_t n)
{
	fprintf(out, "<table class=\"%s\"><tr>", cls);
	for (size_t i = 0; i < n; i++) {
		fputs("<th>", out);
		svg_escape(out, head[i]);
		fputs("</th>", out);
	}
	fputs("</tr>\n", out);
}

void html_row_begin(FILE *out)
{
	fputs("<tr>", out);
}

void html_cell(FILE *out, bool number, const char *fmt, ...)
{
	va_list ap;
	fputs(number ? "<td class=\"n\">" : "<td>", out);
	va_start(ap, fmt);
	vtext(out, fmt, ap);
	va_end(ap);
	fputs("</td>", out);
}

void html_row_end(FILE *out)
{
	fputs("</tr>\n", out);
}

void html_table_end(FILE *out)
{
	fputs("</table>\n", out);
}

void html_id(FILE *out, const char *prefix, const char *name)
{
	fputs(prefix, out);
	for (const char *c = name; *c; c++) {
		bool safe = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			    *c == '_' || *c == '-';
		fputc(safe ? *c : '-', out);
	}
}
