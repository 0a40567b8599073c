/* The fingerprint as JSON: what `latscope sys --json` prints and every result keeps. */
#include "sys/fingerprint.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cpuset.h"
#include "core/parse.h"
#include "core/utf8.h"

struct jbuild {
	bool ok;
};

/* Text read from files may be anything; JSON strings must be UTF-8. */
static json_t *jstr(const char *s)
{
	if (s[0] == '\0')
		return json_null();
	if (utf8_valid(s))
		return json_string(s);
	char *copy = strdup(s);
	if (!copy)
		return NULL;
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	json_t *v = json_string(copy);
	free(copy);
	return v;
}

static json_t *jint(int64_t v)
{
	return v == FP_UNKNOWN ? json_null() : json_integer((json_int_t)v);
}

static json_t *jtri(enum fp_tri t)
{
	return t == FP_TRI_UNKNOWN ? json_null() : json_boolean(t == FP_TRI_YES);
}

/* Sized to the list: a cut one would still read as a valid, smaller set. */
static json_t *jset(bool known, const struct cpuset *s)
{
	if (!known)
		return json_null();
	size_t need = cpuset_format(s, NULL, 0) + 1u;
	char *buf = malloc(need);
	if (!buf)
		return NULL;
	cpuset_format(s, buf, need);
	json_t *v = json_string(buf);
	free(buf);
	return v;
}

/* Set key on obj; a NULL object or value (out of memory) marks b failed. */
static void put(struct jbuild *b, json_t *obj, const char *key, json_t *v)
{
	if (!obj || !v || json_object_set_new(obj, key, v) < 0)
		b->ok = false;
	if (!obj)
		json_decref(v);
}

static void push(struct jbuild *b, json_t *arr, json_t *v)
{
	if (!arr || !v || json_array_append_new(arr, v) < 0)
		b->ok = false;
	if (!arr)
		json_decref(v);
}

bool fp_same_idle(const struct fp_cpu *a, const struct fp_cpu *b)
{
	if (a->nidle != b->nidle)
		return false;
	for (size_t k = 0; k < a->nidle; k++)
		if (strcmp(a->idle[k].name, b->idle[k].name) != 0 || a->idle[k].latency_us != b->idle[k].latency_us ||
		    a->idle[k].disabled != b->idle[k].disabled)
			return false;
	return true;
}

/* {"performance": "0-3", "none": "4"}: the CPUs of each governor. */
static json_t *governors_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *obj = json_object();
	for (size_t i = 0; i < fp->ncpus; i++) {
		const char *g = fp->cpus[i].governor[0] ? fp->cpus[i].governor : "unknown";
		bool first = true;
		for (size_t j = 0; j < i && first; j++)
			first = strcmp(fp->cpus[j].governor[0] ? fp->cpus[j].governor : "unknown", g) != 0;
		if (!first)
			continue;
		struct cpuset set;
		cpuset_clear(&set);
		for (size_t j = i; j < fp->ncpus; j++)
			if (strcmp(fp->cpus[j].governor[0] ? fp->cpus[j].governor : "unknown", g) == 0)
				cpuset_add(&set, fp->cpus[j].cpu);
		put(b, obj, g, jset(true, &set));
	}
	return obj;
}

/* [{"cpus": "0-3", "states": [...]}]: CPUs with the same states share an entry. */
static json_t *idle_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < fp->ncpus; i++) {
		bool first = true;
		for (size_t j = 0; j < i && first; j++)
			first = !fp_same_idle(&fp->cpus[j], &fp->cpus[i]);
		if (!first || fp->cpus[i].nidle == 0)
			continue;
		struct cpuset set;
		cpuset_clear(&set);
		for (size_t j = i; j < fp->ncpus; j++)
			if (fp_same_idle(&fp->cpus[j], &fp->cpus[i]))
				cpuset_add(&set, fp->cpus[j].cpu);
		json_t *group = json_object(), *states = json_array();
		for (size_t k = 0; k < fp->cpus[i].nidle; k++) {
			const struct fp_idle_state *s = &fp->cpus[i].idle[k];
			json_t *st = json_object();
			put(b, st, "name", jstr(s->name));
			put(b, st, "latency_us", jint(s->latency_us));
			put(b, st, "disabled", jtri(s->disabled));
			push(b, states, st);
		}
		put(b, group, "cpus", jset(true, &set));
		put(b, group, "states", states);
		push(b, arr, group);
	}
	return arr;
}

/* The sibling lists of cores with more than one online thread. */
static json_t *smt_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < fp->ncpus; i++) {
		const char *s = fp->cpus[i].siblings;
		struct cpuset set;
		bool first = true;
		for (size_t j = 0; j < i && first; j++)
			first = strcmp(fp->cpus[j].siblings, s) != 0;
		if (first && cpuset_parse(s, &set) == 0 && cpuset_count(&set) > 1)
			push(b, arr, jstr(s));
	}
	return arr;
}

static json_t *virtualization_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *o = json_object();
	put(b, o, "hypervisor", jstr(fp->hypervisor));
	put(b, o, "guest", jtri(fp->guest));
	put(b, o, "source", jstr(fp->hypervisor_source));
	return o;
}

/* ["spectre_v1", "spectre_v2"]: the list the text joins with ", ". */
static json_t *mitigated_json(struct jbuild *b, const struct fingerprint *fp)
{
	if (!fp->mitigations_known)
		return json_null();
	json_t *arr = json_array();
	for (const char *p = fp->mitigated; *p != '\0';) {
		size_t n = strcspn(p, ",");
		push(b, arr, json_stringn(p, n));
		p += n;
		p += strspn(p, ", ");
	}
	return arr;
}

static json_t *kernel_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *o = json_object(), *params = fp->cmdline_known ? json_object() : json_null();
	put(b, o, "release", jstr(fp->release));
	put(b, o, "version", jstr(fp->version));
	put(b, o, "arch", jstr(fp->arch));
	put(b, o, "preempt", jstr(fp->preempt));
	put(b, o, "preempt_mode", jstr(fp->preempt_mode));
	put(b, o, "preempt_mode_source", jstr(fp->preempt_mode_source));
	put(b, o, "config", jstr(fp->config_source));
	put(b, o, "hz", jint(fp->hz));
	put(b, o, "nohz", jstr(fp->nohz));
	for (size_t i = 0; fp->cmdline_known && i < fp->nparams; i++)
		put(b, params, fp->params[i].name, fp->params[i].value[0] ? jstr(fp->params[i].value) : json_true());
	put(b, o, "params", params);
	put(b, o, "mitigated", mitigated_json(b, fp));
	return o;
}

static json_t *timekeeping_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *o = json_object(), *tsc = json_null();
	put(b, o, "clocksource", jstr(fp->clocksource));
	put(b, o, "available", jstr(fp->clocksources));
	if (fp->cpu_flags_known && fingerprint_is_x86(fp)) {
		tsc = json_object();
		put(b, tsc, "constant_tsc", json_boolean(fp->constant_tsc));
		put(b, tsc, "nonstop_tsc", json_boolean(fp->nonstop_tsc));
		put(b, tsc, "tsc_reliable", json_boolean(fp->tsc_reliable));
		put(b, tsc, "tsc_known_freq", json_boolean(fp->tsc_known_freq));
	}
	put(b, o, "tsc_flags", tsc);
	put(b, o, "timer_slack_ns", jint(fp->timer_slack_ns));
	put(b, o, "timer_slop_ns", jint(fp->timer_slop_ns));
	put(b, o, "timer_slop_source", jstr(fp->timer_slop_source));
	return o;
}

static json_t *cpus_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *o = json_object();
	put(b, o, "model", jstr(fp->cpu_model));
	put(b, o, "online", jset(fp->online_known, &fp->online));
	put(b, o, "count", fp->online_known ? json_integer(cpuset_count(&fp->online)) : json_null());
	put(b, o, "smt_active", jtri(fp->smt_active));
	put(b, o, "smt_control", jstr(fp->smt_control));
	put(b, o, "smt_siblings", smt_json(b, fp));
	put(b, o, "numa_nodes", jint(fp->numa_nodes));
	return o;
}

static json_t *idle_frequency_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *o = json_object();
	put(b, o, "cpuidle_driver", jstr(fp->cpuidle_driver));
	put(b, o, "cpuidle_governor", jstr(fp->cpuidle_governor));
	put(b, o, "idle_states", idle_json(b, fp));
	put(b, o, "governors", governors_json(b, fp));
	return o;
}

static json_t *isolation_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *o = json_object();
	const char *v;
	put(b, o, "isolated", jset(fp->isolated_known, &fp->isolated));
	put(b, o, "nohz_full", jset(fp->nohz_full_known, &fp->nohz_full));
	put(b, o, "rcu_nocbs", (v = fingerprint_param(fp, "rcu_nocbs")) ? jstr(v) : json_null());
	put(b, o, "irqaffinity", (v = fingerprint_param(fp, "irqaffinity")) ? jstr(v) : json_null());
	return o;
}

static json_t *irqs_json(struct jbuild *b, const struct fingerprint *fp)
{
	if (!fp->irqs_known)
		return json_null();
	json_t *arr = json_array();
	for (size_t i = 0; i < fp->nirqs; i++) {
		const struct fp_irq *q = &fp->irqs[i];
		json_t *o = json_object();
		put(b, o, "irq", json_integer(q->irq));
		put(b, o, "name", jstr(q->name));
		put(b, o, "affinity", jstr(q->affinity));
		put(b, o, "effective", jstr(q->effective));
		push(b, arr, o);
	}
	return arr;
}

static json_t *memory_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *o = json_object();
	int64_t v;
	put(b, o, "thp_enabled", jstr(fp->thp_enabled));
	put(b, o, "thp_defrag", jstr(fp->thp_defrag));
	put(b, o, "numa_balancing", fingerprint_sysctl_i64(fp, "kernel.numa_balancing", &v) == 0 ? json_integer(v) : json_null());
	return o;
}

static json_t *console_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *o = json_object(), *arr = fp->consoles_known ? json_array() : json_null();
	int64_t v;
	for (size_t i = 0; fp->consoles_known && i < fp->nconsoles; i++) {
		const struct fp_console *c = &fp->consoles[i];
		json_t *e = json_object();
		put(b, e, "name", jstr(c->name));
		put(b, e, "flags", json_string(c->flags));
		put(b, e, "enabled", json_boolean(c->enabled));
		put(b, e, "serial", json_boolean(c->serial));
		push(b, arr, e);
	}
	put(b, o, "consoles", arr);
	put(b, o, "console_param", fingerprint_param(fp, "console") ? jstr(fingerprint_param(fp, "console")) : json_null());
	put(b, o, "loglevel", fingerprint_sysctl_i64(fp, "kernel.printk", &v) == 0 ? json_integer(v) : json_null());
	return o;
}

static json_t *scheduling_json(struct jbuild *b, const struct fingerprint *fp)
{
	json_t *o = json_object(), *sysctl = json_object();
	put(b, o, "steal_ns", jint(fp->steal_ns));
	put(b, o, "cpu_ns", jint(fp->cpu_ns));
	put(b, o, "smi_source", jstr(fp->smi_source));
	put(b, o, "smis_since_reset", jint(fp->smis));
	for (size_t i = 0; i < fp->nsysctls; i++) {
		int64_t v;
		const char *text = fp->sysctls[i].value;
		/* Numbers as numbers; "4 4 1 7" stays text. */
		bool number = parse_i64(text, &v) == 0;
		put(b, sysctl, fp->sysctls[i].name, number ? json_integer(v) : jstr(text));
	}
	put(b, o, "sysctl", sysctl);
	return o;
}

json_t *fingerprint_to_json(const struct fingerprint *fp)
{
	struct jbuild b = { .ok = true };
	json_t *o = json_object();

	put(&b, o, "virtualization", virtualization_json(&b, fp));
	put(&b, o, "kernel", kernel_json(&b, fp));
	put(&b, o, "timekeeping", timekeeping_json(&b, fp));
	put(&b, o, "cpus", cpus_json(&b, fp));
	put(&b, o, "idle_frequency", idle_frequency_json(&b, fp));
	put(&b, o, "isolation", isolation_json(&b, fp));
	put(&b, o, "interrupts", irqs_json(&b, fp));
	put(&b, o, "memory", memory_json(&b, fp));
	put(&b, o, "console", console_json(&b, fp));
	put(&b, o, "scheduling", scheduling_json(&b, fp));
	if (!b.ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}
