/*
 * bench/tail-fit: how long tail_fit (src/result/tail.c) takes on what a
 * 10-minute run keeps: a histogram filled over several octaves (a lognormal
 * body around 50 us and a heavy GPD tail to tens of milliseconds) and
 * 120,000 window maxima; then the same with 10^6 windows (about 12 days of
 * 1 s windows).  Run by hand, never by the test suite:
 *
 *   ninja -C build-dev
 *   cc -O2 -D_GNU_SOURCE -Isrc bench/tail-fit.c build-dev/src/liblatscope-result.a \
 *      build-dev/src/liblatscope-core.a -lm -ljansson -o /tmp/tail-fit && /tmp/tail-fit
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "result/tail.h"

#define SAMPLES 6000000u
#define REPEAT	21

static uint64_t state = 88172645463325252u;

static double unit(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return ((double)(state >> 11) + 1.0) * 0x1.0p-53;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void time_fit(const struct hist *h, const uint64_t *win, size_t nwin, uint64_t observed_ns)
{
	double t[REPEAT];
	struct tail_fit f;
	struct lat_error err;

	for (int i = 0; i < REPEAT; i++) {
		double t0 = now_s();
		if (tail_fit(h, observed_ns, win, nwin, &f, &err) < 0) {
			fprintf(stderr, "tail-fit: %s\n", err.msg);
			exit(1);
		}
		t[i] = now_s() - t0;
	}
	qsort(t, REPEAT, sizeof(t[0]), by_double);
	unsigned used = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		used += h->counts[i] != 0;
	printf("%zu windows, %u buckets used, %u candidates: median %.1f ms, max %.1f ms "
	       "(xi %.3f, 1h level %.0f ns, %s)\n",
	       nwin, used, f.ncand, t[REPEAT / 2] * 1e3, t[REPEAT - 1] * 1e3, f.xi.est,
	       f.level_ns[TAIL_HOUR].est, f.why);
}

int main(void)
{
	static struct hist h;
	size_t nwin = 1000000u;
	uint64_t *win = calloc(nwin, sizeof(*win));

	if (!win)
		return 1;
	for (unsigned i = 0; i < SAMPLES; i++) {
		double x = unit() < 0.02 ? 60000.0 + 8000.0 * (pow(unit(), -0.2) - 1.0) / 0.2
					 : 50000.0 * exp(0.3 * sqrt(-2.0 * log(unit())) *
							 cos(6.283185307179586 * unit()));
		hist_record(&h, (uint64_t)x);
		win[i % nwin] = (uint64_t)x > win[i % nwin] ? (uint64_t)x : win[i % nwin];
	}
	time_fit(&h, win, 120000u, UINT64_C(600) * 1000000000u);
	time_fit(&h, win, nwin, UINT64_C(600) * 1000000000u);
	free(win);
	return 0;
}
