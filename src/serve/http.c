#include "serve/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/array.h"
#include "core/nstime.h"
#include "serve/accept.h"
#include "serve/addr.h"
#include "serve/basicauth.h"
#include "serve/guard.h"
#include "serve/mhd.h"
#include "serve/mhdtls.h"

enum text_kind { TEXT_PROMETHEUS, TEXT_OPENMETRICS, TEXT_HTML, TEXT_REPORT, TEXT_KINDS };

/* One publish: immutable once made; the last reference frees it. */
struct texts {
	atomic_uint refs;
	char *body[TEXT_KINDS];
	size_t len[TEXT_KINDS];
};

struct metrics_server {
	const struct mhd_api *mhd;
	struct MHD_Daemon *daemon;
	unsigned port;
	struct serve_guard *guard;
	pthread_mutex_t lock; /* guards cur and report: held only to swap one or take a reference */
	struct texts *cur;
	struct texts *report; /* apart: large, and published once a period, not once a window */
	const struct web_config *web; /* --web-config (NULL: none): TLS and who may ask */
};

static const char *const content_type[TEXT_KINDS] = {
	[TEXT_PROMETHEUS] = "text/plain; version=0.0.4; charset=utf-8",
	[TEXT_OPENMETRICS] = "application/openmetrics-text; version=1.0.0; charset=utf-8",
	[TEXT_HTML] = "text/html; charset=utf-8",
	[TEXT_REPORT] = "text/html; charset=utf-8",
};

static void texts_unref(struct texts *t)
{
	if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
		return;
	for (size_t i = 0; i < TEXT_KINDS; i++)
		free(t->body[i]);
	free(t);
}

static struct texts *texts_take(struct metrics_server *s, struct texts *const *slot)
{
	pthread_mutex_lock(&s->lock);
	struct texts *t = *slot;
	if (t)
		atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
	pthread_mutex_unlock(&s->lock);
	return t;
}

static void texts_unref_cb(void *cls)
{
	texts_unref(cls);
}

/*
 * A response of body: copied, or, with ref, sent from the published texts
 * themselves, whose reference the response drops when it is done (a large
 * report is never copied per request).  extra_name (NULL: none) is one more
 * header.
 */
static enum MHD_Result send_body(const struct metrics_server *s, struct MHD_Connection *c, unsigned status,
				 const char *type, const char *body, size_t len, struct texts *ref,
				 const char *extra_name, const char *extra_value)
{
	const struct mhd_api *m = s->mhd;
	struct MHD_Response *r = ref ? m->response_with_free(len, body, texts_unref_cb, ref)
				     : m->response_copy(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!r) {
		texts_unref(ref);
		return MHD_NO; /* out of memory: MHD closes the connection */
	}
	m->add_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	m->add_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	m->add_header(r, "X-Content-Type-Options", "nosniff");
	if (extra_name)
		m->add_header(r, extra_name, extra_value);
	const enum MHD_Result q = m->queue_response(c, status, r);
	m->destroy_response(r);
	return q;
}

static enum MHD_Result send_text(const struct metrics_server *s, struct MHD_Connection *c, unsigned status,
				 const char *text)
{
	return send_body(s, c, status, "text/plain; charset=utf-8", text, strlen(text), NULL, NULL, NULL);
}

static enum MHD_Result send_published(struct metrics_server *s, struct MHD_Connection *c,
				      enum text_kind kind)
{
	struct texts *t = texts_take(s, kind == TEXT_REPORT ? &s->report : &s->cur);
	if (!t || !t->body[kind]) {
		texts_unref(t);
		return send_text(s, c, MHD_HTTP_SERVICE_UNAVAILABLE,
				 kind == TEXT_REPORT ? "no report made yet\n" : "no figures published yet\n");
	}
	/* Caches between a scraper and us must keep the two formats apart.  The
	 * response holds t until it is sent. */
	return send_body(s, c, MHD_HTTP_OK, content_type[kind], t->body[kind], t->len[kind], t, "Vary", "Accept");
}

enum route { ROUTE_METRICS, ROUTE_PAGE, ROUTE_REPORT, ROUTE_HEALTH };

static const struct {
	const char *path;
	enum route route;
} routes[] = {
	{ "/metrics", ROUTE_METRICS },
	{ "/", ROUTE_PAGE },
	{ "/report", ROUTE_REPORT },
	{ "/healthz", ROUTE_HEALTH },
};

/*
 * MHD 0.9.75 hands on a request target with a raw NUL byte cut at the NUL
 * ("GET /metrics\0junk HTTP/1.1" reads as /metrics).  It parses the request
 * line in place, the version right after the target's end; so where the
 * target seen here, whole and before any split at '?', does not end just
 * before the version, the target had a NUL in it.  The mark is the request's
 * first req_cls (no allocation); on_request compares it.  An MHD that lays
 * the line out otherwise makes every request 404, which test_serve shows.
 */
static void *mark_target_end(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls, (void)c;
	return (void *)(uri + strlen(uri) + 1);
}

/*
 * Paths match exactly and are never percent-decoded (see keep_escaped), so
 * "/metrics/../x", "/%2e%2e/" and "/metrics%00" are simply unknown: 404.
 */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	static const char not_allowed[] = "method not allowed\n";
	struct metrics_server *s = cls;
	(void)upload_data, (void)upload_data_size;

	serve_guard_answering(s->guard, c);
	if (*req_cls != (const void *)version)
		return send_text(s, c, MHD_HTTP_NOT_FOUND, "not found\n");
	/* every path, /healthz too, as exporter-toolkit does: the users decide who may probe */
	if (!basic_auth_allows(s->web, s->mhd->lookup_value(c, MHD_HEADER_KIND,
							    MHD_HTTP_HEADER_AUTHORIZATION)))
		return send_body(s, c, MHD_HTTP_UNAUTHORIZED, "text/plain; charset=utf-8",
				 "unauthorized\n", sizeof("unauthorized\n") - 1u, NULL,
				 MHD_HTTP_HEADER_WWW_AUTHENTICATE, BASIC_AUTH_CHALLENGE);

	/* Answered at the first call, once the headers are in: a body, if any, is
	 * never read (MHD closes the connection after the answer instead). */
	for (size_t i = 0; i < ARRAY_SIZE(routes); i++) {
		if (strcmp(url, routes[i].path) != 0)
			continue;
		if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
			return send_body(s, c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
					 not_allowed, sizeof(not_allowed) - 1, NULL,
					 MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
		switch (routes[i].route) {
		case ROUTE_METRICS: {
			const char *accept = s->mhd->lookup_value(c, MHD_HEADER_KIND,
									 MHD_HTTP_HEADER_ACCEPT);
			return send_published(s, c,
					      accept_wants_openmetrics(accept) ? TEXT_OPENMETRICS
									       : TEXT_PROMETHEUS);
		}
		case ROUTE_PAGE: return send_published(s, c, TEXT_HTML);
		case ROUTE_REPORT: return send_published(s, c, TEXT_REPORT);
		case ROUTE_HEALTH: return send_text(s, c, MHD_HTTP_OK, "ok\n");
		}
	}
	return send_text(s, c, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* The guard's view of the connections (serve/guard.h); MHD calls these from
 * its one thread, the guard's watcher cuts from its own. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	const struct metrics_server *s = cls;
	(void)addr, (void)len;
	return serve_guard_admit(s->guard, mono_ns()) ? MHD_YES : MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const struct metrics_server *s = cls;
	(void)socket_context;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		serve_guard_closed(s->guard, c);
		return;
	}
	/* MHD keeps one notifier: this one sets the TLS client certificate policy too */
	mhd_tls_started(s->web, c);
	const union MHD_ConnectionInfo *info =
		s->mhd->connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	serve_guard_opened(s->guard, c, info ? (int)info->connect_fd : -1, mono_ns());
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode why)
{
	const struct metrics_server *s = cls;
	(void)req_cls, (void)why;
	serve_guard_answered(s->guard, c, mono_ns());
}

/* MHD's unescaper would turn "%00" into a NUL that ends the path early. */
static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls, (void)c;
	return strlen(s);
}

static int listen_on(const struct listen_addr *a, const char *spec, unsigned *port,
		     struct lat_error *err)
{
	const int one = 1;
	int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(err, -errno, "cannot listen on %s: %s", spec, strerror(errno));
	/* A restart must not wait out the last run's TIME_WAIT connections. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* The longest queue the kernel allows: when a burst of connections
	 * fills it faster than the server thread accepts (and drops) them, the
	 * kernel drops the next SYN and a scrape waits out a 1 s retransmit. */
	if (bind(fd, (const struct sockaddr *)&a->sa, a->len) < 0 || listen(fd, SOMAXCONN) < 0) {
		const int e = errno;
		close(fd);
		return err_set(err, -e, "cannot listen on %s: %s", spec, strerror(e));
	}
	struct sockaddr_storage bound;
	socklen_t len = sizeof(bound);
	if (getsockname(fd, (struct sockaddr *)&bound, &len) == 0)
		*port = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
						    : ntohs(((struct sockaddr_in *)&bound)->sin_port);
	return fd;
}

int metrics_server_start(const char *addr_port, struct metrics_server **ret, struct lat_error *err)
{
	return metrics_server_start_web(addr_port, NULL, ret, err);
}

int metrics_server_start_web(const char *addr_port, const struct web_config *web,
			     struct metrics_server **ret, struct lat_error *err)
{
	struct mhd_tls tls;
	struct listen_addr a;
	int r = listen_addr_parse(addr_port, &a, err);
	if (r < 0)
		return r;
	if (a.none) {
		*ret = NULL;
		return 0;
	}
	const struct mhd_api *mhd;
	if ((r = mhd_load(&mhd, err)) < 0 || (r = mhd_tls_options(web, &tls, err)) < 0)
		return r;
	struct metrics_server *s = calloc(1, sizeof(*s));
	if (!s)
		return err_set(err, -ENOMEM, "cannot start the HTTP server: out of memory");
	s->mhd = mhd;
	s->web = web;
	const int fd = listen_on(&a, addr_port, &s->port, err);
	if (fd < 0) {
		free(s);
		return fd;
	}
	/* Deadlines are checked 8 times per request time: none is overrun by more than an eighth. */
	const uint64_t request_ns = SERVE_REQUEST_TIMEOUT_MS * NS_PER_MS;
	r = serve_guard_new(SERVE_MAX_CONNECTIONS, request_ns, NULL, &s->guard);
	if (r == 0 && (r = serve_guard_watch(s->guard, request_ns / 8)) < 0)
		serve_guard_free(s->guard);
	if (r < 0) {
		close(fd);
		free(s);
		return err_set(err, r, "cannot start the HTTP server on %s: %s", addr_port,
			       strerror(-r));
	}
	pthread_mutex_init(&s->lock, NULL);
	/* One epoll thread: every answer is a copy from memory, so 1,000 idle
	 * sockets cost it nothing and a scrape is never queued behind a request.
	 * No MHD_USE_ERROR_LOG: library code never prints. */
	s->daemon = s->mhd->start_daemon(
		MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ITC | tls.flags, 0, on_accept, s, on_request, s,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
		/* The guard decides who is let in and cuts the slow: MHD's own limit
		 * only leaves room for the cut connections it has yet to close (at
		 * its limit it would stop accepting, and a scraper would queue). */
		MHD_OPTION_CONNECTION_LIMIT, SERVE_GUARD_SLOTS(SERVE_MAX_CONNECTIONS),
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)SERVE_MAX_PER_ADDRESS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_IDLE_TIMEOUT_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_REQUEST_MEMORY,
		MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL,
		MHD_OPTION_URI_LOG_CALLBACK, mark_target_end, NULL,
		MHD_OPTION_ARRAY, tls.options, /* --web-config's TLS (serve/mhdtls.h) */
		MHD_OPTION_END);
	if (!s->daemon) {
		const int e = errno ? errno : EIO;
		close(fd);
		serve_guard_free(s->guard);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return err_set(err, -e, "cannot start the HTTP server on %s: %s", addr_port,
			       strerror(e));
	}
	*ret = s;
	return 0;
}

static int copy_text(struct texts *t, enum text_kind k, const char *text, const struct texts *old)
{
	const char *src = text ? text : (old ? old->body[k] : NULL);
	if (!src)
		return 0;
	t->len[k] = strlen(src);
	t->body[k] = malloc(t->len[k] + 1);
	if (!t->body[k])
		return -ENOMEM;
	memcpy(t->body[k], src, t->len[k] + 1);
	return 0;
}

int metrics_server_publish(struct metrics_server *s, const char *prometheus_text,
			   const char *openmetrics_text, const char *html)
{
	if (!s)
		return 0;
	const char *const in[TEXT_KINDS] = { prometheus_text, openmetrics_text, html, NULL };
	struct texts *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	atomic_init(&t->refs, 1);
	struct texts *old = texts_take(s, &s->cur);
	int r = 0;
	for (size_t k = 0; k < TEXT_REPORT && r == 0; k++)
		r = copy_text(t, (enum text_kind)k, in[k], old);
	texts_unref(old);
	if (r < 0) {
		texts_unref(t);
		return r;
	}
	pthread_mutex_lock(&s->lock);
	old = s->cur;
	s->cur = t;
	pthread_mutex_unlock(&s->lock);
	texts_unref(old); /* a request still sending it holds its own reference */
	return 0;
}

int metrics_server_publish_report(struct metrics_server *s, const char *html, size_t len)
{
	if (!s)
		return 0;
	struct texts *t = calloc(1, sizeof(*t));
	if (!t || !(t->body[TEXT_REPORT] = malloc(len + 1u))) {
		free(t);
		return -ENOMEM;
	}
	atomic_init(&t->refs, 1);
	memcpy(t->body[TEXT_REPORT], html, len);
	t->body[TEXT_REPORT][len] = '\0';
	t->len[TEXT_REPORT] = len;
	pthread_mutex_lock(&s->lock);
	struct texts *old = s->report;
	s->report = t;
	pthread_mutex_unlock(&s->lock);
	texts_unref(old);
	return 0;
}

unsigned metrics_server_port(const struct metrics_server *s)
{
	return s ? s->port : 0;
}

void metrics_server_stop(struct metrics_server *s)
{
	if (!s)
		return;
	s->mhd->stop_daemon(s->daemon); /* joins its thread and closes the listening socket */
	serve_guard_free(s->guard);	/* after: MHD reports each close to it as it stops */
	texts_unref(s->cur);
	texts_unref(s->report);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
