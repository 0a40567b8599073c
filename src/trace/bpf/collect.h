/*
 * What the BPF collector (collect.bpf.c) and its loader (trace/bpfcol.c)
 * share: the per-CPU state the program keeps and the records it hands user
 * space through its ring buffer.  Included by clang -target bpf too, so only
 * the kernel's __u64 family of types.
 */
#ifndef LATSCOPE_TRACE_BPF_COLLECT_H
#define LATSCOPE_TRACE_BPF_COLLECT_H

#include <linux/types.h>

/* Events kept per sample for a spike's explanation: a quiet wakeup takes
 * about seven; a 2 ms spike behind a busy task a few dozen. */
#define LS_BPF_EV_CAP 64
#define LS_BPF_COMM 16

/* The same numbers as enum trace_ev_type (trace/ev.h; bpfcol.c checks). */
enum ls_bpf_ev_type {
	LS_EV_HRTIMER_START = 1,
	LS_EV_HRTIMER_ENTRY = 2,
	LS_EV_HRTIMER_EXIT = 3,
	LS_EV_SCHED_WAKING = 4,
	LS_EV_SCHED_SWITCH = 6,
	LS_EV_IRQ_ENTRY = 7,
	LS_EV_IRQ_EXIT = 8,
	LS_EV_SOFTIRQ_ENTRY = 9,
	LS_EV_SOFTIRQ_EXIT = 10,
};

/* One kernel event of the measured CPU, fields as trace/ev.h says; a
 * switch's prev_comm is not read (it is the last switch's next). */
struct ls_bpf_ev {
	__u64 ts;
	__u64 arg;
	__u64 timer;
	__s32 pid;
	__s32 prio;
	__s32 prev_pid;
	__s32 prev_prio;
	__u32 type;
	__u32 pad;
	char comm[LS_BPF_COMM];
};

enum ls_bpf_rec_kind {
	LS_REC_SAMPLE = 1,      /* struct ls_bpf_sample: every wakeup */
	LS_REC_DETAIL = 2,      /* struct ls_bpf_detail: a wakeup later than detail_ns */
	LS_REC_BATCH = 3,       /* struct ls_bpf_detail, stream mode: the next LS_BPF_EV_CAP events of a CPU */
};

/* A sample's points, each on CLOCK_MONOTONIC; 0 where the step was not seen. */
struct ls_bpf_sample {
	__u32 kind;
	__u32 cpu;
	__s32 tid;
	__u32 pad;
	__u64 deadline;         /* the sleep's hrtimer softexpires: the thread's D */
	__u64 expiry_now;       /* hrtimer_expire_entry's now */
	__u64 expiry_ts;        /* ... and when the handler ran */
	__u64 waking_ts;        /* sched_waking of the thread inside that expiry */
	__u64 switch_ts;        /* sched_switch to the thread; 0: woken before it left the CPU, none came */
};

/* How late a sample's thread got going: to its switch in, or its waking when
 * no switch came; 0 when neither was after the deadline.  The program and
 * the loader judge a detail by it. */
static inline __u64 ls_sample_late(const struct ls_bpf_sample *s)
{
	__u64 end = s->switch_ts ? s->switch_ts : s->waking_ts;
	return end > s->deadline ? end - s->deadline : 0;
}

/* The events of the measured CPU from the thread's sleep to its switch in. */
struct ls_bpf_detail {
	__u32 kind;
	__u32 cpu;
	__s32 tid;
	__u32 n;                /* events kept in ev[] */
	__u64 deadline;
	__u32 overflow;         /* events past LS_BPF_EV_CAP, not kept */
	__u32 seq;              /* stream mode: the batch's number on its CPU, from 0 */
	struct ls_bpf_ev ev[LS_BPF_EV_CAP];
};

enum ls_bpf_phase {
	LS_PH_RUNNING = 0,      /* the thread runs (or none is measured here): nothing kept */
	LS_PH_ARMED,            /* it armed its sleep's timer */
	LS_PH_EXPIRED,          /* that timer's handler began */
	LS_PH_WOKEN,            /* ... and woke it */
	LS_PH_SWITCHED,         /* it was switched in: the record waits for its next sleep */
};

/* One entry per CPU; tid is written by user space before attaching. */
struct ls_bpf_cpu {
	__s32 tid;              /* the measuring thread on this CPU; 0: none */
	__u32 phase;
	__u64 timer;            /* its sleep's struct hrtimer */
	__u64 expiry_now, expiry_ts, waking_ts, switch_ts;
	__u64 records;          /* handed to user space */
	__u64 lost;             /* not: the ring buffer was full */
	__u64 details_dropped;  /* late samples' events not sent: the ring was half full */
	struct ls_bpf_detail d;
};

#endif
