#include "host/find.h"

#include <errno.h>
#include <string.h>

#include "host/qmp.h"

static int by_qmp(const char *root, const char *path, size_t nitems, struct host_vm *vm, struct lat_error *err)
{
	long pid;
	int r;

	if (nitems)
		return err_set(err, -EINVAL, "option '--vcpu': not with --vm qmp:SOCKET, whose answer names the vCPU threads");
	if (!*path)
		return err_set(err, -EINVAL, "option '--vm': 'qmp:' names no socket");
	vm->found_by = HOST_FOUND_QMP;
	if ((r = host_qmp_query(path, vm, err)) < 0)
		return r;
	if (host_pid_of_thread(root, vm->vcpus[0].tid, &pid) < 0)
		return err_set(err, -ESRCH, "QMP socket '%s': its CPU 0 runs in thread %ld, which is not on this host "
			       "(or in this pid namespace)", path, vm->vcpus[0].tid);
	if ((r = host_vm_describe(root, pid, vm, err)) < 0)
		return r;
	return host_vcpus_finish(root, vm, err);
}

int host_vm_find(const char *root, const char *vm_spec, const char *const *vcpu_items, size_t nitems,
		 struct host_vm *ret, struct lat_error *err)
{
	struct host_vm vm = { 0 };
	long pid;
	int r;

	if (!strncmp(vm_spec, HOST_QMP_PREFIX, strlen(HOST_QMP_PREFIX))) {
		r = by_qmp(root, vm_spec + strlen(HOST_QMP_PREFIX), nitems, &vm, err);
	} else if ((r = host_vm_resolve(root, vm_spec, &pid, err)) == 0 && (r = host_vm_describe(root, pid, &vm, err)) == 0) {
		vm.found_by = nitems ? HOST_FOUND_LIST : HOST_FOUND_NAMES;
		r = nitems ? host_vcpus_from_list(root, vcpu_items, nitems, &vm, err) : host_vcpus_by_names(root, &vm, err);
	}
	if (r < 0) {
		host_vm_free(&vm);
		return r;
	}
	*ret = vm;
	return 0;
}
