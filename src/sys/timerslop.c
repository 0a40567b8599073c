#include "sys/timerslop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/parse.h"

#define DEVICE_LINE "Clock Event Device: "
#define MIN_DELTA " min_delta_ns:"

/* The line without its newline and trailing blanks. */
static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

int timer_list_min_delta(FILE *f, const char *device, uint64_t *ret_ns)
{
	char *line = NULL;
	size_t cap = 0;
	bool in_device = false;
	int r = -ENOENT;

	while (getline(&line, &cap, f) > 0) {
		chomp(line);
		if (strncmp(line, DEVICE_LINE, strlen(DEVICE_LINE)) == 0) {
			in_device = strcmp(line + strlen(DEVICE_LINE), device) == 0;
			continue;
		}
		/* A device's block ends at the next tick device or a blank line. */
		if (line[0] != ' ') {
			in_device = false;
			continue;
		}
		if (!in_device || strncmp(line, MIN_DELTA, strlen(MIN_DELTA)) != 0)
			continue;
		const char *v = line + strlen(MIN_DELTA);
		v += strspn(v, " \t");
		uint64_t ns;
		r = parse_u64(v, &ns) == 0 ? 0 : -EINVAL;
		if (r == 0)
			*ret_ns = ns;
		break;
	}
	free(line);
	return r;
}
