/*
 * The HTTP endpoint alone, for test_serve.py: serve-fixture [ADDR:PORT
 * [--silent]] starts the metrics server (default 127.0.0.1:0), prints the
 * bound port, and publishes a counter every 100 ms (with --silent: never)
 * until its stdin closes.  A start error is printed and exits 1.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "serve/http.h"

static int publish(struct metrics_server *s, unsigned long n)
{
	char prom[256], om[256], html[128];

	snprintf(prom, sizeof(prom),
		 "# HELP latscope_fixture_ticks_total Publishes so far.\n"
		 "# TYPE latscope_fixture_ticks_total counter\n"
		 "latscope_fixture_ticks_total %lu\n", n);
	snprintf(om, sizeof(om),
		 "# HELP latscope_fixture_ticks Publishes so far.\n"
		 "# TYPE latscope_fixture_ticks counter\n"
		 "latscope_fixture_ticks_total %lu\n# EOF\n", n);
	snprintf(html, sizeof(html), "<!doctype html><title>fixture</title><p>ticks %lu</p>\n", n);
	return metrics_server_publish(s, prom, om, html);
}

int main(int argc, char **argv)
{
	struct lat_error err = { "" };
	struct metrics_server *s;
	const char *addr = argc > 1 ? argv[1] : "127.0.0.1:0";
	const int silent = argc > 2 && !strcmp(argv[2], "--silent");

	if (metrics_server_start(addr, &s, &err) < 0) {
		fprintf(stderr, "serve-fixture: %s\n", err.msg);
		return 1;
	}
	unsigned long n = 0;
	if (!silent && publish(s, n) < 0)
		return 1;
	printf("%u\n", metrics_server_port(s));
	fflush(stdout);
	for (;;) {
		struct pollfd p = { .fd = 0, .events = POLLIN };
		const int r = poll(&p, 1, 100);
		if (r > 0) {
			char buf[64];
			if (read(0, buf, sizeof(buf)) <= 0)
				break;
		}
		if (!silent && publish(s, ++n) < 0)
			return 1;
	}
	metrics_server_stop(s);
	return 0;
}
