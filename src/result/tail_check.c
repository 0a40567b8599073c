#include "result/tail_check.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "result/tail_gpd.h"
#include "result/tail_prob.h"

struct ranked {
	uint64_t v;
	size_t at;
};

/* Sort s[0..n-1] by value (tmp: room for n more): a least-significant-digit
 * radix sort, a byte a pass, passes where every value has the same byte
 * skipped; qsort's comparisons took most of a fit's time at 10^5 windows. */
static struct ranked *radix_sort(struct ranked *s, struct ranked *tmp, size_t n)
{
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[((s[i].v >> shift) & 0xffu) + 1u]++;
		if (count[((s[0].v >> shift) & 0xffu) + 1u] == n)
			continue;
		for (unsigned d = 0; d < 256; d++)
			count[d + 1] += count[d];
		for (size_t i = 0; i < n; i++)
			tmp[count[(s[i].v >> shift) & 0xffu]++] = s[i];
		struct ranked *t = s;
		s = tmp;
		tmp = t;
	}
	return s;
}

/* Ljung-Box Q over lags 1..h of x[0..n-1] (any scale: centred here). */
static double ljung_box(const double *x, size_t n, unsigned h)
{
	double mean = 0.0, c0 = 0.0, q = 0.0;

	for (size_t i = 0; i < n; i++)
		mean += x[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		c0 += (x[i] - mean) * (x[i] - mean);
	if (!(c0 > 0.0))
		return (double)NAN;
	for (unsigned k = 1; k <= h; k++) {
		double ck = 0.0;
		for (size_t i = k; i < n; i++)
			ck += (x[i] - mean) * (x[i - k] - mean);
		double r = ck / c0;
		q += r * r / (double)(n - k);
	}
	return (double)n * ((double)n + 2.0) * q;
}

int tail_check_windows(const uint64_t *max, size_t n, uint64_t threshold, double *ret_indep,
		       double *ret_stat)
{
	*ret_indep = *ret_stat = (double)NAN;
	if (n < TAIL_CHECK_MIN_WINDOWS)
		return 0;
	struct ranked *buf = malloc(2 * n * sizeof(*buf));
	double *rank = malloc(n * sizeof(*rank));
	if (!buf || !rank) {
		free(buf);
		free(rank);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		buf[i] = (struct ranked){ max[i], i };
	const struct ranked *s = radix_sort(buf, buf + n, n);
	/* Ranks, not values: maxima of a heavy tail may have no variance, and
	 * Ljung-Box's chi-square needs it; ties share their mean rank. */
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && s[j].v == s[i].v; j++)
			;
		for (size_t k = i; k < j; k++)
			rank[s[k].at] = (double)(i + j + 1) / 2.0;
	}
	unsigned lags = n / 5 < TAIL_CHECK_LAGS ? (unsigned)(n / 5) : TAIL_CHECK_LAGS;
	*ret_indep = tail_chi2_upper(ljung_box(rank, n, lags), (double)lags);

	uint64_t median = s[(n - 1) / 2].v, v = threshold > median ? threshold : median;
	uint64_t n1 = n / 2, k = 0, x = 0;
	for (size_t i = 0; i < n; i++)
		if (max[i] > v) {
			k++;
			x += i < n1;
		}
	*ret_stat = tail_check_halves(n, n1, k, x);
	free(buf);
	free(rank);
	return 0;
}

static double log_choose(double n, double k)
{
	return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

double tail_check_halves(uint64_t n, uint64_t n1, uint64_t k, uint64_t x)
{
	double N = (double)n, K = (double)k, D = (double)n1;
	double lo = k + n1 > n ? (double)(k + n1 - n) : 0.0, hi = fmin(K, D);

	if (k == 0 || k == n || n1 == 0 || n1 == n)
		return 1.0;
	double mode = floor((D + 1.0) * (K + 1.0) / (N + 2.0));
	mode = fmin(fmax(mode, lo), hi);
	double lnorm = log_choose(N, D);
	double pmode = exp(log_choose(K, mode) + log_choose(N - K, D - mode) - lnorm);
	double pobs = exp(log_choose(K, (double)x) + log_choose(N - K, D - (double)x) - lnorm);
	double cut = pobs * (1.0 + 1e-7), sum = 0.0;

	/* Walk out from the mode by the ratio of neighbouring terms (the
	 * distribution is unimodal), adding those no likelier than x's, until
	 * the terms no longer count. */
	for (int dir = -1; dir <= 1; dir += 2) {
		double p = pmode;
		for (double i = mode;;) {
			if (p <= cut && (dir < 0 || i != mode))
				sum += p;
			if (p < 1e-18 * (sum + pobs))
				break;
			double j = i + dir;
			if (j < lo || j > hi)
				break;
			if (dir > 0)
				p *= (K - i) * (D - i) / ((i + 1.0) * (N - K - D + i + 1.0));
			else
				p *= i * (N - K - D + i) / ((K - i + 1.0) * (D - i + 1.0));
			i = j;
		}
	}
	return fmin(sum, 1.0);
}

double tail_check_fit(const struct hist *h, unsigned first, uint64_t n_exceed, double xi,
		      double sigma)
{
	double u = (double)hist_bucket_low(first), n = (double)n_exceed;
	double chi = 0.0, e = 0.0, o = 0.0, seen = 0.0;
	unsigned groups = 0;

	for (unsigned i = first; i < HIST_BUCKETS; i++) {
		double a = (double)hist_bucket_low(i) - u,
		       b = (double)hist_bucket_high(i) + 1.0 - u;
		double sa = exp(gpd_logsurv(a, xi, sigma)), sb = exp(gpd_logsurv(b, xi, sigma));
		e += n * (sa - sb);
		o += (double)h->counts[i];
		if (n * sb < TAIL_CHECK_MIN_EXPECTED) {
			/* what is left above expects too little: it joins this
			 * group, the last, which then expects n S(a) >= the minimum */
			e += n * sb;
			o = n - seen;
			chi += (o - e) * (o - e) / e;
			groups++;
			break;
		}
		if (e >= TAIL_CHECK_MIN_EXPECTED) {
			chi += (o - e) * (o - e) / e;
			groups++;
			seen += o;
			e = o = 0.0;
		}
	}
	return groups > 3 ? tail_chi2_upper(chi, (double)(groups - 3)) : (double)NAN;
}
