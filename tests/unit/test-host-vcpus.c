/*
 * Finding a VM's vCPU threads (src/host/vcpus.c, find.c, qmp.c) in a fake
 * /proc: QEMU with debug-threads, Firecracker, Cloud Hypervisor, a process
 * that is no VM, names that match none or two; --vcpu lists; canned QMP.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "systree.h"

#include "core/array.h"
#include "host/find.h"
#include "host/qmp.h"
#include "host/vcpus.h"

static const struct systree_file tree[] = {
	{ "proc/4242/comm", "qemu-system-x86\n" },
	{ "proc/4242/status", "Name:\tqemu-system-x86\nTgid:\t4242\nPid:\t4242\n" },
	{ "proc/4242/task/4242/comm", "qemu-system-x86\n" },
	{ "proc/4242/task/4250/comm", "CPU 0/KVM\n" },
	{ "proc/4242/task/4251/comm", "CPU 1/KVM\n" },
	{ "proc/4242/task/4260/comm", "IO mon_iothread\n" },
	{ "proc/4250/status", "Name:\tCPU 0/KVM\nTgid:\t4242\nPid:\t4250\n" },
	{ "proc/5000/comm", "firecracker\n" },
	{ "proc/5000/status", "Tgid:\t5000\n" },
	{ "proc/5000/task/5000/comm", "firecracker\n" },
	{ "proc/5000/task/5002/comm", "fc_vcpu 1\n" },
	{ "proc/5000/task/5001/comm", "fc_vcpu 0\n" },
	{ "proc/6000/comm", "cloud-hyperviso\n" },
	{ "proc/6000/status", "Tgid:\t6000\n" },
	{ "proc/6000/task/6003/comm", "vcpu0\n" },
	{ "proc/7000/comm", "dup\n" },
	{ "proc/7000/status", "Tgid:\t7000\n" },
	{ "proc/7001/comm", "qemu-system-x86\n" },
	{ "proc/7001/status", "Tgid:\t7001\n" },
	{ "proc/8000/comm", "bash\n" },
	{ "proc/8000/status", "Tgid:\t8000\n" },
	{ "proc/8000/task/8000/comm", "bash\n" },
	{ NULL, NULL },
};

/* Command lines hold NULs, which systree's text cannot. */
static void write_args(const char *root, const char *pid, const char *args, size_t len)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/proc/%s/cmdline", root, pid);
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(args, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	static char root[64];
	static const char qemu[] = "qemu-system-x86_64\0-name\0guest=vm1,debug-threads=on\0-smp\0002";
	static const char other[] = "qemu-system-x86_64\0-name\0dup";

	systree_make(root, tree);
	write_args(root, "4242", qemu, sizeof(qemu));
	write_args(root, "7001", other, sizeof(other));
	write_args(root, "5000", "firecracker", 12);
	write_args(root, "6000", "cloud-hypervisor", 17);
	write_args(root, "7000", "dup", 4);
	write_args(root, "8000", "bash", 5);
	*state = root;
	return 0;
}

static int teardown(void **state)
{
	systree_remove(*state);
	return 0;
}

static void test_each_hypervisors_thread_names_give_the_vcpu_number(void **state)
{
	(void)state;
	static const struct { const char *comm; unsigned vcpu; } good[] = {
		{ "CPU 0/KVM", 0 }, { "CPU 17/KVM", 17 }, { "CPU 3/TCG", 3 }, { "fc_vcpu 2", 2 }, { "vcpu11", 11 },
	};
	static const char *const bad[] = {
		"CPU /KVM", "CPU 1/KVMx", "CPU 01/KVM", "CPU 1/HVF", "cpu 1/KVM", "fc_vcpu", "fc_vcpu 1 ", "vcpu", "vcpu-1",
		"vcpu4096", "qemu-system-x86", "",
	};
	unsigned v;

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		assert_int_equal(host_vcpu_from_comm(good[i].comm, &v), 0);
		assert_int_equal(v, good[i].vcpu);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(host_vcpu_from_comm(bad[i], &v), -EINVAL);
}

static void test_qemus_name_is_read_from_its_arguments_in_either_form(void **state)
{
	(void)state;
	static const char a[] = "qemu\0-name\0guest=web,debug-threads=on", b[] = "qemu\0-m\0001G\0-name\0db", c[] = "qemu\0-name";
	char name[64];

	assert_int_equal(host_qemu_name(a, sizeof(a), name, sizeof(name)), 0);
	assert_string_equal(name, "web");
	assert_int_equal(host_qemu_name(b, sizeof(b), name, sizeof(name)), 0);
	assert_string_equal(name, "db");
	assert_int_equal(host_qemu_name(c, sizeof(c), name, sizeof(name)), -ENOENT);
}

static void test_a_vm_by_pid_or_name_has_its_vcpus_found_by_thread_names(void **state)
{
	const char *root = *state;
	struct host_vm vm;
	struct lat_error err;

	assert_int_equal(host_vm_find(root, "4242", NULL, 0, &vm, &err), 0);
	assert_int_equal(vm.found_by, HOST_FOUND_NAMES);
	assert_string_equal(vm.name, "vm1");
	assert_int_equal(vm.n, 2);
	assert_int_equal(vm.vcpus[0].vcpu, 0);
	assert_int_equal(vm.vcpus[0].tid, 4250);
	assert_string_equal(vm.vcpus[1].name, "CPU 1/KVM");
	host_vm_free(&vm);
	assert_int_equal(host_vm_find(root, "vm1", NULL, 0, &vm, &err), 0);
	assert_int_equal(vm.pid, 4242);
	host_vm_free(&vm);
	assert_int_equal(host_vm_find(root, "firecracker", NULL, 0, &vm, &err), 0);
	assert_int_equal(vm.n, 2);
	assert_int_equal(vm.vcpus[0].tid, 5001);
	assert_int_equal(vm.vcpus[1].tid, 5002);
	host_vm_free(&vm);
	assert_int_equal(host_vm_find(root, "6000", NULL, 0, &vm, &err), 0);
	assert_int_equal(vm.n, 1);
	assert_string_equal(vm.vcpus[0].name, "vcpu0");
	host_vm_free(&vm);
}

static void test_a_name_matching_none_or_two_processes_and_a_pid_that_is_no_vm_are_refused(void **state)
{
	const char *root = *state;
	struct host_vm vm;
	struct lat_error err;

	assert_int_equal(host_vm_find(root, "nosuch", NULL, 0, &vm, &err), -ESRCH);
	assert_string_equal(err.msg, "option '--vm': no process is named 'nosuch' (by its comm or QEMU's -name)");
	assert_int_equal(host_vm_find(root, "dup", NULL, 0, &vm, &err), -EEXIST);
	assert_non_null(strstr(err.msg, "'dup' names 2 processes: "));
	assert_non_null(strstr(err.msg, "7000 (by its comm)"));
	assert_non_null(strstr(err.msg, "7001 (by its -name)"));
	assert_int_equal(host_vm_find(root, "8000", NULL, 0, &vm, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "pid 8000 ('bash') has no thread named as a vCPU"));
	assert_int_equal(host_vm_find(root, "9999", NULL, 0, &vm, &err), -ESRCH);
	assert_string_equal(err.msg, "option '--vm': no process has pid 9999");
	assert_int_equal(host_vm_find(root, "4250", NULL, 0, &vm, &err), -ESRCH);
	assert_string_equal(err.msg, "option '--vm': 4250 is a thread of pid 4242, not a process");
}

static void test_a_vcpu_list_takes_threads_of_the_vm_only_each_once(void **state)
{
	const char *root = *state;
	const char *const good[] = { "1=4251", "0=4260" }, *const stranger[] = { "0=5001" }, *const junk[] = { "0:4250" },
			  *const twice[] = { "0=4250", "0=4251" };
	struct host_vm vm;
	struct lat_error err;

	assert_int_equal(host_vm_find(root, "4242", good, 2, &vm, &err), 0);
	assert_int_equal(vm.found_by, HOST_FOUND_LIST);
	assert_int_equal(vm.vcpus[0].tid, 4260);
	assert_string_equal(vm.vcpus[0].name, "IO mon_iothread");
	host_vm_free(&vm);
	assert_int_equal(host_vm_find(root, "4242", stranger, 1, &vm, &err), -EINVAL);
	assert_string_equal(err.msg, "option '--vcpu': '0=5001': 5001 is not a thread of pid 4242");
	assert_int_equal(host_vm_find(root, "4242", junk, 1, &vm, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'0:4250' is not N=TID"));
	assert_int_equal(host_vm_find(root, "4242", twice, 2, &vm, &err), -EINVAL);
	assert_string_equal(err.msg, "vCPU 0 is given twice (threads 4250 and 4251)");
	assert_int_equal(host_vm_find(root, "qmp:/x", good, 2, &vm, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "option '--vcpu': not with --vm qmp:SOCKET"));
}

static int reply(const char *line, struct host_vm *vm, struct lat_error *err)
{
	return host_qmp_reply(line, strlen(line), vm, err);
}

static void test_qmp_replies_give_each_cpu_index_and_thread_id_and_pass_over_events(void **state)
{
	(void)state;
	/* qapi/machine.json's example of query-cpus-fast, on one line. */
	static const char cpus[] =
		"{\"return\": [{\"thread-id\": 25627, \"props\": {\"core-id\": 0, \"thread-id\": 0, \"socket-id\": 0}, "
		"\"qom-path\": \"/machine/unattached/device[0]\", \"arch\": \"x86\", \"target\": \"x86_64\", \"cpu-index\": 0}, "
		"{\"thread-id\": 25628, \"props\": {\"core-id\": 0, \"thread-id\": 0, \"socket-id\": 1}, "
		"\"qom-path\": \"/machine/unattached/device[2]\", \"arch\": \"x86\", \"target\": \"x86_64\", \"cpu-index\": 1}]}";
	static const char greeting[] = "{\"QMP\": {\"version\": {\"qemu\": {\"micro\": 0, \"minor\": 2, \"major\": 8}, "
				       "\"package\": \"\"}, \"capabilities\": [\"oob\"]}}";
	static const char event[] = "{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, \"event\": \"RESUME\"}";
	static const char error[] = "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"The command query-cpus-fast "
				    "has not been found\"}}";
	struct host_vm vm = { 0 };
	struct lat_error err;

	assert_int_equal(host_qmp_greeting(greeting, strlen(greeting), &err), 0);
	assert_int_equal(host_qmp_greeting(cpus, strlen(cpus), &err), -EPROTO);
	assert_int_equal(reply("{\"return\": {}}", NULL, &err), 0);
	assert_int_equal(host_qmp_reply(event, strlen(event), &vm, &err), 1);
	assert_int_equal(host_qmp_reply(error, strlen(error), &vm, &err), -EPROTO);
	assert_string_equal(err.msg, "QMP error: CommandNotFound: The command query-cpus-fast has not been found");
	assert_int_equal(host_qmp_reply(cpus, strlen(cpus), &vm, &err), 0);
	assert_int_equal(vm.n, 2);
	assert_int_equal(vm.vcpus[0].vcpu, 0);
	assert_int_equal(vm.vcpus[0].tid, 25627);
	assert_int_equal(vm.vcpus[1].vcpu, 1);
	assert_int_equal(vm.vcpus[1].tid, 25628);
	host_vm_free(&vm);
	assert_int_equal(reply("{\"return\": [{\"cpu-index\": 0}]}", &vm, &err), -EPROTO);
	assert_string_equal(err.msg, "query-cpus-fast: CPU 0 has no cpu-index and thread-id");
	host_vm_free(&vm);
	assert_int_equal(reply("{\"return\": []}", &vm, &err), -EPROTO);
	host_vm_free(&vm);
}

static void test_a_qmp_socket_nobody_listens_on_is_named(void **state)
{
	(void)state;
	struct host_vm vm;
	struct lat_error err;

	assert_int_equal(host_vm_find(NULL, "qmp:/nonexistent/qmp.sock", NULL, 0, &vm, &err), -ENOENT);
	assert_string_equal(err.msg, "option '--vm': no QMP server listens on '/nonexistent/qmp.sock': No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_hypervisors_thread_names_give_the_vcpu_number),
		cmocka_unit_test(test_qemus_name_is_read_from_its_arguments_in_either_form),
		cmocka_unit_test(test_a_vm_by_pid_or_name_has_its_vcpus_found_by_thread_names),
		cmocka_unit_test(test_a_name_matching_none_or_two_processes_and_a_pid_that_is_no_vm_are_refused),
		cmocka_unit_test(test_a_vcpu_list_takes_threads_of_the_vm_only_each_once),
		cmocka_unit_test(test_qmp_replies_give_each_cpu_index_and_thread_id_and_pass_over_events),
		cmocka_unit_test(test_a_qmp_socket_nobody_listens_on_is_named),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
