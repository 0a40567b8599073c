/*
 * Counts and sums of nanoseconds that results add up (runs merged, CPUs into
 * "all") are written as JSON integers, which hold at most INT64_MAX: a sum past
 * it would be written negative and never read back.  Every such addition goes
 * through count_add.
 */
#ifndef LATSCOPE_CORE_COUNT_H
#define LATSCOPE_CORE_COUNT_H

#include <stdbool.h>
#include <stdint.h>

#define COUNT_MAX ((uint64_t)INT64_MAX)

/* *dst += v, unless the sum would pass COUNT_MAX: then false and *dst unchanged. */
static inline bool count_add(uint64_t *dst, uint64_t v)
{
	uint64_t sum;
	if (__builtin_add_overflow(*dst, v, &sum) || sum > COUNT_MAX)
		return false;
	*dst = sum;
	return true;
}

#endif
