/*
 * A cycle counter read in a few nanoseconds, for loops that look for the
 * gaps the OS or the hypervisor leave: the TSC on x86 (after an lfence, so
 * the read is not hoisted before earlier work), the virtual counter on arm64
 * (after an isb).  Elsewhere, and when asked, CLOCK_MONOTONIC.
 */
#ifndef LATSCOPE_PROBE_CYCLES_H
#define LATSCOPE_PROBE_CYCLES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "core/nstime.h"

#if defined(__x86_64__) || defined(__i386__)
#define CYCLES_HAVE_COUNTER 1
static inline uint64_t cycles_read(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}
#elif defined(__aarch64__)
#define CYCLES_HAVE_COUNTER 1
static inline uint64_t cycles_read(void)
{
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
}
#else
#define CYCLES_HAVE_COUNTER 0
static inline uint64_t cycles_read(void)
{
	return mono_ns();
}
#endif

/* Cycles to ns: ns = cycles * mult >> 32. */
struct cycles_scale {
	uint64_t mult;
	uint64_t ns_per_cycle_x1000;    /* for people */
};

/* Calibrate against CLOCK_MONOTONIC over about span_ns, on the calling CPU. */
int cycles_calibrate(struct cycles_scale *ret, uint64_t span_ns);

__extension__ typedef unsigned __int128 cycles_u128;

static inline uint64_t cycles_to_ns(const struct cycles_scale *s, uint64_t c)
{
	return (uint64_t)(((cycles_u128)c * s->mult) >> 32);
}

/*
 * Whether the counter can be trusted to tick at a constant rate across idle
 * states and CPUs: on x86 the constant_tsc and nonstop_tsc flags and the
 * kernel still offering the tsc clocksource.  false, with why saying what is
 * missing, also where latscope reads no counter (!CYCLES_HAVE_COUNTER).
 */
bool cycles_reliable(struct lat_error *why);

#endif
