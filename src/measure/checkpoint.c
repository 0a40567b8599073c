#include "measure/checkpoint.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/units.h"
#include "report/tprint.h"
#include "result/json.h"
#include "sys/atomicfile.h"

/* Locked with the rest (mlockall): room for SQLite and the store's parse, no more. */
#define WRITER_STACK (1024u * 1024u)

uint64_t checkpoint_default(uint64_t duration_ns)
{
	return duration_ns == 0 || duration_ns > CHECKPOINT_DEFAULT_ABOVE_NS ? CHECKPOINT_DEFAULT_NS : 0;
}

uint64_t checkpoint_next(uint64_t due_ns, uint64_t every_ns, uint64_t now_ns)
{
	if (now_ns < due_ns)
		return due_ns + every_ns;
	uint64_t k = (now_ns - due_ns) / every_ns + 1u;
	return due_ns + k * every_ns;
}

uint64_t checkpoint_elapsed(const struct result *res)
{
	uint64_t end = 0;

	for (size_t i = 0; i < res->ncpus; i++) {
		const struct cpu_result *cr = &res->cpus[i];
		if (cr->nwin && cr->win[cr->nwin - 1u].w.end_ns > end)
			end = cr->win[cr->nwin - 1u].w.end_ns;
	}
	return end;
}

char *checkpoint_document(struct result *res, struct lat_error *err)
{
	const uint64_t elapsed = res->elapsed_ns;
	const bool interrupted = res->interrupted, partial = res->partial;
	char reason[sizeof(res->stop_reason)];
	char *text = NULL;
	int r;

	memcpy(reason, res->stop_reason, sizeof(reason));
	res->elapsed_ns = checkpoint_elapsed(res);
	res->interrupted = true;
	res->partial = true;
	snprintf(res->stop_reason, sizeof(res->stop_reason), "checkpoint");
	if ((r = result_finalize_why(res, err)) == 0) {
		json_t *doc = result_to_json(res);
		text = doc ? result_json_dump(doc) : NULL;
		json_decref(doc);
		if (!text)
			err_set(err, -ENOMEM, "out of memory");
	} else if (!err->msg[0]) {
		err_set(err, r, "%s", strerror(-r));
	}
	res->elapsed_ns = elapsed;
	res->interrupted = interrupted;
	res->partial = partial;
	memcpy(res->stop_reason, reason, sizeof(reason));
	return text;
}

void checkpoint_init(struct checkpoint *ck, const char *cmd, uint64_t every_ns, const char *json_path,
		     struct store *st)
{
	memset(ck, 0, sizeof(*ck));
	ck->cmd = cmd;
	ck->every_ns = json_path || st ? every_ns : 0;
	ck->json_path = json_path;
	ck->st = st;
	atomic_init(&ck->done, false);
}

static void *write_partial(void *arg)
{
	struct checkpoint *ck = arg;

	if (ck->json_path) {
		struct atomic_file f = { .fd = -1 };
		ck->file_rc = atomic_file_open(ck->json_path, &f);
		if (ck->file_rc == 0)
			ck->file_rc = json_file_commit(&f, ck->text);
		atomic_file_close(&f);
	}
	if (ck->st) {
		int64_t id;
		ck->store_rc = store_put(ck->st, ck->text, &id, &ck->store_err);
	}
	atomic_store(&ck->done, true);
	return NULL;
}

/* The writer's own thread, which no signal is sent to; where none can be made, here. */
static void start_writer(struct checkpoint *ck)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int r = pthread_attr_init(&attr);

	ck->file_rc = ck->store_rc = 0;
	atomic_store(&ck->done, false);
	if (r == 0) {
		pthread_attr_setstacksize(&attr, WRITER_STACK);
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		r = pthread_create(&ck->writer, &attr, write_partial, ck);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		pthread_attr_destroy(&attr);
	}
	ck->busy = r == 0;
	if (r != 0)
		write_partial(ck);
}

/* The write has ended: say what failed; count what was kept. */
static void collect(struct checkpoint *ck)
{
	char at[32];

	if (ck->busy)
		pthread_join(ck->writer, NULL);
	ck->busy = false;
	fmt_duration(ck->at_ns, at, sizeof(at));
	if (ck->file_rc < 0)
		tprintf(stderr, "latscope %s: checkpoint at %s: cannot write '%s': %s\n", ck->cmd, at, ck->json_path,
			strerror(-ck->file_rc));
	if (ck->store_rc < 0)
		tprintf(stderr, "latscope %s: checkpoint at %s: cannot store the partial run: %s\n", ck->cmd, at,
			ck->store_err.msg);
	if (ck->file_rc == 0 && ck->store_rc == 0) {
		ck->written++;
		ck->last_ns = ck->at_ns;
	}
	free(ck->text);
	ck->text = NULL;
}

static void take(struct checkpoint *ck, struct result *res)
{
	const uint64_t t0 = mono_ns();
	struct lat_error err = { { 0 } };
	char at[32];

	ck->at_ns = checkpoint_elapsed(res);
	ck->kept_ns = ck->at_ns;
	ck->text = checkpoint_document(res, &err);
	if (!ck->text) {
		fmt_duration(ck->at_ns, at, sizeof(at));
		tprintf(stderr, "latscope %s: checkpoint at %s: cannot format the result: %s\n", ck->cmd, at, err.msg);
		return;
	}
	start_writer(ck);
	if (!ck->busy)
		collect(ck);
	const uint64_t took = mono_ns() - t0;
	if (took > ck->longest_ns)
		ck->longest_ns = took;
}

void checkpoint_tick(struct checkpoint *ck, struct result *res)
{
	if (!ck->every_ns)
		return;
	if (ck->busy && atomic_load(&ck->done))
		collect(ck);
	/* Stopping: the final result is on its way. */
	if (ck->busy || res->interrupted)
		return;
	const uint64_t now = mono_ns();
	if (!ck->due_ns)
		ck->due_ns = res->origin_ns + ck->every_ns;
	if (now < ck->due_ns)
		return;
	ck->due_ns = checkpoint_next(ck->due_ns, ck->every_ns, now);
	/* Nothing new since the last one (no window has ended): nothing to write. */
	if (checkpoint_elapsed(res) > ck->kept_ns)
		take(ck, res);
}

void checkpoint_end(struct checkpoint *ck, struct result *res)
{
	char last[32], took[32];

	if (ck->busy || ck->text)
		collect(ck);
	if (!res || !ck->written)
		return;
	fmt_duration(ck->last_ns, last, sizeof(last));
	fmt_duration(ck->longest_ns, took, sizeof(took));
	result_info(res, "%u checkpoint%s written, the last at %s; each held the main thread up to %s", ck->written,
		    ck->written == 1 ? "" : "s", last, took);
	ck->written = 0;
}
