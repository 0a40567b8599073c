/* One-line error reasons for the caller to print. */
#ifndef LATSCOPE_CORE_ERRMSG_H
#define LATSCOPE_CORE_ERRMSG_H

#include <stddef.h>

/* Write the reason into err (NULL or size 0: nowhere) and return r, so a
 * failing path is one statement: return err_set(err, size, -EINVAL, ...). */
int err_set(char *err, size_t size, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
