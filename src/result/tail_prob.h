/*
 * The distribution function the tail estimate's tests need, which libm does
 * not have: the chi-square upper tail (the p-value of
 * Ljung-Box and of the goodness of fit).
 */
#ifndef LATSCOPE_RESULT_TAIL_PROB_H
#define LATSCOPE_RESULT_TAIL_PROB_H

/* P(X > x) for X chi-square with df > 0 degrees of freedom; 1 for x <= 0. */
double tail_chi2_upper(double x, double df);


#endif
