/*
 * The engine's start and end: the figures, the trace ring, the server, and
 * everything they hold given back on every path.
 */
#include "monitor/engine.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "monitor/state.h"
#include "serve/addr.h"
#include "sys/cpus.h"

/* Keep this thread, and so the server's threads it starts, off the measured CPUs. */
static void housekeeping(const struct cpuset *measured)
{
	struct cpuset online, rest;

	if (cpus_online(&online) < 0)
		return;
	cpuset_diff(&rest, &online, measured);
	if (cpuset_count(&rest))
		cpus_pin(&rest);
}

/* --host: the agent asked about each explained spike; out of reach it is tried again every 5 s. */
static void start_host(struct mon_engine *e)
{
	static const char *causes[HOST_CAUSES];
	struct lat_error err = { { 0 } };
	const uint64_t min = e->c.trace_spikes_ns / 4u;
	const struct host_guest_opts o = { .spec = e->c.host, .secret = e->c.host_secret,
					   .secret_len = e->c.host_secret_len, .vcpus = *e->c.cpus,
					   .min_ns = min > 50000u ? min : 50000u, .keep_trying = true };

	for (size_t c = 0; c < HOST_CAUSES; c++)
		causes[c] = host_cause_name((enum host_cause)c);
	int r = host_guest_start(&o, &e->spikes->host, &err);
	if (r < 0) {
		mon_say(e, MON_WARN, "--host: %s; measuring without the host", err.msg);
		return;
	}
	if (r > 0)
		mon_say(e, MON_WARN, "--host: %s; trying again every 5 s", err.msg);
	mon_metrics_set_host_causes(e->metrics, causes, HOST_CAUSES);
}

/* Tracing is asked for, not needed: without it the monitor goes on, and says why. */
static void start_spikes(struct mon_engine *e)
{
	struct lat_error err = { { 0 } };

	if (spikes_start(e->c.cpus, e->c.trace_spikes_ns, &e->spikes, &err) < 0) {
		mon_say(e, MON_WARN, "--trace-spikes: not traced: %s; measuring without explanations", err.msg);
		return;
	}
	mon_metrics_set_cause_kinds(e->metrics, spike_kinds(), SPIKE_KINDS);
	if (e->c.host)
		start_host(e);
	if (spike_ring_mounted(e->spikes->ring))
		mon_say(e, MON_WARN, "--trace-spikes: tracefs was not mounted: latscope mounted it at '%s' for the monitor",
		    spike_ring_mounted(e->spikes->ring));
}

/* Where it serves, as bound (port 0: the one the kernel chose). */
static void serving_at(const struct mon_engine *e, char *where, size_t size)
{
	struct listen_addr la;

	if (listen_addr_parse(e->c.listen, &la, NULL) < 0) {
		snprintf(where, size, "%s", e->c.listen);
		return;
	}
	const uint16_t port = htons((uint16_t)metrics_server_port(e->server));
	if (la.sa.ss_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)&la.sa)->sin6_port = port;
	else
		((struct sockaddr_in *)(void *)&la.sa)->sin_port = port;
	listen_addr_format(&la.sa, where, size);
}

static int serve(struct mon_engine *e, struct lat_error *err)
{
	char where[80];
	int r = metrics_server_start_web(e->c.listen, e->c.web, &e->server, err);

	if (r < 0 || !e->server)
		return r;
	serving_at(e, where, sizeof(where));
	/* texts first: a client that read the address never gets the 503 of before */
	mon_metrics_set_up(e->metrics, true);
	mon_publish_now(e);
	/* on stderr whatever -q says: the one line a service's log must have */
	mon_say(e, MON_WARN, "serving %s://%s/metrics", e->c.web && e->c.web->tls ? "https" : "http",
		where);
	return 0;
}

static int init_sync(struct mon_engine *e)
{
	pthread_condattr_t ca;

	if (pthread_condattr_init(&ca) != 0)
		return -ENOMEM;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int r = pthread_cond_init(&e->wake, &ca);
	if (r == 0 && (r = pthread_cond_init(&e->noted, NULL)) != 0)
		pthread_cond_destroy(&e->wake);
	pthread_condattr_destroy(&ca);
	return r ? -r : 0;
}

int mon_engine_start(const struct mon_config *c, struct mon_engine **ret, struct lat_error *err)
{
	struct mon_engine *e = calloc(1, sizeof(*e));

	*ret = e;
	if (!e || init_sync(e) < 0) {
		free(e);
		*ret = NULL;
		return err_set(err, -ENOMEM, "out of memory");
	}
	pthread_mutex_init(&e->lock, NULL);
	e->c = *c;
	e->reporter.file = c->report;
	housekeeping(c->cpus);
	if (mon_metrics_new(c->cpus, c->period_id, &e->metrics) < 0 ||
	    (c->noise_id && mon_metrics_new(c->noise_cpus, c->noise_id, &e->noise) < 0))
		return err_set(err, -ENOMEM, "out of memory");
	e->have_ctx = c->context && proc_table_init(&e->ctx, c->cpus) == 0;
	/* no SMI source here: no series, rather than a count of 0 */
	if (e->have_ctx && smi_open(&e->smi, c->cpus, &(struct smi_env){ .sysroot = c->sysroot }, NULL) < 0)
		e->smi = NULL;
	/* the ring forks its guard: before the server's threads exist */
	if (c->trace_spikes_ns)
		start_spikes(e);
	int r = serve(e, err);
	if (r < 0)
		return r;
	if (!e->server)
		mon_metrics_set_up(e->metrics, true);
	return 0;
}

void mon_engine_free(struct mon_engine *e)
{
	struct lat_error err = { { 0 } };

	if (!e)
		return;
	reporter_stop(&e->reporter);
	metrics_server_stop(e->server);
	if (e->have_ctx)
		proc_table_free(&e->ctx);
	smi_close(e->smi);
	mon_metrics_free(e->metrics);
	mon_metrics_free(e->noise);
	if (e->spikes) {
		/* the tracefs instance, and a mount of latscope's, go on every path */
		int ur = spikes_stop(e->spikes, &err);
		if (ur < 0)
			mon_say(e, MON_WARN, "--trace-spikes: %s", err.msg);
		else if (ur == 0)
			mon_say(e, MON_INFO, "--trace-spikes: %s", err.msg);
	}
	pthread_cond_destroy(&e->wake);
	pthread_cond_destroy(&e->noted);
	pthread_mutex_destroy(&e->lock);
	free(e);
}
