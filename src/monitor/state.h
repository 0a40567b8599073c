/* The engine's state, all of it in one struct: for engine.c, start.c and phase.c only. */
#ifndef LATSCOPE_MONITOR_STATE_H
#define LATSCOPE_MONITOR_STATE_H

#include <pthread.h>

#include "monitor/config.h"
#include "monitor/reporter.h"
#include "monitor/spikes.h"
#include "serve/http.h"
#include "sys/procstat.h"
#include "sys/smi.h"

struct mon_engine {
	struct mon_config c;
	struct mon_metrics *metrics;    /* the timer probe's */
	struct mon_metrics *noise;      /* the noise probe's, when it is scheduled */
	struct metrics_server *server;  /* NULL: serving nothing */
	struct proc_table ctx;          /* steal and interrupts of the measured CPUs */
	bool have_ctx;
	struct smi_counter *smi;        /* SMIs of the measured CPUs since the start; NULL: no source here */
	struct spikes *spikes;          /* NULL: not asked for, or not available */
	struct reporter reporter;
	bool report_served;
	bool warned_publish;
	uint64_t next_render_ns;
	struct mon_schedule schedule;
	unsigned periods;               /* measured */
	unsigned stored;                /* of them, stored (the others are kept in files) */
	int64_t last_run;

	/* Shared with the phase thread: under lock, which the loop holds but while it waits. */
	pthread_mutex_t lock;
	pthread_cond_t wake;            /* the loop's: news from the phase thread */
	pthread_cond_t noted;           /* the phase thread's: its period's spikes are in its run */
	pthread_t thread;
	enum mon_phase phase;
	uint64_t phase_ns;              /* how long it measures */
	bool running, done;             /* a phase thread exists; it has measured */
	struct mon_measured out;        /* when done */
	bool dirty;                     /* a window since the last publish */
	bool news;                      /* the runner has drained windows: the loop has work */
	struct result *finishing;       /* a period's finished result, waiting for its spikes */
	uint64_t origin_ns;             /* the phase's origin, CLOCK_MONOTONIC */
	uint64_t period_end_ns;         /* the end of the last period's windows; 0: after a noise run */
	uint64_t longest_gap_ns;
};

/* Say one line through the daemon's say function. */
void mon_say(const struct mon_engine *e, enum mon_say level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Make the texts and hand them to the server (when there is one); the next in MON_REFRESH_NS. */
void mon_publish_now(struct mon_engine *e);

/* Measure e->phase for e->phase_ns on a thread of its own: 0 or -errno. */
int mon_phase_start(struct mon_engine *e);

#endif
