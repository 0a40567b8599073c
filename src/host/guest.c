#include "host/guest.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/nstime.h"
#include "host/client.h"
#include "host/secret.h"
#include "host/timeline.h"

#define ASK_EVERY_NS NS_PER_SEC
#define EXCHANGES    4		      /* a burst a second: the least delay of them counts */
#define ANSWER_NS    (2 * NS_PER_SEC) /* the host's answer to one request, at most */
#define CONNECT_NS   (5 * NS_PER_SEC)
#define RETRY_NS     (5 * NS_PER_SEC) /* keep_trying: between attempts to reach the host */
/* Asked up to this long before the host's now, so an episode under way then is whole the next time. */
#define LAG_NS (300 * NS_PER_MS)

struct host_guest {
	struct host_client c;
	bool linked; /* c is connected */
	struct host_guest_opts o;
	char spec[256];
	uint8_t secret[HOST_SECRET_MAX]; /* keep_trying: kept to reconnect */
	/* Under mu: the thread adds, host_guest_answer reads. */
	struct host_timeline tl;
	uint64_t from[CPUSET_MAX]; /* per vCPU: asked up to here (host time) */
	bool gone[CPUSET_MAX];	   /* the agent has no such vCPU */
	uint64_t asked, answered;  /* explain questions */
	unsigned links;		   /* connections made */
	char lost[512];		   /* why the link ended early ("" while it held) */
	char refused[512];	   /* the first error the agent answered */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
};

/* A burst of exchanges, and the line-up point it gives: 0 or -errno (the link is gone). */
static int line_up(struct host_guest *g, struct lat_error *err)
{
	uint64_t best_delay = UINT64_MAX;
	int64_t best_off = 0;
	uint64_t at = 0;

	for (int i = 0; i < EXCHANGES; i++) {
		int r = host_client_exchange(&g->c, mono_ns() + ANSWER_NS, err);
		if (r < 0)
			return r;
		const uint64_t *t = g->c.t;
		const uint64_t delay = (t[3] - t[0]) - (t[2] - t[1]);
		if (t[3] >= t[0] && t[2] >= t[1] && delay < best_delay) {
			best_delay = delay;
			best_off = ((int64_t)(t[1] - t[0]) + (int64_t)t[2] - (int64_t)t[3]) / 2;
			at = t[0] / 2 + t[3] / 2;
		}
	}
	uint64_t host, bound;
	const uint64_t now = mono_ns();
	int r = 0;
	pthread_mutex_lock(&g->mu);
	/* The window's line where it holds; this burst's own interval until then. */
	if (host_sync_host_of(&g->c.sync, now, &host, &bound) == 0 && bound <= best_delay / 2)
		r = host_timeline_offset(&g->tl, now, (int64_t)(host - now), bound);
	else if (best_delay != UINT64_MAX)
		r = host_timeline_offset(&g->tl, at, best_off, best_delay / 2);
	pthread_mutex_unlock(&g->mu);
	return r < 0 ? err_set(err, -ENOMEM, "out of memory") : 0;
}

/* Ask about each vCPU up to to (host time): 0 or -errno when the link is gone. */
static int ask_all(struct host_guest *g, uint64_t to, struct lat_error *err)
{
	struct host_explain_reply *rep = malloc(sizeof(*rep));
	int r = 0;

	if (!rep)
		return err_set(err, -ENOMEM, "out of memory");
	cpuset_foreach (v, &g->o.vcpus) {
		if (g->gone[v] || to <= g->from[v])
			continue;
		g->asked++;
		r = host_client_explain(&g->c, (unsigned)v, g->from[v], to, g->o.min_ns,
					mono_ns() + ANSWER_NS, rep, err);
		if (r == -EREMOTEIO) {
			/* The agent is there but will not answer this: say it once, ask no more of this vCPU. */
			if (!g->refused[0])
				snprintf(g->refused, sizeof(g->refused), "%s", err->msg);
			g->gone[v] = true;
			r = 0;
			continue;
		}
		if (r < 0)
			break;
		g->answered++;
		pthread_mutex_lock(&g->mu);
		g->from[v] = to;
		for (size_t i = 0; r == 0 && i < rep->n; i++)
			if (host_timeline_episode(&g->tl, (unsigned)v, &rep->ep[i]) < 0)
				r = err_set(err, -ENOMEM, "out of memory");
		pthread_mutex_unlock(&g->mu);
	}
	free(rep);
	return r;
}

/* Connect and take the host's first time: 0 or -errno with err. */
static int link_up(struct host_guest *g, const uint8_t *secret, struct lat_error *err)
{
	int r = host_client_connect(&g->c, g->spec, secret, g->o.secret_len, mono_ns() + CONNECT_NS,
				    err);
	if (r == 0 && (r = host_client_exchange(&g->c, mono_ns() + ANSWER_NS, err)) < 0)
		host_client_close(&g->c);
	if (r < 0)
		return r;
	g->linked = true;
	g->links++;
	pthread_mutex_lock(&g->mu);
	/* From now on: what the host did while no one asked is not asked about. */
	for (unsigned v = 0; v < CPUSET_MAX; v++)
		g->from[v] = g->c.t[1];
	pthread_mutex_unlock(&g->mu);
	return 0;
}

static bool wait_tick(struct host_guest *g, uint64_t until)
{
	struct timespec ts = { .tv_sec = (time_t)(until / NS_PER_SEC),
			       .tv_nsec = (long)(until % NS_PER_SEC) };
	pthread_mutex_lock(&g->mu);
	while (!g->stop && pthread_cond_timedwait(&g->cv, &g->mu, &ts) != ETIMEDOUT)
		;
	bool stop = g->stop;
	pthread_mutex_unlock(&g->mu);
	return stop;
}

static void *loop(void *arg)
{
	struct host_guest *g = arg;
	struct lat_error err;
	uint64_t next = mono_ns(), retry_at = next + RETRY_NS;

	for (;;) {
		next += ASK_EVERY_NS;
		const bool last = wait_tick(g, next);
		if (!g->linked) {
			if (last)
				break;
			if (mono_ns() >= retry_at) {
				retry_at = mono_ns() + RETRY_NS;
				if (link_up(g, g->o.secret_len ? g->secret : NULL, &err) == 0)
					g->lost[0] = '\0';
			}
			continue;
		}
		if (last) {
			/* The run's last episodes end by now: let the host's trace see them close. */
			struct timespec lag = { .tv_sec = 0, .tv_nsec = (long)LAG_NS };
			nanosleep(&lag, NULL);
		}
		int r = line_up(g, &err);
		if (r == 0)
			r = ask_all(g, last ? g->c.t[2] : g->c.t[2] - LAG_NS, &err);
		if (r < 0) {
			snprintf(g->lost, sizeof(g->lost), "%s", err.msg);
			host_client_close(&g->c);
			g->linked = false;
			retry_at = mono_ns() + RETRY_NS;
			if (!g->o.keep_trying)
				break;
		}
		if (last)
			break;
	}
	host_client_close(&g->c);
	g->linked = false;
	return NULL;
}

int host_guest_start(const struct host_guest_opts *o, struct host_guest **ret,
		     struct lat_error *err)
{
	struct host_guest *g = calloc(1, sizeof(*g));
	int r, pending = 0;

	if (!g)
		return err_set(err, -ENOMEM, "out of memory");
	g->o = *o;
	g->c.link.fd = -1;
	snprintf(g->spec, sizeof(g->spec), "%s", o->spec);
	g->o.spec = g->spec;
	g->o.secret = NULL;
	if (o->secret && o->keep_trying)
		memcpy(g->secret, o->secret,
		       o->secret_len < sizeof(g->secret) ? o->secret_len : sizeof(g->secret));
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&g->mu, NULL);
	if ((r = link_up(g, o->secret, err)) < 0) {
		if (!o->keep_trying) {
			host_guest_free(g);
			return r;
		}
		snprintf(g->lost, sizeof(g->lost), "%s", err->msg);
		pending = 1;
	}
	if ((r = pthread_create(&g->thread, NULL, loop, g)) != 0) {
		host_guest_free(g);
		return err_set(err, -r, "cannot start the thread that asks the host: %s",
			       strerror(r));
	}
	g->started = true;
	*ret = g;
	return pending;
}

int host_guest_answer(struct host_guest *g, unsigned vcpu, uint64_t from_ns, uint64_t to_ns,
		      char *line, size_t size, enum host_cause *ret_cause)
{
	struct host_match m;
	int r;

	if (vcpu >= CPUSET_MAX)
		return -EINVAL;
	pthread_mutex_lock(&g->mu);
	r = host_timeline_match(&g->tl, vcpu, from_ns, to_ns, &m);
	if (r == 0 && m.host_to + m.bound_ns > g->from[vcpu])
		r = -EAGAIN; /* not asked that far yet */
	if (r == 0) {
		json_t *j = host_match_json(&m, vcpu, g->o.min_ns, ret_cause);
		const char *text = json_string_value(json_object_get(j, "line"));
		snprintf(line, size, "%s", text ? text : "the host: out of memory");
		json_decref(j);
	}
	pthread_mutex_unlock(&g->mu);
	return r;
}

static void end_thread(struct host_guest *g)
{
	if (!g->started)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = true;
	pthread_cond_signal(&g->cv);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->thread, NULL);
	g->started = false;
}

int host_guest_finish(struct host_guest *g, struct result *res)
{
	end_thread(g);
	if (g->lost[0])
		result_note(res,
			    "--host: the link to the host ended during the run, so later spikes "
			    "have no host answer: %s",
			    g->lost);
	if (g->refused[0])
		result_note(res, "--host: %s", g->refused);
	const struct host_guest_info info = {
		.spec = g->spec,
		.vm_pid = g->c.vm_pid,
		.vm_name = g->c.vm_name,
		.found_by = g->c.found_by,
		.min_ns = g->o.min_ns,
		.asked = g->asked,
		.answered = g->answered,
		.lost = g->lost[0] ? g->lost : NULL,
	};
	return host_guest_annotate(&g->tl, &g->c.sync, &info, res);
}

void host_guest_free(struct host_guest *g)
{
	if (!g)
		return;
	end_thread(g);
	host_client_close(&g->c);
	host_timeline_free(&g->tl);
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->mu);
	memset(g->secret, 0, sizeof(g->secret));
	free(g);
}
