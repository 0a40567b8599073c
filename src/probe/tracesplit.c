#include "probe/tracesplit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int tracefs_split(struct splitter *sp, const struct rec_span *s, struct trace_timer_sample *smp)
{
	return trace_decompose_timer(sp->ce->ev, sp->ce->n, sp->th->cpu, (int32_t)sp->th->tid, s->from_ns, s->to_ns,
				     smp);
}

static void tracefs_events(struct splitter *sp, const struct rec_span *s, const struct trace_ev **ev, size_t *n)
{
	(void)s;
	*ev = sp->ce->ev;
	*n = sp->ce->n;
}

/* The records come in the order of their deadlines, as the spans do. */
static int bpf_split(struct splitter *sp, const struct rec_span *s, struct trace_timer_sample *smp)
{
	const struct bpfcol_cpu *k = sp->k;

	memset(smp, 0, sizeof(*smp));
	while (sp->next < k->n && k->s[sp->next].deadline < s->from_ns)
		sp->next++;
	if (sp->next == k->n || k->s[sp->next].deadline != s->from_ns)
		return -ENOENT;
	const struct ls_bpf_sample *r = &k->s[sp->next++];
	if (!r->expiry_ts || !r->waking_ts) {
		smp->flags = r->expiry_ts ? TRACE_F_NO_WAKING : TRACE_F_NO_EXPIRY;
		return -ENOENT;
	}
	/* No switch: woken before it left the CPU, the thread ran on from its waking. */
	if (!r->switch_ts)
		return trace_timer_parts(r->deadline, r->expiry_now, r->expiry_ts, r->waking_ts, r->waking_ts, s->to_ns,
					 TRACE_F_SWITCH_INFERRED, smp);
	return trace_timer_parts(r->deadline, r->expiry_now, r->expiry_ts, r->waking_ts, r->switch_ts, s->to_ns, 0, smp);
}

static void bpf_events(struct splitter *sp, const struct rec_span *s, const struct trace_ev **ev, size_t *n)
{
	const struct ls_bpf_detail *d = NULL;

	*ev = sp->scratch;
	*n = 0;
	for (size_t i = 0; i < sp->k->nd && !d; i++)
		if (sp->k->d[i].d.deadline == s->from_ns)
			d = &sp->k->d[i].d;
	if (!d)
		return;
	size_t m = d->n < LS_BPF_EV_CAP ? d->n : LS_BPF_EV_CAP;
	char last_next[LS_BPF_COMM] = "";       /* the collector leaves prev_comm to us: the last switch's next */
	for (size_t i = 0; i < m; i++)
		bpfcol_event(&d->ev[i], sp->th->cpu, last_next, &sp->scratch[i]);
	if (d->overflow && m) {
		/* What came after the last kept event is not known: said where it begins. */
		sp->scratch[m] = (struct trace_ev){ .ts = sp->scratch[m - 1u].ts + 1u, .type = TRACE_EV_LOST,
						    .arg = d->overflow, .cpu = (uint8_t)sp->th->cpu };
		m++;
	}
	*n = m;
}

void splitter_tracefs(struct splitter *sp, const struct tracerun_thread *th, const struct trace_cpu_events *ce)
{
	sp->split = tracefs_split;
	sp->events = tracefs_events;
	sp->th = th;
	sp->ce = ce;
	sp->k = NULL;
	sp->next = 0;
}

void splitter_bpf(struct splitter *sp, const struct tracerun_thread *th, const struct bpfcol_cpu *k)
{
	sp->split = bpf_split;
	sp->events = bpf_events;
	sp->th = th;
	sp->ce = NULL;
	sp->k = k;
	sp->next = 0;
}
