#include "result/tail_gpd.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define XI_ZERO	     1e-12  /* below this |xi| the exponential limit is exact in doubles */
#define XI_MIN	     (-3.0) /* shapes outside are no latency tail; the search stays inside */
#define XI_MAX	     5.0
#define NM_MAX_EVALS 4000
#define NM_TOL	     1e-11
#define HESS_STEP    1e-4

double gpd_logsurv(double y, double xi, double sigma)
{
	if (y <= 0.0)
		return 0.0;
	if (fabs(xi) < XI_ZERO)
		return -y / sigma;
	double t = xi * y / sigma;
	if (t <= -1.0)
		return -HUGE_VAL;
	return -log1p(t) / xi;
}

double gpd_excess(double xi, double sigma, double m)
{
	double lm = log(m);

	if (fabs(xi) < XI_ZERO)
		return sigma * lm;
	return sigma * expm1(xi * lm) / xi;
}

/* ln P(a <= Y < b) = ln S(a) + ln(1 - S(b)/S(a)): no cancellation where both
 * are close to 1 (the first bins above a low threshold). */
static double bin_logprob(double a, double b, double xi, double sigma)
{
	double la = gpd_logsurv(a, xi, sigma), lb = gpd_logsurv(b, xi, sigma);

	if (la == -HUGE_VAL)
		return -HUGE_VAL;
	return la + log(-expm1(lb - la));
}

struct problem {
	const struct gpd_bin *bins;
	size_t n;
	unsigned evals;
};

/* The log-likelihood at p = (xi, ln sigma); -HUGE_VAL where an observed bin
 * has no probability (beyond the end point) or outside the search box. */
static double loglik(struct problem *pb, const double p[2])
{
	double xi = p[0], sigma = exp(p[1]), sum = 0.0;

	pb->evals++;
	if (!(xi > XI_MIN && xi < XI_MAX) || !isfinite(sigma) || sigma <= 0.0)
		return -HUGE_VAL;
	for (size_t i = 0; i < pb->n; i++) {
		double lp = bin_logprob(pb->bins[i].a, pb->bins[i].b, xi, sigma);
		if (!isfinite(lp))
			return -HUGE_VAL;
		sum += (double)pb->bins[i].count * lp;
	}
	return sum;
}

static void vset(double dst[2], const double a[2], double ka, const double b[2], double kb)
{
	dst[0] = ka * a[0] + kb * b[0];
	dst[1] = ka * a[1] + kb * b[1];
}

/* Nelder-Mead on -loglik: two parameters, no derivatives, and a boundary
 * (the end point) the simplex simply backs away from. */
static void simplex_max(struct problem *pb, double x[2])
{
	double v[3][2] = { { x[0], x[1] }, { x[0] + 0.1, x[1] }, { x[0], x[1] + 0.1 } };
	double f[3];

	for (int i = 0; i < 3; i++)
		f[i] = loglik(pb, v[i]);
	while (pb->evals < NM_MAX_EVALS) {
		/* order: v[0] best (largest), v[2] worst */
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2 - i; j++)
				if (f[j + 1] > f[j]) {
					double t = f[j], tv[2] = { v[j][0], v[j][1] };
					f[j] = f[j + 1];
					f[j + 1] = t;
					memcpy(v[j], v[j + 1], sizeof(tv));
					memcpy(v[j + 1], tv, sizeof(tv));
				}
		double size = fmax(fabs(v[1][0] - v[0][0]) + fabs(v[1][1] - v[0][1]),
				   fabs(v[2][0] - v[0][0]) + fabs(v[2][1] - v[0][1]));
		if (isfinite(f[2]) && f[0] - f[2] <= NM_TOL * (1.0 + fabs(f[0])) && size < 1e-9)
			break;
		if (size < 1e-14)
			break;
		double c[2], r[2], e[2], k[2];
		vset(c, v[0], 0.5, v[1], 0.5);
		vset(r, c, 2.0, v[2], -1.0);
		double fr = loglik(pb, r);
		if (fr > f[0]) {
			vset(e, c, 3.0, v[2], -2.0);
			double fe = loglik(pb, e);
			memcpy(v[2], fe > fr ? e : r, sizeof(e));
			f[2] = fe > fr ? fe : fr;
		} else if (fr > f[1]) {
			memcpy(v[2], r, sizeof(r));
			f[2] = fr;
		} else {
			/* contract towards the better of the reflection and the worst */
			if (fr > f[2])
				vset(k, c, 0.5, r, 0.5);
			else
				vset(k, c, 0.5, v[2], 0.5);
			double fk = loglik(pb, k);
			if (fk > fmax(fr, f[2])) {
				memcpy(v[2], k, sizeof(k));
				f[2] = fk;
			} else {
				for (int i = 1; i < 3; i++) {
					vset(v[i], v[0], 0.5, v[i], 0.5);
					f[i] = loglik(pb, v[i]);
				}
			}
		}
	}
	x[0] = v[0][0];
	x[1] = v[0][1];
}

/* Gradient and Hessian by central differences; 0, or -EDOM when a point
 * near x has no likelihood even at the smallest step. */
static int derivatives(struct problem *pb, const double x[2], double g[2], double hs[2][2])
{
	for (double h = HESS_STEP; h > HESS_STEP / 1000.0; h /= 4.0) {
		double f0 = loglik(pb, x), f[3][3];
		int ok = isfinite(f0);
		for (int i = -1; i <= 1 && ok; i++)
			for (int j = -1; j <= 1 && ok; j++) {
				double p[2] = { x[0] + i * h, x[1] + j * h };
				f[i + 1][j + 1] = i || j ? loglik(pb, p) : f0;
				ok = isfinite(f[i + 1][j + 1]);
			}
		if (!ok)
			continue;
		g[0] = (f[2][1] - f[0][1]) / (2.0 * h);
		g[1] = (f[1][2] - f[1][0]) / (2.0 * h);
		hs[0][0] = (f[2][1] - 2.0 * f0 + f[0][1]) / (h * h);
		hs[1][1] = (f[1][2] - 2.0 * f0 + f[1][0]) / (h * h);
		hs[0][1] = hs[1][0] = (f[2][2] - f[2][0] - f[0][2] + f[0][0]) / (4.0 * h * h);
		return 0;
	}
	return -EDOM;
}

int gpd_fit(const struct gpd_bin *bins, size_t n, double xi0, double sigma0, struct gpd_est *ret)
{
	struct problem pb = { .bins = bins, .n = n };
	double x[2] = { fmin(fmax(xi0, -0.9), 2.0), log(sigma0) }, g[2], hs[2][2];

	if (!(sigma0 > 0.0) || !isfinite(x[1]) || !isfinite(loglik(&pb, x)))
		return -EDOM;
	simplex_max(&pb, x);
	/* Newton steps from the simplex's best: it stops where the likelihood is
	 * flat to its tolerance, a step of the quadratic lands on the top. */
	for (int i = 0; i < 3; i++) {
		if (derivatives(&pb, x, g, hs) < 0)
			return -EDOM;
		double det = hs[0][0] * hs[1][1] - hs[0][1] * hs[1][0];
		if (!(hs[0][0] < 0.0 && det > 0.0))
			return -EDOM;
		double step[2] = { (hs[1][1] * g[0] - hs[0][1] * g[1]) / det,
				   (hs[0][0] * g[1] - hs[1][0] * g[0]) / det };
		double y[2] = { x[0] - step[0], x[1] - step[1] };
		if (!(loglik(&pb, y) >= loglik(&pb, x)))
			break;
		x[0] = y[0];
		x[1] = y[1];
	}
	if (derivatives(&pb, x, g, hs) < 0)
		return -EDOM;
	double det = hs[0][0] * hs[1][1] - hs[0][1] * hs[1][0];
	if (!(hs[0][0] < 0.0 && det > 0.0))
		return -EDOM;
	ret->xi = x[0];
	ret->sigma = exp(x[1]);
	/* the covariance is the inverse of the information -H */
	ret->cov[0][0] = -hs[1][1] / det;
	ret->cov[1][1] = -hs[0][0] / det;
	ret->cov[0][1] = ret->cov[1][0] = hs[0][1] / det;
	ret->loglik = loglik(&pb, x);
	return 0;
}
