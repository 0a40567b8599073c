#include "monitor/page.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/units.h"
#include "report/html.h"

static void dur_cell(FILE *out, bool has, uint64_t ns)
{
	char buf[32];

	if (!has) {
		html_cell(out, true, "-");
		return;
	}
	fmt_duration(ns, buf, sizeof(buf));
	html_cell(out, true, "%s", buf);
}

char *mon_page_render(const struct mon_metrics *m, const struct mon_page_info *info, uint64_t now_mono_ns)
{
	static const char *const head[] = { "CPU", "samples", "missed", "above threshold", "spikes",
					    "window p99", "window max", "max, last 5 min", "steal since boot" };
	char *text = NULL, every[32];
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	if (!out)
		return NULL;
	html_begin(out, "latscope monitor");
	html_elem(out, "h1", NULL, "latscope monitor on %s", info->host);
	fmt_duration(info->rotate_ns, every, sizeof(every));
	html_elem(out, "p", NULL, "%s; monitor=%s; %u period%s of %s stored%s%s", mon_metrics_up(m) ? "measuring" :
		  "stopped", info->monitor_id, info->periods, info->periods == 1 ? "" : "s", every,
		  info->store ? " in " : " (not kept)", info->store ? info->store : "");
	if (info->last_run > 0)
		html_elem(out, "p", NULL, "The last period is run %" PRId64 ": latscope show %" PRId64
			  "; all of them: latscope report --monitor %s", info->last_run, info->last_run, info->monitor_id);
	html_table_begin(out, NULL, head, sizeof(head) / sizeof(head[0]));
	for (size_t i = 0; i < mon_metrics_ncpus(m); i++) {
		struct mon_cpu_view v;
		mon_metrics_view(m, i, now_mono_ns, &v);
		html_row_begin(out);
		html_cell(out, true, "%d", v.cpu);
		html_cell(out, true, "%" PRIu64, v.samples);
		html_cell(out, true, "%" PRIu64, v.missed);
		html_cell(out, true, "%" PRIu64, v.above);
		html_cell(out, true, "%" PRIu64, v.spikes);
		dur_cell(out, v.has_window, v.win_p99);
		dur_cell(out, v.has_window, v.win_max);
		dur_cell(out, v.has_5m, v.max_5m);
		dur_cell(out, v.has_context, v.steal_ns);
		html_row_end(out);
	}
	html_table_end(out);
	/* links to this server only: the same figures for machines, and the report of the periods */
	fputs("<p>For Prometheus: <a href=\"/metrics\">/metrics</a>.", out);
	if (info->report)
		fputs(" The periods so far: <a href=\"/report\">the latest report</a>.", out);
	fputs("</p>\n", out);
	html_end(out);
	bool bad = ferror(out) != 0;
	if (fclose(out) != 0 || bad) {
		free(text);
		return NULL;
	}
	return text;
}
