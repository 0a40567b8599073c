#include "report/tprint.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/termtext.h"

enum length { LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_Z, LEN_J, LEN_T, LEN_BIG_L };

/* One conversion, parsed: the spec as text (for fprintf) and what it takes. */
struct conv {
	char spec[32];
	bool star_width, star_prec;
	enum length len;
	char c;
};

/* Parse the conversion at fmt (just after '%'); returns the text after it, or NULL. */
static const char *parse_conv(const char *fmt, struct conv *cv)
{
	const char *q = fmt;

	memset(cv, 0, sizeof(*cv));
	q += strspn(q, "-+ #0'");
	if (*q == '*') {
		cv->star_width = true;
		q++;
	} else {
		q += strspn(q, "0123456789");
	}
	if (*q == '.') {
		q++;
		if (*q == '*') {
			cv->star_prec = true;
			q++;
		} else {
			q += strspn(q, "0123456789");
		}
	}
	if (q[0] == 'h' && q[1] == 'h')
		cv->len = LEN_HH, q += 2;
	else if (q[0] == 'l' && q[1] == 'l')
		cv->len = LEN_LL, q += 2;
	else if (*q == 'h')
		cv->len = LEN_H, q++;
	else if (*q == 'l')
		cv->len = LEN_L, q++;
	else if (*q == 'z')
		cv->len = LEN_Z, q++;
	else if (*q == 'j')
		cv->len = LEN_J, q++;
	else if (*q == 't')
		cv->len = LEN_T, q++;
	else if (*q == 'L')
		cv->len = LEN_BIG_L, q++;
	if (!*q || (size_t)(q + 1 - fmt) + 2u > sizeof(cv->spec))
		return NULL;
	cv->c = *q++;
	cv->spec[0] = '%';
	memcpy(cv->spec + 1, fmt, (size_t)(q - fmt));
	cv->spec[q - fmt + 1] = '\0';
	return q;
}

/* The caller's own format, one conversion at a time: the compiler checked it
 * against the arguments at the call (format attribute), so it is not a
 * format from outside. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

#define EMIT(T)                                                                 \
	do {                                                                    \
		T v_ = va_arg(ap, T);                                           \
		if (cv.star_width && cv.star_prec)                              \
			n = fprintf(out, cv.spec, w, pr, v_);                   \
		else if (cv.star_width || cv.star_prec)                         \
			n = fprintf(out, cv.spec, cv.star_width ? w : pr, v_);  \
		else                                                            \
			n = fprintf(out, cv.spec, v_);                          \
	} while (0)

int tvprintf(FILE *out, const char *fmt, va_list ap)
{
	int total = 0;

	while (*fmt) {
		const char *pct = strchr(fmt, '%');
		size_t plain = pct ? (size_t)(pct - fmt) : strlen(fmt);
		if (plain && fwrite(fmt, 1, plain, out) != plain)
			return -1;
		total += (int)plain;
		if (!pct)
			break;
		if (pct[1] == '%') {
			if (fputc('%', out) == EOF)
				return -1;
			total++;
			fmt = pct + 2;
			continue;
		}
		struct conv cv;
		const char *next = parse_conv(pct + 1, &cv);
		if (!next)
			return -1;
		int w = cv.star_width ? va_arg(ap, int) : 0, pr = cv.star_prec ? va_arg(ap, int) : 0, n = 0;
		switch (cv.c) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			char small[512], *big = NULL, *shown = small;
			if (!s)
				s = "(null)";
			if (term_escape(s, small, sizeof(small)) >= sizeof(small) && (big = term_escape_dup(s)))
				shown = big;
			if (cv.star_width && cv.star_prec)
				n = fprintf(out, cv.spec, w, pr, shown);
			else if (cv.star_width || cv.star_prec)
				n = fprintf(out, cv.spec, cv.star_width ? w : pr, shown);
			else
				n = fprintf(out, cv.spec, shown);
			free(big);
			break;
		}
		case 'c':
			EMIT(int);
			break;
		case 'd':
		case 'i':
			switch (cv.len) {
			case LEN_L: EMIT(long); break;
			case LEN_LL: EMIT(long long); break;
			case LEN_Z: EMIT(ssize_t); break;
			case LEN_J: EMIT(intmax_t); break;
			case LEN_T: EMIT(ptrdiff_t); break;
			case LEN_NONE:
			case LEN_HH:
			case LEN_H:
			case LEN_BIG_L: EMIT(int); break;
			}
			break;
		case 'u':
		case 'x':
		case 'X':
		case 'o':
			switch (cv.len) {
			case LEN_L: EMIT(unsigned long); break;
			case LEN_LL: EMIT(unsigned long long); break;
			case LEN_Z: EMIT(size_t); break;
			case LEN_J: EMIT(uintmax_t); break;
			case LEN_T: EMIT(ptrdiff_t); break;
			case LEN_NONE:
			case LEN_HH:
			case LEN_H:
			case LEN_BIG_L: EMIT(unsigned); break;
			}
			break;
		case 'e':
		case 'E':
		case 'f':
		case 'F':
		case 'g':
		case 'G':
		case 'a':
		case 'A':
			if (cv.len == LEN_BIG_L)
				EMIT(long double);
			else
				EMIT(double);
			break;
		case 'p':
			EMIT(void *);
			break;
		default:
			return -1;      /* %n and the like: not for text output */
		}
		if (n < 0)
			return -1;
		total += n;
		fmt = next;
	}
	return total;
}

#pragma GCC diagnostic pop

int tprintf(FILE *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = tvprintf(out, fmt, ap);
	va_end(ap);
	return n;
}

int tsnprintf(char *buf, size_t size, const char *fmt, ...)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	va_list ap;
	int n;

	if (!f)
		return -1;
	va_start(ap, fmt);
	n = tvprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) != 0)
		n = -1;
	if (n >= 0 && size)
		snprintf(buf, size, "%s", text);
	free(text);
	return n;
}
