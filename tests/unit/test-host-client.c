/*
 * Unit tests for a guest run's side of the host protocol (src/host/client.c)
 * against the agent's own session code (src/host/session.c) serving a unix
 * socket from a thread: the hello, the time exchanges on one clock, the
 * secret, and a peer that is not latscope host.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/nstime.h"
#include "host/client.h"
#include "host/session.h"
#include "tmpdir.h"

static struct host_client client; /* 64 KiB of line buffer: not on the stack */

struct agent {
	int lfd;
	const uint8_t *secret;
	size_t secret_len;
	const char *raw; /* instead of a session: this one line, then close */
	pthread_t thread;
};

static struct host_vcpu vcpus[] = { { 0, 4250, "CPU 0/KVM" }, { 1, 4251, "CPU 1/KVM" } };
static const struct host_vm vm = {
	.pid = 4242, .name = "guest", .found_by = HOST_FOUND_QMP, .n = 2, .vcpus = vcpus
};

static void send_line(int fd, char *line)
{
	size_t n = strlen(line);
	assert_int_equal(write(fd, line, n), (ssize_t)n);
	free(line);
}

/* One client, served as latscope host serves it, until it goes. */
static void *serve(void *arg)
{
	struct agent *a = arg;
	static struct host_linebuf lb;
	const uint8_t nonce[HOST_NONCE_BYTES] = { 1, 2,	 3,  4,	 5,  6,	 7,  8,
						  9, 10, 11, 12, 13, 14, 15, 16 };
	struct host_session s;
	int fd = accept(a->lfd, NULL, NULL);
	char *line;
	size_t len, room;

	if (a->raw) {
		assert_int_equal(write(fd, a->raw, strlen(a->raw)), (ssize_t)strlen(a->raw));
		close(fd);
		return NULL;
	}
	lb.start = lb.len = 0;
	host_session_start(&s, &vm, NULL, a->secret, a->secret_len, nonce);
	assert_int_equal(host_session_greeting(&s, &line), 0);
	send_line(fd, line);
	for (;;) {
		int r = host_linebuf_line(&lb, &line, &len);
		if (r == 1) {
			struct host_reply ans;
			host_session_line(&s, line, len, mono_ns(), &ans);
			char *out;
			if (ans.greet)
				assert_int_equal(host_session_renew(&s, nonce, ans.msg.token, &out), 0);
			else
				assert_int_equal(host_reply_encode(&s, &ans, mono_ns(), &out), 0);
			send_line(fd, out);
			if (ans.close)
				break;
			continue;
		}
		char *tail = host_linebuf_tail(&lb, &room);
		ssize_t n = read(fd, tail, room);
		if (n <= 0)
			break;
		host_linebuf_added(&lb, (size_t)n);
	}
	close(fd);
	return NULL;
}

/* An agent on a fresh socket in tmpdir; its spec into spec. */
static void start_agent(struct agent *a, char *spec, size_t size)
{
	static unsigned n;
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	snprintf(un.sun_path, sizeof(un.sun_path), "%s/agent%u.sock", tmpdir, n++);
	snprintf(spec, size, "unix:%s", un.sun_path);
	a->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(a->lfd, (struct sockaddr *)&un, sizeof(un)), 0);
	assert_int_equal(listen(a->lfd, 1), 0);
	assert_int_equal(pthread_create(&a->thread, NULL, serve, a), 0);
}

static void stop_agent(struct agent *a)
{
	host_client_close(&client);
	pthread_join(a->thread, NULL);
	close(a->lfd);
}

static uint64_t soon(void)
{
	return mono_ns() + 5u * NS_PER_SEC;
}

static void test_a_hello_learns_the_vm_and_how_its_vcpus_were_found(void **state)
{
	(void)state;
	struct agent a = { 0 };
	struct lat_error err = { { 0 } };
	char spec[128];
	start_agent(&a, spec, sizeof(spec));
	assert_int_equal(host_client_connect(&client, spec, NULL, 0, soon(), &err), 0);
	assert_int_equal(client.vm_pid, 4242);
	assert_string_equal(client.vm_name, "guest");
	assert_string_equal(client.found_by, "qmp");
	assert_int_equal(client.nvcpus, 2);
	stop_agent(&a);
}

static void test_each_time_exchange_is_in_order_on_one_clock_and_goes_to_the_line_up(void **state)
{
	(void)state;
	struct agent a = { 0 };
	struct lat_error err = { { 0 } };
	char spec[128], said[128];
	start_agent(&a, spec, sizeof(spec));
	assert_int_equal(host_client_connect(&client, spec, NULL, 0, soon(), &err), 0);
	uint64_t last_t4 = 0;
	for (int i = 0; i < 20; i++) {
		assert_int_equal(host_client_exchange(&client, soon(), &err), 0);
		/* the agent is on this machine: one CLOCK_MONOTONIC, so the order is a known answer */
		assert_true(last_t4 <= client.t[0]);
		assert_true(client.t[0] <= client.t[1]);
		assert_true(client.t[1] <= client.t[2]);
		assert_true(client.t[2] <= client.t[3]);
		last_t4 = client.t[3];
	}
	assert_int_equal(client.seq, 20);
	/* all within a second or two: the line-up waits for three seconds of them */
	host_sync_describe(&client.sync, said, sizeof(said));
	assert_non_null(strstr(said, "not lined up yet"));
	stop_agent(&a);
}

static void test_an_agent_with_a_secret_refuses_a_hello_without_it_or_with_another(void **state)
{
	(void)state;
	static const uint8_t secret[] = "the shared secret";
	struct agent a = { .secret = secret, .secret_len = sizeof(secret) - 1u };
	struct lat_error err = { { 0 } };
	char spec[128];

	start_agent(&a, spec, sizeof(spec));
	assert_int_equal(host_client_connect(&client, spec, NULL, 0, soon(), &err), -EACCES);
	assert_non_null(strstr(err.msg, "asks for a secret, and none was given"));
	stop_agent(&a);

	start_agent(&a, spec, sizeof(spec));
	assert_int_equal(
		host_client_connect(&client, spec, (const uint8_t *)"another", 7, soon(), &err),
		-EACCES);
	assert_non_null(strstr(err.msg, "the host refused: authentication failed"));
	stop_agent(&a);

	start_agent(&a, spec, sizeof(spec));
	assert_int_equal(
		host_client_connect(&client, spec, secret, sizeof(secret) - 1u, soon(), &err), 0);
	assert_int_equal(host_client_exchange(&client, soon(), &err), 0);
	stop_agent(&a);
}

static void test_a_peer_that_is_not_latscope_host_is_refused_as_such(void **state)
{
	(void)state;
	struct agent a = { .raw = "SSH-2.0-OpenSSH_9.2\r\n" };
	struct lat_error err = { { 0 } };
	char spec[128];
	start_agent(&a, spec, sizeof(spec));
	assert_int_equal(host_client_connect(&client, spec, NULL, 0, soon(), &err), -EPROTO);
	assert_non_null(strstr(err.msg, "is not a latscope host of protocol 1"));
	stop_agent(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_hello_learns_the_vm_and_how_its_vcpus_were_found),
		cmocka_unit_test(
			test_each_time_exchange_is_in_order_on_one_clock_and_goes_to_the_line_up),
		cmocka_unit_test(
			test_an_agent_with_a_secret_refuses_a_hello_without_it_or_with_another),
		cmocka_unit_test(test_a_peer_that_is_not_latscope_host_is_refused_as_such),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
