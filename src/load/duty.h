/* A duty cycle: busy for a share of every period, asleep for the rest. */
#ifndef LATSCOPE_LOAD_DUTY_H
#define LATSCOPE_LOAD_DUTY_H

#include <stdint.h>

#define DUTY_PERIOD_NS UINT64_C(10000000)      /* 10 ms */

struct duty {
	uint64_t busy_ns;
	uint64_t period_start;
};

void duty_init(struct duty *d, unsigned pct);
/* Call between small pieces of work: once the busy share of this period is
 * spent, sleep to the start of the next one. */
void duty_pace(struct duty *d);

#endif
