#include "probe/clockstep.h"

#include "core/nstime.h"

/* The reading's middle and half its bracket: monotonic reads on both sides. */
static uint64_t middle(const struct clock_reading *r, uint64_t *ret_error)
{
	uint64_t a = r->mono_before, b = r->mono_after >= r->mono_before ? r->mono_after : r->mono_before;
	*ret_error = (b - a + 1u) / 2u;
	return a + (b - a) / 2u;
}

/* clock - mono as a signed number: wraps as two's complement, which is what
 * the difference of two offsets needs. */
static int64_t offset_of(uint64_t clock, uint64_t mono)
{
	return (int64_t)(clock - mono);
}

void clock_step_start(struct clock_step *cs, const struct clock_reading *r)
{
	*cs = (struct clock_step){ 0 };
	cs->last_mono = middle(r, &cs->last_error);
	cs->origin = cs->last_mono;
	cs->last_offset = offset_of(r->clock, cs->last_mono);
}

int64_t clock_step_check(struct clock_step *cs, const struct clock_reading *r)
{
	uint64_t error;
	uint64_t mono = middle(r, &error);
	int64_t offset = offset_of(r->clock, mono);
	int64_t change = (int64_t)((uint64_t)offset - (uint64_t)cs->last_offset);
	uint64_t size = change < 0 ? -(uint64_t)change : (uint64_t)change;
	uint64_t elapsed = mono > cs->last_mono ? mono - cs->last_mono : 0;
	uint64_t allowed = elapsed / (1000000u / CLOCK_STEP_SLEW_PPM) + error + cs->last_error + CLOCK_STEP_FLOOR_NS;

	cs->last_mono = mono;
	cs->last_offset = offset;
	cs->last_error = error;
	if (size <= allowed)
		return 0;
	cs->steps++;
	uint64_t largest = cs->largest < 0 ? -(uint64_t)cs->largest : (uint64_t)cs->largest;
	if (size > largest) {
		cs->largest = change;
		cs->largest_at = mono - cs->origin;
	}
	return change;
}

void clock_read_against_mono(clockid_t id, struct clock_reading *ret)
{
	ret->mono_before = mono_ns();
	ret->clock = clock_ns(id);
	ret->mono_after = mono_ns();
}

const char *clock_id_name(clockid_t id)
{
	switch (id) {
	case CLOCK_MONOTONIC: return "CLOCK_MONOTONIC";
	case CLOCK_REALTIME: return "CLOCK_REALTIME";
	case CLOCK_TAI: return "CLOCK_TAI";
	case CLOCK_BOOTTIME: return "CLOCK_BOOTTIME";
	default: return "the clock";
	}
}
