/* What the host did to a vCPU thread (src/host/explain.c), over synthetic host event streams with known answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "core/nstime.h"
#include "host/exitreason.h"
#include "host/explain.h"
#include "host/explain_json.h"

#define T0 (UINT64_C(100) * NS_PER_SEC)
#define MS(x) (T0 + (uint64_t)llround((x) * 1e6))       /* T0 plus x ms, x up to 6 decimals */
#define RUNNABLE (TRACE_SWITCH_STATE_KNOWN | 0x100u)   /* prev_state "R+": preempted */
#define ASLEEP   (TRACE_SWITCH_STATE_KNOWN | 0x1u)     /* prev_state "S" */

struct task {
	int32_t pid, prio, policy;      /* policy -1: the collector did not say */
	const char *comm;
};

static const struct task vcpu1 = { 4242, 120, 0, "CPU 1/KVM" };
static const struct task vcpu0 = { 4241, 120, 0, "CPU 0/KVM" };
static const struct task hog = { 999, 49, 1, "stress-ng" };     /* SCHED_FIFO 50 */
static const struct task kworker = { 77, 120, 0, "kworker/3:1" };
static const struct task idle = { 0, 120, -1, "swapper/3" };

static struct trace_ev ev[64];
static size_t nev;

static int reset(void **state)
{
	(void)state;
	memset(ev, 0, sizeof(ev));
	nev = 0;
	return 0;
}

static void put_switch(uint64_t ts, unsigned cpu, const struct task *prev, uint64_t prev_state, const struct task *next)
{
	struct trace_ev *e = &ev[nev++];
	*e = (struct trace_ev){ .ts = ts, .type = TRACE_EV_SCHED_SWITCH, .cpu = (uint8_t)cpu, .pid = next->pid,
				.prio = next->prio, .prev_pid = prev->pid, .prev_prio = prev->prio, .arg = prev_state,
				.arg2 = next->policy >= 0 ? TRACE_SWITCH_POLICY_KNOWN | (uint64_t)next->policy : 0 };
	strcpy(e->comm, next->comm);
	strcpy(e->prev_comm, prev->comm);
}

static void put(uint64_t ts, unsigned cpu, enum trace_ev_type type, int32_t pid, uint64_t arg, uint64_t arg2)
{
	ev[nev++] = (struct trace_ev){ .ts = ts, .type = (uint8_t)type, .cpu = (uint8_t)cpu, .pid = pid, .arg = arg,
				       .arg2 = arg2 };
}

/* vcpu1 runs on CPU 3 from 0 ms, `who` preempts it from 10 ms to back_ms, it sleeps at 60 ms. */
static void preempted_by(const struct task *who, double back_ms)
{
	put_switch(MS(0), 3, &idle, 0, &vcpu1);
	put_switch(MS(10), 3, &vcpu1, RUNNABLE, who);
	put_switch(MS(back_ms), 3, who, ASLEEP, &vcpu1);
	put_switch(MS(60), 3, &vcpu1, ASLEEP, &idle);
}

/* The answer about vcpu1 over [from, to] ms after T0. */
static struct host_answer ask(double from, double to)
{
	const struct host_query q = { .tid = vcpu1.pid, .vcpu = -1, .from = MS(from), .to = MS(to) };
	struct host_answer a;
	assert_int_equal(host_explain(ev, nev, &q, &a), 0);
	uint64_t sum = 0;
	for (unsigned s = 0; s < HOST_STATES; s++)
		sum += a.state_ns[s];
	assert_int_equal(sum, q.to - q.from);          /* every ns of the interval in one state */
	return a;
}

static void assert_line(const struct host_answer *a, const char *want)
{
	char line[256];
	host_answer_line(a, line, sizeof(line));
	assert_string_equal(line, want);
}

static void test_a_vcpu_preempted_by_a_fifo_task_for_30ms_names_it_and_its_time_exactly(void **state)
{
	(void)state;
	preempted_by(&hog, 40);
	const struct host_answer a = ask(5, 50);
	assert_true(a.covered);
	assert_int_equal(a.state_ns[HOST_ST_PREEMPTED], 30 * NS_PER_MS);
	assert_int_equal(a.state_ns[HOST_ST_GUEST], 15 * NS_PER_MS);
	assert_int_equal(a.not_running_ns, 30 * NS_PER_MS);
	assert_int_equal(a.q.vcpu, 1);
	assert_int_equal(a.nran, 1);
	assert_int_equal(a.ran[0].kind, HOST_RAN_TASK);
	assert_int_equal(a.ran[0].id, 999);
	assert_int_equal(a.ran[0].ns, 30 * NS_PER_MS);
	assert_int_equal(a.ran[0].policy, 1);
	assert_int_equal(a.ran[0].cpu, 3);
	assert_int_equal(a.nstretches, 3);
	assert_int_equal(a.stretch[1].state, HOST_ST_PREEMPTED);
	assert_int_equal(a.stretch[1].from, MS(10));
	assert_int_equal(a.stretch[1].to, MS(40));
	assert_line(&a, "the host: vCPU 1 (pid 4242, 'CPU 1/KVM') not running for 30ms, "
			"host CPU 3 ran stress-ng (pid 999, FIFO 50) for 30ms");
}

static void test_a_preemption_shared_by_two_tasks_renders_the_larger_one(void **state)
{
	(void)state;
	put_switch(MS(0), 3, &idle, 0, &vcpu1);
	put_switch(MS(10), 3, &vcpu1, RUNNABLE, &kworker);
	put_switch(MS(10.2), 3, &kworker, ASLEEP, &hog);
	put_switch(MS(22.1), 3, &hog, ASLEEP, &vcpu1);
	put_switch(MS(60), 3, &vcpu1, ASLEEP, &idle);
	const struct host_answer a = ask(5, 50);
	assert_int_equal(a.nran, 2);
	assert_int_equal(a.ran[1].id, 77);
	assert_int_equal(a.ran[1].ns, 200 * NS_PER_US);
	assert_line(&a, "the host: vCPU 1 (pid 4242, 'CPU 1/KVM') not running for 12.1ms, "
			"host CPU 3 ran stress-ng (pid 999, FIFO 50) for 11.9ms");
}

/* Asleep from 10 ms, the hog running meanwhile, woken and back at 45 ms: with prev_state, or told by the wakeup. */
static void test_a_vcpu_that_slept_is_halted_not_blamed_on_what_ran(void **state)
{
	const uint64_t states[] = { ASLEEP, 0 };
	for (unsigned k = 0; k < 2; k++) {
		reset(state);
		put_switch(MS(0), 3, &idle, 0, &vcpu1);
		put_switch(MS(10), 3, &vcpu1, states[k], &hog);
		put_switch(MS(40), 3, &hog, ASLEEP, &idle);
		put(MS(45), 3, TRACE_EV_SCHED_WAKING, vcpu1.pid, 0, 0);
		put_switch(MS(45), 3, &idle, 0, &vcpu1);
		put_switch(MS(60), 3, &vcpu1, ASLEEP, &idle);
		const struct host_answer a = ask(5, 50);
		assert_int_equal(a.state_ns[HOST_ST_HALTED], 35 * NS_PER_MS);
		assert_int_equal(a.state_ns[HOST_ST_PREEMPTED], 0);
		assert_int_equal(a.nran, 0);
		assert_int_equal(a.inferred, states[k] == 0);
		assert_line(&a, "the host: vCPU 1 halted (the guest was idle)");
	}
}

static void test_switched_out_with_no_wakeup_before_its_return_is_preempted(void **state)
{
	(void)state;
	put_switch(MS(0), 3, &idle, 0, &vcpu1);
	put_switch(MS(10), 3, &vcpu1, 0, &hog);            /* prev_state not collected */
	put_switch(MS(40), 3, &hog, 0, &vcpu1);
	put_switch(MS(60), 3, &vcpu1, 0, &idle);
	const struct host_answer a = ask(5, 50);
	assert_int_equal(a.state_ns[HOST_ST_PREEMPTED], 30 * NS_PER_MS);
	assert_true(a.inferred);
	assert_int_equal(a.ran[0].id, 999);
}

static void test_exits_between_kvm_exit_and_kvm_entry_are_summed_by_reason(void **state)
{
	(void)state;
	put_switch(MS(0), 3, &idle, 0, &vcpu1);
	put(MS(0.1), 3, TRACE_EV_KVM_ENTRY, vcpu1.pid, 0, 0);
	put(MS(10), 3, TRACE_EV_KVM_EXIT, vcpu1.pid, 48, HOST_ISA_VMX);           /* EPT_VIOLATION */
	put(MS(10.9), 3, TRACE_EV_KVM_ENTRY, vcpu1.pid, 0, 0);
	put(MS(20), 3, TRACE_EV_KVM_EXIT, vcpu1.pid, 48, HOST_ISA_VMX);
	put(MS(21), 3, TRACE_EV_KVM_ENTRY, vcpu1.pid, 0, 0);
	put(MS(30), 3, TRACE_EV_KVM_EXIT, vcpu1.pid, 32, HOST_ISA_VMX);           /* MSR_WRITE */
	put(MS(30.2), 3, TRACE_EV_KVM_ENTRY, vcpu1.pid, 0, 0);
	put(MS(60), 3, TRACE_EV_KVM_EXIT, vcpu1.pid, 1, HOST_ISA_VMX);
	const struct host_answer a = ask(5, 50);
	assert_true(a.kvm);
	assert_int_equal(a.in_host_ns, 2100 * NS_PER_US);
	assert_int_equal(a.state_ns[HOST_ST_GUEST], 45 * NS_PER_MS - 2100 * NS_PER_US);
	assert_int_equal(a.exits_total, 3);
	assert_int_equal(a.nexits, 2);
	assert_int_equal(a.exits[0].reason, 48);
	assert_int_equal(a.exits[0].count, 2);
	assert_int_equal(a.exits[0].ns, 1900 * NS_PER_US);
	assert_int_equal(a.exits[1].reason, 32);
	assert_int_equal(a.exits[1].ns, 200 * NS_PER_US);
	assert_line(&a, "the host: vCPU 1 running but in the host for 2.1ms: 3 exits, EPT_VIOLATION 1.9ms");
}

static void test_a_halt_exit_polling_then_asleep_is_halted_not_time_in_the_host(void **state)
{
	(void)state;
	put_switch(MS(0), 3, &idle, 0, &vcpu1);
	put(MS(10), 3, TRACE_EV_KVM_EXIT, vcpu1.pid, 12, HOST_ISA_VMX);           /* HLT */
	put_switch(MS(10.2), 3, &vcpu1, ASLEEP, &hog);      /* polled 0.2 ms, then slept */
	put_switch(MS(40), 3, &hog, ASLEEP, &idle);
	put(MS(40), 3, TRACE_EV_SCHED_WAKING, vcpu1.pid, 0, 0);
	put_switch(MS(40), 3, &idle, 0, &vcpu1);
	put(MS(40.05), 3, TRACE_EV_KVM_ENTRY, vcpu1.pid, 0, 0);
	put(MS(60), 3, TRACE_EV_KVM_EXIT, vcpu1.pid, 1, HOST_ISA_VMX);
	const struct host_answer a = ask(5, 50);
	assert_int_equal(a.state_ns[HOST_ST_HALTED], 30050 * NS_PER_US);
	assert_int_equal(a.in_host_ns, 0);
	assert_int_equal(a.exits[0].reason, 12);
	assert_int_equal(a.exits[0].ns, 250 * NS_PER_US);   /* on the CPU after it: polling and the way back */
	assert_line(&a, "the host: vCPU 1 halted (the guest was idle)");
}

static void test_exit_reasons_carry_the_kernels_names_for_vmx_and_svm(void **state)
{
	(void)state;
	assert_string_equal(host_exit_reason_name(HOST_ISA_VMX, 48), "EPT_VIOLATION");
	assert_string_equal(host_exit_reason_name(HOST_ISA_VMX, 12), "HLT");
	assert_string_equal(host_exit_reason_name(HOST_ISA_VMX, 0x80000021u), "INVALID_STATE");  /* failed entry */
	assert_string_equal(host_exit_reason_name(HOST_ISA_SVM, 0x400), "npf");
	assert_string_equal(host_exit_reason_name(HOST_ISA_SVM, 0x078), "hlt");
	assert_string_equal(host_exit_reason_name(HOST_ISA_SVM, UINT64_MAX), "invalid_guest_state");
	assert_null(host_exit_reason_name(HOST_ISA_VMX, 17));
	assert_null(host_exit_reason_name(3, 48));
}

static void test_an_interval_whose_start_the_events_no_longer_cover_says_so(void **state)
{
	(void)state;
	put_switch(MS(20), 3, &vcpu1, RUNNABLE, &hog);    /* the ring's oldest event */
	put_switch(MS(40), 3, &hog, ASLEEP, &vcpu1);
	put_switch(MS(60), 3, &vcpu1, ASLEEP, &idle);
	const struct host_answer a = ask(5, 50);
	assert_false(a.covered);
	assert_int_equal(a.covered_from, MS(20));
	assert_int_equal(a.state_ns[HOST_ST_UNKNOWN], 15 * NS_PER_MS);
	assert_int_equal(a.state_ns[HOST_ST_PREEMPTED], 20 * NS_PER_MS);
	assert_line(&a, "the host: vCPU 1: the host's events begin 15ms after the interval's start");
}

static void test_events_lost_inside_the_interval_are_said(void **state)
{
	(void)state;
	put_switch(MS(0), 3, &idle, 0, &vcpu1);
	put(MS(20), 3, TRACE_EV_LOST, 0, 12, 0);
	put_switch(MS(60), 3, &vcpu1, ASLEEP, &idle);
	const struct host_answer a = ask(5, 50);
	assert_false(a.covered);
	assert_int_equal(a.lost, 12);
	assert_line(&a, "the host: vCPU 1: the host lost 12 events in the interval");
}

static void test_another_vcpu_thread_running_instead_is_named_as_a_vcpu(void **state)
{
	(void)state;
	preempted_by(&vcpu0, 25);
	const struct host_answer a = ask(5, 50);
	assert_int_equal(a.ran[0].kind, HOST_RAN_VCPU);
	assert_int_equal(a.ran[0].id, 4241);
	assert_line(&a, "the host: vCPU 1 (pid 4242, 'CPU 1/KVM') not running for 15ms, "
			"host CPU 3 ran vCPU thread 'CPU 0/KVM' (pid 4241, nice 0) for 15ms");
}

static void test_a_migration_is_counted_from_its_event_or_from_a_switch_in_elsewhere(void **state)
{
	(void)state;
	put_switch(MS(0), 3, &idle, 0, &vcpu1);
	put_switch(MS(10), 3, &vcpu1, RUNNABLE, &hog);
	put(MS(12), 3, TRACE_EV_SCHED_MIGRATE, vcpu1.pid, 2, 3);
	put_switch(MS(13), 2, &idle, 0, &vcpu1);
	put_switch(MS(20), 2, &vcpu1, RUNNABLE, &kworker);
	put_switch(MS(21.5), 1, &idle, 0, &vcpu1);        /* no migrate event traced */
	put_switch(MS(60), 1, &vcpu1, ASLEEP, &idle);
	const struct host_answer a = ask(5, 50);
	assert_int_equal(a.migrations, 2);
	assert_int_equal(a.migration[0].ts, MS(12));
	assert_int_equal(a.migration[0].from_cpu, 3);
	assert_int_equal(a.migration[0].to_cpu, 2);
	assert_int_equal(a.migration[1].ts, MS(21.5));
	assert_int_equal(a.migration[1].from_cpu, 2);
	assert_int_equal(a.migration[1].to_cpu, 1);
	assert_int_equal(a.state_ns[HOST_ST_PREEMPTED], 4500 * NS_PER_US);
	assert_int_equal(a.ran[0].id, 999);                 /* 2 ms on CPU 3 before the move */
	assert_int_equal(a.ran[0].ns, 2 * NS_PER_MS);
}

static void test_the_answer_survives_its_json(void **state)
{
	(void)state;
	put_switch(MS(0), 3, &idle, 0, &vcpu1);
	put(MS(1), 3, TRACE_EV_KVM_EXIT, vcpu1.pid, 0x400, HOST_ISA_SVM);
	put_switch(MS(10), 3, &vcpu1, RUNNABLE, &hog);
	put_switch(MS(40), 3, &hog, ASLEEP, &vcpu1);
	put(MS(41), 3, TRACE_EV_KVM_ENTRY, vcpu1.pid, 0, 0);
	put_switch(MS(60), 3, &vcpu1, ASLEEP, &idle);
	const struct host_answer a = ask(0.5, 50);
	json_t *j = host_answer_to_json(&a);
	assert_non_null(j);
	struct host_answer b;
	struct lat_error err = { .msg = "" };
	assert_int_equal(host_answer_from_json(j, &b, &err), 0);
	json_decref(j);
	assert_memory_equal(b.state_ns, a.state_ns, sizeof(a.state_ns));
	assert_int_equal(b.nstretches, a.nstretches);
	for (unsigned i = 0; i < a.nstretches; i++) {
		assert_int_equal(b.stretch[i].from, a.stretch[i].from);
		assert_int_equal(b.stretch[i].to, a.stretch[i].to);
		assert_int_equal(b.stretch[i].state, a.stretch[i].state);
		assert_int_equal(b.stretch[i].cpu, a.stretch[i].cpu);
	}
	assert_int_equal(b.nran, a.nran);
	assert_int_equal(b.ran[0].ns, a.ran[0].ns);
	assert_int_equal(b.ran[0].policy, a.ran[0].policy);
	assert_string_equal(b.ran[0].comm, a.ran[0].comm);
	assert_int_equal(b.nexits, 1);
	assert_int_equal(b.exits[0].reason, 0x400);
	assert_int_equal(b.exits[0].ns, a.exits[0].ns);
	assert_int_equal(b.exits[0].isa, HOST_ISA_SVM);
	char la[256], lb[256];
	host_answer_line(&a, la, sizeof(la));
	host_answer_line(&b, lb, sizeof(lb));
	assert_string_equal(la, lb);
	json_t *bad = json_pack("{s:i}", "tid", 4242);
	assert_int_equal(host_answer_from_json(bad, &b, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "host answer: "));
	json_decref(bad);
}

static void test_vcpu_threads_are_known_by_their_names(void **state)
{
	(void)state;
	assert_int_equal(host_vcpu_of_comm("CPU 1/KVM"), 1);
	assert_int_equal(host_vcpu_of_comm("CPU 12/TCG"), 12);
	assert_int_equal(host_vcpu_of_comm("fc_vcpu 3"), 3);
	assert_int_equal(host_vcpu_of_comm("vcpu7"), 7);
	assert_int_equal(host_vcpu_of_comm("CPU 1/KVMX"), -1);
	assert_int_equal(host_vcpu_of_comm("stress-ng"), -1);
	assert_int_equal(host_vcpu_of_comm(""), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_a_vcpu_preempted_by_a_fifo_task_for_30ms_names_it_and_its_time_exactly, reset),
		cmocka_unit_test_setup(test_a_preemption_shared_by_two_tasks_renders_the_larger_one, reset),
		cmocka_unit_test_setup(test_a_vcpu_that_slept_is_halted_not_blamed_on_what_ran, reset),
		cmocka_unit_test_setup(test_switched_out_with_no_wakeup_before_its_return_is_preempted, reset),
		cmocka_unit_test_setup(test_exits_between_kvm_exit_and_kvm_entry_are_summed_by_reason, reset),
		cmocka_unit_test_setup(test_a_halt_exit_polling_then_asleep_is_halted_not_time_in_the_host, reset),
		cmocka_unit_test_setup(test_exit_reasons_carry_the_kernels_names_for_vmx_and_svm, reset),
		cmocka_unit_test_setup(test_an_interval_whose_start_the_events_no_longer_cover_says_so, reset),
		cmocka_unit_test_setup(test_events_lost_inside_the_interval_are_said, reset),
		cmocka_unit_test_setup(test_another_vcpu_thread_running_instead_is_named_as_a_vcpu, reset),
		cmocka_unit_test_setup(test_a_migration_is_counted_from_its_event_or_from_a_switch_in_elsewhere, reset),
		cmocka_unit_test_setup(test_the_answer_survives_its_json, reset),
		cmocka_unit_test_setup(test_vcpu_threads_are_known_by_their_names, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
