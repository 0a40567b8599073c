/* The standard normal distribution's quantile, shared by the bootstrap and the tail fit. */
#ifndef LATSCOPE_CORE_NORMAL_H
#define LATSCOPE_CORE_NORMAL_H

/* z with P(Z <= z) = p for a standard normal Z, p in (0, 1); NaN outside.
 * Bisection on erfc to the spacing of doubles: exact, and called a few times
 * per fit or verdict, never per sample. */
double normal_quantile(double p);

#endif
