/*
 * Inline SVG plots for the HTML report: axes on linear or log scales with nice
 * ticks, lines, markers and bars.  An axis is always widened to whole ticks,
 * never narrowed, so the largest value (a spike) is inside the plot.
 * Values are in the data's own unit (ns for times); tick labels divide by the
 * axis unit.  Writing goes to a FILE; errors show in ferror() of it.
 */
#ifndef LATSCOPE_REPORT_SVG_H
#define LATSCOPE_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SVG_TICKS_MAX 24
#define SVG_PALETTE 12

/* The colour of series i: a fixed colour-blind-friendly palette (Okabe-Ito and Tol). */
const char *svg_colour(size_t i);
/* Its stroke pattern: solid for the first SVG_PALETTE series, dashed after. */
const char *svg_dash(size_t i);

/* A time unit people read well for values up to max_ns: ns, us, ms or s. */
struct svg_unit {
	double ns;
	const char *name;
};
struct svg_unit svg_unit_for(double max_ns);

/* A number short: up to 4 significant digits, no trailing zeros ("0.25", "1500", "2e+06"). */
void svg_num(double v, char *buf, size_t size);

struct svg_axis {
	bool log;
	double lo, hi;                  /* the axis range, nice; lo > 0 when log */
	double unit;                    /* tick labels show value / unit */
	size_t nticks;
	double tick[SVG_TICKS_MAX];
	char label[SVG_TICKS_MAX][16];
	char title[96];
};

/* [lo, hi] widened to nice ticks (1, 2, 5 steps), about target of them.  lo == hi gets room around it. */
void svg_axis_linear(struct svg_axis *a, double lo, double hi, unsigned target, double unit, const char *title);
/* [lo, hi] (lo > 0) widened to whole decades; with few decades ticks at 1, 2, 5. */
void svg_axis_log(struct svg_axis *a, double lo, double hi, double unit, const char *title);
/* A linear axis over [lo, hi] with ticks chosen by the caller (n <= SVG_TICKS_MAX). */
void svg_axis_custom(struct svg_axis *a, double lo, double hi, size_t n, const double *at,
		     const char *const *labels, const char *title);
/*
 * A clock axis over [lo_ns, hi_ns] (CLOCK_REALTIME ns), widened to whole ticks
 * of a clock step (1, 2, 5, 10, 15, 30 s or min; 1, 2, 3, 6, 12 h; 1, 2, 7, 14,
 * 28 days), the smallest that gives at most about target of them; labelled in
 * UTC: "HH:MM" ("HH:MM:SS" under a minute), a tick at midnight by its date
 * "MM-DD" (every tick of a step of days).
 */
void svg_axis_utc(struct svg_axis *a, uint64_t lo_ns, uint64_t hi_ns, unsigned target, const char *title);
/* Where v falls on the axis, 0 at lo and 1 at hi (a log axis maps v <= 0 below 0). */
double svg_axis_frac(const struct svg_axis *a, double v);

/* Where a marker's text went (px): the next one is put where it overlaps none. */
struct svg_box {
	double x0, y0, x1, y1;
};

#define SVG_MAX_MARKS 32

struct svg_plot {
	FILE *out;
	double width, height;           /* the viewBox */
	double x0, y0, x1, y1;          /* the plot area: x0 left, y0 top */
	struct svg_axis x, y;
	struct svg_box marks[SVG_MAX_MARKS];
	unsigned nmarks;
};

/* Open an <svg> with id and title (for people and screen readers), draw the
 * grid, the ticks and the axis titles.  The axes are copied. */
void svg_plot_begin(struct svg_plot *p, FILE *out, const char *id, const char *title, double width, double height,
		    const struct svg_axis *x, const struct svg_axis *y);
void svg_plot_end(struct svg_plot *p);
double svg_px(const struct svg_plot *p, double x);
double svg_py(const struct svg_plot *p, double y);

/* A line through n points (data coordinates); points that a log axis cannot
 * show (<= 0) break the line. */
void svg_line(struct svg_plot *p, const double *xs, const double *ys, size_t n, const char *colour,
	      const char *dash, double width);
/* Steps: y[i] held from x0[i] to x1[i].  A step joins the one before it (by a
 * riser) when it starts no later than join after that one's end; a y that is
 * not finite or that a log axis cannot show draws nothing and breaks the line. */
void svg_steps(struct svg_plot *p, const double *x0, const double *x1, const double *y, size_t n, double join,
	       const char *colour, const char *dash, double width);
/* A point with a tooltip (title may be NULL) and an optional short text beside it:
 * moved up or down a line where it would overlap an earlier marker's text, and left
 * out (the tooltip still says it) where no place near the point is free. */
void svg_marker(struct svg_plot *p, double x, double y, const char *colour, const char *title, const char *text);
/* A rectangle in data coordinates (x0 < x1, y0 < y1), filled. */
void svg_rect(struct svg_plot *p, double x0, double y0, double x1, double y1, const char *colour,
	      const char *title);
/* A note in the plot's top-left corner (such as "stopped early"). */
void svg_note(struct svg_plot *p, unsigned line, const char *colour, const char *text);

/* Text escaped for XML and HTML: & < > " '. */
void svg_escape(FILE *out, const char *s);

#endif
