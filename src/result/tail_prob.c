#include "result/tail_prob.h"

#include <float.h>
#include <math.h>

#define GAMMA_EPS  1e-15
#define GAMMA_ITER 10000

/* e^-x x^a / Gamma(a), the factor both expansions share, in logs so that a
 * large x or a does not overflow before it cancels. */
static double gamma_front(double a, double x)
{
	return exp(-x + a * log(x) - lgamma(a));
}

/* The regularized lower incomplete gamma P(a, x) by its power series, which
 * converges fast for x < a + 1. */
static double gamma_lower_series(double a, double x)
{
	double term = 1.0 / a, sum = term;

	for (int n = 1; n < GAMMA_ITER; n++) {
		term *= x / (a + n);
		sum += term;
		if (fabs(term) < fabs(sum) * GAMMA_EPS)
			break;
	}
	return sum * gamma_front(a, x);
}

/* The regularized upper incomplete gamma Q(a, x) by Legendre's continued
 * fraction, evaluated with the modified Lentz method; for x >= a + 1. */
static double gamma_upper_fraction(double a, double x)
{
	double b = x + 1.0 - a, c = 1.0 / DBL_MIN, d = 1.0 / b, f = d;

	for (int i = 1; i < GAMMA_ITER; i++) {
		double an = -(double)i * ((double)i - a);
		b += 2.0;
		d = an * d + b;
		if (fabs(d) < DBL_MIN)
			d = DBL_MIN;
		c = b + an / c;
		if (fabs(c) < DBL_MIN)
			c = DBL_MIN;
		d = 1.0 / d;
		double step = d * c;
		f *= step;
		if (fabs(step - 1.0) < GAMMA_EPS)
			break;
	}
	return f * gamma_front(a, x);
}

double tail_chi2_upper(double x, double df)
{
	double a = df / 2.0, y = x / 2.0;

	if (!(df > 0.0) || isnan(x))
		return (double)NAN;
	if (y <= 0.0)
		return 1.0;
	if (y < a + 1.0)
		return 1.0 - gamma_lower_series(a, y);
	return gamma_upper_fraction(a, y);
}
