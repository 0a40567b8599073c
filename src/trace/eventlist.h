/*
 * The kernel trace events latscope records, in one table: which of its event
 * types each becomes when read (trace/ev.h), which group enables it
 * (TRACE_WANT_*, trace/instance.h), and its tracefs system and name.
 */
#ifndef LATSCOPE_TRACE_EVENTLIST_H
#define LATSCOPE_TRACE_EVENTLIST_H

#include <stddef.h>
#include <stdint.h>

struct trace_event_name {
	uint8_t type;                   /* enum trace_ev_type */
	unsigned want;                  /* the TRACE_WANT_* group that enables it */
	const char *sys, *name;
};

extern const struct trace_event_name trace_event_names[];
extern const size_t trace_event_count;
/* The systems of those events, NULL-terminated: all whose formats need loading. */
extern const char *const trace_event_systems[];

#endif
