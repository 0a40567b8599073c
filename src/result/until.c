#include "result/until.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/nstime.h"
#include "core/parse.h"
#include "core/poisson.h"
#include "core/units.h"
#include "result/tailrun.h"

#define FORMS "level(P) < DUR or rate(>DUR) < N/U, such as 'level(1h) < 100us'"

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* s[0..len) with the spaces around it cut, into buf; false when it does not fit or is empty. */
static bool part(const char *s, size_t len, char *buf, size_t size)
{
	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && (s[len - 1u] == ' ' || s[len - 1u] == '\t'))
		len--;
	if (len == 0 || len >= size)
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return true;
}

static int bad(const char *text, struct lat_error *err, const char *msg)
{
	return err_set(err, -EINVAL, "'%.80s': %s", text, msg);
}

/* DUR: a latency above 0; a bare number is microseconds. */
static int limit(const char *text, const char *s, size_t len, uint64_t *ret, struct lat_error *err)
{
	char buf[48];
	if (!part(s, len, buf, sizeof(buf)) || parse_duration(buf, NS_PER_US, ret) < 0 || *ret == 0)
		return bad(text, err,
			   "the limit is a latency above 0, such as 100us (a bare number is "
			   "microseconds)");
	return 0;
}

/* The index of "1h" among the tail's periods, or of "h" when bare (a rate's unit). */
static int period(const char *name, bool bare)
{
	for (unsigned i = 0; tail_period_name(i); i++)
		if (strcmp(name, tail_period_name(i) + (bare ? 1 : 0)) == 0)
			return (int)i;
	return -1;
}

/* "N/U" into a rate per hour. */
static int rate_limit(const char *text, const char *s, double *ret, struct lat_error *err)
{
	char buf[48];
	const char *slash = strchr(s, '/');
	uint64_t n_ns;

	if (!slash || !part(s, (size_t)(slash - s), buf, sizeof(buf)) ||
	    strspn(buf, "0123456789.") != strlen(buf) ||
	    parse_duration(buf, NS_PER_SEC, &n_ns) < 0 || n_ns == 0)
		return bad(text, err,
			   "the rate limit is N/U: a number above 0 per s, min, h, day or year "
			   "(such as 1/h)");
	int p = part(slash + 1, strlen(slash + 1), buf, sizeof(buf)) ? period(buf, true) : -1;
	if (p < 0)
		return bad(text, err,
			   "the rate limit's unit is one of s, min, h, day or year (such as 1/h)");
	*ret = (double)n_ns / 1e9 * 3600.0 / tail_period_s((unsigned)p);
	return 0;
}

int until_parse(const char *text, struct until *ret, struct lat_error *err)
{
	struct until u = { 0 };
	const char *s = skip_space(text), *close = strchr(s, ')'), *lt;
	char name[32], x[32];

	if (strncmp(s, "level(", 6) == 0)
		u.kind = UNTIL_LEVEL, s += 6;
	else if (strncmp(s, "rate(", 5) == 0)
		u.kind = UNTIL_RATE, s += 5;
	else
		return bad(text, err, "expected " FORMS);
	if (!close || !(lt = strchr(close, '<')) || *skip_space(close + 1) != '<')
		return bad(text, err, "expected " FORMS);
	if (u.kind == UNTIL_LEVEL) {
		int p = part(s, (size_t)(close - s), name, sizeof(name)) ? period(name, false) : -1;
		if (p < 0)
			return bad(text, err,
				   "the period of level(P) is one of 1s, 1min, 1h, 1day or 1year");
		u.period = (unsigned)p;
		u.per_hour = 3600.0 / tail_period_s(u.period);
		if (limit(text, lt + 1, strlen(lt + 1), &u.x_ns, err) < 0)
			return -EINVAL;
		fmt_duration(u.x_ns, x, sizeof(x));
		snprintf(u.text, sizeof(u.text), "level(%s) < %s", tail_period_name(u.period), x);
	} else {
		s = skip_space(s);
		if (*s != '>')
			return bad(text, err,
				   "rate(>DUR) names the latency after '>', such as rate(>100us)");
		if (limit(text, s + 1, (size_t)(close - s - 1), &u.x_ns, err) < 0 ||
		    rate_limit(text, lt + 1, &u.per_hour, err) < 0)
			return -EINVAL;
		fmt_duration(u.x_ns, x, sizeof(x));
		snprintf(u.text, sizeof(u.text), "rate(>%s) < %.6g/h", x, u.per_hour);
	}
	*ret = u;
	return 0;
}

/*
 * About how much longer until the interval (lo, hi) around v clears x: its
 * width on a log scale shrinks as one over the root of the time (a count's,
 * and a maximum likelihood estimate's); with nothing counted the upper
 * bound falls as one over the time.  NaN when v is at x.
 */
static double more_time(double t_s, const struct tail_interval *v, double x)
{
	if (!(v->hi > 0.0) || !(x > 0.0))
		return (double)NAN;
	if (v->est <= 0.0 || v->lo <= 0.0)
		return v->hi > x ? t_s * (v->hi / x - 1.0) : 0.0;
	double a = log(v->est), f;
	if (x > v->est)
		f = (log(v->hi) - a) / (log(x) - a);
	else if (x < v->est)
		f = (a - log(v->lo)) / (a - log(x));
	else
		return (double)NAN;
	return f > 1.0 ? t_s * (f * f - 1.0) : 0.0;
}

static void decide(struct until_cpu *c, double limit)
{
	c->decision = c->value.hi < limit   ? UNTIL_BELOW
		      : c->value.lo > limit ? UNTIL_ABOVE
					    : UNTIL_OPEN;
}

/* a's estimate, with the interval that holds both a's and b's (b's NaN ends ignored). */
static struct tail_interval hull(struct tail_interval a, struct tail_interval b)
{
	return (struct tail_interval){ a.est, isnan(b.lo) ? a.lo : fmin(a.lo, b.lo),
				       isnan(b.hi) ? a.hi : fmax(a.hi, b.hi) };
}

/*
 * A period past the fit's reach: the level there is at least the level at
 * the reach (a latency exceeded once per 50 s is exceeded at least once an
 * hour), so that level's lower bound over the limit says "above"; nothing
 * the run saw can say "below" by the fit.  A rate: above when its lower bound
 * passes both the limit and once per reach.
 */
static int past_reach(const struct until *u, const struct tail_fit *f, const struct tail_fit *top,
		      double t_s, const struct tail_interval *counted, struct until_cpu *c)
{
	if (u->kind == UNTIL_RATE) {
		c->decision = c->value.lo > 3600.0 / f->reach_s ? UNTIL_ABOVE : UNTIL_OPEN;
	} else {
		struct tail_interval at =
			hull(tail_level_at(f, f->reach_s), tail_level_at(top, f->reach_s));
		if (at.lo > (double)u->x_ns) {
			c->value = at;
			c->at_s = f->reach_s;
			c->decision = UNTIL_ABOVE;
		}
	}
	if (c->decision != UNTIL_OPEN)
		return 0;
	char t[32], r[32];
	fmt_duration3_ns(t_s * 1e9, t, sizeof(t));
	fmt_duration3_ns(f->reach_s * 1e9, r, sizeof(r));
	snprintf(c->why, sizeof(c->why),
		 "the fit of %s reaches once per %s (%gx): a longer period is below only by the "
		 "count",
		 t, r, TAIL_REACH);
	/* the fit may decide once the run is a TAIL_REACH-th of the period */
	double fit_s = 3600.0 / u->per_hour / TAIL_REACH - t_s;
	double count_s = more_time(t_s, counted, u->per_hour);
	c->more_s = isnan(count_s) ? fit_s : fmin(fit_s, count_s);
	return 0;
}

static int judge_cpu(const struct until *u, const struct result *res, const struct cpu_result *cr,
		     struct until_cpu *c, struct lat_error *err)
{
	const uint64_t t_ns = cpu_result_observed(res, cr);
	const double hours = (double)t_ns / 3.6e12, t_s = (double)t_ns / 1e9;
	double lo, hi, unused;
	uint64_t sure, maybe;

	memset(c, 0, sizeof(*c));
	c->cpu = cr->cpu;
	c->more_s = (double)NAN;
	if (t_ns == 0 || cr->st[0].n == 0) {
		snprintf(c->why, sizeof(c->why), "no samples yet");
		return 0;
	}
	/* The counts: exact, whatever the tail's shape. */
	tail_count_above(&cr->hist[0], u->x_ns, &sure, &maybe);
	poisson_interval(sure, TAIL_CONF, &lo, &unused);
	poisson_interval(maybe, TAIL_CONF, &unused, &hi);
	c->is_rate = c->counted = true;
	c->value = (struct tail_interval){ (double)sure / hours, lo / hours, hi / hours };
	decide(c, u->per_hour);
	if (c->decision != UNTIL_OPEN)
		return 0;
	const struct tail_interval counted = c->value;
	c->more_s = more_time(t_s, &counted, u->per_hour);

	struct tail_fit f;
	if (cpu_result_tail(res, cr, &f, err) < 0)
		return -ENOMEM;
	if (f.status != TAIL_OK) {
		snprintf(c->why, sizeof(c->why), "no fit yet: %s", f.why);
		return 0;
	}
	/* decided only where the lowest stable threshold and the highest agree:
	 * the top of the data alone must support it too (doc/tail-method.md) */
	struct tail_fit top;
	tail_at_top(&f, &top);
	struct tail_interval model, model_top;
	bool is_rate = u->kind == UNTIL_RATE;
	if (is_rate &&
	    tail_rate_above(&f, &cr->hist[0], t_ns, u->x_ns, &model) != TAIL_FROM_MODEL) {
		char x[32];
		fmt_duration(u->x_ns, x, sizeof(x));
		snprintf(c->why, sizeof(c->why), "too few samples above %s to tell", x);
		return 0;
	}
	if (is_rate)
		tail_rate_above(&top, &cr->hist[0], t_ns, u->x_ns, &model_top);
	else
		model = f.level_ns[u->period], model_top = top.level_ns[u->period];
	model = hull(model, model_top);
	if (!f.reliable) {
		snprintf(c->why, sizeof(c->why), "the fit is %s", f.why);
		return 0; /* the counts' suggestion stands: the model's is not to be trusted */
	}
	const double lim = is_rate ? u->per_hour : (double)u->x_ns;
	const double period_s = 3600.0 / u->per_hour;
	c->is_rate = is_rate;
	c->counted = false;
	c->value = model;
	if (period_s <= f.reach_s || (!is_rate && f.level_observed[u->period])) {
		decide(c, lim);
		c->more_s = c->decision == UNTIL_OPEN ? more_time(t_s, &model, lim) : (double)NAN;
		if (c->decision == UNTIL_OPEN)
			snprintf(c->why, sizeof(c->why), "its interval still holds the limit");
		return 0;
	}
	return past_reach(u, &f, &top, t_s, &counted, c);
}

/* How far c is from being decided: larger is further (the open CPU to show). */
static double distance(const struct until_cpu *c)
{
	return isnan(c->more_s) ? (double)INFINITY : c->more_s;
}

int until_judge(const struct until *u, const struct result *res, struct until_state *ret,
		struct lat_error *err)
{
	struct until_state s = { .decision = UNTIL_BELOW, .more_s = 0.0 };
	bool have_below = false, have_open = false;
	double closest = -(double)INFINITY;

	for (size_t i = 0; i < res->ncpus; i++) {
		const struct cpu_result *cr = &res->cpus[i];
		struct until_cpu c;
		if (judge_cpu(u, res, cr, &c, err) < 0)
			return -ENOMEM;
		uint64_t t = cpu_result_observed(res, cr);
		if (t > s.observed_ns)
			s.observed_ns = t;
		if (c.decision == UNTIL_ABOVE) {
			if (s.decision != UNTIL_ABOVE)
				s.at = c;
			s.decision = UNTIL_ABOVE;
		} else if (c.decision == UNTIL_OPEN && s.decision != UNTIL_ABOVE) {
			s.decision = UNTIL_OPEN;
			if (!have_open || distance(&c) > distance(&s.at))
				s.at = c;
			have_open = true;
			s.more_s = isnan(c.more_s) || isnan(s.more_s) ? (double)NAN
								      : fmax(s.more_s, c.more_s);
		} else if (c.decision == UNTIL_BELOW && s.decision == UNTIL_BELOW) {
			double lim = c.is_rate ? u->per_hour : (double)u->x_ns;
			if (!have_below || c.value.hi / lim > closest)
				s.at = c, closest = c.value.hi / lim;
			have_below = true;
		}
	}
	if (res->ncpus == 0) {
		s.decision = UNTIL_OPEN;
		s.more_s = (double)NAN;
		snprintf(s.at.why, sizeof(s.at.why), "no CPU measured");
	}
	if (s.decision != UNTIL_OPEN)
		s.more_s = (double)NAN;
	*ret = s;
	return 0;
}

void until_describe(const struct until *u, const struct until_cpu *c, char *buf, size_t size)
{
	char e[32], lo[32], hi[32], x[32];

	if (c->at_s > 0.0) {
		char r[32];
		fmt_duration3_ns(c->value.est, e, sizeof(e));
		fmt_duration3_ns(c->value.lo, lo, sizeof(lo));
		fmt_duration3_ns(c->value.hi, hi, sizeof(hi));
		fmt_duration3_ns(c->at_s * 1e9, r, sizeof(r));
		snprintf(buf, size,
			 "cpu %d: level(%s) at least level(%s), the fit's reach: %s (95 %% %s..%s)",
			 c->cpu, tail_period_name(u->period), r, e, lo, hi);
		return;
	}
	if (c->is_rate) {
		fmt_duration(u->x_ns, x, sizeof(x));
		fmt_per_hour(c->value.est, e, sizeof(e));
		fmt_per_hour(c->value.lo, lo, sizeof(lo));
		fmt_per_hour(c->value.hi, hi, sizeof(hi));
		int n = snprintf(buf, size, "cpu %d: %s above %s (95 %% %s..%s, %s)", c->cpu, e, x,
				 lo, hi, c->counted ? "counted" : "fitted");
		/* a level decided by the count: the rate the level stands for */
		if (u->kind == UNTIL_LEVEL && n > 0 && (size_t)n < size) {
			fmt_per_hour(u->per_hour, e, sizeof(e));
			snprintf(buf + n, size - (size_t)n, ", against once per %s, %s",
				 tail_period_name(u->period), e);
		}
		return;
	}
	fmt_duration3_ns(c->value.est, e, sizeof(e));
	fmt_duration3_ns(c->value.lo, lo, sizeof(lo));
	fmt_duration3_ns(c->value.hi, hi, sizeof(hi));
	snprintf(buf, size, "cpu %d: level(%s) %s (95 %% %s..%s)", c->cpu,
		 tail_period_name(u->period), e, lo, hi);
}

const char *until_decision_name(int decision)
{
	return decision == UNTIL_BELOW ? "below" : decision == UNTIL_ABOVE ? "above" : "undecided";
}

static json_t *number(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *until_to_json(const struct until *u, const struct until_state *s)
{
	const struct until_cpu *c = &s->at;
	json_t *value = json_pack("{s:o, s:o, s:o}", "est", number(c->value.est), "lo",
				  number(c->value.lo), "hi", number(c->value.hi));
	json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:s, s:s, s:o, s:o}", "expr", u->text,
			      "decision", until_decision_name(s->decision), "cpu",
			      (json_int_t)c->cpu, "observed_ns", (json_int_t)s->observed_ns, "unit",
			      c->is_rate ? "per_hour" : "ns", "from", c->counted ? "count" : "fit",
			      "value", value ? value : json_null(), "more_s",
			      s->decision == UNTIL_OPEN ? number(s->more_s) : json_null());
	if (o && c->at_s > 0.0 && json_object_set_new(o, "at_period_s", json_real(c->at_s)) < 0) {
		json_decref(o);
		return NULL;
	}
	if (o && s->decision == UNTIL_OPEN && c->why[0] &&
	    json_object_set_new(o, "why", json_string(c->why)) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}
