#include "result/merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void agree(char *dst, size_t size, const char *other)
{
	if (strcmp(dst, other) != 0)
		snprintf(dst, size, "(mixed)");
}

static void merge_system(struct sysdesc *s, const struct result *in, size_t n)
{
	*s = in[0].sys;
	for (size_t i = 1; i < n; i++) {
		const struct sysdesc *o = &in[i].sys;
		agree(s->hostname, sizeof(s->hostname), o->hostname);
		agree(s->kernel_release, sizeof(s->kernel_release), o->kernel_release);
		agree(s->kernel_version, sizeof(s->kernel_version), o->kernel_version);
		agree(s->machine, sizeof(s->machine), o->machine);
		agree(s->preempt, sizeof(s->preempt), o->preempt);
		agree(s->preempt_mode, sizeof(s->preempt_mode), o->preempt_mode);
		agree(s->clocksource, sizeof(s->clocksource), o->clocksource);
		agree(s->clocksources, sizeof(s->clocksources), o->clocksources);
		agree(s->cpu_model, sizeof(s->cpu_model), o->cpu_model);
		agree(s->hypervisor, sizeof(s->hypervisor), o->hypervisor);
		agree(s->online_cpus, sizeof(s->online_cpus), o->online_cpus);
		if (o->ncpus_online != s->ncpus_online)
			s->ncpus_online = 0;
	}
	char host[sizeof(s->hostname)];
	snprintf(host, sizeof(host), "%s", s->hostname);
	if (strcmp(host, "(mixed)") == 0)
		snprintf(s->hostname, sizeof(s->hostname), "merged: %zu runs of several hosts", n);
	else
		snprintf(s->hostname, sizeof(s->hostname), "merged: %zu runs of %.200s", n, host);
}

static void merge_labels(struct labels *dst, const struct result *in, size_t n)
{
	dst->n = 0;
	for (unsigned k = 0; k < in[0].labels.n; k++) {
		const struct label *l = &in[0].labels.items[k];
		bool everywhere = true;
		for (size_t i = 1; i < n && everywhere; i++) {
			bool found = false;
			for (unsigned j = 0; j < in[i].labels.n; j++)
				found |= strcmp(in[i].labels.items[j].key, l->key) == 0 &&
					 strcmp(in[i].labels.items[j].value, l->value) == 0;
			everywhere = found;
		}
		if (everywhere)
			dst->items[dst->n++] = *l;
	}
}

/* dst = the sum of src[0..n-1] (one CPU of every run that measured it), with their largest values. */
static int merge_cpu(const struct result *res, struct cpu_result *dst, const struct cpu_result *const *src, size_t n,
		     struct lat_error *why)
{
	int r = cpu_result_sum(res, dst, src, n, why);
	for (size_t i = 0; i < n && r == 0; i++) {
		struct rec_event top[2u * REC_TOP];
		memcpy(top, dst->top, dst->ntop * sizeof(*top));
		memcpy(top + dst->ntop, src[i]->top, src[i]->ntop * sizeof(*top));
		result_set_top(dst, top, dst->ntop + src[i]->ntop);
	}
	return r;
}

static int by_cpu(const void *key, const void *elem)
{
	int cpu = *(const int *)key, other = ((const struct cpu_result *)elem)->cpu;
	return (cpu > other) - (cpu < other);
}

/* Every CPU of every run into ret's CPU of that number, in run order. */
static int merge_cpus(const struct result *in, size_t n, struct result *ret, struct lat_error *why)
{
	size_t total = 0, *count = calloc(ret->ncpus, sizeof(*count)), *at = calloc(ret->ncpus + 1u, sizeof(*at));
	const struct cpu_result **src = NULL;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		total += in[i].ncpus;
	if (!count || !at || !(src = malloc((total ? total : 1u) * sizeof(*src))))
		r = -ENOMEM;
	/* ret's CPUs are in CPU order (result_init): where each run's CPU goes is a binary search. */
	for (int pass = 0; pass < 2 && r == 0; pass++) {
		for (size_t i = 0; i < n; i++)
			for (size_t c = 0; c < in[i].ncpus; c++) {
				const struct cpu_result *dst = bsearch(&in[i].cpus[c].cpu, ret->cpus, ret->ncpus,
								       sizeof(*ret->cpus), by_cpu);
				size_t k = (size_t)(dst - ret->cpus);
				if (pass == 0)
					count[k]++;
				else
					src[at[k] + count[k]++] = &in[i].cpus[c];
			}
		for (size_t k = 0; pass == 0 && k < ret->ncpus; k++) {
			at[k + 1u] = at[k] + count[k];
			count[k] = 0;
		}
	}
	for (size_t k = 0; k < ret->ncpus && r == 0; k++)
		r = merge_cpu(ret, &ret->cpus[k], src + at[k], count[k], why);
	free(count);
	free(at);
	free(src);
	return r;
}

/* "runs 3 and 4", "runs 3, 4 and 5", or "the 12 runs". */
static void name_runs(char *buf, size_t size, const int64_t *ids, size_t n)
{
	size_t len = 0;
	if (n > 4) {
		snprintf(buf, size, "the %zu runs", n);
		return;
	}
	len = (size_t)snprintf(buf, size, "runs");
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", i == 0 ? " " : i + 1u == n ? " and " : ", ",
					(long long)ids[i]);
}

/* Runs of one probe with the same metrics, or -EINVAL with err saying which
 * differ; *cpus: every CPU any of them measured. */
static int check_mergeable(const struct result *in, const int64_t *ids, size_t n, struct cpuset *cpus,
			   struct lat_error *err)
{
	cpuset_clear(cpus);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(in[i].probe, in[0].probe) != 0) {
			return err_set(err, -EINVAL, "runs %lld and %lld are of different probes (%s, %s)", (long long)ids[0],
				 (long long)ids[i], in[0].probe, in[i].probe);
		}
		/* one probe can measure more metrics (wake --pingpong): not the same measurement */
		for (unsigned m = 0; m < in[0].nmetrics || m < in[i].nmetrics; m++)
			if (m >= in[0].nmetrics || m >= in[i].nmetrics ||
			    strcmp(in[i].metric_names[m], in[0].metric_names[m]) != 0) {
				return err_set(err, -EINVAL, "runs %lld and %lld measure different metrics", (long long)ids[0],
					 (long long)ids[i]);
			}
		for (size_t c = 0; c < in[i].ncpus; c++)
			cpuset_add(cpus, (unsigned)in[i].cpus[c].cpu);
	}
	return 0;
}

/* The run's own figures: the earliest start, the longest time, and what every run had applied. */
static void merge_run(struct result *ret, const struct result *in, const int64_t *ids, size_t n)
{
	ret->threshold_ns = in[0].threshold_ns;
	ret->warmup = in[0].warmup;
	ret->start_realtime_ns = in[0].start_realtime_ns;
	ret->applied = in[0].applied;
	/* Its throughput takes the members as run at the same time: their reads over
	 * the longest one's time (doc/result-schema.md). */
	ret->ops.per_op = in[0].ops.per_op;
	/* SMIs only where every member counted them: a member without would add 0s */
	ret->smi_asked = in[0].smi_asked;
	ret->smi_source = in[0].smi_source;
	for (size_t i = 0; i < n; i++) {
		ret->smi_asked &= in[i].smi_asked;
		if (in[i].smi_source == SMI_SOURCE_NONE)
			ret->smi_source = SMI_SOURCE_NONE;
		if (in[i].start_realtime_ns < ret->start_realtime_ns)
			ret->start_realtime_ns = in[i].start_realtime_ns;
		if (in[i].elapsed_ns > ret->elapsed_ns)
			ret->elapsed_ns = in[i].elapsed_ns;
		ret->interrupted |= in[i].interrupted;
		ret->long_run &= in[i].long_run;
		ret->partial |= in[i].partial;  /* a member still measuring: so is the merge */
		ret->applied.rt_policy &= in[i].applied.rt_policy;
		ret->applied.memlock &= in[i].applied.memlock;
		ret->applied.pm_qos &= in[i].applied.pm_qos;
		ret->applied.timer_slack &= in[i].applied.timer_slack;
		ret->applied.main_moved &= in[i].applied.main_moved;
		if (strcmp(in[i].applied.idle_states, ret->applied.idle_states) != 0)
			snprintf(ret->applied.idle_states, sizeof(ret->applied.idle_states),
				 "not the same in the merged runs");
		if (in[i].threshold_ns != ret->threshold_ns)
			result_note(ret, "run %lld used another threshold (%llu ns): 'above' mixes thresholds",
				    (long long)ids[i], (unsigned long long)in[i].threshold_ns);
	}
}

/* The parameters of the first run, and which runs were merged: ids for the
 * reader of this store, identities for any store (what the merge is).  -ENOMEM. */
static int merge_params(struct result *ret, const struct result *in, const int64_t *ids,
			const char *const *identities, size_t n)
{
	ret->params = json_deep_copy(in[0].params);
	json_t *from = json_array(), *members = json_array();
	bool ok = ret->params && from && members;
	for (size_t i = 0; ok && i < n; i++)
		ok = json_array_append_new(from, json_integer(ids[i])) == 0 &&
		     json_array_append_new(members, json_string(identities[i])) == 0;
	if (!ok) {
		json_decref(from);
		json_decref(members);
		return -ENOMEM;
	}
	/* set_new takes the value whatever it returns: both are called */
	int bad_from = json_object_set_new(ret->params, "merged_from", from);
	int bad_members = json_object_set_new(ret->params, "merged_members", members);
	return bad_from < 0 || bad_members < 0 ? -ENOMEM : 0;
}

int result_merge(const struct result *in, const int64_t *ids, const char *const *identities, size_t n,
		 struct result *ret, struct lat_error *err)
{
	struct cpuset cpus;
	const char *names[REC_MAX_METRICS];
	struct lat_error why = { "" };
	int r;

	err_set(err, 0, "%s", "");
	if (n == 0) {
		return err_set(err, -EINVAL, "nothing to merge");
	}
	if ((r = check_mergeable(in, ids, n, &cpus, err)) < 0)
		return r;
	for (unsigned m = 0; m < in[0].nmetrics; m++)
		names[m] = in[0].metric_names[m];
	if ((r = result_init(ret, in[0].probe, in[0].nmetrics, names, &cpus)) < 0)
		return r;
	merge_run(ret, in, ids, n);
	if ((r = merge_cpus(in, n, ret, &why)) < 0)
		goto fail;
	snprintf(ret->stop_reason, sizeof(ret->stop_reason), "merged");
	merge_system(&ret->sys, in, n);
	merge_labels(&ret->labels, in, n);
	char list[200];
	size_t len = 0;
	list[0] = '\0';
	for (size_t i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%lld", i ? "," : "", (long long)ids[i]);
	result_info(ret, "merged from runs %s", list);
	for (size_t i = 0; i < n; i++)
		if (in[i].interrupted)
			result_info(ret, "run %lld stopped early (%s)", (long long)ids[i],
				    in[i].stop_reason);
	if ((r = merge_params(ret, in, ids, identities, n)) < 0)
		goto fail;
	char *argv[] = { (char *)"latscope", (char *)"merge", list };
	if ((r = result_set_argv(ret, 3, argv)) < 0 || (r = result_finalize_why(ret, &why)) < 0)
		goto fail;
	return 0;
fail:
	if (r == -EOVERFLOW) {
		char runs[64];
		name_runs(runs, sizeof(runs), ids, n);
		err_set(err, 0, "%s cannot be merged: %s", runs, why.msg);
	} else {
		err_set(err, 0, "out of memory");
	}
	result_free(ret);
	return r;
}
