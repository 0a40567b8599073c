/* cpu: integer and floating-point work that never touches memory. */
#include <stdint.h>

#include "core/error.h"
#include "load/gen.h"

/* volatile: results nobody reads would let the compiler drop the work. */
static volatile uint64_t sink_int;
static volatile double sink_fp;

static int cpu_setup(struct gen_worker *w, struct lat_error *err)
{
	(void)w;
	(void)err;
	return 0;
}

__attribute__((noreturn))
static void cpu_run(struct gen_worker *w)
{
	uint64_t x = UINT64_C(0x9e3779b97f4a7c15) + w->cpu;
	double f = 1.0 + w->cpu;

	/* Pieces of a few microseconds, so the duty cycle stays fine-grained. */
	for (;;) {
		for (unsigned i = 0; i < 4096; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			x *= UINT64_C(0x2545f4914f6cdd1d);
		}
		for (unsigned i = 0; i < 1024; i++)
			f = 1.0 / (f + 1.0) + 0.5;      /* divides: the slow FP unit */
		sink_int = x;
		sink_fp = f;
		duty_pace(&w->duty);
	}
}

const struct gen_ops gen_cpu = { .setup = cpu_setup, .run = cpu_run };
