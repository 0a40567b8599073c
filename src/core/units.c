#include "core/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/array.h"
#include "core/nstime.h"

static const struct {
	const char *name;
	uint64_t ns;
} units[] = {
	{ "h", 3600u * NS_PER_SEC }, { "m", 60u * NS_PER_SEC }, { "s", NS_PER_SEC },
	{ "ms", NS_PER_MS }, { "us", NS_PER_US }, { "ns", 1 },
};

void fmt_duration_exact(uint64_t ns, char *buf, size_t size)
{
	size_t i = 0;
	while (ns == 0 ? units[i].ns != NS_PER_SEC : ns % units[i].ns != 0)
		i++;
	snprintf(buf, size, "%llu%s", (unsigned long long)(ns / units[i].ns), units[i].name);
}

void fmt_duration(uint64_t ns, char *buf, size_t size)
{
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		uint64_t u = units[i].ns;
		if (ns < u && u != 1)
			continue;
		uint64_t whole = ns / u, rest = ns % u;
		/* thousandths of the unit, rounded down: shown only when not zero */
		uint64_t milli = rest / (u / 1000u ? u / 1000u : 1u);
		if (milli == 0) {
			snprintf(buf, size, "%llu%s", (unsigned long long)whole, units[i].name);
			return;
		}
		char frac[24];
		snprintf(frac, sizeof(frac), "%03llu", (unsigned long long)milli);
		for (size_t k = strlen(frac); k > 0 && frac[k - 1] == '0'; k--)
			frac[k - 1] = '\0';
		snprintf(buf, size, "%llu.%s%s", (unsigned long long)whole, frac, units[i].name);
		return;
	}
}

void fmt_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned k = 0;
	while (k + 1u < ARRAY_SIZE(names) && bytes && bytes % 1024u == 0) {
		bytes /= 1024u;
		k++;
	}
	snprintf(buf, size, "%llu%s", (unsigned long long)bytes, names[k]);
}

void fmt_utc(uint64_t realtime_ns, char *buf, size_t size)
{
	time_t secs = (time_t)(realtime_ns / NS_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&secs, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, size, "?");
}

void fmt_duration3_ns(double ns, char *buf, size_t size)
{
	if (!isfinite(ns) || ns < 0.0)
		snprintf(buf, size, "-");
	else
		fmt_duration3((uint64_t)llround(ns), buf, size);
}

void fmt_per_hour(double per_hour, char *buf, size_t size)
{
	if (!isfinite(per_hour) || per_hour < 0.0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, per_hour < 100.0 ? "%.2g/h" : "%.0f/h", per_hour);
}

void fmt_duration3(uint64_t ns, char *buf, size_t size)
{
	uint64_t unit = 1;
	while (ns / unit >= 1000u)
		unit *= 10u;
	fmt_duration((ns + unit / 2u) / unit * unit, buf, size);
}
