/* The monitor's HTTP endpoint: its --listen parser, content negotiation, the
 * connection guard and the server's life cycle (the requests themselves, and
 * the guard against real slow clients: tests/integration/test_serve.py). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/nstime.h"
#include "serve/accept.h"
#include "serve/addr.h"
#include "serve/guard.h"
#include "serve/http.h"

static void test_listen_reads_ipv4_and_bracketed_ipv6_with_their_port(void **state)
{
	(void)state;
	struct listen_addr a;
	char back[64];

	assert_int_equal(listen_addr_parse("127.0.0.1:9464", &a, NULL), 0);
	assert_false(a.none);
	assert_int_equal(a.sa.ss_family, AF_INET);
	listen_addr_format(&a.sa, back, sizeof(back));
	assert_string_equal(back, "127.0.0.1:9464");
	assert_int_equal(listen_addr_parse("[::1]:65535", &a, NULL), 0);
	assert_int_equal(a.sa.ss_family, AF_INET6);
	listen_addr_format(&a.sa, back, sizeof(back));
	assert_string_equal(back, "[::1]:65535");
	assert_int_equal(listen_addr_parse("0.0.0.0:0", &a, NULL), 0);
	assert_int_equal(listen_addr_parse("none", &a, NULL), 0);
	assert_true(a.none);
}

static void test_listen_refuses_what_is_not_addr_port_naming_the_option(void **state)
{
	(void)state;
	const char *const bad[] = { "",		 "none:1",	 "localhost:9464", "127.0.0.1",
				    "127.0.0.1:", ":9464",	 "127.0.0.1:9x",   "127.0.0.1:-1",
				    "127.1:9464", "::1:9464",	 "[::1]9464",	   "[::1:9464",
				    "[]:9464",	  "[1.2.3.4]:1", "127.0.0.1: 80",  "127.0.0.1:+80" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct lat_error err = { "" };
		struct listen_addr a;
		char want[256];
		snprintf(want, sizeof(want),
			 "option '--listen': '%s' is not ADDR:PORT (an IPv4 address or [IPv6], or none)",
			 bad[i]);
		assert_int_equal(listen_addr_parse(bad[i], &a, &err), -EINVAL);
		assert_string_equal(err.msg, want);
	}
}

static void test_listen_refuses_a_port_above_65535_however_long(void **state)
{
	(void)state;
	const char *const bad[] = { "127.0.0.1:65536", "[::1]:99999999999999999999999" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct lat_error err = { "" };
		struct listen_addr a;
		char want[256];
		snprintf(want, sizeof(want), "option '--listen': '%s': port is not in 0-65535", bad[i]);
		assert_int_equal(listen_addr_parse(bad[i], &a, &err), -ERANGE);
		assert_string_equal(err.msg, want);
	}
}

static void test_openmetrics_is_chosen_only_when_asked_for_and_not_ranked_below_text(void **state)
{
	(void)state;
	static const struct {
		const char *accept;
		bool om;
	} cases[] = {
		{ NULL, false },
		{ "", false },
		{ "*/*", false },
		{ "text/plain", false },
		{ "application/openmetrics-text", true },
		{ "APPLICATION/OPENMETRICS-TEXT;version=1.0.0", true },
		{ "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
		  "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		  true },
		{ "application/openmetrics-text;q=0", false },
		{ "application/openmetrics-text;q=0.000", false },
		{ "application/openmetrics-text; q=0.4, text/plain; q=0.5", false },
		{ "text/plain;q=0.5, application/openmetrics-text;q=0.5", true },
		{ "application/openmetrics-text;q=junk", false },
		{ "application/openmetrics-textual", false },
		{ "xapplication/openmetrics-text", false },
		{ " application/openmetrics-text ;version=1.0.0", true },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (accept_wants_openmetrics(cases[i].accept) != cases[i].om)
			fail_msg("Accept '%s': want %s", cases[i].accept ? cases[i].accept : "(none)",
				 cases[i].om ? "openmetrics" : "text");
	}
}

static void test_listen_none_starts_no_server_and_the_rest_takes_null(void **state)
{
	(void)state;
	struct metrics_server *s = (struct metrics_server *)&s;

	assert_int_equal(metrics_server_start("none", &s, NULL), 0);
	assert_null(s);
	assert_int_equal(metrics_server_publish(s, "a", "b", "c"), 0);
	assert_int_equal(metrics_server_port(s), 0);
	metrics_server_stop(s);
}

static void test_port_zero_binds_a_port_that_a_second_server_cannot_take(void **state)
{
	(void)state;
	struct lat_error err = { "" };
	struct metrics_server *s = NULL, *t = (struct metrics_server *)&t;
	char spec[64], want[128];

	assert_int_equal(metrics_server_start("127.0.0.1:0", &s, &err), 0);
	const unsigned port = metrics_server_port(s);
	assert_true(port > 0 && port <= 65535);
	assert_int_equal(metrics_server_publish(s, "x 1\n", NULL, NULL), 0);
	assert_int_equal(metrics_server_publish(s, NULL, "x_total 1\n# EOF\n", "<p>1</p>"), 0);
	snprintf(spec, sizeof(spec), "127.0.0.1:%u", port);
	snprintf(want, sizeof(want), "cannot listen on %s: Address already in use", spec);
	assert_int_equal(metrics_server_start(spec, &t, &err), -EADDRINUSE);
	assert_string_equal(err.msg, want);
	assert_ptr_equal(t, (struct metrics_server *)&t); /* untouched on failure */
	metrics_server_stop(s);
	/* Stopped: the port is free again. */
	assert_int_equal(metrics_server_start(spec, &s, &err), 0);
	metrics_server_stop(s);
}

struct scraper {
	unsigned port;
	int requests, whole;             /* done, and with a body that was published whole */
};

/* GET path over a socket of its own; the body, or "" on any failure. */
static void scrape_path(unsigned port, const char *path, char *body, size_t size)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char buf[4096];
	size_t got = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	body[0] = '\0';
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)(void *)&sa, sizeof(sa)) == 0) {
		char req[256];
		const int len = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", path);
		ssize_t n;
		if (write(fd, req, (size_t)len) == (ssize_t)len)
			while (got + 1u < sizeof(buf) && (n = read(fd, buf + got, sizeof(buf) - 1u - got)) > 0)
				got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	const char *b = strstr(buf, "\r\n\r\n");
	if (b)
		snprintf(body, size, "%s", b + 4);
}

static void *scraper_main(void *arg)
{
	struct scraper *sc = arg;
	char body[4096];

	for (int i = 0; i < 200; i++) {
		scrape_path(sc->port, "/metrics", body, sizeof(body));
		sc->requests++;
		/* every text published is "x N\n" then N - 1 copies of "y\n": one torn would not add up */
		unsigned n;
		if (sscanf(body, "x %u\n", &n) != 1)
			continue;
		size_t lines = 0;
		for (const char *p = body; *p; p++)
			lines += *p == '\n';
		sc->whole += lines == n;
	}
	return NULL;
}

static void test_the_report_is_503_until_published_then_served_beside_the_figures(void **state)
{
	(void)state;
	struct lat_error err = { "" };
	struct metrics_server *s = NULL;
	char body[4096];

	assert_int_equal(metrics_server_start("127.0.0.1:0", &s, &err), 0);
	assert_int_equal(metrics_server_publish(s, "x 1\n", NULL, NULL), 0);
	const unsigned port = metrics_server_port(s);
	scrape_path(port, "/report", body, sizeof(body));
	assert_string_equal(body, "no report made yet\n");
	assert_int_equal(metrics_server_publish_report(s, "<p>r</p>", 8), 0);
	assert_int_equal(metrics_server_publish(s, "x 2\n", NULL, NULL), 0);
	scrape_path(port, "/report", body, sizeof(body));
	assert_string_equal(body, "<p>r</p>");
	scrape_path(port, "/metrics", body, sizeof(body));
	assert_string_equal(body, "x 2\n");
	metrics_server_stop(s);
}

static void test_texts_published_while_clients_read_are_served_whole(void **state)
{
	(void)state;
	struct lat_error err = { "" };
	struct metrics_server *s = NULL;
	char text[2048];

	assert_int_equal(metrics_server_start("127.0.0.1:0", &s, &err), 0);
	assert_int_equal(metrics_server_publish(s, "x 1\n", NULL, NULL), 0);
	struct scraper sc = { .port = metrics_server_port(s) };
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, scraper_main, &sc), 0);
	for (unsigned i = 0; i < 2000; i++) {
		unsigned n = 1u + i % 200u;
		size_t len = (size_t)snprintf(text, sizeof(text), "x %u\n", n);
		for (unsigned k = 1; k < n && len + 3u < sizeof(text); k++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "y\n");
		assert_int_equal(metrics_server_publish(s, text, NULL, NULL), 0);
	}
	pthread_join(t, NULL);
	metrics_server_stop(s);
	assert_int_equal(sc.requests, 200);
	assert_int_equal(sc.whole, 200);
}

/* The guard's cuts, recorded instead of made. */
static int cuts[16];
static unsigned ncuts;

static void record_cut(int fd)
{
	assert_true(ncuts < ARRAY_SIZE(cuts));
	cuts[ncuts++] = fd;
}

static struct serve_guard *recording_guard(unsigned max_open, uint64_t request_ns)
{
	struct serve_guard *g;
	ncuts = 0;
	assert_int_equal(serve_guard_new(max_open, request_ns, record_cut, &g), 0);
	return g;
}

/* Keys are any distinct pointers; these stand for MHD's connections. */
static const char conn[8];

static void test_guard_cuts_a_request_late_at_its_deadline_but_never_one_being_answered(void **state)
{
	(void)state;
	struct serve_guard *g = recording_guard(4, 2000);
	serve_guard_opened(g, &conn[0], 10, 1000);
	serve_guard_opened(g, &conn[1], 11, 1000);
	serve_guard_answering(g, &conn[1]);
	assert_int_equal(serve_guard_expire(g, 2999), 0);
	assert_int_equal(serve_guard_expire(g, 3000), 1);
	assert_int_equal(ncuts, 1);
	assert_int_equal(cuts[0], 10);
	assert_int_equal(serve_guard_expire(g, 1000000), 0); /* cut once; answering: never */
	assert_int_equal(serve_guard_open(g), 1);
	serve_guard_free(g);
}

static void test_guard_starts_the_next_request_s_deadline_at_the_end_of_an_answer(void **state)
{
	(void)state;
	struct serve_guard *g = recording_guard(4, 2000);
	serve_guard_opened(g, &conn[0], 10, 0);
	serve_guard_answering(g, &conn[0]);
	serve_guard_answered(g, &conn[0], 5000);
	assert_int_equal(serve_guard_expire(g, 6999), 0);
	assert_int_equal(serve_guard_expire(g, 7000), 1);
	serve_guard_free(g);
}

static void test_guard_lets_a_newcomer_in_at_the_limit_by_cutting_the_longest_waiting(void **state)
{
	(void)state;
	struct serve_guard *g = recording_guard(3, 2000);
	serve_guard_opened(g, &conn[0], 10, 300);
	serve_guard_opened(g, &conn[1], 11, 100); /* waiting longest, though opened second */
	serve_guard_opened(g, &conn[2], 12, 200);
	assert_true(serve_guard_admit(g, 400));
	assert_int_equal(ncuts, 1);
	assert_int_equal(cuts[0], 11);
	assert_int_equal(serve_guard_open(g), 2);
	serve_guard_opened(g, &conn[3], 13, 400);
	assert_true(serve_guard_admit(g, 500));
	assert_int_equal(cuts[1], 12);
	serve_guard_free(g);
}

static void test_guard_refuses_a_newcomer_only_while_all_are_being_answered(void **state)
{
	(void)state;
	struct serve_guard *g = recording_guard(2, 2000);
	assert_true(serve_guard_admit(g, 0));
	serve_guard_opened(g, &conn[0], 10, 0);
	serve_guard_opened(g, &conn[1], 11, 0);
	serve_guard_answering(g, &conn[0]);
	serve_guard_answering(g, &conn[1]);
	assert_false(serve_guard_admit(g, 10));
	assert_int_equal(ncuts, 0);
	serve_guard_closed(g, &conn[1]);
	assert_true(serve_guard_admit(g, 20));
	assert_int_equal(ncuts, 0);
	serve_guard_free(g);
}

static void test_guard_keeps_a_cut_connection_s_slot_until_closed_and_then_frees_it(void **state)
{
	(void)state;
	struct serve_guard *g = recording_guard(1, 2000);
	/* one open and one cut: every slot of SERVE_GUARD_SLOTS(1) taken */
	serve_guard_opened(g, &conn[0], 10, 0);
	assert_true(serve_guard_admit(g, 1));
	serve_guard_opened(g, &conn[1], 11, 1);
	assert_int_equal(serve_guard_open(g), 1);
	/* a third the server should not have taken is cut at once */
	serve_guard_opened(g, &conn[2], 12, 2);
	assert_int_equal(ncuts, 2);
	assert_int_equal(cuts[1], 12);
	serve_guard_closed(g, &conn[0]);
	assert_true(serve_guard_admit(g, 3));
	serve_guard_opened(g, &conn[3], 13, 3);
	assert_int_equal(ncuts, 3); /* conn[1], the longest waiting, made room */
	assert_int_equal(cuts[2], 11);
	serve_guard_free(g);
}

static void test_guard_watcher_cuts_an_overdue_socket_on_its_own(void **state)
{
	(void)state;
	struct serve_guard *g;
	int sv[2];
	char b;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(serve_guard_new(4, 50 * NS_PER_MS, NULL, &g), 0);
	assert_int_equal(serve_guard_watch(g, 10 * NS_PER_MS), 0);
	serve_guard_opened(g, &conn[0], sv[0], mono_ns());
	/* the peer sees the end of the stream: shutdown(2), not a timeout of ours */
	struct timeval tv = { .tv_sec = 10 };
	setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(recv(sv[1], &b, 1, 0), 0);
	assert_int_equal(serve_guard_open(g), 0);
	serve_guard_closed(g, &conn[0]);
	serve_guard_free(g);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_reads_ipv4_and_bracketed_ipv6_with_their_port),
		cmocka_unit_test(test_listen_refuses_what_is_not_addr_port_naming_the_option),
		cmocka_unit_test(test_listen_refuses_a_port_above_65535_however_long),
		cmocka_unit_test(test_openmetrics_is_chosen_only_when_asked_for_and_not_ranked_below_text),
		cmocka_unit_test(test_listen_none_starts_no_server_and_the_rest_takes_null),
		cmocka_unit_test(test_port_zero_binds_a_port_that_a_second_server_cannot_take),
		cmocka_unit_test(test_texts_published_while_clients_read_are_served_whole),
		cmocka_unit_test(test_the_report_is_503_until_published_then_served_beside_the_figures),
		cmocka_unit_test(test_guard_cuts_a_request_late_at_its_deadline_but_never_one_being_answered),
		cmocka_unit_test(test_guard_starts_the_next_request_s_deadline_at_the_end_of_an_answer),
		cmocka_unit_test(test_guard_lets_a_newcomer_in_at_the_limit_by_cutting_the_longest_waiting),
		cmocka_unit_test(test_guard_refuses_a_newcomer_only_while_all_are_being_answered),
		cmocka_unit_test(test_guard_keeps_a_cut_connection_s_slot_until_closed_and_then_frees_it),
		cmocka_unit_test(test_guard_watcher_cuts_an_overdue_socket_on_its_own),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
