#include <stdarg.h>
#include <stdio.h>

#include "core/errmsg.h"

int err_set(char *err, size_t size, int r, const char *fmt, ...)
{
	va_list ap;

	if (!err || !size)
		return r;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return r;
}
