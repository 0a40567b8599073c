/*
 * The generalized Pareto distribution fitted by maximum likelihood to binned
 * exceedances: each bin contributes count * ln(S(a) - S(b)), the exact
 * likelihood of data known only to lie in [a, b), so a histogram's buckets
 * cost information (wider intervals) but add no bias.
 *
 * S(y) = (1 + xi y / sigma)^(-1/xi), y >= 0 (xi = 0: e^(-y/sigma)); with
 * xi < 0 the tail ends at -sigma / xi.
 */
#ifndef LATSCOPE_RESULT_TAIL_GPD_H
#define LATSCOPE_RESULT_TAIL_GPD_H

#include <stddef.h>
#include <stdint.h>

/* Exceedances y (value - threshold, ns) known to lie in [a, b). */
struct gpd_bin {
	double a, b;
	uint64_t count;
};

struct gpd_est {
	double xi, sigma;
	double cov[2][2]; /* of (xi, ln sigma): the inverse observed information */
	double loglik;
};

/* ln S(y): 0 for y <= 0, -INFINITY beyond the end point. */
double gpd_logsurv(double y, double xi, double sigma);

/* sigma / xi * (m^xi - 1), the excess over the threshold exceeded by one in
 * m exceedances (xi = 0: sigma ln m). */
double gpd_excess(double xi, double sigma, double m);

/*
 * Maximize the binned likelihood over bins[0..n-1] from the start (xi0,
 * sigma0 > 0) and estimate the covariance from the numerical Hessian there.
 * 0, or -EDOM when the likelihood has no interior maximum with a positive
 * definite information (ret untouched).
 */
int gpd_fit(const struct gpd_bin *bins, size_t n, double xi0, double sigma0, struct gpd_est *ret);

#endif
