/* One time type everywhere: uint64_t nanoseconds. */
#ifndef LATSCOPE_CORE_NSTIME_H
#define LATSCOPE_CORE_NSTIME_H

#include <stdint.h>
#include <time.h>

#define NS_PER_US  UINT64_C(1000)
#define NS_PER_MS  UINT64_C(1000000)
#define NS_PER_SEC UINT64_C(1000000000)

static inline uint64_t ts_to_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NS_PER_SEC + (uint64_t)ts->tv_nsec;
}

static inline struct timespec ns_to_ts(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NS_PER_SEC),
		.tv_nsec = (long)(ns % NS_PER_SEC),
	};
	return ts;
}

/* Any clock, in ns: the vDSO serves CLOCK_MONOTONIC, REALTIME, TAI and
 * BOOTTIME without entering the kernel on common clocksources. */
static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts_to_ns(&ts);
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts_to_ns(&ts);
}

#endif
