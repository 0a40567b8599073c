#include "report/gnuplot.h"

#include <errno.h>
#include <string.h>

#include "core/array.h"
#include "core/error.h"
#include "core/parse.h"
#include "core/units.h"
#include "probe/probe.h"

/* Text in a comment: a line break in it would end the comment and start a command. */
static void comment_text(FILE *out, const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			fputc(*s, out);
}

/* A gnuplot string in single quotes: the one kind in which gnuplot substitutes
 * nothing (backquotes in double quotes run a shell command); '' is a quote. */
static void quoted(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', out);
		if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			fputc(*s, out);
	}
	fputc('\'', out);
}

static void block_name(char *buf, size_t size, int64_t id, int cpu)
{
	if (cpu < 0)
		snprintf(buf, size, "$run%lld_all", (long long)id);
	else
		snprintf(buf, size, "$run%lld_cpu%d", (long long)id, cpu);
}

/* How the probe's values read: microseconds, or whole nanoseconds (noise). */
struct axis_unit {
	double ns;
	const char *name;
};

static struct axis_unit unit_of(const struct result *r)
{
	const struct probe_ops *ops = probe_find(r->probe);
	return ops && ops->unit_ns == 1 ? (struct axis_unit){ 1.0, "ns" } : (struct axis_unit){ 1e3, "us" };
}

/* One data block: bucket low and high in the axis's unit, and its count. */
static void data_block(FILE *out, const char *name, const struct hist *h, struct axis_unit u)
{
	fprintf(out, "%s << EOD\n", name);
	for (unsigned i = hist_next(h, 0); i < HIST_BUCKETS; i = hist_next(h, i + 1u))
		fprintf(out, "%.3f %.3f %llu\n", (double)hist_bucket_low(i) / u.ns, (double)(hist_bucket_high(i) + 1u) / u.ns,
			(unsigned long long)h->counts[i]);
	fprintf(out, "EOD\n");
}

/* "run 3 config=guest (cut short)": what tells the runs apart in the legend. */
static void run_label(char *buf, size_t size, int64_t id, const struct result *r)
{
	char labels[512];
	labels_format(&r->labels, labels, sizeof(labels));
	snprintf(buf, size, "run %lld%s%s%s", (long long)id, labels[0] ? " " : "", labels,
		 r->interrupted ? " (cut short)" : "");
}

/* A run's curves: one per CPU, or its merged block alone. */
static size_t ncurves(const struct result *r, bool per_cpu)
{
	return per_cpu ? r->ncpus : 1u;
}

/* The c-th of them; NULL without a sample (gnuplot cannot draw an empty block). */
static const struct cpu_result *curve(const struct result *r, bool per_cpu, size_t c)
{
	const struct cpu_result *cr = per_cpu ? &r->cpus[c] : &r->all;
	return cr->hist[0].total ? cr : NULL;
}

int gnuplot_write(FILE *out, const struct result *const *results, const int64_t *ids, size_t n, struct lat_error *err)
{
	const bool per_cpu = n == 1;
	char name[64], at[40];

	if (n == 0)
		return err_set(err, -EINVAL, "no run to draw");
	for (size_t i = 0; i < n; i++)
		if (!results[i])
			return err_set(err, -EINVAL, "result %zu is missing", i + 1u);
	/* One axis holds one metric in one unit: a gap of 30 ns and a wakeup of 30 us are not one curve's. */
	for (size_t i = 1; i < n; i++)
		if (strcmp(results[i]->probe, results[0]->probe) != 0 ||
		    strcmp(results[i]->metric_names[0], results[0]->metric_names[0]) != 0)
			return err_set(err, -EINVAL, "runs %lld and %lld measure different things (%s %s, %s %s): "
				       "draw them apart", (long long)ids[0], (long long)ids[i], results[0]->probe,
				       results[0]->metric_names[0], results[i]->probe, results[i]->metric_names[0]);
	const struct axis_unit u = unit_of(results[0]);

	fprintf(out, "# latscope histogram export: draw it with `gnuplot FILE` (writes an SVG), or choose the\n"
		     "# terminal and file: gnuplot -e 'term=\"pngcairo size 1200,700\"; outfile=\"plot.png\"' FILE\n"
		     "#\n# Each data block: bucket low and high (%s), samples in the bucket.  The buckets are\n"
		     "# log-linear (width at most 1/64 of the value), so they are drawn as boxes of their width.\n", u.name);
	for (size_t i = 0; i < n; i++) {
		const struct result *r = results[i];
		fmt_utc(r->start_realtime_ns, at, sizeof(at));
		fprintf(out, "# run %lld: ", (long long)ids[i]);
		const char *parts[] = { r->probe, " ", r->metric_names[0], " on ", r->sys.hostname, ", ",
					r->sys.kernel_release, ", ", at, " UTC", r->interrupted ? " (cut short)" : "" };
		for (size_t k = 0; k < ARRAY_SIZE(parts); k++)
			comment_text(out, parts[k]);
		fputc('\n', out);
		if (r->all.hist[0].total == 0)
			fprintf(out, "# run %lld has no sample: nothing of it is drawn\n", (long long)ids[i]);
		for (size_t c = 0; c < ncurves(r, per_cpu); c++) {
			const struct cpu_result *cr = curve(r, per_cpu, c);
			if (!cr)
				continue;
			block_name(name, sizeof(name), ids[i], cr->cpu);
			data_block(out, name, &cr->hist[0], u);
		}
	}

	fprintf(out, "\nif (!exists(\"term\")) term = \"svg size 1200,700 dynamic background rgb 'white'\"\n"
		     "if (!exists(\"outfile\")) outfile = \"latscope-histogram.svg\"\n"
		     "set terminal @term\nset output outfile\nset title ");
	char title[256];
	if (per_cpu)
		snprintf(title, sizeof(title), "latscope run %lld: %s %s per CPU", (long long)ids[0], results[0]->probe,
			 results[0]->metric_names[0]);
	else
		snprintf(title, sizeof(title), "latscope: %s of %zu runs (all CPUs of each)",
			 results[0]->metric_names[0], n);
	quoted(out, title);
	fprintf(out, "\nset xlabel ");
	snprintf(title, sizeof(title), "%s (%s, log scale)", results[0]->metric_names[0], u.name);
	quoted(out, title);
	fprintf(out, "\nset ylabel ");
	quoted(out, "samples per bucket (log scale)");
	/* counts start at 1: a log axis from just below it shows every non-empty bucket */
	fprintf(out, "\nset logscale xy\nset yrange [0.8:*]\nset format x \"%%g\"\nset grid\nset key top right\n"
		     "set style fill transparent solid 0.35 noborder\nplot ");
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		const struct result *r = results[i];
		for (size_t c = 0; c < ncurves(r, per_cpu); c++) {
			const struct cpu_result *cr = curve(r, per_cpu, c);
			char label[640];
			if (!cr)
				continue;
			block_name(name, sizeof(name), ids[i], cr->cpu);
			if (per_cpu)
				snprintf(label, sizeof(label), "cpu %d", cr->cpu);
			else
				run_label(label, sizeof(label), ids[i], r);
			fprintf(out, "%s%s using (($1+$2)/2):3:($2-$1) with boxes title ", first ? "" : ", \\\n     ", name);
			quoted(out, label);
			first = false;
		}
	}
	/* gnuplot refuses a plot without a point: say so on an empty one instead */
	if (first)
		fprintf(out, "[1:10] [1:10] 5 lc rgb 'white' notitle\n"
			     "set label 1 'no samples in these runs: nothing to draw' at graph 0.5,0.5 center\nreplot");
	fprintf(out, "\n");
	return ferror(out) ? err_set(err, -EIO, "%s", strerror(EIO)) : 0;
}
