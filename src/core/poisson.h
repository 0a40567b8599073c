/*
 * How sure a count of rare events is: the exact (Garwood) interval of a
 * Poisson mean, from which a spike rate's and a mean time between spikes'
 * intervals follow.
 */
#ifndef LATSCOPE_CORE_POISSON_H
#define LATSCOPE_CORE_POISSON_H

#include <stdint.h>

/*
 * The two-sided interval, at confidence conf in (0, 1), of the mean number of
 * events of which k were seen: *lo is 0 for k = 0.  Exact up to k = 100
 * (bisection on the Poisson sums), the Wilson-Hilferty approximation above
 * (relative error below 1e-4 there).
 */
void poisson_interval(uint64_t k, double conf, double *lo, double *hi);

#endif
