#include "result/tail_json.h"

#include <math.h>
#include <stdbool.h>

static const char *const status_names[] = { "ok", "too_few", "no_fit" };

/* Set key to v (which it owns); false when v or the set failed. */
static bool put(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0;
}

static json_t *real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *interval(const struct tail_interval *t)
{
	json_t *o = json_object();
	if (o && put(o, "est", real(t->est)) && put(o, "lo", real(t->lo)) &&
	    put(o, "hi", real(t->hi)))
		return o;
	json_decref(o);
	return NULL;
}

static json_t *levels(const struct tail_fit *f)
{
	json_t *a = json_array();
	for (unsigned i = 0; a && i < TAIL_PERIODS; i++) {
		json_t *o = interval(&f->level_ns[i]);
		if (!o || !put(o, "period", json_string(tail_period_name(i))) ||
		    !put(o, "period_s", json_real(tail_period_s(i))) ||
		    !put(o, "observed", json_boolean(f->level_observed[i])) ||
		    !put(o, "beyond_reach", json_boolean(f->level_beyond[i])) ||
		    (f->level_cpu[i] >= 0 &&
		     !put(o, "raised_by_cpu", json_integer((json_int_t)f->level_cpu[i]))) ||
		    json_array_append_new(a, o) < 0) {
			json_decref(o);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static json_t *candidates(const struct tail_fit *f)
{
	json_t *a = json_array();
	for (unsigned i = 0; a && i < f->ncand; i++) {
		const struct tail_candidate *c = &f->cand[i];
		json_t *o = json_object();
		if (!o || !put(o, "quantile", json_real(c->quantile)) ||
		    !put(o, "threshold_ns", json_integer((json_int_t)c->threshold_ns)) ||
		    !put(o, "n_exceed", json_integer((json_int_t)c->n_exceed)) ||
		    !put(o, "xi", interval(&c->xi)) || !put(o, "stable", json_boolean(c->stable)) ||
		    json_array_append_new(a, o) < 0) {
			json_decref(o);
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *tail_above_json(uint64_t threshold_ns, const struct tail_interval *per_hour, int from)
{
	json_t *o = interval(per_hour);
	if (o && put(o, "threshold_ns", json_integer((json_int_t)threshold_ns)) &&
	    put(o, "from", json_string(from == TAIL_FROM_MODEL ? "fit" : "count")))
		return o;
	json_decref(o);
	return NULL;
}

json_t *tail_to_json(const struct tail_fit *f)
{
	json_t *o = json_object(), *tests = json_object();
	unsigned s = (unsigned)f->status;
	bool ok = o && tests &&
		  put(o, "status", json_string(s < 3u ? status_names[s] : "unknown")) &&
		  put(o, "samples", json_integer((json_int_t)f->samples)) &&
		  put(o, "why", json_string(f->why));

	if (ok && f->status == TAIL_OK)
		ok = put(o, "threshold_ns", json_integer((json_int_t)f->threshold_ns)) &&
		     put(o, "threshold_choice", json_string(f->choice)) &&
		     put(o, "n_exceed", json_integer((json_int_t)f->n_exceed)) &&
		     put(o, "exceed_per_s", real(f->exceed_per_s)) &&
		     put(o, "xi", interval(&f->xi)) && put(o, "sigma_ns", interval(&f->sigma_ns)) &&
		     put(o, "levels", levels(f)) && put(o, "reach_s", real(f->reach_s)) &&
		     put(o, "bucket_error_ns", real(f->bucket_error_ns)) &&
		     put(tests, "p_independent", real(f->p_independent)) &&
		     put(tests, "p_stationary", real(f->p_stationary)) &&
		     put(tests, "p_fit", real(f->p_fit)) && put(o, "tests", json_incref(tests)) &&
		     put(o, "reliable", json_boolean(f->reliable)) &&
		     put(o, "candidates", candidates(f));
	json_decref(tests);
	if (ok)
		return o;
	json_decref(o);
	return NULL;
}
