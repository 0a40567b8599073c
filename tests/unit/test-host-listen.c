/* Where the host agent listens and whom it answers (src/host/listen.c): --listen and --allow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <string.h>

#include "core/array.h"
#include "host/listen.h"

static void test_listen_takes_unix_tcp_and_vsock_and_knows_which_stay_on_this_host(void **state)
{
	(void)state;
	struct host_listen l;

	assert_int_equal(host_listen_parse("unix:/run/latscope/host.sock", &l, NULL), 0);
	assert_int_equal(l.kind, HOST_LISTEN_UNIX);
	assert_string_equal(l.path, "/run/latscope/host.sock");
	assert_true(host_listen_is_local(&l));
	assert_int_equal(host_listen_parse("127.0.0.1:0", &l, NULL), 0);
	assert_int_equal(l.kind, HOST_LISTEN_TCP);
	assert_true(host_listen_is_local(&l));
	assert_int_equal(host_listen_parse("[::1]:9465", &l, NULL), 0);
	assert_true(host_listen_is_local(&l));
	assert_int_equal(host_listen_parse("0.0.0.0:9465", &l, NULL), 0);
	assert_false(host_listen_is_local(&l));
	assert_int_equal(host_listen_parse("vsock:5000", &l, NULL), 0);
	assert_int_equal(l.kind, HOST_LISTEN_VSOCK);
	assert_int_equal(l.vsock_port, 5000);
	assert_false(host_listen_is_local(&l));
}

static void test_listen_refuses_what_is_none_of_its_forms_naming_the_option(void **state)
{
	(void)state;
	static const char *const bad[] = { "", "none", "unix:", "vsock:", "vsock:x", "vsock:-1", "localhost:1", "1.2.3.4",
					   "tcp:1.2.3.4:5" };
	struct host_listen l;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct lat_error err = { "" };
		assert_int_equal(host_listen_parse(bad[i], &l, &err), -EINVAL);
		assert_int_equal(strncmp(err.msg, "option '--listen': ", 19), 0);
	}
	struct lat_error err;
	assert_int_equal(host_listen_parse("127.0.0.1:65536", &l, &err), -EINVAL);
	assert_string_equal(err.msg, "option '--listen': '127.0.0.1:65536': the port is not in 0-65535");
	assert_int_equal(host_listen_parse("vsock:4294967295", &l, &err), -EINVAL);
	assert_string_equal(err.msg, "option '--listen': 'vsock:4294967295': the port is not in 0-4294967294");
}

/* A peer's address: IPv4 when it has a '.' and no ':', else IPv6. */
static struct sockaddr_storage peer(const char *a)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	const bool v6 = strchr(a, ':') != NULL;

	ss.ss_family = v6 ? AF_INET6 : AF_INET;
	assert_int_equal(inet_pton(ss.ss_family, a, v6 ? (void *)&in6->sin6_addr : (void *)&in->sin_addr), 1);
	return ss;
}

static bool in_block(const struct host_cidr *c, const char *a)
{
	struct sockaddr_storage ss = peer(a);
	return host_cidr_match(c, &ss);
}

static void test_allow_matches_addresses_inside_its_block_only(void **state)
{
	(void)state;
	struct host_cidr c;

	assert_int_equal(host_cidr_parse("10.1.0.0/16", &c, NULL), 0);
	assert_true(in_block(&c, "10.1.200.3"));
	assert_false(in_block(&c, "10.2.0.1"));
	assert_true(in_block(&c, "::ffff:10.1.0.9"));
	assert_false(in_block(&c, "fd00::1"));
	assert_int_equal(host_cidr_parse("192.168.1.5", &c, NULL), 0);
	assert_true(in_block(&c, "192.168.1.5"));
	assert_false(in_block(&c, "192.168.1.4"));
	assert_int_equal(host_cidr_parse("[fd00::]/12", &c, NULL), 0);
	assert_true(in_block(&c, "fd0f::1"));
	assert_false(in_block(&c, "fd10::1"));
	assert_int_equal(host_cidr_parse("0.0.0.0/0", &c, NULL), 0);
	assert_true(in_block(&c, "8.8.8.8"));
}

static void test_allow_refuses_what_is_not_an_address_block(void **state)
{
	(void)state;
	static const char *const bad[] = { "", "10.0.0.0/", "10.0.0.0/x", "10.0.0/8", "host.example/8", "/8", "10.0.0.0/-1" };
	struct host_cidr c;
	struct lat_error err;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(host_cidr_parse(bad[i], &c, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "is not an address block"));
	}
	assert_int_equal(host_cidr_parse("10.0.0.0/33", &c, &err), -EINVAL);
	assert_string_equal(err.msg, "option '--allow': '10.0.0.0/33': a prefix of 33 bits is longer than the address");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_takes_unix_tcp_and_vsock_and_knows_which_stay_on_this_host),
		cmocka_unit_test(test_listen_refuses_what_is_none_of_its_forms_naming_the_option),
		cmocka_unit_test(test_allow_matches_addresses_inside_its_block_only),
		cmocka_unit_test(test_allow_refuses_what_is_not_an_address_block),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
