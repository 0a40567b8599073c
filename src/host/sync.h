/*
 * Lining a guest's CLOCK_MONOTONIC up with its host's, from NTP-style
 * exchanges: the guest sends at t1, the host receives at t2 and answers at
 * t3, the guest receives at t4.  Causality alone (t1 + theta <= t2 and
 * t4 + theta >= t3) puts the true offset theta in [t3 - t4, t2 - t1]: the
 * classic offset ((t2 - t1) + (t3 - t4)) / 2 plus or minus delay / 2, where
 * delay = (t4 - t1) - (t3 - t2), whatever the asymmetry of the two paths.
 *
 * The window keeps, for each second of the last HOST_SYNC_WINDOW_S, only the
 * exchange of least delay (as trace-cmd's PTP sync keeps the fastest probe of
 * each burst): a slow exchange widens nothing while a faster one shares its
 * second.  Fixed storage; adding a sample never allocates.
 *
 * Offset and drift: we assume the offset is a straight line of guest time
 * over the window (one drift), and take no fitted line but the intervals
 * themselves.  Any two samples a, b bound that line everywhere: at
 * lambda = (t - g_a) / (g_b - g_a) it lies in (1 - lambda) [a] + lambda [b],
 * of half-width |1 - lambda| h_a + |lambda| h_b (h = delay / 2): half the
 * delays of the samples used, plus the drift's uncertainty times the distance
 * from them.  A least-squares fit through the midpoints would use all samples
 * but its error is a statistical guess about one-sided, heavy-tailed delays;
 * this bound holds without one.  A query intersects the bands of every pair
 * (at most 61 x 60 / 2; cheap at a query per spike), so the tightest pair at
 * that time decides, near the samples or far from them.
 *
 * A clock step (a live migration, a stopped guest resumed with an adjusted
 * clock): a sample whose interval misses the band the window predicts for
 * its time cannot lie on the window's line, so the window is emptied and
 * starts again from that sample; queries return -EAGAIN until it holds
 * HOST_SYNC_MIN_SECONDS seconds again, and `steps` counts it.
 */
#ifndef LATSCOPE_HOST_SYNC_H
#define LATSCOPE_HOST_SYNC_H

#include <stddef.h>
#include <stdint.h>

#define HOST_SYNC_WINDOW_S    60u
#define HOST_SYNC_SLOTS       (HOST_SYNC_WINDOW_S + 1u)
/* Two seconds give a line; a third shows that it holds (one step check). */
#define HOST_SYNC_MIN_SECONDS 3u

/* The least-delay exchange of one second of guest time. */
struct host_sync_slot {
	uint64_t sec;           /* guest time / 1 s of the exchange's midpoint */
	uint64_t g;             /* guest midpoint, (t1 + t4) / 2 */
	int64_t lo, hi;         /* the true offset host - guest lies in [lo, hi] */
	uint32_t exchanges;     /* how many exchanges this second had */
};

struct host_sync {
	struct host_sync_slot slot[HOST_SYNC_SLOTS];   /* a ring, oldest at first */
	unsigned first, n;
	uint32_t steps;         /* windows restarted by a clock step */
};

/* How well the clocks are lined up, at the newest sample. */
struct host_sync_status {
	double offset_ns;       /* host - guest */
	double bound_ns;        /* the offset's half-width there */
	double drift_ppm;       /* host ns per guest s, minus one, in 1e-6 */
	double drift_bound_ppm; /* from the pair of samples that bounds it best */
	uint32_t exchanges;     /* in the window */
	unsigned seconds;       /* samples used: one per second */
	uint32_t steps;
};

void host_sync_init(struct host_sync *s);

/* One exchange.  -EINVAL (ignored) when t4 < t1 or t3 < t2, or when the host
 * held it longer than the guest waited; -ERANGE (ignored) when it is older
 * than the window's newest second and its second is gone. */
int host_sync_add(struct host_sync *s, uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4);

/* The host time of guest time guest_ns, and the bound: the true host time is
 * within *ret_host_ns +- *ret_bound_ns if the drift held constant over the
 * window.  -EAGAIN until the window holds HOST_SYNC_MIN_SECONDS seconds;
 * -ERANGE when its samples fit no single line (nothing written). */
int host_sync_host_of(const struct host_sync *s, uint64_t guest_ns, uint64_t *ret_host_ns, uint64_t *ret_bound_ns);

/* -EAGAIN as host_of. */
int host_sync_status(const struct host_sync *s, struct host_sync_status *ret);

/* "offset +1234.5 us, drift +3.2 ppm, bound 45 us over 37 exchanges", or
 * "not lined up yet (2 of 3 seconds)". */
void host_sync_describe(const struct host_sync *s, char *buf, size_t size);

#endif
