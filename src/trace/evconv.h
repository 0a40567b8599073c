/*
 * One tracefs record to one struct trace_ev: the reader's (events.c) inner
 * step, apart so that it can be tested with recorded event formats and
 * hand-built records (tests/fixtures/trace-formats).  Internal to trace/;
 * needs libtraceevent (HAVE_TRACEFS).
 */
#ifndef LATSCOPE_TRACE_EVCONV_H
#define LATSCOPE_TRACE_EVCONV_H

#include <stdbool.h>

#include "trace/ev.h"

struct tep_handle;
struct tep_event;
struct tep_format_field;
struct tep_record;

/* Fields looked up once per read: by name per event would dominate the cost.
 * One line a group of fields. */
/* clang-format off */
enum trace_evconv_field {
	TRACE_F_TIMER, TRACE_F_EXPIRES, TRACE_F_SOFTEXPIRES, TRACE_F_NOW, TRACE_F_FUNCTION,
	TRACE_F_PID, TRACE_F_PRIO, TRACE_F_COMM,
	TRACE_F_PREV_PID, TRACE_F_PREV_PRIO, TRACE_F_PREV_COMM, TRACE_F_PREV_STATE,
	TRACE_F_NEXT_PID, TRACE_F_NEXT_PRIO, TRACE_F_NEXT_COMM,
	TRACE_F_IRQ, TRACE_F_NAME, TRACE_F_VEC, TRACE_F_ID,
	TRACE_F_EXIT_REASON, TRACE_F_ISA, TRACE_F_ORIG_CPU, TRACE_F_DEST_CPU,
	TRACE_F_COUNT
};
/* clang-format on */

struct trace_evconv_kind {
	int id; /* tep event id, -1 when not loaded */
	struct tep_format_field *f[TRACE_F_COUNT];
};

struct trace_evconv {
	struct tep_handle *tep;
	struct trace_evconv_kind kinds[TRACE_EV_TYPES]; /* by enum trace_ev_type */
};

/* Look up the events of trace/eventlist.h and their fields in tep's formats. */
void trace_evconv_init(struct trace_evconv *cv, struct tep_handle *tep);

/* rec, an event of type event recorded on cpu, as *ev: true, or false when
 * it is none of trace/eventlist.h's (ev then undefined).  Lost-event markers
 * are the reader's. */
bool trace_evconv_record(const struct trace_evconv *cv, const struct tep_event *event,
			 const struct tep_record *rec, int cpu, struct trace_ev *ev);

#endif
