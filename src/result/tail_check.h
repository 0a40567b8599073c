/*
 * The assumptions a tail fit rests on, each tested on the data it was fitted
 * to and answered by a p-value (NaN: too little data to test):
 *  - successive window maxima are independent: Ljung-Box on their ranks;
 *  - the run is stationary: the share of windows above a level, first half
 *    against second, by the exact conditional (hypergeometric) test;
 *  - the exceedances follow the fitted GPD: a binned chi-square.
 */
#ifndef LATSCOPE_RESULT_TAIL_CHECK_H
#define LATSCOPE_RESULT_TAIL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "core/hist.h"

#define TAIL_CHECK_MIN_WINDOWS	20u /* fewer and neither window test is run */
#define TAIL_CHECK_LAGS		10u /* Ljung-Box lags (fewer: a fifth of the windows) */
#define TAIL_CHECK_MIN_EXPECTED 5.0 /* per chi-square group */

/*
 * The window tests on max[0..n-1] in time order: *ret_indep from Ljung-Box
 * on the ranks, *ret_stat from the windows above v = the larger of threshold
 * and the median maximum, counted in each half.  0, or -ENOMEM.
 */
int tail_check_windows(const uint64_t *max, size_t n, uint64_t threshold, double *ret_indep,
		       double *ret_stat);

/* The two-sided p-value of x of the k marked items among n falling in the
 * first n1 (hypergeometric): the exact test of equal shares given k. */
double tail_check_halves(uint64_t n, uint64_t n1, uint64_t k, uint64_t x);

/*
 * The chi-square p-value of h's buckets from index first up (the threshold is
 * their low edge; n_exceed samples) against the GPD (xi, sigma), buckets
 * merged until each group expects TAIL_CHECK_MIN_EXPECTED; two parameters were
 * fitted to the same bins, so groups - 3 degrees of freedom (NaN below one).
 */
double tail_check_fit(const struct hist *h, unsigned first, uint64_t n_exceed, double xi,
		      double sigma);

#endif
