#include "monitor/schedule.h"

#include "core/nstime.h"

/* A noise run this close is run now rather than after one more short period. */
#define NOISE_EARLY_NS (NS_PER_SEC / 10u)
/* No period is shorter: a period's start costs more than the noise run's delay. */
#define PERIOD_MIN_NS NS_PER_SEC

void mon_schedule_init(struct mon_schedule *s, uint64_t rotate_ns, uint64_t every_ns, uint64_t for_ns,
		       uint64_t now_ns)
{
	*s = (struct mon_schedule){ .rotate_ns = rotate_ns, .every_ns = every_ns, .for_ns = for_ns,
				    .next_noise_ns = every_ns ? now_ns + every_ns : UINT64_MAX };
}

enum mon_phase mon_schedule_next(struct mon_schedule *s, uint64_t now_ns, uint64_t *ret_duration_ns)
{
	if (s->after_period && s->next_noise_ns != UINT64_MAX && now_ns + NOISE_EARLY_NS >= s->next_noise_ns) {
		s->after_period = false;
		*ret_duration_ns = s->for_ns;
		return MON_NOISE;
	}
	/* a period ends when it is due, or when the noise probe is */
	uint64_t dur = s->rotate_ns;
	if (s->next_noise_ns != UINT64_MAX && s->next_noise_ns > now_ns && s->next_noise_ns - now_ns < dur)
		dur = s->next_noise_ns - now_ns;
	*ret_duration_ns = dur < PERIOD_MIN_NS ? PERIOD_MIN_NS : dur;
	s->after_period = true;
	return MON_PERIOD;
}

void mon_schedule_noise_done(struct mon_schedule *s, uint64_t now_ns)
{
	uint64_t due = s->next_noise_ns;

	if (now_ns >= due)
		due += ((now_ns - due) / s->every_ns) * s->every_ns;
	s->next_noise_ns = due + s->every_ns;
}
