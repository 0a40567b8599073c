/*
 * Unit tests for the guest's end of the host link (src/host/link.c): lines
 * whole however the bytes arrive, the size limit, deadlines, a peer that goes
 * away, and each kind of --host address, opened for real on this machine
 * (a unix socket, a pty standing in for a serial port) or refused by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/nstime.h"
#include "host/link.h"
#include "tmpdir.h"

static struct host_link link_; /* 64 KiB: not on the stack */

/* A link over one end of a socketpair; the other end is *peer. */
static void linked(int *peer)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	host_link_adopt(&link_, sv[0]);
	*peer = sv[1];
}

static uint64_t soon(void)
{
	return mono_ns() + 5u * NS_PER_SEC;
}

static void test_a_line_split_across_writes_is_received_whole(void **state)
{
	(void)state;
	int peer;
	const char *line;
	linked(&peer);
	assert_int_equal(write(peer, "{\"op\":", 6), 6);
	assert_int_equal(write(peer, "\"time\"}\n", 8), 8);
	assert_int_equal(host_link_recv(&link_, &line, soon()), 0);
	assert_string_equal(line, "{\"op\":\"time\"}");
	close(peer);
	host_link_close(&link_);
}

static void test_two_lines_in_one_write_come_out_one_at_a_time(void **state)
{
	(void)state;
	int peer;
	const char *line;
	linked(&peer);
	assert_int_equal(write(peer, "one\ntwo\n", 8), 8);
	assert_int_equal(host_link_recv(&link_, &line, soon()), 0);
	assert_string_equal(line, "one");
	assert_int_equal(host_link_recv(&link_, &line, soon()), 0);
	assert_string_equal(line, "two");
	close(peer);
	assert_int_equal(host_link_recv(&link_, &line, soon()), -ECONNRESET);
	host_link_close(&link_);
}

static void test_a_line_longer_than_the_limit_ends_the_link_with_emsgsize(void **state)
{
	(void)state;
	int peer;
	const char *line;
	linked(&peer);
	/* a writer of its own: the socket holds less than the line */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static char big[HOST_LINE_MAX + 16];
		memset(big, 'a', sizeof(big));
		ssize_t w = write(peer, big, sizeof(big));
		_exit(w > 0 ? 0 : 1);
	}
	assert_int_equal(host_link_recv(&link_, &line, soon()), -EMSGSIZE);
	host_link_close(&link_);
	close(peer);
	int st;
	waitpid(pid, &st, 0);
}

static void test_nothing_by_the_deadline_is_a_timeout_not_a_hang(void **state)
{
	(void)state;
	int peer;
	const char *line;
	linked(&peer);
	assert_int_equal(write(peer, "no newline yet", 14), 14);
	assert_int_equal(host_link_recv(&link_, &line, mono_ns() + 20u * NS_PER_MS), -ETIMEDOUT);
	assert_int_equal(write(peer, "\n", 1), 1);
	assert_int_equal(host_link_recv(&link_, &line, soon()), 0);
	assert_string_equal(line, "no newline yet");
	close(peer);
	host_link_close(&link_);
}

static void test_a_sent_line_ends_in_its_one_newline(void **state)
{
	(void)state;
	int peer;
	char got[64] = { 0 };
	linked(&peer);
	assert_int_equal(host_link_send(&link_, "{\"op\":\"hello\"}\n", soon()), 0);
	assert_int_equal(read(peer, got, sizeof(got) - 1u), 15);
	assert_string_equal(got, "{\"op\":\"hello\"}\n");
	assert_int_equal(host_link_send(&link_, "two\nlines\n", soon()), -EINVAL);
	assert_int_equal(host_link_send(&link_, "no newline", soon()), -EINVAL);
	close(peer);
	assert_int_equal(host_link_send(&link_, "gone\n", soon()), -EPIPE);
	host_link_close(&link_);
}

static void test_unix_path_connects_to_a_listening_socket(void **state)
{
	(void)state;
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct lat_error err = { { 0 } };
	char spec[128];
	const char *line;
	snprintf(un.sun_path, sizeof(un.sun_path), "%s/agent.sock", tmpdir);
	snprintf(spec, sizeof(spec), "unix:%s", un.sun_path);
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&un, sizeof(un)), 0);
	assert_int_equal(listen(lfd, 1), 0);
	assert_int_equal(host_link_open(spec, soon(), &link_, &err), 0);
	int afd = accept(lfd, NULL, NULL);
	assert_true(afd >= 0);
	assert_int_equal(write(afd, "{\"latscope_host\":1}\n", 20), 20);
	assert_int_equal(host_link_recv(&link_, &line, soon()), 0);
	assert_string_equal(line, "{\"latscope_host\":1}");
	host_link_close(&link_);
	close(afd);
	close(lfd);
	unlink(un.sun_path);
	/* nothing listening there now */
	assert_int_equal(host_link_open(spec, soon(), &link_, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "option '--host': cannot connect to 'unix:"));
}

static void test_a_serial_tty_is_made_raw_and_carries_lines_both_ways(void **state)
{
	(void)state;
	struct lat_error err = { { 0 } };
	char spec[128], got[64] = { 0 };
	const char *line;
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	assert_true(master >= 0);
	assert_int_equal(grantpt(master), 0);
	assert_int_equal(unlockpt(master), 0);
	snprintf(spec, sizeof(spec), "serial:%s", ptsname(master));
	assert_int_equal(host_link_open(spec, soon(), &link_, &err), 0);
	/* raw: no echo of what the host sends, and a carriage return is a byte like any */
	assert_int_equal(write(master, "a\rb\n", 4), 4);
	assert_int_equal(host_link_recv(&link_, &line, soon()), 0);
	assert_string_equal(line, "a\rb");
	assert_int_equal(host_link_send(&link_, "back\n", soon()), 0);
	assert_int_equal(read(master, got, sizeof(got) - 1u), 5);
	assert_string_equal(got, "back\n");
	host_link_close(&link_);
	close(master);
}

static void test_bad_addresses_are_refused_naming_the_option_and_the_reason(void **state)
{
	(void)state;
	static const struct {
		const char *spec;
		int r;
		const char *msg;
	} cases[] = {
		{ "localhost:9000", -EINVAL, "option '--host': 'localhost:9000' is not ADDR:PORT" },
		{ "127.0.0.1:70000", -ERANGE,
		  "option '--host': '127.0.0.1:70000': port is not in 0-65535" },
		{ "vsock:two:9", -EINVAL, "option '--host': 'vsock:two:9' is not vsock:CID:PORT" },
		{ "vsock:2", -EINVAL, "is not vsock:CID:PORT" },
		{ "serial:/nonexistent/port", -ENOENT,
		  "option '--host': cannot open '/nonexistent/port'" },
		{ "unix:", -EINVAL, "the path is empty" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lat_error err = { { 0 } };
		assert_int_equal(host_link_open(cases[i].spec, soon(), &link_, &err), cases[i].r);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("%s: '%s' lacks '%s'", cases[i].spec, err.msg, cases[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_line_split_across_writes_is_received_whole),
		cmocka_unit_test(test_two_lines_in_one_write_come_out_one_at_a_time),
		cmocka_unit_test(test_a_line_longer_than_the_limit_ends_the_link_with_emsgsize),
		cmocka_unit_test(test_nothing_by_the_deadline_is_a_timeout_not_a_hang),
		cmocka_unit_test(test_a_sent_line_ends_in_its_one_newline),
		cmocka_unit_test(test_unix_path_connects_to_a_listening_socket),
		cmocka_unit_test(test_a_serial_tty_is_made_raw_and_carries_lines_both_ways),
		cmocka_unit_test(test_bad_addresses_are_refused_naming_the_option_and_the_reason),
	};
	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
