/*
 * The monitor's HTTP endpoint (libmicrohttpd): read-only views of texts the
 * main thread publishes whole.  The server's threads copy the latest texts
 * out and never see measurement data; no request writes or starts anything.
 *
 *   GET|HEAD /metrics   Prometheus text 0.0.4, or OpenMetrics 1.0.0 when the
 *                       Accept header asks for application/openmetrics-text
 *                       (503 until the first publish)
 *   GET|HEAD /          the HTML page (503 until the first publish)
 *   GET|HEAD /report    the last report published (503 until one is)
 *   GET|HEAD /healthz   "ok"
 *   any other path      404;  any other method  405 with "Allow: GET, HEAD"
 *
 * Limits (SERVE_* below): connections in all and per client address, the
 * time to send a whole request, an idle timeout, and the memory of one
 * request (its headers) per connection.  When the connections are all
 * taken, a new one drops the one that has waited longest for its request
 * (serve/guard.h), so a slow or idle client never keeps a scraper out.
 */
#ifndef LATSCOPE_SERVE_HTTP_H
#define LATSCOPE_SERVE_HTTP_H

#include <stddef.h>

#include "core/error.h"
#include "serve/webcfg.h"

enum {
	SERVE_MAX_CONNECTIONS = 64,      /* in all */
	SERVE_MAX_PER_ADDRESS = 8,       /* from one client address */
	SERVE_REQUEST_TIMEOUT_MS = 2000, /* to send a whole request, from accept or last answer */
	SERVE_IDLE_TIMEOUT_S = 5,        /* a connection silent this long is closed */
	SERVE_REQUEST_MEMORY = 16384,    /* bytes per connection for the request line and headers */
};

struct metrics_server;

/*
 * Listen on addr_port ("127.0.0.1:9464", "[::1]:9464"; port 0: any free
 * port) and serve from a thread of the server's own.  "none" serves nothing:
 * 0 with *ret NULL, which the other functions take.  On failure a negative
 * errno and one line in err ("option '--listen': ..." or "cannot listen on
 * ADDR: reason"); *ret untouched.
 */
int metrics_server_start(const char *addr_port, struct metrics_server **ret, struct lat_error *err);

/* The same, with --web-config's TLS and basic_auth_users (web NULL: none;
 * else it must outlive the server).  Without the password a request gets
 * 401; with TLS, plain HTTP gets no answer. */
int metrics_server_start_web(const char *addr_port, const struct web_config *web,
			     struct metrics_server **ret, struct lat_error *err);

/* Replace the served texts with copies of these (NULL: keep the last one).
 * Returns 0 or -ENOMEM (the old texts stay served). */
int metrics_server_publish(struct metrics_server *s, const char *prometheus_text,
			   const char *openmetrics_text, const char *html);

/* Replace the served report (GET /report) with a copy of html[0..len-1].
 * 0 or -ENOMEM (the old one stays served). */
int metrics_server_publish_report(struct metrics_server *s, const char *html, size_t len);

/* The bound port (the one chosen for port 0); 0 for a NULL server. */
unsigned metrics_server_port(const struct metrics_server *s);

/* Stop serving, close the socket and free s (NULL: nothing). */
void metrics_server_stop(struct metrics_server *s);

#endif
