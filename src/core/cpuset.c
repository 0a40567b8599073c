#include "core/cpuset.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

unsigned cpuset_count(const struct cpuset *s)
{
	unsigned n = 0;
	for (unsigned i = 0; i < CPUSET_WORDS; i++)
		n += (unsigned)__builtin_popcountll(s->bits[i]);
	return n;
}

int cpuset_next(const struct cpuset *s, unsigned from)
{
	for (unsigned w = from / 64u; w < CPUSET_WORDS; w++) {
		uint64_t word = s->bits[w];
		if (w == from / 64u)
			word &= ~UINT64_C(0) << (from % 64u);
		if (word)
			return (int)(w * 64u + (unsigned)__builtin_ctzll(word));
	}
	return -1;
}

bool cpuset_subset(const struct cpuset *a, const struct cpuset *b)
{
	for (unsigned i = 0; i < CPUSET_WORDS; i++)
		if (a->bits[i] & ~b->bits[i])
			return false;
	return true;
}

void cpuset_diff(struct cpuset *ret, const struct cpuset *a, const struct cpuset *b)
{
	for (unsigned i = 0; i < CPUSET_WORDS; i++)
		ret->bits[i] = a->bits[i] & ~b->bits[i];
}

/*
 * A CPU number: decimal digits only, no sign, no leading spaces.  A number of
 * CPUSET_MAX or more reads as CPUSET_MAX, so that the caller can finish checking
 * the form of the text before it reports -ERANGE.
 */
static int parse_cpu(const char **p, unsigned *ret)
{
	const char *s = *p;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	unsigned long v = 0;
	for (; *s >= '0' && *s <= '9'; s++)
		if (v < CPUSET_MAX)
			v = v * 10u + (unsigned long)(*s - '0');
	*p = s;
	*ret = v < CPUSET_MAX ? (unsigned)v : CPUSET_MAX;
	return 0;
}

int cpuset_parse(const char *text, struct cpuset *ret)
{
	struct cpuset set;
	const char *p = text;
	bool too_big = false;
	int r;

	cpuset_clear(&set);
	if (!text || !*text)
		return -EINVAL;
	for (;;) {
		unsigned lo, hi;
		if ((r = parse_cpu(&p, &lo)) < 0)
			return r;
		hi = lo;
		if (*p == '-') {
			p++;
			if ((r = parse_cpu(&p, &hi)) < 0)
				return r;
		}
		if (lo >= CPUSET_MAX || hi >= CPUSET_MAX)
			too_big = true;
		else if (hi < lo)
			return -EINVAL;
		else
			for (unsigned c = lo; c <= hi; c++)
				cpuset_add(&set, c);
		if (*p == '\0')
			break;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
	if (too_big)
		return -ERANGE;
	*ret = set;
	return 0;
}

size_t cpuset_format(const struct cpuset *s, char *buf, size_t size)
{
	size_t len = 0;
	bool fits = size > 0;
	int cpu = cpuset_next(s, 0);

	if (size)
		buf[0] = '\0';
	while (cpu >= 0) {
		int end = cpu;
		while (cpuset_has(s, (unsigned)end + 1u))
			end++;
		char piece[32];
		int n = end > cpu ? snprintf(piece, sizeof(piece), "%s%d-%d", len ? "," : "", cpu, end)
				  : snprintf(piece, sizeof(piece), "%s%d", len ? "," : "", cpu);
		/* Stop copying at the first piece that does not fit: no gaps in a short buffer. */
		fits = fits && len + (size_t)n < size;
		if (fits)
			memcpy(buf + len, piece, (size_t)n + 1u);
		len += (size_t)n;
		cpu = cpuset_next(s, (unsigned)end + 1u);
	}
	return len;
}
