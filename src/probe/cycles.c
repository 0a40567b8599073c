#include "probe/cycles.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cycles_calibrate(struct cycles_scale *ret, uint64_t span_ns)
{
	uint64_t t0 = mono_ns(), c0 = cycles_read(), t1, c1;

	do {
		t1 = mono_ns();
		c1 = cycles_read();
	} while (t1 - t0 < span_ns);
	if (c1 <= c0)
		return -EIO;
	ret->mult = (uint64_t)(((cycles_u128)(t1 - t0) << 32) / (c1 - c0));
	ret->ns_per_cycle_x1000 = (t1 - t0) * 1000u / (c1 - c0);
	return ret->mult ? 0 : -EIO;
}

/* Does the first line of path that starts with key contain word? */
static bool file_has(const char *path, const char *key, const char *word)
{
	char line[8192];
	bool found = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, strlen(key)) != 0)
			continue;
		char *save = NULL;
		for (char *tok = strtok_r(line + strlen(key), " \t\n:", &save); tok; tok = strtok_r(NULL, " \t\n:", &save))
			found |= strcmp(tok, word) == 0;
		break;
	}
	fclose(f);
	return found;
}

bool cycles_reliable(char *why, size_t size)
{
#if defined(__x86_64__) || defined(__i386__)
	static const char *const flags[] = { "constant_tsc", "nonstop_tsc" };
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (!file_has("/proc/cpuinfo", "flags", flags[i])) {
			snprintf(why, size, "the CPU does not report %s", flags[i]);
			return false;
		}
	if (!file_has("/sys/devices/system/clocksource/clocksource0/available_clocksource", "", "tsc")) {
		snprintf(why, size, "the kernel no longer offers the tsc clocksource (it found the TSC unstable)");
		return false;
	}
	return true;
#elif defined(__aarch64__)
	(void)why;
	(void)size;
	return true;                    /* the architected timer is constant by definition */
#else
	snprintf(why, size, "no cycle counter is known on this architecture");
	return false;
#endif
}
