#include "cli/version.h"

#include <stdio.h>
#include <string.h>

int version_line(char *buf, size_t size, const char *version, const char *describe)
{
	if (!describe[0] || strcmp(describe, version) == 0)
		return snprintf(buf, size, "latscope %s", version);
	return snprintf(buf, size, "latscope %s (%s)", version, describe);
}
