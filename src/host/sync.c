#include "host/sync.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/nstime.h"

/* Doubles carry the bands: 1 ns of slack keeps their rounding from calling a
 * consistent sample a step. */
#define SLACK_NS 1.0

static const struct host_sync_slot *slot_at(const struct host_sync *s, unsigned k)
{
	return &s->slot[(s->first + k) % HOST_SYNC_SLOTS];
}

void host_sync_init(struct host_sync *s)
{
	memset(s, 0, sizeof(*s));
}

/*
 * The band of every line through a's and b's intervals, at guest time t,
 * relative to base: offsets may be days of uptime apart, and subtracting
 * base first keeps the doubles' products exact to well under a ns.
 */
static void pair_band(const struct host_sync_slot *a, const struct host_sync_slot *b, uint64_t t, int64_t base,
		      double *ret_lo, double *ret_hi)
{
	const double lam = (double)(int64_t)(t - a->g) / (double)(b->g - a->g);
	const double w = 1.0 - lam;
	const double alo = (double)(a->lo - base), ahi = (double)(a->hi - base);
	const double blo = (double)(b->lo - base), bhi = (double)(b->hi - base);
	*ret_lo = fmin(w * alo, w * ahi) + fmin(lam * blo, lam * bhi);
	*ret_hi = fmax(w * alo, w * ahi) + fmax(lam * blo, lam * bhi);
}

/* The intersection of all pairs' bands at t; -ERANGE when it is empty. */
static int band_at(const struct host_sync *s, uint64_t t, int64_t base, double *ret_lo, double *ret_hi)
{
	double lo = -HUGE_VAL, hi = HUGE_VAL;
	for (unsigned i = 0; i < s->n; i++)
		for (unsigned j = i + 1u; j < s->n; j++) {
			double l, h;
			pair_band(slot_at(s, i), slot_at(s, j), t, base, &l, &h);
			lo = fmax(lo, l);
			hi = fmin(hi, h);
		}
	if (lo > hi + SLACK_NS)
		return -ERANGE;
	*ret_lo = lo;
	*ret_hi = hi;
	return 0;
}

/* Whether x cannot lie on the window's line (a step), or the window fits none. */
static int is_step(const struct host_sync *s, const struct host_sync_slot *x)
{
	if (s->n < 2u)
		return 0;
	const int64_t base = slot_at(s, s->n - 1u)->lo;
	double lo, hi;
	if (band_at(s, x->g, base, &lo, &hi) < 0)
		return 1;
	return (double)(x->hi - base) < lo - SLACK_NS || (double)(x->lo - base) > hi + SLACK_NS;
}

/* x into the slot of its second: the narrower interval stays. */
static void merge(struct host_sync_slot *into, const struct host_sync_slot *x)
{
	const uint32_t exchanges = into->exchanges + 1u;
	if (x->hi - x->lo < into->hi - into->lo)
		*into = *x;
	into->exchanges = exchanges;
}

static int place(struct host_sync *s, const struct host_sync_slot *x)
{
	for (unsigned k = s->n; k-- > 0;) {
		struct host_sync_slot *y = &s->slot[(s->first + k) % HOST_SYNC_SLOTS];
		if (y->sec == x->sec) {
			merge(y, x);
			return 0;
		}
		if (y->sec < x->sec) {
			if (k + 1u != s->n)
				return -ERANGE;         /* between two kept seconds: its own is gone */
			break;
		}
	}
	if (s->n > 0 && x->sec < slot_at(s, 0)->sec)
		return -ERANGE;
	while (s->n > 0 && (slot_at(s, 0)->sec + HOST_SYNC_WINDOW_S < x->sec || s->n == HOST_SYNC_SLOTS)) {
		s->first = (s->first + 1u) % HOST_SYNC_SLOTS;
		s->n--;
	}
	s->slot[(s->first + s->n) % HOST_SYNC_SLOTS] = *x;
	s->n++;
	return 0;
}

int host_sync_add(struct host_sync *s, uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4)
{
	if (t4 < t1 || t3 < t2 || t3 - t2 > t4 - t1)
		return -EINVAL;
	struct host_sync_slot x = {
		.g = t1 + (t4 - t1) / 2u,
		.lo = (int64_t)(t3 - t4),
		.hi = (int64_t)(t2 - t1),
		.exchanges = 1,
	};
	x.sec = x.g / NS_PER_SEC;
	if (is_step(s, &x)) {
		s->n = 0;
		s->first = 0;
		s->steps++;
	}
	return place(s, &x);
}

int host_sync_host_of(const struct host_sync *s, uint64_t guest_ns, uint64_t *ret_host_ns, uint64_t *ret_bound_ns)
{
	if (s->n < HOST_SYNC_MIN_SECONDS)
		return -EAGAIN;
	const int64_t base = slot_at(s, s->n - 1u)->lo;
	double lo, hi;
	int r = band_at(s, guest_ns, base, &lo, &hi);
	if (r < 0)
		return r;
	const int64_t offset = base + (int64_t)llround((lo + hi) / 2.0);
	*ret_host_ns = guest_ns + (uint64_t)offset;
	/* Half the band, and half a ns for rounding the middle to a whole ns. */
	*ret_bound_ns = (uint64_t)ceil(fmax(hi - lo, 0.0) / 2.0 + 0.5);
	return 0;
}

/* The drift from the pair that bounds it tightest: far apart, narrow intervals. */
static void drift_of(const struct host_sync *s, struct host_sync_status *st)
{
	double best = HUGE_VAL;
	for (unsigned i = 0; i < s->n; i++)
		for (unsigned j = i + 1u; j < s->n; j++) {
			const struct host_sync_slot *a = slot_at(s, i), *b = slot_at(s, j);
			const double span = (double)(b->g - a->g);
			const double slo = (double)(b->lo - a->hi) / span, shi = (double)(b->hi - a->lo) / span;
			if (shi - slo < best) {
				best = shi - slo;
				st->drift_ppm = (slo + shi) / 2.0 * 1e6;
				st->drift_bound_ppm = (shi - slo) / 2.0 * 1e6;
			}
		}
}

int host_sync_status(const struct host_sync *s, struct host_sync_status *ret)
{
	if (s->n < HOST_SYNC_MIN_SECONDS)
		return -EAGAIN;
	const struct host_sync_slot *newest = slot_at(s, s->n - 1u);
	double lo, hi;
	int r = band_at(s, newest->g, newest->lo, &lo, &hi);
	if (r < 0)
		return r;
	struct host_sync_status st = {
		.offset_ns = (double)newest->lo + (lo + hi) / 2.0,
		.bound_ns = fmax(hi - lo, 0.0) / 2.0,
		.seconds = s->n,
		.steps = s->steps,
	};
	for (unsigned k = 0; k < s->n; k++)
		st.exchanges += slot_at(s, k)->exchanges;
	drift_of(s, &st);
	*ret = st;
	return 0;
}

void host_sync_describe(const struct host_sync *s, char *buf, size_t size)
{
	struct host_sync_status st;
	int r = host_sync_status(s, &st);
	if (r == -EAGAIN)
		snprintf(buf, size, "not lined up yet (%u of %u seconds)", s->n, HOST_SYNC_MIN_SECONDS);
	else if (r < 0)
		snprintf(buf, size, "not lined up: the exchanges fit no single drift");
	else
		snprintf(buf, size, "offset %+.1f us, drift %+.1f ppm, bound %.0f us over %u exchanges",
			 st.offset_ns / 1e3, st.drift_ppm, ceil(st.bound_ns / 1e3), st.exchanges);
}
