#include "measure/loadrun.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "core/nstime.h"
#include "sys/cpus.h"

/* Appends to buf at *len; false when it does not fit. */
static bool append(char *buf, size_t size, size_t *len, const char *text)
{
	size_t n = strlen(text);
	if (*len + n + 1u > size)
		return false;
	memcpy(buf + *len, text, n + 1u);
	*len += n;
	return true;
}

int loadrun_parse(const struct strlist *load, const char *load_cmd, struct loadrun *lr, struct lat_error *err)
{
	struct cpuset online;
	char one[LABEL_VALUE_MAX];
	size_t len = 0;
	bool fits = true;

	memset(lr, 0, sizeof(*lr));
	lr->cmd = load_cmd;
	if (load->n == 0 && !load_cmd)
		return 0;
	int r = cpus_online(&online);
	if (r < 0) {
		return err_set(err, -EINVAL, "option '--load': cannot read the online CPUs: %s", strerror(-r));
	}
	for (unsigned i = 0; i < load->n; i++) {
		/* What the spec names is checked too: a bad console dev is a usage error, before anything runs. */
		if (load_parse(load->items[i], &online, &lr->specs[i], err) < 0 ||
		    load_check(&lr->specs[i], err) < 0)
			return err_prefix(err, -EINVAL, "option '--load': ");
		load_format(&lr->specs[i], one, sizeof(one));
		fits = fits && (i == 0 || append(lr->text, sizeof(lr->text), &len, "+")) &&
		       append(lr->text, sizeof(lr->text), &len, one);
	}
	lr->n = load->n;
	if (lr->cmd) {
		fits = fits && (len == 0 || append(lr->text, sizeof(lr->text), &len, "+")) &&
		       append(lr->text, sizeof(lr->text), &len, "cmd:") &&
		       append(lr->text, sizeof(lr->text), &len, lr->cmd);
	}
	if (!fits)      /* a label cut short would group unlike runs together */
		lr->text[0] = '\0';
	return 0;
}

void loadrun_label(const struct loadrun *lr, struct labels *labels)
{
	struct label l;

	if (!lr->text[0] || labels->n >= LABELS_MAX)
		return;
	for (unsigned i = 0; i < labels->n; i++)
		if (strcmp(labels->items[i].key, "load") == 0)
			return;
	snprintf(l.key, sizeof(l.key), "load");
	snprintf(l.value, sizeof(l.value), "%s", lr->text);
	/* A command with control characters cannot be a label; the params keep it. */
	char text[sizeof(l.key) + sizeof(l.value) + 1];
	snprintf(text, sizeof(text), "load=%s", lr->text);
	if (parse_label(text, &l) == 0)
		labels->items[labels->n++] = l;
}

int loadrun_start(struct loadrun *lr, struct lat_error *err)
{
	if (lr->n == 0 && !lr->cmd)
		return 0;
	int r = load_start(lr->specs, lr->n, lr->cmd, &lr->set, err);
	if (r < 0) {
		err_prefix(err, r, "option '%s': ", lr->n ? "--load" : "--load-cmd");
		lr->set = NULL;
		return r;
	}
	lr->started_ns = mono_ns();
	return 0;
}

void loadrun_stop(struct loadrun *lr, struct result *res)
{
	struct load_outcome out;
	struct lat_error why;

	if (!lr->set)
		return;
	uint64_t stop_ns = mono_ns();
	memset(&out, 0, sizeof(out));
	if (load_stop(lr->set, &out, &why) < 0)
		result_note(res, "the load could not be stopped cleanly: %s", why.msg);
	lr->set = NULL;
	if (out.workers_lost)
		result_note(res, "%u load worker(s) died while measuring: the load was lighter than asked",
			    out.workers_lost);
	if (!out.cmd_ran)
		return;
	json_t *o = json_object();
	if (WIFEXITED(out.cmd_status))
		json_object_set_new(o, "exit_status", json_integer(WEXITSTATUS(out.cmd_status)));
	else if (WIFSIGNALED(out.cmd_status))
		json_object_set_new(o, "signal", json_integer(WTERMSIG(out.cmd_status)));
	json_object_set_new(o, "ended_early", json_boolean(out.cmd_ended_early));
	if (out.cmd_ended_early && out.cmd_ended_ns >= lr->started_ns)
		json_object_set_new(o, "ran_ns", json_integer((json_int_t)(out.cmd_ended_ns - lr->started_ns)));
	if (res->params)
		json_object_set_new(res->params, "load_cmd_outcome", o);
	else
		json_decref(o);
	if (out.cmd_ended_early) {
		double s = (double)(out.cmd_ended_ns - lr->started_ns) / 1e9;
		if (WIFEXITED(out.cmd_status))
			result_note(res, "the load command ended after %.1f s of %.1f, with exit status %d: the rest was "
				    "measured without it", s, (double)(stop_ns - lr->started_ns) / 1e9,
				    WEXITSTATUS(out.cmd_status));
		else
			result_note(res, "the load command was killed by signal %d after %.1f s: the rest was measured "
				    "without it", WTERMSIG(out.cmd_status), s);
	}
}

const char *loadrun_kind_word(size_t i)
{
	return i < (size_t)INT_MAX ? load_kind_name((enum load_kind)i) : NULL;
}
