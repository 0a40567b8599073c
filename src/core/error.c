#include "core/error.h"

#include <stdio.h>
#include <string.h>

int err_vset(struct lat_error *err, int r, const char *fmt, va_list ap)
{
	if (err)
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return r;
}

int err_set(struct lat_error *err, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(err, r, fmt, ap);
	va_end(ap);
	return r;
}

int err_prefix(struct lat_error *err, int r, const char *fmt, ...)
{
	char head[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return r;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	const size_t cap = sizeof(err->msg) - 1u, n = strlen(head);
	size_t m = strnlen(err->msg, cap);
	if (m > cap - n)
		m = cap - n;
	memmove(err->msg + n, err->msg, m);
	memcpy(err->msg, head, n);
	err->msg[n + m] = '\0';
	return r;
}
