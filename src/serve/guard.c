#include "serve/guard.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "core/nstime.h"

struct slot {
	const void *key; /* NULL: free */
	int fd;
	uint64_t since; /* when its wait for a request began */
	bool answering;
	bool cut;
};

struct serve_guard {
	pthread_mutex_t lock; /* guards all below; held for a scan, never across a wait */
	pthread_cond_t wake;  /* stop the watcher */
	pthread_t watcher;
	bool watching, stopping;
	unsigned max_open, nslots;
	uint64_t request_ns, period_ns;
	serve_guard_cut_fn *cut;
	struct slot slots[];
};

static void shut(int fd)
{
	shutdown(fd, SHUT_RDWR);
}

int serve_guard_new(unsigned max_open, uint64_t request_ns, serve_guard_cut_fn *cut,
		    struct serve_guard **ret)
{
	const unsigned n = SERVE_GUARD_SLOTS(max_open);
	struct serve_guard *g = calloc(1, sizeof(*g) + n * sizeof(g->slots[0]));
	if (!g)
		return -ENOMEM;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&g->lock, NULL);
	g->max_open = max_open;
	g->nslots = n;
	g->request_ns = request_ns;
	g->cut = cut ? cut : shut;
	*ret = g;
	return 0;
}

static struct slot *find(struct serve_guard *g, const void *key)
{
	for (unsigned i = 0; i < g->nslots; i++)
		if (g->slots[i].key == key)
			return &g->slots[i];
	return NULL;
}

/* Called with the lock held: the server closes a socket only after
 * serve_guard_closed(), which takes it, so fd is still this connection's. */
static void cut(struct serve_guard *g, struct slot *s)
{
	s->cut = true;
	if (s->fd >= 0)
		g->cut(s->fd);
}

static unsigned expire_locked(struct serve_guard *g, uint64_t now)
{
	unsigned n = 0;
	for (unsigned i = 0; i < g->nslots; i++) {
		struct slot *s = &g->slots[i];
		if (s->key && !s->cut && !s->answering && now >= s->since + g->request_ns) {
			cut(g, s);
			n++;
		}
	}
	return n;
}

unsigned serve_guard_expire(struct serve_guard *g, uint64_t now)
{
	pthread_mutex_lock(&g->lock);
	const unsigned n = expire_locked(g, now);
	pthread_mutex_unlock(&g->lock);
	return n;
}

bool serve_guard_admit(struct serve_guard *g, uint64_t now)
{
	pthread_mutex_lock(&g->lock);
	expire_locked(g, now);
	unsigned open = 0;
	struct slot *oldest = NULL;
	for (unsigned i = 0; i < g->nslots; i++) {
		struct slot *s = &g->slots[i];
		if (!s->key || s->cut)
			continue;
		open++;
		if (!s->answering && (!oldest || s->since < oldest->since))
			oldest = s;
	}
	bool ok = open < g->max_open;
	if (!ok && oldest) {
		cut(g, oldest);
		ok = true;
	}
	pthread_mutex_unlock(&g->lock);
	return ok;
}

void serve_guard_opened(struct serve_guard *g, const void *key, int fd, uint64_t now)
{
	pthread_mutex_lock(&g->lock);
	struct slot *s = find(g, NULL);
	if (s)
		*s = (struct slot){ .key = key, .fd = fd, .since = now };
	else if (fd >= 0)
		g->cut(fd);
	pthread_mutex_unlock(&g->lock);
}

void serve_guard_answering(struct serve_guard *g, const void *key)
{
	pthread_mutex_lock(&g->lock);
	struct slot *s = find(g, key);
	if (s)
		s->answering = true;
	pthread_mutex_unlock(&g->lock);
}

void serve_guard_answered(struct serve_guard *g, const void *key, uint64_t now)
{
	pthread_mutex_lock(&g->lock);
	struct slot *s = find(g, key);
	if (s) {
		s->answering = false;
		s->since = now;
	}
	pthread_mutex_unlock(&g->lock);
}

void serve_guard_closed(struct serve_guard *g, const void *key)
{
	pthread_mutex_lock(&g->lock);
	struct slot *s = find(g, key);
	if (s)
		*s = (struct slot){ 0 };
	pthread_mutex_unlock(&g->lock);
}

unsigned serve_guard_open(struct serve_guard *g)
{
	unsigned n = 0;
	pthread_mutex_lock(&g->lock);
	for (unsigned i = 0; i < g->nslots; i++)
		n += g->slots[i].key && !g->slots[i].cut;
	pthread_mutex_unlock(&g->lock);
	return n;
}

static void *watch_run(void *arg)
{
	struct serve_guard *g = arg;

	pthread_mutex_lock(&g->lock);
	while (!g->stopping) {
		const struct timespec until = ns_to_ts(mono_ns() + g->period_ns);
		pthread_cond_timedwait(&g->wake, &g->lock, &until);
		expire_locked(g, mono_ns());
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

int serve_guard_watch(struct serve_guard *g, uint64_t period_ns)
{
	g->period_ns = period_ns ? period_ns : 1;
	const int r = pthread_create(&g->watcher, NULL, watch_run, g);
	if (r)
		return -r;
	g->watching = true;
	return 0;
}

void serve_guard_free(struct serve_guard *g)
{
	if (!g)
		return;
	if (g->watching) {
		pthread_mutex_lock(&g->lock);
		g->stopping = true;
		pthread_cond_signal(&g->wake);
		pthread_mutex_unlock(&g->lock);
		pthread_join(g->watcher, NULL);
	}
	pthread_cond_destroy(&g->wake);
	pthread_mutex_destroy(&g->lock);
	free(g);
}
