/* Durations written for people. */
#ifndef LATSCOPE_CORE_UNITS_H
#define LATSCOPE_CORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* The largest unit that keeps it short: "1ms", "250us", "1.5s", "0ns".  Up to
 * three decimals, trailing zeros dropped. */
void fmt_duration(uint64_t ns, char *buf, size_t size);
/* fmt_duration of ns rounded to three significant digits: "12.1ms", "1.9ms", "30ms". */
void fmt_duration3(uint64_t ns, char *buf, size_t size);
/* fmt_duration3 of a computed figure: "-" when it is not finite or below 0. */
void fmt_duration3_ns(double ns, char *buf, size_t size);
/* A rate per hour as people read it: "0.52/h", "37/h", "331240/h"; "-" when not finite. */
void fmt_per_hour(double per_hour, char *buf, size_t size);
/* ns in the largest unit that holds it whole ("2083ms", "125s", "5m"): what a
 * user would type, and parse_duration gives back exactly. */
void fmt_duration_exact(uint64_t ns, char *buf, size_t size);

/* Bytes in the largest binary unit that divides them: "4KiB", "1GiB", "1000B". */
void fmt_size(uint64_t bytes, char *buf, size_t size);

/* A CLOCK_REALTIME time in UTC, "2026-11-30 14:35:58" ("?" when it cannot be shown). */
void fmt_utc(uint64_t realtime_ns, char *buf, size_t size);

#endif
