#include "cli/reportmon.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "report/periods.h"
#include "report/tprint.h"

static int refuse_errno(int r, const struct lat_error *err)
{
	tprintf(stderr, "latscope report: %s\n", r == -ENOMEM ? "out of memory" : err->msg);
	return EXIT_ERROR;
}

static const char *monitor_of(const struct run_info *ri)
{
	for (unsigned k = 0; k < ri->labels.n; k++)
		if (strcmp(ri->labels.items[k].key, MONITOR_LABEL) == 0)
			return ri->labels.items[k].value;
	return NULL;
}

/* The monitor of the newest stored run that has one: the last 16 runs, then
 * 64, 256 ... so that a store of years is not listed whole to find it. */
static int latest(struct store *st, char *ret, size_t size)
{
	struct lat_error err;
	for (uint64_t limit = 16;; limit *= 4u) {
		struct run_filter f = { .limit = limit };
		struct run_info *runs;
		size_t n;
		int r = store_list(st, &f, &runs, &n, &err);
		if (r < 0)
			return refuse_errno(r, &err);
		for (size_t i = n; i-- > 0;) {
			const char *v = monitor_of(&runs[i]);
			if (v) {
				snprintf(ret, size, "%s", v);
				free(runs);
				return EXIT_OK;
			}
		}
		free(runs);
		if (n < limit)
			return storecmd_absent(
				"report",
				"option '--monitor': no stored run has a label " MONITOR_LABEL "=");
	}
}

struct when {
	int64_t id;
	uint64_t start_ns;
};

static int by_start(const void *a, const void *b)
{
	const struct when *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* The monitor's runs, oldest start first (a checkpoint replaced keeps its id, so ids alone may not say). */
static int select_runs(struct store *st, const char *id, struct when **ret, size_t *ret_n)
{
	struct run_filter f = { .labels.n = 1 };
	struct lat_error err;
	struct run_info *runs;
	size_t n;
	int r;

	snprintf(f.labels.items[0].key, sizeof(f.labels.items[0].key), "%s", MONITOR_LABEL);
	snprintf(f.labels.items[0].value, sizeof(f.labels.items[0].value), "%s", id);
	if ((r = store_list(st, &f, &runs, &n, &err)) < 0)
		return refuse_errno(r, &err);
	if (n == 0) {
		char msg[1024];
		free(runs);
		snprintf(msg, sizeof(msg),
			 "option '--monitor': no stored run has label " MONITOR_LABEL "=%s", id);
		return storecmd_absent("report", msg);
	}
	struct when *w = malloc(n * sizeof(*w));
	if (!w) {
		free(runs);
		return refuse_errno(-ENOMEM, &err);
	}
	for (size_t i = 0; i < n; i++)
		w[i] = (struct when){ runs[i].id, runs[i].start_realtime_ns };
	free(runs);
	qsort(w, n, sizeof(*w), by_start);
	*ret = w;
	*ret_n = n;
	return EXIT_OK;
}

int report_monitor(struct store *st, const char *id, FILE *out, char *ret_id, size_t id_size, size_t *ret_n)
{
	struct report_monitor m = { 0 };
	struct report_period *periods = NULL;
	struct when *runs = NULL;
	struct label check;
	char label[LABEL_KEY_MAX + LABEL_VALUE_MAX];
	size_t n = 0;
	int code;

	if (strcmp(id, "latest") == 0) {
		if ((code = latest(st, ret_id, id_size)) != EXIT_OK)
			return code;
	} else {
		snprintf(label, sizeof(label), MONITOR_LABEL "=%s", id);
		if (parse_label(label, &check) < 0)
			return storecmd_refuse("report", "option '--monitor': '%s' is not a label's value", id);
		snprintf(ret_id, id_size, "%s", id);
	}
	if ((code = select_runs(st, ret_id, &runs, &n)) != EXIT_OK)
		return code;
	if (!(periods = calloc(n, sizeof(*periods)))) {
		free(runs);
		tprintf(stderr, "latscope report: out of memory\n");
		return EXIT_ERROR;
	}
	m.id = ret_id;
	/* One result at a time: its figures taken, it is freed before the next is read. */
	for (size_t i = 0; i < n && code == EXIT_OK; i++) {
		struct result res;
		if ((code = storecmd_read("report", st, runs[i].id, &res)) != EXIT_OK)
			break;
		report_period_take(&res, runs[i].id, &periods[i]);
		if (i == 0)
			report_monitor_describe(&m, &res, MONITOR_LABEL);
		result_free(&res);
	}
	m.periods = periods;
	m.n = n;
	if (code == EXIT_OK) {
		int r = html_monitor_write(out, &m);
		if (r < 0) {
			tprintf(stderr, "latscope report: cannot make the report: %s\n", strerror(-r));
			code = EXIT_ERROR;
		}
	}
	*ret_n = n;
	free(periods);
	free(runs);
	return code;
}
