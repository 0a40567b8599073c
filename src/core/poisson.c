#include "core/poisson.h"

#include <math.h>

#define EXACT_UP_TO 100u

/* P(X >= k) for X ~ Poisson(x), k >= 1: the Gamma(k) distribution function at
 * x, summed in logs so that a large x cannot underflow the first terms. */
static double at_least(uint64_t k, double x)
{
	double below = 0.0;             /* P(X < k), each term exp(-x + i ln x - ln i!) */
	for (uint64_t i = 0; i < k; i++)
		below += exp(-x + (double)i * log(x) - lgamma((double)i + 1.0));
	return below > 1.0 ? 0.0 : 1.0 - below;
}

/* The x at which P(X >= k) = p (it grows with x), k >= 1. */
static double solve(uint64_t k, double p)
{
	double lo = 0.0, hi = (double)k + 10.0 * sqrt((double)k) + 10.0;
	for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
		double mid = (lo + hi) / 2.0;
		if (at_least(k, mid) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2.0;
}

/* The standard normal quantile (Acklam's rational approximation, refined once). */
static double normal_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
				    1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
				    6.680131188771972e+01, -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
				    -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
				    3.754408661907416e+00 };
	double q, r, x;

	if (p < 0.02425) {
		q = sqrt(-2.0 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
	} else if (p > 1.0 - 0.02425) {
		q = sqrt(-2.0 * log(1.0 - p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
	} else {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
	}
	double e = 0.5 * erfc(-x / sqrt(2.0)) - p;     /* one Halley step */
	double u = e * 2.5066282746310002 * exp(x * x / 2.0);
	return x - u / (1.0 + x * u / 2.0);
}

/* Half the chi-square quantile with 2k degrees of freedom, Wilson-Hilferty. */
static double approx(uint64_t k, double p)
{
	double nu = 2.0 * (double)k, t = 2.0 / (9.0 * nu);
	double c = 1.0 - t + normal_quantile(p) * sqrt(t);
	return nu * c * c * c / 2.0;
}

void poisson_interval(uint64_t k, double conf, double *lo, double *hi)
{
	double tail = (1.0 - conf) / 2.0;

	*lo = k == 0 ? 0.0 : k > EXACT_UP_TO ? approx(k, tail) : solve(k, tail);
	*hi = k + 1u > EXACT_UP_TO ? approx(k + 1u, 1.0 - tail) : solve(k + 1u, 1.0 - tail);
}
