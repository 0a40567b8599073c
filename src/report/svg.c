#include "report/svg.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/array.h"

#define SVG_PAD 6.0

/* Okabe-Ito's colours, then Tol's muted ones: told apart with the common colour-vision deficiencies. */
static const char *const palette[SVG_PALETTE] = {
	"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
	"#332288", "#999933", "#882255", "#44AA99", "#000000", "#AA4499",
};

const char *svg_colour(size_t i)
{
	return palette[i % SVG_PALETTE];
}

const char *svg_dash(size_t i)
{
	static const char *const dashes[] = { "", "6 3", "2 2", "8 3 2 3" };
	return dashes[(i / SVG_PALETTE) % ARRAY_SIZE(dashes)];
}

struct svg_unit svg_unit_for(double max_ns)
{
	if (max_ns < 1e4)
		return (struct svg_unit){ 1.0, "ns" };
	if (max_ns < 1e7)
		return (struct svg_unit){ 1e3, "us" };
	if (max_ns < 1e10)
		return (struct svg_unit){ 1e6, "ms" };
	return (struct svg_unit){ 1e9, "s" };
}

void svg_num(double v, char *buf, size_t size)
{
	if (fabs(v) < 1e-12)
		v = 0.0;                /* no "-0" or "1e-17" from a step's rounding */
	snprintf(buf, size, "%.4g", v);
}

void svg_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s, out);
		}
	}
}

static void add_tick(struct svg_axis *a, double v, double shown)
{
	if (a->nticks == SVG_TICKS_MAX)
		return;
	a->tick[a->nticks] = v;
	svg_num(shown, a->label[a->nticks], sizeof(a->label[0]));
	a->nticks++;
}

static void set_title(struct svg_axis *a, const char *title)
{
	snprintf(a->title, sizeof(a->title), "%s", title ? title : "");
}

/* 1, 2 or 5 times a power of ten, the smallest at least raw. */
static double nice_step(double raw)
{
	double p = pow(10.0, floor(log10(raw)));
	double f = raw / p;
	return (f <= 1.0 ? 1.0 : f <= 2.0 ? 2.0 : f <= 5.0 ? 5.0 : 10.0) * p;
}

void svg_axis_linear(struct svg_axis *a, double lo, double hi, unsigned target, double unit, const char *title)
{
	memset(a, 0, sizeof(*a));
	a->unit = unit > 0 ? unit : 1.0;
	set_title(a, title);
	if (!isfinite(lo) || !isfinite(hi) || hi < lo)
		lo = hi = 0.0;
	if (hi == lo)
		hi = lo == 0.0 ? a->unit : lo + fabs(lo) * 0.5;
	if (target < 2)
		target = 2;
	double step = nice_step((hi - lo) / target);
	a->lo = floor(lo / step) * step;
	a->hi = ceil(hi / step) * step;
	while ((a->hi - a->lo) / step + 1.0 > SVG_TICKS_MAX)
		step *= 2.0, a->lo = floor(lo / step) * step, a->hi = ceil(hi / step) * step;
	for (double v = a->lo; v <= a->hi + step * 1e-9; v += step)
		add_tick(a, v, v / a->unit);
}

void svg_axis_log(struct svg_axis *a, double lo, double hi, double unit, const char *title)
{
	memset(a, 0, sizeof(*a));
	a->log = true;
	a->unit = unit > 0 ? unit : 1.0;
	set_title(a, title);
	if (!(lo > 0) || !isfinite(lo))
		lo = 1.0;
	if (!(hi >= lo) || !isfinite(hi))
		hi = lo;
	double d0 = floor(log10(lo)), d1 = ceil(log10(hi));
	if (d1 <= d0)
		d1 = d0 + 1.0;
	double every = ceil((d1 - d0 + 1.0) / SVG_TICKS_MAX);   /* a tick every decade, unless that is too many */
	a->lo = pow(10.0, d0);
	a->hi = pow(10.0, d1);
	bool fine = d1 - d0 <= 2.0;     /* few decades: 1, 2, 5 in each, so the axis still reads */
	for (double d = d0; d <= d1; d += every) {
		double v = pow(10.0, d);
		add_tick(a, v, v / a->unit);
		if (fine && d < d1) {
			add_tick(a, 2.0 * v, 2.0 * v / a->unit);
			add_tick(a, 5.0 * v, 5.0 * v / a->unit);
		}
	}
}

void svg_axis_custom(struct svg_axis *a, double lo, double hi, size_t n, const double *at,
		     const char *const *labels, const char *title)
{
	memset(a, 0, sizeof(*a));
	a->unit = 1.0;
	a->lo = lo;
	a->hi = hi > lo ? hi : lo + 1.0;
	set_title(a, title);
	for (size_t i = 0; i < n && i < SVG_TICKS_MAX; i++) {
		a->tick[a->nticks] = at[i];
		snprintf(a->label[a->nticks], sizeof(a->label[0]), "%s", labels[i]);
		a->nticks++;
	}
}

/* Clock steps in seconds; past the last one it doubles. */
static const uint64_t clock_steps[] = {
	1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
	3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 1209600, 2419200,
};
#define DAY_S UINT64_C(86400)

static uint64_t intervals(uint64_t lo, uint64_t hi, uint64_t step)
{
	return (hi + step - 1u) / step - lo / step;
}

void svg_axis_utc(struct svg_axis *a, uint64_t lo_ns, uint64_t hi_ns, unsigned target, const char *title)
{
	uint64_t lo = lo_ns / UINT64_C(1000000000), hi, step = 0;

	memset(a, 0, sizeof(*a));
	a->unit = 1.0;
	set_title(a, title);
	hi = hi_ns > lo_ns ? hi_ns / UINT64_C(1000000000) + (hi_ns % UINT64_C(1000000000) != 0) : lo;
	if (hi == lo) {                 /* one time: a second either side */
		hi = lo + 1u;
		lo = lo ? lo - 1u : 0;
	}
	if (target < 2)
		target = 2;
	if (target > SVG_TICKS_MAX - 1u)
		target = SVG_TICKS_MAX - 1u;
	for (size_t i = 0; i < ARRAY_SIZE(clock_steps) && !step; i++)
		if (intervals(lo, hi, clock_steps[i]) <= target)
			step = clock_steps[i];
	for (step = step ? step : clock_steps[ARRAY_SIZE(clock_steps) - 1u]; intervals(lo, hi, step) > target;)
		step *= 2u;
	uint64_t first = lo / step * step, last = (hi + step - 1u) / step * step;
	a->lo = (double)first * 1e9;
	a->hi = (double)last * 1e9;
	for (uint64_t t = first; t <= last && a->nticks < SVG_TICKS_MAX; t += step) {
		time_t secs = (time_t)t;
		struct tm tm;
		char *l = a->label[a->nticks];
		size_t len = sizeof(a->label[0]);
		a->tick[a->nticks] = (double)t * 1e9;
		if (!gmtime_r(&secs, &tm))
			snprintf(l, len, "?");
		else if (step >= DAY_S || t % DAY_S == 0)
			strftime(l, len, "%m-%d", &tm);
		else if (step < 60u)
			strftime(l, len, "%H:%M:%S", &tm);
		else
			strftime(l, len, "%H:%M", &tm);
		a->nticks++;
	}
}

double svg_axis_frac(const struct svg_axis *a, double v)
{
	if (a->log) {
		if (!(v > 0))
			return -1.0;
		return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	}
	return (v - a->lo) / (a->hi - a->lo);
}

double svg_px(const struct svg_plot *p, double x)
{
	return p->x0 + svg_axis_frac(&p->x, x) * (p->x1 - p->x0);
}

double svg_py(const struct svg_plot *p, double y)
{
	return p->y1 - svg_axis_frac(&p->y, y) * (p->y1 - p->y0);
}

void svg_plot_begin(struct svg_plot *p, FILE *out, const char *id, const char *title, double width, double height,
		    const struct svg_axis *x, const struct svg_axis *y)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->width = width;
	p->height = height;
	p->x = *x;
	p->y = *y;
	/* The data sit SVG_PAD inside the frame, so a count of 1 on a log axis or
	 * a value at an axis end is not hidden under the frame. */
	p->x0 = 64.0 + SVG_PAD;
	p->x1 = width - 16.0 - SVG_PAD;
	p->y0 = 14.0 + SVG_PAD;
	p->y1 = height - 46.0 - SVG_PAD;
	fprintf(out, "<svg id=\"");
	svg_escape(out, id);
	fprintf(out, "\" class=\"plot\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">"
		"<title>", width, height);
	svg_escape(out, title);
	fprintf(out, "</title>\n<rect class=\"area\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
		p->x0 - SVG_PAD, p->y0 - SVG_PAD, p->x1 - p->x0 + 2 * SVG_PAD, p->y1 - p->y0 + 2 * SVG_PAD);
	for (size_t i = 0; i < p->x.nticks; i++) {
		double px = svg_px(p, p->x.tick[i]);
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", px, p->y0 - SVG_PAD, px,
			p->y1 + SVG_PAD, px, p->y1 + SVG_PAD + 14.0);
		svg_escape(out, p->x.label[i]);
		fputs("</text>\n", out);
	}
	for (size_t i = 0; i < p->y.nticks; i++) {
		double py = svg_py(p, p->y.tick[i]);
		fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", p->x0 - SVG_PAD, py,
			p->x1 + SVG_PAD, py, p->x0 - SVG_PAD - 5.0, py + 4.0);
		svg_escape(out, p->y.label[i]);
		fputs("</text>\n", out);
	}
	fprintf(out, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", (p->x0 + p->x1) / 2.0,
		height - 10.0);
	svg_escape(out, p->x.title);
	fprintf(out, "</text>\n<text class=\"axis\" transform=\"translate(14 %.1f) rotate(-90)\" text-anchor=\"middle\">",
		(p->y0 + p->y1) / 2.0);
	svg_escape(out, p->y.title);
	fputs("</text>\n", out);
}

void svg_plot_end(struct svg_plot *p)
{
	fprintf(p->out, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n</svg>\n",
		p->x0 - SVG_PAD, p->y0 - SVG_PAD, p->x1 - p->x0 + 2 * SVG_PAD, p->y1 - p->y0 + 2 * SVG_PAD);
}

static bool visible(const struct svg_plot *p, double x, double y)
{
	return svg_axis_frac(&p->x, x) >= -1e-9 && svg_axis_frac(&p->y, y) >= -1e-9 && isfinite(x) && isfinite(y);
}

static void stroke(FILE *out, const char *colour, const char *dash, double width)
{
	fprintf(out, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"", colour, width);
	if (dash && *dash)
		fprintf(out, " stroke-dasharray=\"%s\"", dash);
	fputs("/>\n", out);
}

void svg_line(struct svg_plot *p, const double *xs, const double *ys, size_t n, const char *colour,
	      const char *dash, double width)
{
	bool open = false;
	for (size_t i = 0; i < n; i++) {
		if (!visible(p, xs[i], ys[i])) {
			if (open)
				stroke(p->out, colour, dash, width);
			open = false;
			continue;
		}
		fprintf(p->out, "%s%.1f,%.1f", open ? " " : "<polyline class=\"series\" points=\"", svg_px(p, xs[i]),
			svg_py(p, ys[i]));
		open = true;
	}
	if (open)
		stroke(p->out, colour, dash, width);
}

void svg_steps(struct svg_plot *p, const double *x0, const double *x1, const double *y, size_t n, double join,
	       const char *colour, const char *dash, double width)
{
	bool open = false;
	for (size_t i = 0; i < n; i++) {
		bool shown = visible(p, x0[i], y[i]) && visible(p, x1[i], y[i]);
		if (open && (!shown || x0[i] - x1[i - 1u] > join)) {
			stroke(p->out, colour, dash, width);
			open = false;
		}
		if (!shown)
			continue;
		fprintf(p->out, "%s%.1f,%.1f %.1f,%.1f", open ? " " : "<polyline class=\"series\" points=\"",
			svg_px(p, x0[i]), svg_py(p, y[i]), svg_px(p, x1[i]), svg_py(p, y[i]));
		open = true;
	}
	if (open)
		stroke(p->out, colour, dash, width);
}

/* The box of a marker's text of len characters with its baseline at y (11px bold: at
 * most 7px a character, 11px high). */
static struct svg_box mark_box(double px, double y, bool left, size_t len)
{
	double w = 7.0 * (double)len, x = left ? px - 6.0 - w : px + 6.0;
	return (struct svg_box){ x, y - 11.0, x + w, y + 2.0 };
}

static bool overlaps(const struct svg_box *a, const struct svg_box *b)
{
	return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* A baseline near y where the text overlaps no earlier marker's text, in *ret_y; false
 * where none is free within three lines of the point (or no room is left to note it). */
static bool mark_place(struct svg_plot *p, double px, double y, bool left, size_t len,
		       double *ret_y)
{
	static const double shifts[] = { 0, -13, 13, -26, 26, -39, 39 };

	if (p->nmarks == SVG_MAX_MARKS)
		return false;
	for (size_t k = 0; k < sizeof(shifts) / sizeof(shifts[0]); k++) {
		double ty = y + shifts[k];
		struct svg_box b = mark_box(px, ty, left, len);
		bool clear = b.y0 >= p->y0 - 2.0 && b.y1 <= p->y1 + 2.0;
		for (unsigned i = 0; clear && i < p->nmarks; i++)
			clear = !overlaps(&b, &p->marks[i]);
		if (clear) {
			p->marks[p->nmarks++] = b;
			*ret_y = ty;
			return true;
		}
	}
	return false;
}

void svg_marker(struct svg_plot *p, double x, double y, const char *colour, const char *title, const char *text)
{
	if (!visible(p, x, y))
		return;
	double px = svg_px(p, x), py = svg_py(p, y);
	fprintf(p->out, "<g class=\"marker\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" stroke=\"#fff\" "
		"stroke-width=\"0.8\">", px, py, colour);
	if (title) {
		fputs("<title>", p->out);
		svg_escape(p->out, title);
		fputs("</title>", p->out);
	}
	fputs("</circle>", p->out);
	double ty;
	bool left = px > (p->x0 + p->x1) / 2.0; /* beside the point, on the side with room */
	if (text &&
	    mark_place(p, px, py < p->y0 + 12.0 ? py + 12.0 : py - 4.0, left, strlen(text), &ty)) {
		fprintf(p->out, "<text class=\"mark\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">",
			px + (left ? -6.0 : 6.0), ty, left ? "end" : "start");
		svg_escape(p->out, text);
		fputs("</text>", p->out);
	}
	fputs("</g>\n", p->out);
}

void svg_rect(struct svg_plot *p, double x0, double y0, double x1, double y1, const char *colour,
	      const char *title)
{
	double ax = svg_px(p, x0), bx = svg_px(p, x1), ay = svg_py(p, y1), by = svg_py(p, y0);
	if (!(bx > ax) || !(by > ay))
		return;
	fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">", ax, ay, bx - ax,
		by - ay, colour);
	if (title) {
		fputs("<title>", p->out);
		svg_escape(p->out, title);
		fputs("</title>", p->out);
	}
	fputs("</rect>\n", p->out);
}

void svg_note(struct svg_plot *p, unsigned line, const char *colour, const char *text)
{
	fprintf(p->out, "<text class=\"note\" x=\"%.1f\" y=\"%.1f\" fill=\"%s\">", p->x0 + 6.0,
		p->y0 + 14.0 + 14.0 * line, colour);
	svg_escape(p->out, text);
	fputs("</text>\n", p->out);
}
