/* A fixed-size set of CPU numbers, independent of glibc's cpu_set_t size. */
#ifndef LATSCOPE_CORE_CPUSET_H
#define LATSCOPE_CORE_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CPUSET_MAX 4096u
#define CPUSET_WORDS (CPUSET_MAX / 64u)

struct cpuset {
	uint64_t bits[CPUSET_WORDS];
};

static inline void cpuset_clear(struct cpuset *s)
{
	for (unsigned i = 0; i < CPUSET_WORDS; i++)
		s->bits[i] = 0;
}

static inline void cpuset_add(struct cpuset *s, unsigned cpu)
{
	if (cpu < CPUSET_MAX)
		s->bits[cpu / 64u] |= UINT64_C(1) << (cpu % 64u);
}

static inline bool cpuset_has(const struct cpuset *s, unsigned cpu)
{
	return cpu < CPUSET_MAX && (s->bits[cpu / 64u] >> (cpu % 64u)) & 1u;
}

unsigned cpuset_count(const struct cpuset *s);
/* Next member >= from, or -1 when none. */
int cpuset_next(const struct cpuset *s, unsigned from);
bool cpuset_subset(const struct cpuset *a, const struct cpuset *b);   /* a within b */
/* a minus b */
void cpuset_diff(struct cpuset *ret, const struct cpuset *a, const struct cpuset *b);

/*
 * Parse a list like "0-3,6" (also "all"? no: callers decide what "all" means).
 * Returns 0, -EINVAL for malformed text, -ERANGE for a CPU >= CPUSET_MAX.
 * ret is untouched on failure.
 */
int cpuset_parse(const char *text, struct cpuset *ret);

/* Write the set as a compact list ("0-3,6"); "" for an empty set.  Returns the
 * length it needed (like snprintf), so a short buffer can be detected. */
size_t cpuset_format(const struct cpuset *s, char *buf, size_t size);

/* cpu is the name the loop declares: it cannot be parenthesized. */
#define cpuset_foreach(cpu, set) /* NOLINTNEXTLINE(bugprone-macro-parentheses) */ \
	for (int cpu = cpuset_next((set), 0); cpu >= 0; cpu = cpuset_next((set), (unsigned)cpu + 1u))

#endif
