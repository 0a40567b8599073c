#include "serve/accept.h"

#include <string.h>
#include <strings.h>

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* The q of the parameters in [p, end) in thousandths; 1000 when absent,
 * 0 when malformed (a range we cannot read asks for nothing). */
static unsigned q_of(const char *p, const char *end)
{
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *pend = semi ? semi : end;
		p = skip_ws(p);
		if (pend - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			const char *v = p + 2;
			unsigned q = 0, scale = 1000;
			if (v < pend && (*v == '0' || *v == '1'))
				q = (unsigned)(*v++ - '0') * 1000u;
			else
				return 0;
			if (v < pend && *v == '.')
				for (v++; v < pend && *v >= '0' && *v <= '9' && scale > 1; v++)
					q += (unsigned)(*v - '0') * (scale /= 10);
			return q > 1000u ? 1000u : q;
		}
		p = semi ? semi + 1 : end;
	}
	return 1000;
}

/* Is [p, end) the media type name (case-insensitive, blanks around)? */
static bool type_is(const char *p, const char *end, const char *name)
{
	p = skip_ws(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	const size_t n = strlen(name);
	return (size_t)(end - p) == n && !strncasecmp(p, name, n);
}

bool accept_wants_openmetrics(const char *accept)
{
	unsigned om = 0, text = 0;

	if (!accept)
		return false;
	for (const char *p = accept; *p;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *tend = semi ? semi : end;
		const unsigned q = semi ? q_of(semi + 1, end) : 1000u;
		if (type_is(p, tend, "application/openmetrics-text") && q > om)
			om = q;
		else if (type_is(p, tend, "text/plain") && q > text)
			text = q;
		p = comma ? comma + 1 : end;
	}
	return om > 0 && om >= text;
}
