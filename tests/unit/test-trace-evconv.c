/*
 * One tracefs record to one trace_ev (trace/evconv.h), from event formats
 * recorded on Linux 6.18 (tests/fixtures/trace-formats, copies of
 * /sys/kernel/tracing/events/SYS/NAME/format) and records built by their
 * field offsets, so the conversion is checked without root or tracefs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "skipwhy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "trace/ev.h"
#include "trace/evconv.h"

#if HAVE_TRACEFS

#include <event-parse.h>

static struct tep_handle *tep;
static struct trace_evconv cv;

static void load(const char *sys, const char *name)
{
	char path[512], buf[16384];
	snprintf(path, sizeof(path), "%s/trace-formats/%s.format", LATSCOPE_FIXTURES, name);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	assert_true(n > 0 && n < sizeof(buf));
	assert_int_equal(tep_parse_event(tep, buf, n, sys), 0);
}

static int setup(void **state)
{
	(void)state;
	tep = tep_alloc();
	assert_non_null(tep);
	load("sched", "sched_switch");
	load("sched", "sched_migrate_task");
	load("kvm", "kvm_exit");
	load("kvm", "kvm_entry");
	trace_evconv_init(&cv, tep);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tep_free(tep);
	return 0;
}

/* A record of one event: its header and the fields set with put(). */
struct rec {
	struct tep_event *event;
	unsigned char data[128];
	struct tep_record r;
};

static void put(struct rec *x, const char *field, uint64_t v)
{
	struct tep_format_field *f = tep_find_any_field(x->event, field);
	assert_non_null(f);
	assert_true((size_t)f->offset + (size_t)f->size <= sizeof(x->data));
	unsigned char *p = x->data + f->offset;
	uint8_t v8 = (uint8_t)v;
	uint16_t v16 = (uint16_t)v;
	uint32_t v32 = (uint32_t)v;
	switch (f->size) {
	case 1: memcpy(p, &v8, 1); break;
	case 2: memcpy(p, &v16, 2); break;
	case 4: memcpy(p, &v32, 4); break;
	case 8: memcpy(p, &v, 8); break;
	default: fail_msg("field %s of size %d", field, f->size);
	}
}

static void put_str(struct rec *x, const char *field, const char *s)
{
	struct tep_format_field *f = tep_find_field(x->event, field);
	assert_non_null(f);
	assert_true(strlen(s) < (size_t)f->size);
	memcpy(x->data + f->offset, s, strlen(s) + 1);
}

/* A __data_loc string: its bytes after the fixed part, the field pointing there. */
static void put_loc_str(struct rec *x, const char *field, const char *s, size_t at)
{
	struct tep_format_field *f = tep_find_field(x->event, field);
	assert_non_null(f);
	assert_true(f->flags & TEP_FIELD_IS_DYNAMIC);
	size_t len = strlen(s) + 1;
	assert_true(at + len <= sizeof(x->data));
	memcpy(x->data + at, s, len);
	put(x, field, (uint64_t)(len << 16 | at));
}

static void start(struct rec *x, const char *sys, const char *name, int32_t common_pid)
{
	memset(x, 0, sizeof(*x));
	x->event = tep_find_event_by_name(tep, sys, name);
	assert_non_null(x->event);
	put(x, "common_type", (uint64_t)x->event->id);
	put(x, "common_pid", (uint64_t)(uint32_t)common_pid);
	x->r.ts = 123456789;
	x->r.cpu = 1;
	x->r.data = x->data;
	x->r.size = (int)sizeof(x->data);
}

static struct trace_ev convert(struct rec *x)
{
	struct trace_ev ev;
	assert_true(trace_evconv_record(&cv, x->event, &x->r, 1, &ev));
	assert_int_equal(ev.ts, 123456789);
	assert_int_equal(ev.cpu, 1);
	return ev;
}

/* x, not returned: its record points into it. */
static void switch_rec(struct rec *x, uint64_t prev_state)
{
	start(x, "sched", "sched_switch", 77);
	put_str(x, "prev_comm", "latscope");
	put(x, "prev_pid", 77);
	put(x, "prev_prio", 49);
	put(x, "prev_state", prev_state);
	put_str(x, "next_comm", "kworker/1:2");
	put(x, "next_pid", 33);
	put(x, "next_prio", 120);
}

static void test_a_switch_names_both_tasks_and_marks_prev_sleeping(void **state)
{
	(void)state;
	struct rec x;
	switch_rec(&x, 0x1); /* S */
	struct trace_ev ev = convert(&x);
	assert_int_equal(ev.type, TRACE_EV_SCHED_SWITCH);
	assert_int_equal(ev.pid, 33);
	assert_int_equal(ev.prio, 120);
	assert_string_equal(ev.comm, "kworker/1:2");
	assert_int_equal(ev.prev_pid, 77);
	assert_int_equal(ev.prev_prio, 49);
	assert_string_equal(ev.prev_comm, "latscope");
	assert_true(ev.arg & TRACE_SWITCH_STATE_KNOWN);
	assert_int_equal(ev.arg & TRACE_SWITCH_STATE_MASK, 0x1);
	assert_int_equal(ev.arg2, 0); /* the tracepoint has no policy */
}

static void test_a_preempted_switch_keeps_the_plus_bit_and_no_sleeping_one(void **state)
{
	(void)state;
	struct rec x;
	switch_rec(&x, 0x100); /* TASK_REPORT_MAX: "R+" */
	struct trace_ev ev = convert(&x);
	assert_int_equal(ev.arg, TRACE_SWITCH_STATE_KNOWN | 0x100);
	assert_int_equal(ev.arg & TRACE_SWITCH_STATE_MASK, 0);
}

static void test_a_runnable_switch_is_known_with_state_zero(void **state)
{
	(void)state;
	struct rec x;
	switch_rec(&x, 0);
	assert_int_equal(convert(&x).arg, TRACE_SWITCH_STATE_KNOWN);
}

static void test_a_stopped_prev_shows_in_the_stopped_bits(void **state)
{
	(void)state;
	struct rec x;
	switch_rec(&x, 0x8); /* t: traced */
	struct trace_ev ev = convert(&x);
	assert_true(ev.arg & TRACE_SWITCH_STATE_STOPPED);
}

static void test_kvm_exit_gives_the_vcpu_thread_its_reason_and_isa(void **state)
{
	(void)state;
	struct rec x;
	start(&x, "kvm", "kvm_exit", 4242);
	put(&x, "exit_reason", 30); /* IO_INSTRUCTION */
	put(&x, "isa", 1);	    /* VMX */
	put(&x, "vcpu_id", 3);
	put(&x, "guest_rip", 0xffffffff81000000u);
	struct trace_ev ev = convert(&x);
	assert_int_equal(ev.type, TRACE_EV_KVM_EXIT);
	assert_int_equal(ev.pid, 4242);
	assert_int_equal(ev.arg, 30);
	assert_int_equal(ev.arg2, 1);
}

static void test_kvm_entry_gives_the_vcpu_thread(void **state)
{
	(void)state;
	struct rec x;
	start(&x, "kvm", "kvm_entry", 4243);
	put(&x, "vcpu_id", 1);
	struct trace_ev ev = convert(&x);
	assert_int_equal(ev.type, TRACE_EV_KVM_ENTRY);
	assert_int_equal(ev.pid, 4243);
	assert_int_equal(ev.arg, 0);
}

static void test_a_migration_gives_the_task_and_its_destination_then_origin(void **state)
{
	(void)state;
	struct rec x;
	start(&x, "sched", "sched_migrate_task", 1);
	put(&x, "pid", 555);
	put(&x, "prio", 98);
	put(&x, "orig_cpu", 0);
	put(&x, "dest_cpu", 1);
	put_loc_str(&x, "comm", "qemu-vcpu0", 64); /* __data_loc since Linux 6.10 */
	struct trace_ev ev = convert(&x);
	assert_int_equal(ev.type, TRACE_EV_SCHED_MIGRATE);
	assert_int_equal(ev.pid, 555);
	assert_int_equal(ev.prio, 98);
	assert_string_equal(ev.comm, "qemu-vcpu0");
	assert_int_equal(ev.arg, 1);
	assert_int_equal(ev.arg2, 0);
}

static void test_a_string_past_the_record_is_left_empty(void **state)
{
	(void)state;
	struct rec x;
	start(&x, "sched", "sched_migrate_task", 1);
	put(&x, "pid", 555);
	put_loc_str(&x, "comm", "qemu-vcpu0", 64);
	x.r.size = 70; /* the string runs past it */
	struct trace_ev ev = convert(&x);
	assert_string_equal(ev.comm, "");
	assert_int_equal(ev.pid, 555);
}

static void test_an_event_not_in_the_list_is_not_converted(void **state)
{
	(void)state;
	static const char fmt[] =
		"name: sched_stat_runtime\nID: 999\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:u64 runtime;\toffset:8;\tsize:8;\tsigned:0;\n\n"
		"print fmt: \"runtime=%Lu\", REC->runtime\n";
	assert_int_equal(tep_parse_event(tep, fmt, sizeof(fmt) - 1, "sched"), 0);
	struct rec x;
	start(&x, "sched", "sched_stat_runtime", 1);
	struct trace_ev ev;
	assert_false(trace_evconv_record(&cv, x.event, &x.r, 1, &ev));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_switch_names_both_tasks_and_marks_prev_sleeping),
		cmocka_unit_test(test_a_preempted_switch_keeps_the_plus_bit_and_no_sleeping_one),
		cmocka_unit_test(test_a_runnable_switch_is_known_with_state_zero),
		cmocka_unit_test(test_a_stopped_prev_shows_in_the_stopped_bits),
		cmocka_unit_test(test_kvm_exit_gives_the_vcpu_thread_its_reason_and_isa),
		cmocka_unit_test(test_kvm_entry_gives_the_vcpu_thread),
		cmocka_unit_test(test_a_migration_gives_the_task_and_its_destination_then_origin),
		cmocka_unit_test(test_a_string_past_the_record_is_left_empty),
		cmocka_unit_test(test_an_event_not_in_the_list_is_not_converted),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

#else

static void test_conversion_needs_libtraceevent(void **state)
{
	(void)state;
	skip_because("this build has no tracefs support (built without libtraceevent)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conversion_needs_libtraceevent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
