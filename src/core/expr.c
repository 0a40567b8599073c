#include "core/expr.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/error.h"
#include "core/nstime.h"
#include "core/parse.h"

/* Doubles hold every integer up to 2^53 exactly, so values below it format back unchanged. */
#define EXACT_MAX (UINT64_C(1) << 53)
/* Significant digits a double keeps through text and back (DBL_DIG). */
#define NUMBER_DIGITS 15
/* 10^22 is the largest power of ten a double holds exactly. */
#define NUMBER_DECIMALS 22
/* How much of the user's text a message quotes. */
#define QUOTE_MAX 40

enum stat_type { TYPE_TIME, TYPE_PERCENT, TYPE_COUNT, TYPE_RATE /* a number of 0 or more */ };

/* judged: the verdict's bootstrap can say whether a change of it is real
 * (the mean and percentiles); a max is decided by one sample. */
static const struct {
	const char *name;
	enum stat_type type;
	bool judged;
} stats[] = {
	[EXPR_MIN] = { "min", TYPE_TIME, false },
	[EXPR_MEAN] = { "mean", TYPE_TIME, true },
	[EXPR_STDDEV] = { "stddev", TYPE_TIME, false },
	[EXPR_P50] = { "p50", TYPE_TIME, true },
	[EXPR_P90] = { "p90", TYPE_TIME, true },
	[EXPR_P99] = { "p99", TYPE_TIME, true },
	[EXPR_P999] = { "p99.9", TYPE_TIME, true },
	[EXPR_P9999] = { "p99.99", TYPE_TIME, true },
	[EXPR_MAX] = { "max", TYPE_TIME, false },
	[EXPR_WARM_MAX] = { "warm_max", TYPE_TIME, false },
	[EXPR_ABOVE_PCT] = { "above_pct", TYPE_PERCENT, false },
	[EXPR_MISSED] = { "missed", TYPE_COUNT, false },
	[EXPR_COUNT] = { "count", TYPE_COUNT, false },
	[EXPR_SPIKES] = { "spikes", TYPE_COUNT, false },
	[EXPR_SPIKES_PER_HOUR] = { "spikes_per_hour", TYPE_RATE, false },
	[EXPR_MTBF] = { "mtbf", TYPE_TIME, false },
	[EXPR_OPS_PER_SEC] = { "ops_per_sec", TYPE_RATE, false },
	[EXPR_BYTES_PER_SEC] = { "bytes_per_sec", TYPE_RATE, false },
	[EXPR_CPU_USER_PER_OP] = { "cpu_user_per_op", TYPE_TIME, false },
	[EXPR_CPU_NICE_PER_OP] = { "cpu_nice_per_op", TYPE_TIME, false },
	[EXPR_CPU_SYSTEM_PER_OP] = { "cpu_system_per_op", TYPE_TIME, false },
	[EXPR_CPU_IDLE_PER_OP] = { "cpu_idle_per_op", TYPE_TIME, false },
	[EXPR_CPU_IOWAIT_PER_OP] = { "cpu_iowait_per_op", TYPE_TIME, false },
	[EXPR_CPU_IRQ_PER_OP] = { "cpu_irq_per_op", TYPE_TIME, false },
	[EXPR_CPU_SOFTIRQ_PER_OP] = { "cpu_softirq_per_op", TYPE_TIME, false },
	[EXPR_CPU_STEAL_PER_OP] = { "cpu_steal_per_op", TYPE_TIME, false },
	[EXPR_SMIS] = { "smis", TYPE_COUNT, false },
};


#define NSTATS ARRAY_SIZE(stats)

bool expr_stat_judged(enum expr_stat stat)
{
	return (unsigned)stat < NSTATS && stats[stat].judged;
}

static const char *const op_names[] = {
	[EXPR_GT] = ">", [EXPR_GE] = ">=", [EXPR_LT] = "<", [EXPR_LE] = "<=",
};

static const double pow10_table[NUMBER_DECIMALS + 1] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

const char *expr_stat_name(enum expr_stat stat)
{
	return (unsigned)stat < NSTATS ? stats[stat].name : "?";
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_' || c == '.';
}

static bool is_op_char(char c)
{
	return c == '<' || c == '>' || c == '=' || c == '!';
}

/* For "%.*s": at most QUOTE_MAX bytes of a span. */
static int qlen(size_t len)
{
	return (int)(len < QUOTE_MAX ? len : QUOTE_MAX);
}

/*
 * Digits with an optional fraction ("1.5", "10", "0.001"), the whole span.
 * The value is mantissa / 10^decimals with both exact in a double, so the
 * one division rounds correctly, whatever the locale.  -EINVAL for anything
 * else (signs, exponents, "nan", "inf", ".5", "1."), -ERANGE past
 * NUMBER_DIGITS significant digits or NUMBER_DECIMALS decimals.
 */
static int parse_number(const char *s, size_t len, double *ret)
{
	size_t i = 0, int_end, end = len, sig = 0, decimals = 0;
	uint64_t mant = 0;
	bool too_many = false;

	if (len == 0 || !is_digit(s[0]))
		return -EINVAL;
	while (i < len && is_digit(s[i]))
		i++;
	int_end = i;
	if (i < len && s[i] == '.') {
		i++;
		if (i == len || !is_digit(s[i]))
			return -EINVAL;
		while (i < len && is_digit(s[i]))
			i++;
		while (s[end - 1u] == '0')      /* trailing zeros of the fraction add nothing */
			end--;
		if (s[end - 1u] == '.')
			end--;
	}
	if (i != len)
		return -EINVAL;
	for (size_t k = 0; k < end; k++) {
		if (k == int_end)
			continue;               /* the point */
		if (k > int_end && ++decimals > NUMBER_DECIMALS)
			too_many = true;
		if (mant == 0 && s[k] == '0')
			continue;               /* leading zeros are not significant */
		if (++sig > NUMBER_DIGITS) {
			too_many = true;
			continue;
		}
		mant = mant * 10u + (uint64_t)(s[k] - '0');
	}
	if (too_many)
		return -ERANGE;
	*ret = (double)mant / pow10_table[decimals];
	return 0;
}

/* TYPE_TIME: a duration, in ns.  A bare number is microseconds, the rule of
 * every latency option (--threshold, --fail-above): latscope(1), BARE NUMBERS. */
static int parse_time(const struct expr *e, const char *v, size_t len, double *ret, struct lat_error *err)
{
	char buf[64];
	uint64_t ns;
	int r;

	if (len >= sizeof(buf))
		return err_set(err, -EINVAL, "'%.*s...' is too long for a duration", qlen(len), v);
	memcpy(buf, v, len);
	buf[len] = '\0';
	r = parse_duration(buf, NS_PER_US, &ns);
	if (r == -ERANGE || (r == 0 && ns > EXACT_MAX))
		return err_set(err, -EINVAL, "'%s' is too large for %s", buf, expr_stat_name(e->stat));
	if (r < 0)
		return err_set(err, -EINVAL, "'%s' is not a duration for %s (like 200us or 1.5ms, in whole ns)", buf,
			    expr_stat_name(e->stat));
	*ret = (double)ns;
	return 0;
}

static int parse_value(struct expr *e, const char *v, size_t len, struct lat_error *err)
{
	bool pct = len > 0 && v[len - 1u] == '%';
	double x;
	int r;

	if (len > 0 && (v[0] == '+' || v[0] == '-')) {
		if (!pct)
			return err_set(err, -EINVAL, "'%.*s' needs a '%%' (a relative change is +N%% or -N%%)", qlen(len), v);
		r = parse_number(v + 1, len - 2u, &x);
		if (r == -ERANGE)
			return err_set(err, -EINVAL, "'%.*s' has too many digits (%d significant, %d decimals at most)", qlen(len), v,
				    NUMBER_DIGITS, NUMBER_DECIMALS);
		if (r < 0)
			return err_set(err, -EINVAL, "'%.*s' is not a relative change (+N%% or -N%%)", qlen(len), v);
		if (v[0] == '-' && x > 100.0)
			return err_set(err, -EINVAL, "'%.*s' cannot happen: a value falls by 100%% at most", qlen(len), v);
		e->kind = EXPR_RELATIVE;
		e->value = v[0] == '-' ? -x : x;
		return 0;
	}

	e->kind = EXPR_ABSOLUTE;
	switch (stats[e->stat].type) {
	case TYPE_TIME:
		if (pct && parse_number(v, len - 1u, &x) == 0)
			return err_set(err, -EINVAL, "'%.*s' needs a sign for a relative change (+%.*s or -%.*s)", qlen(len), v,
				    qlen(len), v, qlen(len), v);
		return parse_time(e, v, len, &e->value, err);
	case TYPE_PERCENT:
		r = parse_number(v, pct ? len - 1u : len, &x);
		if (r == -ERANGE)
			return err_set(err, -EINVAL, "'%.*s' has too many digits (%d significant, %d decimals at most)", qlen(len), v,
				    NUMBER_DIGITS, NUMBER_DECIMALS);
		if (r < 0 || x > 100.0)
			return err_set(err, -EINVAL, "'%.*s' is not a percentage from 0 to 100 for %s", qlen(len), v,
				    expr_stat_name(e->stat));
		e->value = x;
		return 0;
	case TYPE_COUNT: {
		char buf[32];
		uint64_t n = 0;
		r = -EINVAL;
		if (len < sizeof(buf)) {
			memcpy(buf, v, len);
			buf[len] = '\0';
			r = parse_u64(buf, &n);
		}
		if (r == 0 && n > EXACT_MAX)
			r = -ERANGE;
		if (r == -ERANGE || (r < 0 && parse_number(v, len, &x) == -ERANGE))
			return err_set(err, -EINVAL, "'%.*s' is too large for %s", qlen(len), v, expr_stat_name(e->stat));
		if (r < 0)
			return err_set(err, -EINVAL, "'%.*s' is not a whole number for %s", qlen(len), v,
				    expr_stat_name(e->stat));
		e->value = (double)n;
		return 0;
	}
	case TYPE_RATE:
		r = parse_number(v, len, &x);
		if (r == -ERANGE)
			return err_set(err, -EINVAL, "'%.*s' has too many digits (%d significant, %d decimals at most)", qlen(len), v,
				    NUMBER_DIGITS, NUMBER_DECIMALS);
		if (r < 0 || pct)
			return err_set(err, -EINVAL, "'%.*s' is not a number of 0 or more for %s", qlen(len), v,
				    expr_stat_name(e->stat));
		e->value = x;
		return 0;
	}
	return err_set(err, -EINVAL, "internal error: statistic without a type");
}

int expr_parse(const char *text, struct expr *ret, struct lat_error *err)
{
	struct expr e = { 0 };
	const char *p = text, *name, *op, *v;
	size_t name_len, op_len, v_len;
	int r;

	if (!text)
		return err_set(err, -EINVAL, "no expression");
	while (is_space(*p))
		p++;
	if (!*p)
		return err_set(err, -EINVAL, "empty expression (like p99>+10%% or max>200us)");

	name = p;
	while (is_name_char(*p))
		p++;
	name_len = (size_t)(p - name);
	if (name_len == 0) {
		if (is_op_char(*p))
			return err_set(err, -EINVAL, "missing statistic before '%c'", *p);
		return err_set(err, -EINVAL, "'%.*s' is not a statistic", qlen(strlen(p)), p);
	}
	size_t s = 0;
	while (s < NSTATS && !(strlen(stats[s].name) == name_len && memcmp(stats[s].name, name, name_len) == 0))
		s++;
	if (s == NSTATS)
		return err_set(err, -EINVAL, "unknown statistic '%.*s'", qlen(name_len), name);
	e.stat = (enum expr_stat)s;

	while (is_space(*p))
		p++;
	op = p;
	while (is_op_char(*p))
		p++;
	op_len = (size_t)(p - op);
	if (op_len == 0)
		return err_set(err, -EINVAL, "missing operator (>, >=, < or <=) after '%.*s'", qlen(name_len), name);
	while (is_space(*p))
		p++;
	while (is_op_char(*p) || is_space(*p))  /* "> =" or ">>": show all of it */
		p++;
	size_t op_span = (size_t)(p - op);
	while (op_span > 0 && is_space(op[op_span - 1u]))
		op_span--;
	size_t o = 0;
	while (o < ARRAY_SIZE(op_names) &&
	       !(op_span == op_len && strlen(op_names[o]) == op_len && memcmp(op_names[o], op, op_len) == 0))
		o++;
	if (o == ARRAY_SIZE(op_names))
		return err_set(err, -EINVAL, "bad operator '%.*s' (use >, >=, < or <=)", qlen(op_span), op);
	e.op = (enum expr_op)o;

	v = p;
	v_len = strlen(v);
	while (v_len > 0 && is_space(v[v_len - 1u]))
		v_len--;
	if (v_len == 0)
		return err_set(err, -EINVAL, "missing value after '%.*s %s'", qlen(name_len), name, op_names[o]);
	for (size_t i = 0; i < v_len; i++)
		if (is_space(v[i]))
			return err_set(err, -EINVAL, "'%.*s' has a space inside (write 200us, +10%%)", qlen(v_len), v);
	e.raw = v[v_len - 1u] == '!';
	if (e.raw && --v_len == 0)
		return err_set(err, -EINVAL, "missing value before '!'");

	if ((r = parse_value(&e, v, v_len, err)) < 0)
		return r;
	if (e.raw && e.kind != EXPR_RELATIVE)
		return err_set(err, -EINVAL, "'%.*s!': '!' asks for a relative change compared raw (+10%%!)", qlen(v_len), v);
	*ret = e;
	return 0;
}

static bool compare(enum expr_op op, double a, double b)
{
	switch (op) {
	case EXPR_GT:
		return a > b;
	case EXPR_GE:
		return a >= b;
	case EXPR_LT:
		return a < b;
	case EXPR_LE:
		return a <= b;
	}
	return false;
}

bool expr_fails(const struct expr *e, double value, double base)
{
	if (isnan(value) || isnan(base))
		return false;           /* a figure the run does not have gates nothing */
	if (e->kind == EXPR_ABSOLUTE)
		return compare(e->op, value, e->value);
	/* Scaling the difference first keeps whole-number changes exact (110 vs 100 is 10, not 10.000000000000002). */
	/* From 0, any rise is infinitely many percent and there is nothing to fall from. */
	double change = base != 0.0 ? (value - base) * 100.0 / fabs(base)
		      : value > 0.0 ? HUGE_VAL : value < 0.0 ? -HUGE_VAL : 0.0;
	return compare(e->op, change, e->value);
}

/* "1.5", "10", "0.001": the shortest text parse_number reads back as x (which must be finite, >= 0). */
static void format_number(double x, char *buf, size_t size)
{
	if (!(x >= 0.0 && x < 1e15)) {
		snprintf(buf, size, "%g", x);   /* not from expr_parse: no round trip to keep */
		return;
	}
	uint64_t m = 0;
	int d;
	for (d = 0; d <= NUMBER_DECIMALS; d++) {
		double scaled = x * pow10_table[d];
		if (scaled >= 1e15)     /* more digits than parse_number takes */
			break;
		m = (uint64_t)llround(scaled);
		if ((double)m / pow10_table[d] == x)
			break;
	}
	if (d > NUMBER_DECIMALS || (double)m / pow10_table[d] != x) {
		snprintf(buf, size, "%.17g", x);
		return;
	}
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, m);
	if (d == 0) {
		snprintf(buf, size, "%s", digits);
		return;
	}
	if (n <= d)             /* "0.00" then the digits */
		snprintf(buf, size, "0.%.*s%s", d - n, "0000000000000000000000", digits);
	else
		snprintf(buf, size, "%.*s.%s", n - d, digits, digits + (n - d));
}

/* "1.5ms", "200us", "7ns": the largest unit that is not above ns, with an exact fraction. */
static void format_time(double x, char *buf, size_t size)
{
	static const struct {
		const char *name;
		uint64_t ns;
		int digits;
	} units[] = { { "s", NS_PER_SEC, 9 }, { "ms", NS_PER_MS, 6 }, { "us", NS_PER_US, 3 }, { "ns", 1, 0 } };

	if (!(x >= 0.0 && x <= (double)EXACT_MAX) || x != floor(x)) {
		snprintf(buf, size, "%.17gns", x);      /* not from expr_parse */
		return;
	}
	uint64_t ns = (uint64_t)x;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (ns < units[i].ns && units[i].ns != 1)
			continue;
		uint64_t whole = ns / units[i].ns, rest = ns % units[i].ns;
		if (rest == 0) {
			snprintf(buf, size, "%" PRIu64 "%s", whole, units[i].name);
			return;
		}
		char frac[16];
		int n = snprintf(frac, sizeof(frac), "%0*" PRIu64, units[i].digits, rest);
		while (n > 0 && frac[n - 1] == '0')
			frac[--n] = '\0';
		snprintf(buf, size, "%" PRIu64 ".%s%s", whole, frac, units[i].name);
		return;
	}
}

void expr_format(const struct expr *e, char *buf, size_t size)
{
	char v[64];

	if (size == 0)
		return;
	if (e->kind == EXPR_RELATIVE) {
		format_number(fabs(e->value), v + 1, sizeof(v) - 1u);
		v[0] = signbit(e->value) ? '-' : '+';
		snprintf(buf, size, "%s %s %s%%%s", expr_stat_name(e->stat),
			 (unsigned)e->op < 4u ? op_names[e->op] : "?", v, e->raw ? "!" : "");
		return;
	}
	enum stat_type type = (unsigned)e->stat < NSTATS ? stats[e->stat].type : TYPE_PERCENT;
	switch (type) {
	case TYPE_TIME:
		format_time(e->value, v, sizeof(v));
		break;
	case TYPE_PERCENT:
	case TYPE_RATE:
		format_number(e->value, v, sizeof(v));
		break;
	case TYPE_COUNT:
		if (e->value >= 0.0 && e->value <= (double)EXACT_MAX && e->value == floor(e->value))
			snprintf(v, sizeof(v), "%" PRIu64, (uint64_t)e->value);
		else
			format_number(e->value, v, sizeof(v));
		break;
	}
	snprintf(buf, size, "%s %s %s", expr_stat_name(e->stat), (unsigned)e->op < 4u ? op_names[e->op] : "?", v);
}
