#include "trace/names.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned long trace_pidns(void)
{
	return pidns_self();
}

int trace_instance_name(unsigned long pidns, long pid, char *buf, size_t size)
{
	int n = snprintf(buf, size, TRACE_INSTANCE_PREFIX "%lu-%ld", pidns, pid);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* A decimal without sign or leading zero, up to the next non-digit. */
static int parse_positive(const char *s, const char **end, unsigned long *ret)
{
	char *e;
	if (*s < '1' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long v = strtoul(s, &e, 10);
	if (errno)
		return -EINVAL;
	*end = e;
	*ret = v;
	return 0;
}

int trace_instance_parse(const char *name, unsigned long *ret_pidns, long *ret_pid)
{
	size_t plen = strlen(TRACE_INSTANCE_PREFIX);
	const char *p, *q;
	unsigned long a, b;

	if (strncmp(name, TRACE_INSTANCE_PREFIX, plen) != 0 || parse_positive(name + plen, &p, &a) < 0)
		return -EINVAL;
	if (*p == '\0') {                       /* the older "latscope-<pid>" */
		if (a > (unsigned long)INT32_MAX)
			return -EINVAL;
		*ret_pidns = TRACE_PIDNS_UNKNOWN;
		*ret_pid = (long)a;
		return 0;
	}
	if (*p != '-' || parse_positive(p + 1, &q, &b) < 0 || *q != '\0' || b > (unsigned long)INT32_MAX)
		return -EINVAL;
	*ret_pidns = a;
	*ret_pid = (long)b;
	return 0;
}

bool trace_instance_judgeable(unsigned long owner_ns, unsigned long self_ns)
{
	if (self_ns == TRACE_PIDNS_UNKNOWN)
		return false;
	if (owner_ns == TRACE_PIDNS_UNKNOWN)
		return self_ns == TRACE_PIDNS_INIT;     /* written by an older latscope, likely the host's */
	return owner_ns == self_ns;
}
