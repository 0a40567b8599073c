#include "host/qmp.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/nstime.h"
#include "host/link.h"
#include "host/proto.h"

int host_qmp_greeting(const char *line, size_t len, struct lat_error *err)
{
	json_t *o = json_loadb(line, len, 0, NULL);
	int r = json_is_object(json_object_get(o, "QMP")) ? 0 : -EPROTO;

	json_decref(o);
	return r < 0 ? err_set(err, r, "no QMP greeting ({\"QMP\": ...}) on the socket") : 0;
}

static int add_cpus(json_t *list, struct host_vm *vm, struct lat_error *err)
{
	size_t i;
	json_t *cpu;

	if (!json_is_array(list))
		return err_set(err, -EPROTO, "query-cpus-fast returned no list");
	json_array_foreach(list, i, cpu) {
		json_t *index = json_object_get(cpu, "cpu-index"), *tid = json_object_get(cpu, "thread-id");
		if (!json_is_integer(index) || !json_is_integer(tid) || json_integer_value(index) < 0 ||
		    json_integer_value(index) >= HOST_VCPUS_MAX || json_integer_value(tid) <= 0 ||
		    json_integer_value(tid) > INT32_MAX)
			return err_set(err, -EPROTO, "query-cpus-fast: CPU %zu has no cpu-index and thread-id", i);
		int r = host_vm_add(vm, (unsigned)json_integer_value(index), (long)json_integer_value(tid));
		if (r < 0)
			return err_set(err, r, "query-cpus-fast: too many CPUs");
	}
	if (!i)
		return err_set(err, -EPROTO, "query-cpus-fast returned no CPU");
	return 0;
}

static const char *text_of(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "?";
}

int host_qmp_reply(const char *line, size_t len, struct host_vm *vm, struct lat_error *err)
{
	json_t *o = json_loadb(line, len, 0, NULL), *ret = json_object_get(o, "return"), *e = json_object_get(o, "error");
	int r;

	if (json_object_get(o, "event"))
		r = 1;
	else if (ret)
		r = vm ? add_cpus(ret, vm, err) : 0;
	else if (json_is_object(e))
		r = err_set(err, -EPROTO, "QMP error: %s: %s", text_of(e, "class"), text_of(e, "desc"));
	else
		r = err_set(err, -EPROTO, "QMP answered with neither a return nor an error");
	json_decref(o);
	return r;
}

/* The next line from the link, each answer within HOST_QMP_TIMEOUT_S. */
static int next_line(struct host_link *l, const char **line, struct lat_error *err)
{
	int r = host_link_recv(l, line, mono_ns() + HOST_QMP_TIMEOUT_S * NS_PER_SEC);
	if (r == -EMSGSIZE)
		return err_set(err, -EPROTO, "a QMP message is longer than %d bytes", HOST_LINE_MAX);
	if (r == -ECONNRESET)
		return err_set(err, -EPROTO, "QMP closed the connection");
	if (r < 0)
		return err_set(err, r, "reading QMP: %s", r == -ETIMEDOUT ? "no answer in time" : strerror(-r));
	return 0;
}

/* Send command, then read lines until its reply. */
static int command(struct host_link *l, const char *cmd, struct host_vm *vm, struct lat_error *err)
{
	const char *line;
	int r = host_link_send(l, cmd, mono_ns() + HOST_QMP_TIMEOUT_S * NS_PER_SEC);

	if (r < 0)
		return err_set(err, -EPROTO, "sending to QMP: %s", strerror(-r));
	do {
		if ((r = next_line(l, &line, err)) < 0)
			return r;
	} while ((r = host_qmp_reply(line, strlen(line), vm, err)) == 1);
	return r;
}

/* The greeting, capabilities, then query-cpus-fast, over connected fd (the link owns it). */
static int talk(int fd, struct host_vm *vm, struct lat_error *err)
{
	struct host_link *l = calloc(1, sizeof(*l));
	const char *line;
	int r;

	if (!l) {
		close(fd);
		return err_set(err, -ENOMEM, "out of memory");
	}
	host_link_adopt(l, fd);
	if ((r = next_line(l, &line, err)) == 0 && (r = host_qmp_greeting(line, strlen(line), err)) == 0 &&
	    (r = command(l, "{\"execute\":\"qmp_capabilities\"}\n", NULL, err)) == 0)
		r = command(l, "{\"execute\":\"query-cpus-fast\"}\n", vm, err);
	host_link_close(l);
	free(l);
	return r;
}

int host_qmp_query(const char *path, struct host_vm *vm, struct lat_error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(sa.sun_path))
		return err_set(err, -EINVAL, "option '--vm': the QMP socket's path is longer than %zu bytes",
			       sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(err, -errno, "cannot make a socket: %s", strerror(errno));
	int r = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	if (r < 0)
		close(fd);
	if (r == -ENOENT || r == -ECONNREFUSED || r == -ENOTSOCK)
		r = err_set(err, -ENOENT, "option '--vm': no QMP server listens on '%s': %s", path, strerror(-r));
	else if (r < 0)
		r = err_set(err, r, "cannot connect to the QMP socket '%s': %s", path, strerror(-r));
	else if ((r = talk(fd, vm, err)) < 0)
		err_prefix(err, r, "QMP socket '%s': ", path);
	return r;
}
