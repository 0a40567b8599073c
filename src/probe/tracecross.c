#include "probe/tracecross.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/hist.h"
#include "probe/tracesplit.h"
#include "trace/attrib.h"

/*
 * --trace-backend both: every sample both backends split, compared part by
 * part, and each spike's main occupant after the expiry as each one names it.
 * Where tracefs did not see the switch to the thread (TRACE_F_SWITCH_INFERRED:
 * its return from clock_nanosleep stood in), its wakeup part holds the
 * switch and the syscall's return, which BPF, seeing the switch, puts in the
 * return part: those samples compare the two parts' sum, and say the shift.
 * Where both saw it, the two probes at that one tracepoint run one after the
 * other, so the later one's time of the switch is later by the earlier one's
 * run: the sum from the waking to the clock read is compared for every
 * sample too (after_waking), the points both backends take alike.
 */
enum { CROSS_BPF, CROSS_TRACEFS, CROSS_SIDES };

struct cross_part {
	struct hist diff;                       /* |bpf - tracefs| a sample */
	struct hist side[CROSS_SIDES];          /* each backend's part over the same samples */
	uint64_t samples;
};

struct cross {
	struct cross_part part[TRACE_PARTS];
	struct cross_part inferred;             /* wakeup + return, where tracefs inferred the switch */
	struct cross_part after_waking;         /* wakeup + return, every sample */
	struct hist shift;                      /* there: BPF's switch to tracefs's syscall exit */
	uint64_t samples, spikes, same_culprit;
};

static void cross_add(struct cross_part *cp, int64_t bpf, int64_t tracefs)
{
	int64_t d = bpf - tracefs;
	hist_record(&cp->diff, (uint64_t)(d < 0 ? -d : d));
	hist_record(&cp->side[CROSS_BPF], bpf > 0 ? (uint64_t)bpf : 0);
	hist_record(&cp->side[CROSS_TRACEFS], tracefs > 0 ? (uint64_t)tracefs : 0);
	cp->samples++;
}

static bool same_top(const struct trace_occupancy *a, const struct trace_occupancy *b)
{
	if (!a->ntop || !b->ntop)
		return a->ntop == b->ntop;
	return a->top[0].kind == b->top[0].kind && strcmp(a->top[0].name, b->top[0].name) == 0;
}

static void cross_spike(struct cross *x, struct splitter *sp[CROSS_SIDES], const struct rec_span *s,
			const struct trace_timer_sample smp[CROSS_SIDES])
{
	struct trace_occupancy occ[CROSS_SIDES];
	for (unsigned b = 0; b < CROSS_SIDES; b++) {
		const struct trace_ev *ev;
		size_t n;
		sp[b]->events(sp[b], s, &ev, &n);
		uint64_t from = smp[b].expiry_ts, to = smp[b].switch_ts;
		if (!n || to < from || trace_explain(ev, n, sp[b]->th->cpu, (int32_t)sp[b]->th->tid, from, to, &occ[b]) < 0)
			return;
	}
	x->spikes++;
	x->same_culprit += same_top(&occ[CROSS_BPF], &occ[CROSS_TRACEFS]);
}

static void cross_thread(uint64_t above_ns, struct cross *x, struct splitter *sp[CROSS_SIDES])
{
	const struct rec_log *log = sp[CROSS_BPF]->th->log;
	for (size_t i = 0; i < log->n; i++) {
		const struct rec_span *s = &log->spans[i];
		struct trace_timer_sample smp[CROSS_SIDES];
		if (sp[CROSS_BPF]->split(sp[CROSS_BPF], s, &smp[CROSS_BPF]) < 0 ||
		    sp[CROSS_TRACEFS]->split(sp[CROSS_TRACEFS], s, &smp[CROSS_TRACEFS]) < 0)
			continue;
		const int64_t *b = smp[CROSS_BPF].part, *t = smp[CROSS_TRACEFS].part;
		bool inferred = smp[CROSS_TRACEFS].flags & TRACE_F_SWITCH_INFERRED;
		x->samples++;
		for (unsigned p = 0; p < TRACE_PARTS; p++)
			if (!inferred || (p != TRACE_PART_WAKEUP && p != TRACE_PART_RETURN))
				cross_add(&x->part[p], b[p], t[p]);
		cross_add(&x->after_waking, b[TRACE_PART_WAKEUP] + b[TRACE_PART_RETURN],
			  t[TRACE_PART_WAKEUP] + t[TRACE_PART_RETURN]);
		if (inferred) {
			cross_add(&x->inferred, b[TRACE_PART_WAKEUP] + b[TRACE_PART_RETURN],
				  t[TRACE_PART_WAKEUP] + t[TRACE_PART_RETURN]);
			int64_t shift = (int64_t)(smp[CROSS_TRACEFS].switch_ts - smp[CROSS_BPF].switch_ts);
			hist_record(&x->shift, shift > 0 ? (uint64_t)shift : 0);
		}
		if (s->to_ns - s->from_ns > above_ns)
			cross_spike(x, sp, s, smp);
	}
}

static json_t *cross_part_json(const struct cross_part *cp)
{
	json_t *o = json_pack("{s:I}", "samples", (json_int_t)cp->samples);
	if (cp->samples) {
		json_object_set_new(o, "bpf_p50_ns", json_integer((json_int_t)hist_percentile(&cp->side[CROSS_BPF], 50.0)));
		json_object_set_new(o, "tracefs_p50_ns",
				    json_integer((json_int_t)hist_percentile(&cp->side[CROSS_TRACEFS], 50.0)));
		json_object_set_new(o, "diff_p50_ns", json_integer((json_int_t)hist_percentile(&cp->diff, 50.0)));
		json_object_set_new(o, "diff_max_ns", json_integer((json_int_t)hist_percentile(&cp->diff, 100.0)));
	}
	return o;
}

static json_t *cross_json(const struct cross *x)
{
	json_t *o = json_object(), *parts = json_object();
	json_object_set_new(o, "samples", json_integer((json_int_t)x->samples));
	for (unsigned p = 0; p < TRACE_PARTS; p++)
		json_object_set_new(parts, trace_part_name((enum trace_part)p), cross_part_json(&x->part[p]));
	json_object_set_new(o, "parts", parts);
	json_t *inf = cross_part_json(&x->inferred);
	if (x->inferred.samples)
		json_object_set_new(inf, "switch_to_exit_p50_ns", json_integer((json_int_t)hist_percentile(&x->shift, 50.0)));
	json_object_set_new(o, "switch_inferred", inf);
	json_object_set_new(o, "after_waking", cross_part_json(&x->after_waking));
	json_object_set_new(o, "spikes", json_integer((json_int_t)x->spikes));
	json_object_set_new(o, "same_culprit", json_integer((json_int_t)x->same_culprit));
	return o;
}

json_t *trace_cross_check(const struct tracerun_thread *threads, size_t n, const struct bpf_collector *bpf,
			  const struct trace_events *ev, uint64_t above_ns)
{
	struct cross *x = calloc(1, sizeof(*x));
	struct splitter *sp[CROSS_SIDES] = { calloc(1, sizeof(struct splitter)), calloc(1, sizeof(struct splitter)) };
	json_t *c = NULL;

	if (x && sp[CROSS_BPF] && sp[CROSS_TRACEFS]) {
		for (size_t i = 0; i < n; i++) {
			const struct bpfcol_cpu *k = bpfcol_cpu(bpf, threads[i].cpu);
			if (!k || threads[i].cpu >= ev->ncpus)
				continue;
			splitter_bpf(sp[CROSS_BPF], &threads[i], k);
			splitter_tracefs(sp[CROSS_TRACEFS], &threads[i], &ev->cpu[threads[i].cpu]);
			cross_thread(above_ns, x, sp);
		}
		c = cross_json(x);
		json_object_set_new(c, "tracefs_events_lost", json_integer((json_int_t)trace_events_lost(ev)));
	}
	free(sp[CROSS_BPF]);
	free(sp[CROSS_TRACEFS]);
	free(x);
	return c;
}
