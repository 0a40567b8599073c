#include "core/normal.h"

#include <math.h>

double normal_quantile(double p)
{
	double lo = -40.0, hi = 40.0;

	if (!(p > 0.0 && p < 1.0))
		return (double)NAN;
	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2.0;
		if (0.5 * erfc(-mid / M_SQRT2) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2.0;
}
