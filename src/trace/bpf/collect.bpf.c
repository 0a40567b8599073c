// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * latscope's --trace in the kernel: each timer sample of the measuring
 * threads split where it happens, one record per sample.
 *
 * Per CPU (the threads are pinned), from the thread arming its sleep's
 * hrtimer to the switch back to it, the program notes the expiry of that
 * timer, the waking of the thread inside it and the switch; when the thread
 * arms its next sleep, after its clock read and off the path it measures, it
 * hands user space one struct ls_bpf_sample.  In between it keeps the CPU's
 * events (tasks switched, interrupts, softirqs, timer callbacks) in the CPU's
 * map entry, and hands them over too for a sample later than detail_ns, to
 * explain it.  The last sample's record is still in the map when the run
 * ends: the loader reads it from there.  Events of a CPU without a measuring thread, or while the
 * thread runs, cost a map lookup and a compare.  Times are
 * bpf_ktime_get_ns(): CLOCK_MONOTONIC, the thread's own clock.
 *
 * GPL: the kernel lets only GPL programs call bpf_probe_read_kernel_str.
 */
#include "ktypes.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "collect.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before loading. */
const volatile __u64 detail_ns = ~0ULL;
const volatile __u32 stream = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);         /* the loader sets the possible CPUs */
	__type(key, __u32);
	__type(value, struct ls_bpf_cpu);
} cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);   /* the loader sizes it */
} records SEC(".maps");

static __always_inline struct ls_bpf_cpu *this_cpu(void)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct ls_bpf_cpu *s = bpf_map_lookup_elem(&cpus, &cpu);
	return s && s->tid ? s : 0;
}

/* Never waits and never wakes the reader (it polls): no cost on this path
 * beyond the copy, and a full ring is counted, not waited for. */
static __always_inline void hand_over(struct ls_bpf_cpu *s, void *rec, __u64 size)
{
	if (bpf_ringbuf_output(&records, rec, size, BPF_RB_NO_WAKEUP) == 0)
		s->records++;
	else
		s->lost++;
}

/* The next event slot while the thread sleeps (stream mode: always, a full
 * batch handed over first); NULL when full (counted). */
static __always_inline struct ls_bpf_ev *keep(struct ls_bpf_cpu *s, __u32 type)
{
	if (!stream && (s->phase == LS_PH_RUNNING || s->phase == LS_PH_SWITCHED))
		return 0;
	/* Claimed atomically: an interrupt's program may run inside a softirq's. */
	__u32 i = __sync_fetch_and_add(&s->d.n, 1);
	if (i == LS_BPF_EV_CAP && stream) {
		/* the one that found the batch full hands it over */
		s->d.kind = LS_REC_BATCH;
		s->d.cpu = bpf_get_smp_processor_id();
		s->d.tid = s->tid;
		s->d.n = LS_BPF_EV_CAP;
		hand_over(s, &s->d, sizeof(s->d));
		s->d.seq++;
		s->d.n = 1;
		i = 0;
	}
	if (i >= LS_BPF_EV_CAP) {
		s->d.n = LS_BPF_EV_CAP;
		s->d.overflow++;
		return 0;
	}
	struct ls_bpf_ev *e = &s->d.ev[i];
	e->ts = bpf_ktime_get_ns();
	e->type = type;
	e->arg = 0;
	e->timer = 0;
	e->pid = 0;
	e->prio = 0;
	e->prev_pid = 0;
	e->prev_prio = 0;
	e->comm[0] = 0;
	return e;
}

/* A task's comm in two loads: no helper call on the measured path. */
static __always_inline void comm_of(char *dst, struct task_struct *p)
{
	__u64 *d = (__u64 *)dst;
	d[0] = *(__u64 *)&p->comm[0];
	d[1] = *(__u64 *)&p->comm[8];
}


/* The last sample's points to user space, as the thread sleeps again;
 * switch_ts 0 when it was woken before it left the CPU, so no switch to it
 * came (or, with no waking either, the sample is not split). */
static __always_inline void sample_done(struct ls_bpf_cpu *s, __u64 switch_ts)
{
	struct ls_bpf_sample smp = {
		.kind = LS_REC_SAMPLE,
		.cpu = bpf_get_smp_processor_id(),
		.tid = s->tid,
		.deadline = s->d.deadline,
		.expiry_now = s->expiry_now,
		.expiry_ts = s->expiry_ts,
		.waking_ts = s->waking_ts,
		.switch_ts = switch_ts,
	};
	hand_over(s, &smp, sizeof(smp));
	/* A detail is 65 sample records' worth: sent only while the ring is
	 * less than half full, so the samples' own records always get in. */
	if (ls_sample_late(&smp) <= detail_ns) {
		/* on time: no detail */
	} else if (bpf_ringbuf_query(&records, BPF_RB_AVAIL_DATA) > bpf_ringbuf_query(&records, BPF_RB_RING_SIZE) / 2) {
		s->details_dropped++;
	} else {
		s->d.kind = LS_REC_DETAIL;
		s->d.cpu = smp.cpu;
		s->d.tid = s->tid;
		hand_over(s, &s->d, sizeof(s->d));
	}
	s->phase = LS_PH_RUNNING;
}

SEC("tp_btf/hrtimer_start")
int BPF_PROG(on_hrtimer_start, struct hrtimer *t)
{
	struct ls_bpf_cpu *s = this_cpu();
	if (!s)
		return 0;
	/* The thread's own sleep: a sleeper's timer whose task is the thread
	 * (it also starts other hrtimers, the RT period timer among them). */
	if (!stream && (__s32)bpf_get_current_pid_tgid() == s->tid &&
	    BPF_CORE_READ((struct hrtimer_sleeper *)t, task) == (struct task_struct *)bpf_get_current_task()) {
		/* The last sleep's record: switched in, or woken before it left the
		 * CPU.  A sleep cut short with no expiry (a signal, a preemption
		 * before it slept) is sleeping again: no record, the thread retries. */
		if (s->phase == LS_PH_SWITCHED || s->phase == LS_PH_WOKEN)
			sample_done(s, s->phase == LS_PH_SWITCHED ? s->switch_ts : 0);
		/* A new sleep: what was kept for the last one is over. */
		s->phase = LS_PH_ARMED;
		s->timer = (__u64)t;
		s->d.deadline = (__u64)t->_softexpires;
		s->d.n = 0;
		s->d.overflow = 0;
		s->expiry_now = s->expiry_ts = s->waking_ts = s->switch_ts = 0;
	}
	struct ls_bpf_ev *e = keep(s, LS_EV_HRTIMER_START);
	if (e) {
		e->pid = (__s32)bpf_get_current_pid_tgid();
		e->timer = (__u64)t;
		e->arg = (__u64)t->_softexpires;
	}
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(on_hrtimer_entry, struct hrtimer *t, __s64 *now)
{
	struct ls_bpf_cpu *s = this_cpu();
	if (!s)
		return 0;
	struct ls_bpf_ev *e = keep(s, LS_EV_HRTIMER_ENTRY);
	if (e)
		e->timer = (__u64)t;
	/* The expiry clock's "now" only for the thread's own timer: the
	 * explanations read the events' times, the split reads this. */
	if (!stream && s->phase == LS_PH_ARMED && s->timer == (__u64)t) {
		__s64 n = 0;
		bpf_probe_read_kernel(&n, sizeof(n), now);
		s->phase = LS_PH_EXPIRED;
		s->expiry_now = (__u64)n;
		s->expiry_ts = e ? e->ts : bpf_ktime_get_ns();
		if (e)
			e->arg = (__u64)n;
	}
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(on_hrtimer_exit, struct hrtimer *t)
{
	struct ls_bpf_cpu *s = this_cpu();
	if (!s)
		return 0;
	struct ls_bpf_ev *e = keep(s, LS_EV_HRTIMER_EXIT);
	if (e)
		e->timer = (__u64)t;
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(on_sched_waking, struct task_struct *p)
{
	struct ls_bpf_cpu *s = this_cpu();
	if (!s)
		return 0;
	struct ls_bpf_ev *e = keep(s, LS_EV_SCHED_WAKING);
	if (e) {
		e->pid = p->pid;
		e->prio = p->prio;
		e->prev_pid = (__s32)bpf_get_current_pid_tgid();
		comm_of(e->comm, p);
	}
	if (!stream && s->phase == LS_PH_EXPIRED && p->pid == s->tid) {
		s->phase = LS_PH_WOKEN;
		s->waking_ts = e ? e->ts : bpf_ktime_get_ns();
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct ls_bpf_cpu *s = this_cpu();
	if (!s)
		return 0;
	struct ls_bpf_ev *e = keep(s, LS_EV_SCHED_SWITCH);
	__u64 now = e ? e->ts : bpf_ktime_get_ns();
	if (e) {
		e->pid = next->pid;
		e->prio = next->prio;
		e->prev_pid = prev->pid;
		e->prev_prio = prev->prio;
		comm_of(e->comm, next);         /* prev's is the last switch's next: user space fills it */
	}
	/* The switch that ends a sample is the first after its waking: before
	 * it, the thread came back from a preemption on its way to sleep. */
	if (!stream && s->phase == LS_PH_WOKEN && next->pid == s->tid) {
		s->switch_ts = now;
		s->phase = LS_PH_SWITCHED;
	}
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(on_irq_entry, int irq, struct irqaction *action)
{
	struct ls_bpf_cpu *s = this_cpu();
	struct ls_bpf_ev *e = s ? keep(s, LS_EV_IRQ_ENTRY) : 0;
	if (e) {
		e->pid = irq;
		bpf_probe_read_kernel_str(&e->comm, sizeof(e->comm), BPF_CORE_READ(action, name));
	}
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(on_irq_exit, int irq)
{
	struct ls_bpf_cpu *s = this_cpu();
	struct ls_bpf_ev *e = s ? keep(s, LS_EV_IRQ_EXIT) : 0;
	if (e)
		e->pid = irq;
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(on_softirq_entry, unsigned int vec)
{
	struct ls_bpf_cpu *s = this_cpu();
	struct ls_bpf_ev *e = s ? keep(s, LS_EV_SOFTIRQ_ENTRY) : 0;
	if (e)
		e->pid = (__s32)vec;
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(on_softirq_exit, unsigned int vec)
{
	struct ls_bpf_cpu *s = this_cpu();
	struct ls_bpf_ev *e = s ? keep(s, LS_EV_SOFTIRQ_EXIT) : 0;
	if (e)
		e->pid = (__s32)vec;
	return 0;
}
