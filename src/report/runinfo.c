/* Each run of the HTML report in words: how it ran, under what load, on what system, and what to change. */
#include <stdlib.h>
#include <string.h>

#include "core/quote.h"
#include "core/units.h"
#include "report/html.h"
#include "report/runinfo.h"
#include "report/svg.h"

static const char *str_or(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

static void json_value_text(FILE *out, const json_t *v)
{
	char *text;
	if (json_is_string(v)) {
		html_text(out, "%s", json_string_value(v));
	} else if (json_is_null(v)) {
		html_text(out, "unknown");
	} else if ((text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) != NULL) {
		html_text(out, "%s", text);
		free(text);
	}
}

/* An object as rows of key and value; nested objects as "outer.inner". */
static void object_rows(FILE *out, const json_t *obj, const char *prefix)
{
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)obj, key, v) {
		char name[256];
		snprintf(name, sizeof(name), "%s%s%s", prefix, *prefix ? "." : "", key);
		if (json_is_object(v) && json_object_size(v)) {
			object_rows(out, v, name);
			continue;
		}
		html_row_begin(out);
		html_cell(out, false, "%s", name);
		fputs("<td>", out);
		json_value_text(out, v);
		fputs("</td>", out);
		html_row_end(out);
	}
}

static void object_table(FILE *out, const char *summary, const json_t *obj, bool open)
{
	static const char *const head[] = { "key", "value" };
	if (!json_is_object(obj))
		return;
	fprintf(out, "<details%s><summary>", open ? " open" : "");
	html_text(out, "%s", summary);
	fputs("</summary>\n", out);
	html_table_begin(out, "kv", head, 2);
	object_rows(out, obj, "");
	html_table_end(out);
	fputs("</details>\n", out);
}

static void findings(FILE *out, const json_t *list)
{
	static const char *const head[] = { "severity", "saw", "why it matters", "what to change" };
	const json_t *f;
	size_t i;

	if (!json_is_array(list) || !json_array_size(list)) {
		html_elem(out, "p", "muted", "No findings.");
		return;
	}
	fputs("<details open><summary>findings</summary>\n", out);
	html_table_begin(out, "findings", head, 4);
	json_array_foreach(list, i, f) {
		const char *sev = json_string_value(json_object_get(f, "severity"));
		html_row_begin(out);
		fprintf(out, "<td%s>", sev && strcmp(sev, "info") != 0 ? " class=\"warn\"" : "");
		html_text(out, "%s", sev ? sev : "?");
		fputs("</td>", out);
		html_cell(out, false, "%s", str_or(json_object_get(f, "saw")));
		html_cell(out, false, "%s", str_or(json_object_get(f, "why")));
		html_cell(out, false, "%s", str_or(json_object_get(f, "fix")));
		html_row_end(out);
	}
	html_table_end(out);
	fputs("</details>\n", out);
}

static void load_line(FILE *out, const struct result *res)
{
	const json_t *load = res->params ? json_object_get(res->params, "load") : NULL;
	const json_t *cmd = res->params ? json_object_get(res->params, "load_cmd") : NULL;
	const json_t *v;
	size_t i;

	fputs("<p><b>load:</b> ", out);
	if (!json_array_size(load) && !json_is_string(cmd)) {
		html_text(out, "none (the machine as it was)");
	} else {
		json_array_foreach(load, i, v)
			html_text(out, "%s--load %s", i ? ", " : "", json_string_value(v) ? json_string_value(v) : "?");
		if (json_is_string(cmd))
			html_text(out, "%s--load-cmd '%s'", json_array_size(load) ? ", " : "", json_string_value(cmd));
	}
	fputs("</p>\n", out);
}

void runinfo_write(FILE *out, int64_t id, const struct result *res, const char *colour)
{
	const struct sysdesc *s = &res->sys;
	char when[64], el[32], thr[32];

	fmt_utc(res->start_realtime_ns, when, sizeof(when));
	fmt_duration(res->elapsed_ns, el, sizeof(el));
	fmt_duration(res->threshold_ns, thr, sizeof(thr));
	fprintf(out, "<section class=\"run\" id=\"run-%lld\">\n<h3><span style=\"color:%s\">&#9632;</span> ", (long long)id,
		colour);
	html_text(out, "run %lld: %s, started %s UTC on %s", (long long)id, res->probe, when, s->hostname);
	fputs("</h3>\n<p><b>command:</b> <code>", out);
	for (int i = 0; i < res->argc; i++) { /* as text_result: quoted as a shell reads it back */
		char *w = quote_shell_dup(res->argv[i]);
		html_text(out, "%s%s", i ? " " : "", w ? w : res->argv[i]);
		free(w);
	}
	fputs("</code></p>\n<p>", out);
	html_text(out, "measured for %s; threshold %s; warm max leaves out the first %llu window(s)", el, thr,
		  (unsigned long long)res->warmup);
	if (res->labels.n) {
		html_text(out, "; labels:");
		for (unsigned i = 0; i < res->labels.n; i++)
			html_text(out, " %s=%s", res->labels.items[i].key, res->labels.items[i].value);
	}
	fputs("</p>\n", out);
	if (res->interrupted) {
		char stopped[96];
		html_elem(out, "p", "warn",
			  "This run was %s after %s: it holds what was measured until then.",
			  result_stopped_text(res, stopped, sizeof(stopped)), el);
	}
	load_line(out, res);
	html_elem(out, "p", NULL, "system: %s, kernel %s %s%s%s, clocksource %s, %s%s", s->cpu_model[0] ? s->cpu_model : "unknown CPU",
		  s->kernel_release, s->preempt, s->preempt_mode[0] ? " " : "", s->preempt_mode,
		  s->clocksource[0] ? s->clocksource : "unknown", s->hypervisor[0] ? "hypervisor " : "no hypervisor seen",
		  s->hypervisor);
	html_elem(out, "p", NULL, "applied: real-time policy %s, memory locked %s, PM QoS %s, timer slack %s, main thread "
		  "off the measured CPUs %s", res->applied.rt_policy ? "yes" : "no", res->applied.memlock ? "yes" : "no",
		  res->applied.pm_qos ? "yes" : "no", res->applied.timer_slack ? "yes" : "no",
		  res->applied.main_moved ? "yes" : "no");
	if (res->nnotes) {
		fputs("<ul class=\"notes\">\n", out);
		for (unsigned i = 0; i < res->nnotes; i++)
			html_elem(out, "li", res->note_is_info[i] ? "muted" : NULL, "%s", res->notes[i]);
		fputs("</ul>\n", out);
	}
	object_table(out, "parameters", res->params, true);
	findings(out, res->findings);
	object_table(out, "system fingerprint (latscope sys)", res->fingerprint, false);
	fputs("</section>\n", out);
}
