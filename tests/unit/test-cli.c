/*
 * Unit tests for the option engine (src/measure/opt.c) and the timer command's
 * parsing and checks (src/measure/timer.c through measure_parse in src/measure/measure.c).
 *
 * Every row of the timer option table is tested in every form it accepts: the
 * per-option test walks timer_command.opts itself and fails on a row that has
 * no case below, so a new option cannot be left untested.
 *
 * The machine's CPUs are read from /sys at start-up, never hard-coded.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "skipwhy.h"

#include "measure/attach.h"
#include "measure/clock.h"
#include "measure/io.h"
#include "measure/measure.h"
#include "measure/storecmd.h"
#include "measure/storepath.h"
#include "measure/opt.h"
#include "measure/noise.h"
#include "measure/timer.h"
#include "measure/wake.h"
#include "core/array.h"
#include "core/cpuset.h"
#include "core/nstime.h"
#include "core/parse.h"
#include "probe/actions.h"
#include "probe/params.h"
#include "probe/timer.h"


/* ---- the machine: online CPUs and those this process may be pinned to ---- */

static struct cpuset online_cpus, allowed_cpus;
static unsigned first_online, last_online;
static char first_online_text[16];

static int read_machine(void **state)
{
	(void)state;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	char line[4096];

	if (!f || !fgets(line, sizeof(line), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	if (cpuset_parse(line, &online_cpus) < 0 || cpuset_count(&online_cpus) == 0)
		return -1;

	/* The CPUs this process may be pinned to: its cpuset (a cgroup's or a container's limit),
	 * not its affinity mask, which taskset narrows and a pin widens again. */
	cpu_set_t saved, one;
	CPU_ZERO(&saved);
	if (sched_getaffinity(0, sizeof(saved), &saved) < 0)
		return -1;
	cpuset_clear(&allowed_cpus);
	for (int c = cpuset_next(&online_cpus, 0); c >= 0; c = cpuset_next(&online_cpus, (unsigned)c + 1u)) {
		CPU_ZERO(&one);
		CPU_SET((unsigned)c, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			cpuset_add(&allowed_cpus, (unsigned)c);
	}
	if (sched_setaffinity(0, sizeof(saved), &saved) < 0)
		return -1;

	first_online = (unsigned)cpuset_next(&online_cpus, 0);
	for (int c = cpuset_next(&online_cpus, 0); c >= 0; c = cpuset_next(&online_cpus, (unsigned)c + 1u))
		last_online = (unsigned)c;
	snprintf(first_online_text, sizeof(first_online_text), "%u", first_online);
	return 0;
}

/* ---- building argv and running the parser ---- */

#define MAX_ARGS 1100

static char arg_store[MAX_ARGS][512];
static char *arg_v[MAX_ARGS + 1];
static struct lat_error last_err;

/* argv[0] = "timer", then args (NULL-terminated), copied into writable storage. */
static int build_argv(const char *const *args)
{
	int n = 0;

	snprintf(arg_store[0], sizeof(arg_store[0]), "timer");
	arg_v[n++] = arg_store[0];
	for (size_t i = 0; args[i]; i++) {
		assert_true(n < MAX_ARGS);
		assert_true(strlen(args[i]) < sizeof(arg_store[0]));
		snprintf(arg_store[n], sizeof(arg_store[n]), "%s", args[i]);
		arg_v[n] = arg_store[n];
		n++;
	}
	arg_v[n] = NULL;
	return n;
}

/* The arguments as one line, for failure messages. */
static const char *argv_text(void)
{
	static char buf[2048];
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; arg_v[i] && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s'%s'", i ? " " : "", arg_v[i]);
	return buf;
}

/* measure_parse on a zeroed struct, as measure_main's calloc gives it. */
static int parse_args(struct timer_cmd *c, const char *const *args)
{
	int argc = build_argv(args);

	memset(c, 0, sizeof(*c));
	memset(&last_err, 0x5a, sizeof(last_err));
	return measure_parse(&timer_command, argc, arg_v, c, &last_err);
}

#define PARSE(c, ...) parse_args((c), (const char *const[]){ __VA_ARGS__, NULL })

/* The option engine alone: the timer defaults, then opt_parse, without any check. */
static int opt_only(struct timer_cmd *c, struct opt_result *res, const char *const *args)
{
	int argc = build_argv(args);

	memset(c, 0, sizeof(*c));
	memset(&last_err, 0x5a, sizeof(last_err));
	timer_command.defaults(c);
	return opt_parse(timer_command.opts, timer_command.nopts, argc, arg_v, c, res, &last_err);
}

#define OPT_ONLY(c, res, ...) opt_only((c), (res), (const char *const[]){ __VA_ARGS__, NULL })

/* The message holds every non-NULL fragment. */
static void assert_msg_has(const char *f1, const char *f2, const char *f3)
{
	const char *frags[] = { f1, f2, f3 };

	assert_non_null(memchr(last_err.msg, '\0', sizeof(last_err.msg)));
	for (size_t i = 0; i < ARRAY_SIZE(frags); i++)
		if (frags[i] && !strstr(last_err.msg, frags[i])) {
			print_error("args %s: message \"%s\" lacks \"%s\"\n", argv_text(), last_err.msg, frags[i]);
			fail();
		}
}

static void assert_parse_ok(int r)
{
	if (r != 0) {
		print_error("args %s: r=%d, message \"%s\"\n", argv_text(), r, last_err.msg);
		fail();
	}
}

static void expect_ok(struct timer_cmd *c, const char *const *args)
{
	assert_parse_ok(parse_args(c, args));
}

#define EXPECT_OK(c, ...) expect_ok((c), (const char *const[]){ __VA_ARGS__, NULL })

static void expect_error(const char *const *args, const char *f1, const char *f2, const char *f3)
{
	struct timer_cmd c;
	int r = parse_args(&c, args);

	if (r != -EINVAL) {
		print_error("args %s: r=%d, want -EINVAL (message \"%s\")\n", argv_text(), r,
			    r < 0 ? last_err.msg : "");
		fail();
	}
	assert_true(last_err.msg[0] != '\0');
	assert_msg_has(f1, f2, f3);
}

#define EXPECT_ERROR(f1, f2, f3, ...) expect_error((const char *const[]){ __VA_ARGS__, NULL }, (f1), (f2), (f3))

/* The same check on the option engine alone. */
static void expect_opt_error(const char *const *args, const char *f1, const char *f2, const char *f3)
{
	struct timer_cmd c;
	struct opt_result res;
	int r = opt_only(&c, &res, args);

	if (r != -EINVAL) {
		print_error("args %s: opt_parse r=%d, want -EINVAL\n", argv_text(), r);
		fail();
	}
	assert_msg_has(f1, f2, f3);
}

/* "option 'AS'" and "'VALUE'" for the message checks. */
static const char *opt_named(const char *as)
{
	static char buf[2][128];
	static unsigned k;
	char *b = buf[k++ % 2u];
	snprintf(b, sizeof(buf[0]), "option '%s'", as);
	return b;
}

static const char *quoted(const char *v)
{
	static char buf[2][600];
	static unsigned k;
	char *b = buf[k++ % 2u];
	snprintf(b, sizeof(buf[0]), "'%s'", v);
	return b;
}

/* ---- comparing a parsed command with the expected one, field by field ---- */

#define SAME_U64(field)                                                                                   \
	do {                                                                                              \
		if ((uint64_t)got->field != (uint64_t)want->field) {                                      \
			print_error("%s: " #field " is %" PRIu64 ", want %" PRIu64 "\n", what,            \
				    (uint64_t)got->field, (uint64_t)want->field);                         \
			bad = true;                                                                       \
		}                                                                                         \
	} while (0)

static void assert_same_cmd(const struct timer_cmd *got, const struct timer_cmd *want, const char *what)
{
	bool bad = false;
	char a[256], b[256];

	if (memcmp(&got->run.cpus, &want->run.cpus, sizeof(got->run.cpus)) != 0) {
		cpuset_format(&got->run.cpus, a, sizeof(a));
		cpuset_format(&want->run.cpus, b, sizeof(b));
		print_error("%s: cpus is '%s', want '%s'\n", what, a, b);
		bad = true;
	}
	SAME_U64(run.policy);
	SAME_U64(run.priority);
	SAME_U64(run.dl.runtime_ns);
	SAME_U64(run.dl.deadline_ns);
	SAME_U64(run.dl.period_ns);
	SAME_U64(run.duration_ns);
	SAME_U64(run.loops);
	SAME_U64(run.threshold_ns);
	SAME_U64(run.window_ns);
	SAME_U64(run.warmup);
	SAME_U64(out.fail_above_ns);
	SAME_U64(out.fail_stat);
	SAME_U64(out.checkpoint_ns);
	if (!got->out.json_path != !want->out.json_path ||
	    (got->out.json_path && strcmp(got->out.json_path, want->out.json_path) != 0)) {
		print_error("%s: json_path is '%s', want '%s'\n", what,
			    got->out.json_path ? got->out.json_path : "(null)",
			    want->out.json_path ? want->out.json_path : "(null)");
		bad = true;
	}
	SAME_U64(out.labels.n);
	for (unsigned i = 0; i < got->out.labels.n && i < want->out.labels.n && i < LABELS_MAX; i++)
		if (strcmp(got->out.labels.items[i].key, want->out.labels.items[i].key) != 0 ||
		    strcmp(got->out.labels.items[i].value, want->out.labels.items[i].value) != 0) {
			print_error("%s: label %u is %s=%s, want %s=%s\n", what, i, got->out.labels.items[i].key,
				    got->out.labels.items[i].value, want->out.labels.items[i].key,
				    want->out.labels.items[i].value);
			bad = true;
		}
	SAME_U64(out.quiet);
	SAME_U64(out.live);
	SAME_U64(run.no_pm_qos);
	SAME_U64(run.strict);
	SAME_U64(run.trace);
	SAME_U64(run.trace_above_ns);
	SAME_U64(run.trigger_ns);
	SAME_U64(run.action_interval_ns);
	SAME_U64(run.on_threshold.n);
	SAME_U64(out.on_threshold.n);
	SAME_U64(out.on_end.n);
	SAME_U64(out.end_actions.n);
	for (unsigned i = 0; i < got->run.on_threshold.n && i < want->run.on_threshold.n; i++)
		SAME_U64(run.on_threshold.a[i].kind);
	for (unsigned i = 0; i < got->out.end_actions.n && i < want->out.end_actions.n; i++) {
		SAME_U64(out.end_actions.a[i].kind);
		SAME_U64(out.end_actions.a[i].pid);
		SAME_U64(out.end_actions.a[i].sig);
	}
	SAME_U64(out.load.n);
	for (unsigned i = 0; i < got->out.load.n && i < want->out.load.n; i++)
		if (strcmp(got->out.load.items[i], want->out.load.items[i]) != 0) {
			print_error("%s: load %u is '%s', want '%s'\n", what, i, got->out.load.items[i],
				    want->out.load.items[i]);
			bad = true;
		}
	if (!got->out.load_cmd != !want->out.load_cmd ||
	    (got->out.load_cmd && strcmp(got->out.load_cmd, want->out.load_cmd) != 0)) {
		print_error("%s: load_cmd differs\n", what);
		bad = true;
	}
	SAME_U64(p.interval_ns);
	SAME_U64(p.distance_ns);
	SAME_U64(p.aligned_offset_ns);
	SAME_U64(aligned);
	SAME_U64(p.mode);
	SAME_U64(p.clock);
	SAME_U64(run.timer_slack_ns);
	SAME_U64(p.co_correct);
	SAME_U64(help);
	if (bad)
		fail();
}

/* What measure_parse gives for no option at all. */
static void defaults_parsed(struct timer_cmd *c)
{
	int argc = build_argv((const char *const[]){ NULL });
	memset(c, 0, sizeof(*c));
	assert_int_equal(measure_parse(&timer_command, argc, arg_v, c, &last_err), 0);
}

/* ---- one case per row of the option table ---- */

static void expect_interval(struct timer_cmd *c) { c->p.interval_ns = 250u * NS_PER_US; }
static void expect_distance(struct timer_cmd *c) { c->p.distance_ns = 20u * NS_PER_US; }
static void expect_aligned(struct timer_cmd *c) { c->aligned = true; }
static void expect_aligned_offset(struct timer_cmd *c)
{
	c->p.aligned_offset_ns = 250u * NS_PER_US;
}
static void expect_mode(struct timer_cmd *c) { c->p.mode = TIMER_TIMERFD; }
static void expect_co_correct(struct timer_cmd *c) { c->p.co_correct = true; }
static void expect_clock(struct timer_cmd *c) { c->p.clock = TIMER_CLOCK_BOOTTIME; }
static void expect_timer_slack(struct timer_cmd *c) { c->run.timer_slack_ns = 500u * NS_PER_US; }
static void expect_cpus(struct timer_cmd *c)
{
	cpuset_clear(&c->run.cpus);
	cpuset_add(&c->run.cpus, first_online);
}
static void expect_priority(struct timer_cmd *c) { c->run.priority = 50; }
static void expect_policy(struct timer_cmd *c) { c->run.policy = POLICY_RR; }
static void expect_duration(struct timer_cmd *c)
{
	c->run.duration_ns = 90u * NS_PER_SEC;
	c->out.checkpoint_ns = 0;       /* a run of an hour or less has none by default */
}
static void expect_loops(struct timer_cmd *c) { c->run.loops = 1000; }
static void expect_threshold(struct timer_cmd *c) { c->run.threshold_ns = 30u * NS_PER_US; }
static void expect_window(struct timer_cmd *c) { c->run.window_ns = 10u * NS_PER_SEC; }
static void expect_warmup(struct timer_cmd *c) { c->run.warmup = 5; }
static void expect_fail_above(struct timer_cmd *c) { c->out.fail_above_ns = 50u * NS_PER_US; }
static void expect_fail_stat(struct timer_cmd *c)
{
	c->out.fail_stat = FAIL_P999;
	c->out.fail_above_ns = NS_PER_MS;       /* from the extra arguments */
}
static void expect_json(struct timer_cmd *c) { c->out.json_path = "out.json"; }
static void expect_checkpoint(struct timer_cmd *c) { c->out.checkpoint_ns = 30u * NS_PER_SEC; }
static void expect_label(struct timer_cmd *c)
{
	c->out.labels.n = 1;
	snprintf(c->out.labels.items[0].key, sizeof(c->out.labels.items[0].key), "config");
	snprintf(c->out.labels.items[0].value, sizeof(c->out.labels.items[0].value), "guest=kvm");
}
static void expect_quiet(struct timer_cmd *c) { c->out.quiet = true; }
static void expect_live(struct timer_cmd *c) { c->out.live = true; }
static void expect_db(struct timer_cmd *c) { c->out.db_path = "runs.db"; }
static void expect_no_store(struct timer_cmd *c) { c->out.no_store = true; }
static void expect_db_trust(struct timer_cmd *c) { c->out.db_trust = true; }
static void expect_no_context(struct timer_cmd *c) { c->run.no_context = true; }
static void expect_no_pm_qos(struct timer_cmd *c) { c->run.no_pm_qos = true; }
static void expect_strict(struct timer_cmd *c) { c->run.strict = true; }
static void expect_deepest_idle_state(struct timer_cmd *c)
{
	c->run.deepest_idle_state = 2;
	c->run.limit_idle = true;
}
static void expect_load(struct timer_cmd *c)
{
	c->out.load.n = 1;
	c->out.load.items[0] = "cpu:intensity=50%";
}
static void expect_load_cmd(struct timer_cmd *c) { c->out.load_cmd = "sleep 1"; }
static void expect_stop(struct timer_cmd *c)
{
	c->out.on_threshold.n = 1;
	c->run.on_threshold.n = 1;
	c->run.on_threshold.a[0].kind = ACTION_STOP;
}
static void expect_host(struct timer_cmd *c) { c->out.host = "serial:/dev/virtio-ports/org.latscope.0"; }
static void expect_host_secret(struct timer_cmd *c) { c->out.host_secret = "secret"; }
static void expect_until(struct timer_cmd *c)
{
	struct lat_error err;
	c->out.until_text = "level(1h) < 1ms";
	assert_int_equal(until_parse(c->out.until_text, &c->out.until, &err), 0);
}
static void expect_trigger(struct timer_cmd *c)
{
	expect_stop(c);         /* from the extra arguments */
	c->run.trigger_ns = 2u * NS_PER_MS;
}
static void expect_action_interval(struct timer_cmd *c)
{
	expect_stop(c);
	c->run.action_interval_ns = 5u * NS_PER_SEC;
}
static void expect_on_threshold(struct timer_cmd *c)
{
	c->out.on_threshold.n = 1;
	c->run.on_threshold.n = 1;
	c->run.on_threshold.a[0].kind = ACTION_EXEC;
}
static void expect_on_end(struct timer_cmd *c)
{
	c->out.on_end.n = 1;
	c->out.end_actions.n = 1;
	c->out.end_actions.a[0] = (struct action){ .kind = ACTION_SIGNAL, .pid = 1, .sig = SIGUSR1 };
}
static void expect_trace(struct timer_cmd *c) { c->run.trace = true; }
/* --policy deadline with the defaults the case leaves: period 1ms (the interval), deadline the period */
static void expect_deadline_policy(struct timer_cmd *c, uint64_t runtime, uint64_t deadline)
{
	c->run.policy = POLICY_DEADLINE;
	c->run.priority = 0;
	c->run.dl.period_ns = NS_PER_MS;
	c->run.dl.deadline_ns = deadline;
	c->run.dl.runtime_ns = runtime;
}
static void expect_runtime(struct timer_cmd *c) { expect_deadline_policy(c, 50u * NS_PER_US, NS_PER_MS); }
static void expect_deadline(struct timer_cmd *c) { expect_deadline_policy(c, 100u * NS_PER_US, 500u * NS_PER_US); }
static void expect_period(struct timer_cmd *c) { expect_deadline_policy(c, 100u * NS_PER_US, NS_PER_MS); }
static void expect_trace_above(struct timer_cmd *c)
{
	c->run.trace = true;
	c->run.trace_above_ns = 250 * NS_PER_US;
}
static void expect_trace_backend(struct timer_cmd *c)
{
	c->run.trace = true;
	c->run.trace_backend = TRACE_BACKEND_TRACEFS;
}
static void expect_help(struct timer_cmd *c)
{
	c->help = true;
	cpuset_clear(&c->run.cpus);     /* --help returns before the CPUs are resolved */
	c->out.checkpoint_ns = 0;       /* and before the checkpoint's default */
}

struct opt_case {
	const char *name;               /* long name, as in the table */
	const char *good;               /* a valid value; NULL for flags */
	void (*expect)(struct timer_cmd *c);    /* turns the parsed defaults into what good gives */
	const char *bad;                /* a value the parser rejects; NULL for flags */
	const char *bad_says;           /* what the message says about it */
	const char *extra[3];           /* other arguments the checks need */
};

static const struct opt_case cases[] = {
	{ "interval", "250us", expect_interval, "123abc", "is not a duration", { NULL } },
	{ "distance", "20", expect_distance, "-5", "cannot be negative", { NULL } },
	{ "aligned", NULL, expect_aligned, NULL, NULL, { NULL } },
	{ "aligned-offset", "250", expect_aligned_offset, "123abc", "is not a duration", { NULL } },
	{ "mode", "timerfd", expect_mode, "sleep", "is not one of nanosleep, timerfd, posix", { NULL } },
	{ "co-correct", NULL, expect_co_correct, NULL, NULL, { NULL } },
	{ "clock", "boottime", expect_clock, "Realtime", "is not one of monotonic, realtime, tai, boottime", { NULL } },
	{ "timer-slack", "500", expect_timer_slack, "1.5ns", "is not a duration", { NULL } },
	{ "cpus", first_online_text, expect_cpus, "0,,1", "is not a CPU list", { NULL } },
	{ "priority", "50", expect_priority, "123abc", "is not a whole number", { NULL } },
	{ "policy", "rr", expect_policy, "batch", "is not one of fifo, rr, other", { NULL } },
	{ "duration", "90", expect_duration, "-5", "cannot be negative", { NULL } },
	{ "loops", "1000", expect_loops, "1e3", "is not a whole number", { NULL } },
	{ "threshold", "30", expect_threshold, "1.5ns", "is not a duration", { NULL } },
	{ "window", "10", expect_window, "0", "is below the minimum of 10ms", { NULL } },
	{ "warmup", "5", expect_warmup, "-1", "is not a whole number", { NULL } },
	{ "fail-above", "50us", expect_fail_above, "5 parsecs", "is not a duration", { NULL } },
	{ "fail-stat", "p99.9", expect_fail_stat, "p42", "is not one of max, warm_max, p99", { "--fail-above", "1ms", NULL } },
	{ "json", "out.json", expect_json, "", "the value is empty", { NULL } },
	{ "checkpoint", "30s", expect_checkpoint, "500ms", "is below the minimum of 1s", { NULL } },
	{ "label", "config=guest=kvm", expect_label, "1x=2", "is not KEY=VALUE", { NULL } },
	{ "quiet", NULL, expect_quiet, NULL, NULL, { NULL } },
	{ "live", NULL, expect_live, NULL, NULL, { NULL } },
	{ "db", "runs.db", expect_db, "", "the value is empty", { NULL } },
	{ "no-store", NULL, expect_no_store, NULL, NULL, { NULL } },
	{ "db-trust", NULL, expect_db_trust, NULL, NULL, { NULL } },
	{ "no-context", NULL, expect_no_context, NULL, NULL, { NULL } },
	{ "no-pm-qos", NULL, expect_no_pm_qos, NULL, NULL, { NULL } },
	{ "strict", NULL, expect_strict, NULL, NULL, { NULL } },
	{ "deepest-idle-state", "2", expect_deepest_idle_state, "10", "is out of range (0 to 9)", { NULL } },
	{ "load", "cpu:intensity=50%", expect_load, "frob", "unknown load 'frob'", { NULL } },
	{ "load-cmd", "sleep 1", expect_load_cmd, "", "the value is empty", { NULL } },
	{ "host", "serial:/dev/virtio-ports/org.latscope.0", expect_host, "", "the value is empty", { NULL } },
	{ "host-secret", "secret", expect_host_secret, "", "the value is empty", { NULL } },
	{ "until", "level(1h) < 1ms", expect_until, "level(2h) < 1ms", "the period of level(P) is one of", { NULL } },
	{ "runtime", "50", expect_runtime, "123abc", "is not a duration", { "--policy", "deadline", NULL } },
	{ "deadline", "500us", expect_deadline, "-5", "cannot be negative", { "--policy", "deadline", NULL } },
	{ "period", "1ms", expect_period, "1.5ns", "is not a duration", { "--policy", "deadline", NULL } },
	{ "trigger", "2ms", expect_trigger, "2 parsecs", "is not a duration", { "--on-threshold", "stop", NULL } },
	{ "on-threshold", "exec true", expect_on_threshold, "explode", "is not an action (stop, trace, exec CMD or "
	  "signal PID:SIG)", { NULL } },
	{ "action-interval", "5s", expect_action_interval, "soon", "is not a duration", { "--on-threshold", "stop", NULL } },
	{ "on-end", "signal 1:USR1", expect_on_end, "stop", "cannot be done after the run", { NULL } },
	{ "trace", NULL, expect_trace, NULL, NULL, { NULL } },
	{ "trace-above", "250", expect_trace_above, "123abc", "is not a duration", { "--trace", NULL } },
	{ "trace-backend", "tracefs", expect_trace_backend, "ebpf", "is not one of auto, bpf, tracefs, both",
	  { "--trace", NULL } },
	{ "help", NULL, expect_help, NULL, NULL, { NULL } },
};

static const struct opt_case *case_for(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	return NULL;
}

static bool row_takes_value(const struct opt *o)
{
	return o->kind != OPT_FLAG && o->kind != OPT_HELP;
}

/* args = form..., then the case's extras, then NULL. */
static size_t with_extras(const char **args, size_t n, const struct opt_case *k)
{
	for (size_t i = 0; i < ARRAY_SIZE(k->extra) && k->extra[i]; i++)
		args[n++] = k->extra[i];
	args[n] = NULL;
	return n;
}

/* Parse one form of a good value and compare the whole command with the expected one. */
static void check_good_form(const struct opt_case *k, const struct opt *o, const char *const *args,
			    const char *form)
{
	struct timer_cmd got, want;
	char what[160];
	int r;

	defaults_parsed(&want);
	k->expect(&want);
	r = parse_args(&got, args);
	snprintf(what, sizeof(what), "--%s as %s", o->name, form);
	if (r != (o->kind == OPT_HELP ? 1 : 0)) {
		print_error("%s: args %s: r=%d, message \"%s\"\n", what, argv_text(), r, r < 0 ? last_err.msg : "");
		fail();
	}
	assert_same_cmd(&got, &want, what);
}

static void check_bad_form(const struct opt_case *k, const char *const *args, const char *as)
{
	expect_error(args, opt_named(as), k->bad[0] ? quoted(k->bad) : NULL, k->bad_says);
}

static void test_every_option_is_accepted_in_each_form_and_lands_in_its_own_field(void **state)
{
	(void)state;
	const struct opt *opts = timer_command.opts;
	bool case_used[ARRAY_SIZE(cases)] = { false };
	size_t tested = 0;

	assert_true(timer_command.nopts <= OPT_MAX);
	for (size_t i = 0; i < timer_command.nopts; i++) {
		const struct opt *o = &opts[i];
		const struct opt_case *k = case_for(o->name);
		const char *args[12];
		char eq[600], lng[80], shrt[3] = { '-', o->short_name, '\0' }, attached[600];

		if (!k) {
			print_error("option '--%s' has no test case: add one to cases[]\n", o->name);
			fail();
			return;
		}
		case_used[k - cases] = true;
		assert_true(!row_takes_value(o) == !k->good);
		snprintf(lng, sizeof(lng), "--%s", o->name);

		if (!row_takes_value(o)) {
			args[0] = lng;
			with_extras(args, 1, k);
			check_good_form(k, o, args, "--name");
			if (o->short_name) {
				args[0] = shrt;
				with_extras(args, 1, k);
				check_good_form(k, o, args, "-x");
			}
			tested++;
			continue;
		}

		/* --name value, --name=value, -x value, -xvalue */
		args[0] = lng;
		args[1] = k->good;
		with_extras(args, 2, k);
		check_good_form(k, o, args, "--name value");
		snprintf(eq, sizeof(eq), "--%s=%s", o->name, k->good);
		args[0] = eq;
		with_extras(args, 1, k);
		check_good_form(k, o, args, "--name=value");
		if (o->short_name) {
			args[0] = shrt;
			args[1] = k->good;
			with_extras(args, 2, k);
			check_good_form(k, o, args, "-x value");
			snprintf(attached, sizeof(attached), "-%c%s", o->short_name, k->good);
			args[0] = attached;
			with_extras(args, 1, k);
			check_good_form(k, o, args, "-xvalue");
		}

		/* The bad value in the same forms: the message names the option as typed. */
		args[0] = lng;
		args[1] = k->bad;
		with_extras(args, 2, k);
		check_bad_form(k, args, lng);
		snprintf(eq, sizeof(eq), "--%s=%s", o->name, k->bad);
		args[0] = eq;
		with_extras(args, 1, k);
		check_bad_form(k, args, lng);
		if (o->short_name) {
			args[0] = shrt;
			args[1] = k->bad;
			with_extras(args, 2, k);
			check_bad_form(k, args, shrt);
			if (k->bad[0]) {
				snprintf(attached, sizeof(attached), "-%c%s", o->short_name, k->bad);
				args[0] = attached;
				with_extras(args, 1, k);
				check_bad_form(k, args, shrt);
			}
		}
		tested++;
	}

	/* Every row was exercised, and no case names an option that is not there. */
	assert_int_equal(tested, timer_command.nopts);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (!case_used[i]) {
			print_error("case '%s' matches no row of the timer table\n", cases[i].name);
			fail();
		}
}

/* The front ends name rows by these enumerators: a row moved in RUN_OPTS
 * without its enumerator would hand cyclictest's -i to another option. */
static void test_each_named_row_of_the_timer_and_noise_tables_is_the_option_of_that_name(void **state)
{
	(void)state;
	static const struct {
		int timer, noise;
		const char *name;
	} rows[] = {
		{ TIMER_OPT_CPUS, NOISE_OPT_CPUS, "cpus" },
		{ TIMER_OPT_PRIORITY, NOISE_OPT_PRIORITY, "priority" },
		{ TIMER_OPT_POLICY, NOISE_OPT_POLICY, "policy" },
		{ TIMER_OPT_DURATION, NOISE_OPT_DURATION, "duration" },
		{ TIMER_OPT_LOOPS, NOISE_OPT_LOOPS, "loops" },
		{ TIMER_OPT_THRESHOLD, NOISE_OPT_THRESHOLD, "threshold" },
		{ TIMER_OPT_WINDOW, NOISE_OPT_WINDOW, "window" },
		{ TIMER_OPT_WARMUP, NOISE_OPT_WARMUP, "warmup" },
		{ TIMER_OPT_FAIL_ABOVE, NOISE_OPT_FAIL_ABOVE, "fail-above" },
		{ TIMER_OPT_FAIL_STAT, NOISE_OPT_FAIL_STAT, "fail-stat" },
		{ TIMER_OPT_TRIGGER, NOISE_OPT_TRIGGER, "trigger" },
		{ TIMER_OPT_ON_THRESHOLD, NOISE_OPT_ON_THRESHOLD, "on-threshold" },
		{ TIMER_OPT_ACTION_INTERVAL, NOISE_OPT_ACTION_INTERVAL, "action-interval" },
		{ TIMER_OPT_ON_END, NOISE_OPT_ON_END, "on-end" },
		{ TIMER_OPT_JSON, NOISE_OPT_JSON, "json" },
		{ TIMER_OPT_DB, NOISE_OPT_DB, "db" },
		{ TIMER_OPT_DB_TRUST, NOISE_OPT_DB_TRUST, "db-trust" },
		{ TIMER_OPT_NO_STORE, NOISE_OPT_NO_STORE, "no-store" },
		{ TIMER_OPT_CHECKPOINT, NOISE_OPT_CHECKPOINT, "checkpoint" },
		{ TIMER_OPT_LABEL, NOISE_OPT_LABEL, "label" },
		{ TIMER_OPT_QUIET, NOISE_OPT_QUIET, "quiet" },
		{ TIMER_OPT_LIVE, NOISE_OPT_LIVE, "live" },
		{ TIMER_OPT_NO_PM_QOS, NOISE_OPT_NO_PM_QOS, "no-pm-qos" },
		{ TIMER_OPT_DEEPEST_IDLE_STATE, NOISE_OPT_DEEPEST_IDLE_STATE, "deepest-idle-state" },
		{ TIMER_OPT_NO_CONTEXT, NOISE_OPT_NO_CONTEXT, "no-context" },
		{ TIMER_OPT_STRICT, NOISE_OPT_STRICT, "strict" },
		{ TIMER_OPT_LOAD, NOISE_OPT_LOAD, "load" },
		{ TIMER_OPT_LOAD_CMD, NOISE_OPT_LOAD_CMD, "load-cmd" },
		{ TIMER_OPT_HOST, NOISE_OPT_HOST, "host" },
		{ TIMER_OPT_HOST_SECRET, NOISE_OPT_HOST_SECRET, "host-secret" },
		{ TIMER_OPT_HELP, NOISE_OPT_HELP, "help" },
		{ TIMER_OPT_INTERVAL, -1, "interval" },
		{ TIMER_OPT_DISTANCE, -1, "distance" },
		{ TIMER_OPT_ALIGNED, -1, "aligned" },
		{ TIMER_OPT_ALIGNED_OFFSET, -1, "aligned-offset" },
		{ TIMER_OPT_CLOCK, NOISE_OPT_CLOCK, "clock" },
		{ TIMER_OPT_TRACE, NOISE_OPT_TRACE, "trace" },
		{ -1, NOISE_OPT_BURST, "burst" },
		{ -1, NOISE_OPT_REST, "rest" },
	};
	assert_int_equal(timer_command.nopts, TIMER_NOPTS);
	assert_int_equal(noise_command.nopts, NOISE_NOPTS);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		if (rows[i].timer >= 0)
			assert_string_equal(timer_command.opts[rows[i].timer].name, rows[i].name);
		if (rows[i].noise >= 0)
			assert_string_equal(noise_command.opts[rows[i].noise].name, rows[i].name);
	}
}

/* The code that handles any measuring command (measure_with, run, tune) finds
 * a shared row by its enum: each command's row found so is the one of that
 * long name, and the timer's and noise's are where their own enums say. */
static void test_shared_rows_are_found_by_their_enum_in_every_measuring_command(void **state)
{
	(void)state;
	static const struct {
		enum run_row row;
		const char *name;
	} known[] = {
		{ RUN_ROW_CPUS, "cpus" },
		{ RUN_ROW_PRIORITY, "priority" },
		{ RUN_ROW_POLICY, "policy" },
		{ RUN_ROW_DURATION, "duration" },
		{ RUN_ROW_LOOPS, "loops" },
		{ RUN_ROW_WINDOW, "window" },
		{ RUN_ROW_FAIL_STAT, "fail-stat" },
		{ RUN_ROW_TRIGGER, "trigger" },
		{ RUN_ROW_ACTION_INTERVAL, "action-interval" },
		{ RUN_ROW_CHECKPOINT, "checkpoint" },
		{ RUN_ROW_LABEL, "label" },
		{ RUN_ROW_NO_PM_QOS, "no-pm-qos" },
		{ RUN_ROW_DEEPEST_IDLE_STATE, "deepest-idle-state" },
		{ RUN_ROW_HELP, "help" },
		{ RUN_ROW_UNTIL, "until" },
	};
	const struct measure_cmd *const cmds[] = {
		&timer_command, &noise_command, &wake_command,
		&io_command,	&clock_command, &attach_command
	};
	struct opt_result res;

	for (size_t c = 0; c < ARRAY_SIZE(cmds); c++) {
		const struct measure_cmd *mc = cmds[c];
		for (size_t k = 0; k < ARRAY_SIZE(known); k++) {
			int row = opt_run_row(mc->opts, mc->nopts, known[k].row);
			/* the ones a command may lack: attach places its thread itself, io counts reads
			 * (--count, its own row), io and clock have no tail to decide --until on */
			bool may_lack = (known[k].row == RUN_ROW_CPUS && mc == &attach_command) ||
					(known[k].row == RUN_ROW_LOOPS && mc == &io_command) ||
					(known[k].row == RUN_ROW_UNTIL &&
					 (mc == &io_command || mc == &clock_command));
			if (row < 0) {
				assert_int_equal(row, -ENOENT);
				assert_true(may_lack);
				assert_null(opt_find(mc->opts, mc->nopts, known[k].name));
				continue;
			}
			assert_string_equal(mc->opts[row].name, known[k].name);
		}
		assert_int_equal(opt_run_row(mc->opts, mc->nopts, RUN_ROW_NONE), -ENOENT);
	}
	for (int k = RUN_ROW_CPUS; k <= RUN_ROW_HELP; k++) {
		assert_int_equal(
			opt_run_row(timer_command.opts, timer_command.nopts, (enum run_row)k),
			TIMER_OPT_CPUS + k - RUN_ROW_CPUS);
		assert_int_equal(
			opt_run_row(noise_command.opts, noise_command.nopts, (enum run_row)k),
			NOISE_OPT_CPUS + k - RUN_ROW_CPUS);
	}
	/* marked by its enum, given by its enum; a row the table lacks is refused and marks nothing */
	memset(&res, 0, sizeof(res));
	assert_int_equal(
		opt_run_mark(noise_command.opts, noise_command.nopts, &res, RUN_ROW_WINDOW), 0);
	assert_true(opt_given_at(noise_command.nopts, &res, NOISE_OPT_WINDOW));
	assert_true(opt_run_given(noise_command.opts, noise_command.nopts, &res, RUN_ROW_WINDOW));
	assert_false(
		opt_run_given(noise_command.opts, noise_command.nopts, &res, RUN_ROW_DURATION));
	assert_int_equal(
		opt_run_mark(attach_command.opts, attach_command.nopts, &res, RUN_ROW_CPUS),
		-ENOENT);
	assert_int_equal(res.seen, UINT64_C(1) << NOISE_OPT_WINDOW);
}

static void test_timer_table_has_the_documented_short_names(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		char short_name;
	} want[] = {
		{ "interval", 'i' }, { "distance", 'd' }, { "cpus", 'a' }, { "priority", 'p' }, { "duration", 'D' },
		{ "loops", 'l' }, { "quiet", 'q' }, { "help", 'h' },
	};

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct opt *o = opt_find(timer_command.opts, timer_command.nopts, want[i].name);
		assert_non_null(o);
		assert_int_equal(o->short_name, want[i].short_name);
	}
	/* No two rows share a long or a short name. */
	for (size_t i = 0; i < timer_command.nopts; i++)
		for (size_t j = i + 1u; j < timer_command.nopts; j++) {
			assert_string_not_equal(timer_command.opts[i].name, timer_command.opts[j].name);
			if (timer_command.opts[i].short_name)
				assert_int_not_equal(timer_command.opts[i].short_name, timer_command.opts[j].short_name);
		}
}

static void test_flags_reject_a_value_in_long_form_and_an_attached_character_in_short_form(void **state)
{
	(void)state;
	char arg[80], lng[80];

	for (size_t i = 0; i < timer_command.nopts; i++) {
		const struct opt *o = &timer_command.opts[i];
		if (row_takes_value(o))
			continue;
		snprintf(arg, sizeof(arg), "--%s=1", o->name);
		snprintf(lng, sizeof(lng), "--%s", o->name);
		EXPECT_ERROR(opt_named(lng), "takes no value", NULL, arg);
		/* -h1 is --help: parsing stops at the h.  Other flags go on to the '1'. */
		if (o->short_name && o->kind != OPT_HELP) {
			snprintf(arg, sizeof(arg), "-%c1", o->short_name);
			EXPECT_ERROR("unknown option '-1'", NULL, NULL, arg);
		}
	}
	EXPECT_ERROR("option '--quiet' takes no value", NULL, NULL, "--quiet=1");
	EXPECT_ERROR("option '--quiet' takes no value", NULL, NULL, "--quiet=");
}

static void test_every_valued_option_at_the_end_of_argv_needs_a_value(void **state)
{
	(void)state;
	char lng[80], shrt[3];

	for (size_t i = 0; i < timer_command.nopts; i++) {
		const struct opt *o = &timer_command.opts[i];
		if (!row_takes_value(o))
			continue;
		snprintf(lng, sizeof(lng), "--%s", o->name);
		EXPECT_ERROR(opt_named(lng), "needs a value", NULL, "-q", lng);
		if (o->short_name) {
			snprintf(shrt, sizeof(shrt), "-%c", o->short_name);
			EXPECT_ERROR(opt_named(shrt), "needs a value", NULL, "-q", shrt);
			/* Bundled after a flag, still at the end. */
			char bundle[4] = { '-', 'q', o->short_name, '\0' };
			EXPECT_ERROR(opt_named(shrt), "needs a value", NULL, bundle);
		}
	}
}

/* ---- bad values ---- */

static void test_every_duration_option_rejects_junk_in_every_form(void **state)
{
	(void)state;
	static const struct {
		const char *text, *says;
	} junk[] = {
		{ "123abc", "is not a duration" }, { "-5", "cannot be negative" }, { "", "is not a duration" },
		{ "1.5ns", "is not a duration" }, { "5 ms", "is not a duration" }, { "1e3", "is not a duration" },
		{ "ms", "is not a duration" },      { ".5s", "is not a duration" },  { "5.s", "is not a duration" },
		{ "0x10", "is not a duration" },   { "+5", "is not a duration" },   { "5MS", "is not a duration" },
		{ "-0", "cannot be negative" },
	};
	char lng[80], eq[160], shrt[3], attached[160];

	for (size_t i = 0; i < timer_command.nopts; i++) {
		const struct opt *o = &timer_command.opts[i];
		if (o->kind != OPT_DURATION)
			continue;
		snprintf(lng, sizeof(lng), "--%s", o->name);
		snprintf(shrt, sizeof(shrt), "-%c", o->short_name);
		for (size_t j = 0; j < ARRAY_SIZE(junk); j++) {
			const char *v = junk[j].text;
			EXPECT_ERROR(opt_named(lng), quoted(v), junk[j].says, lng, v);
			snprintf(eq, sizeof(eq), "%s=%s", lng, v);
			EXPECT_ERROR(opt_named(lng), quoted(v), junk[j].says, eq);
			if (!o->short_name)
				continue;
			EXPECT_ERROR(opt_named(shrt), quoted(v), junk[j].says, shrt, v);
			if (v[0]) {
				snprintf(attached, sizeof(attached), "%s%s", shrt, v);
				EXPECT_ERROR(opt_named(shrt), quoted(v), junk[j].says, attached);
			}
		}
		/* Too large to represent at all. */
		EXPECT_ERROR(opt_named(lng), "'99999999999999999999999h'", "above the maximum", lng,
			     "99999999999999999999999h");
	}
}

static void test_every_counting_option_rejects_junk_in_every_form(void **state)
{
	(void)state;
	static const char *const junk[] = { "123abc", "-5", "", "1.5", "+5", "0x10", " 5", "5 ", "1e3", "five" };
	char lng[80], eq[160], shrt[3], attached[160];

	for (size_t i = 0; i < timer_command.nopts; i++) {
		const struct opt *o = &timer_command.opts[i];
		if (o->kind != OPT_UINT)
			continue;
		snprintf(lng, sizeof(lng), "--%s", o->name);
		snprintf(shrt, sizeof(shrt), "-%c", o->short_name);
		for (size_t j = 0; j < ARRAY_SIZE(junk); j++) {
			const char *v = junk[j];
			EXPECT_ERROR(opt_named(lng), quoted(v), "is not a whole number", lng, v);
			snprintf(eq, sizeof(eq), "%s=%s", lng, v);
			EXPECT_ERROR(opt_named(lng), quoted(v), "is not a whole number", eq);
			if (!o->short_name)
				continue;
			EXPECT_ERROR(opt_named(shrt), quoted(v), "is not a whole number", shrt, v);
			if (v[0]) {
				snprintf(attached, sizeof(attached), "%s%s", shrt, v);
				EXPECT_ERROR(opt_named(shrt), quoted(v), "is not a whole number", attached);
			}
		}
		EXPECT_ERROR(opt_named(lng), "'99999999999999999999999'", "is out of range", lng,
			     "99999999999999999999999");
	}
}

static void test_enum_options_reject_unknown_and_differently_cased_choices(void **state)
{
	(void)state;
	EXPECT_ERROR("option '--policy'", "'FIFO'", "is not one of fifo, rr, other, deadline", "--policy", "FIFO");
	EXPECT_ERROR("option '--policy'", "''", "is not one of", "--policy=");
	EXPECT_ERROR("option '--mode'", "'timerfd '", "is not one of nanosleep, timerfd, posix", "--mode", "timerfd ");
	EXPECT_ERROR("option '--fail-stat'", "'p99.999'", "max, warm_max, p99, p99.9, p99.99, mean",
		     "--fail-above", "1ms", "--fail-stat", "p99.999");
}

/* ---- range limits, from the table itself and as documented ---- */

static void test_every_range_is_inclusive_at_min_and_max_and_rejects_one_beyond(void **state)
{
	(void)state;
	char lng[80], v[64];
	struct timer_cmd c;
	struct opt_result res;

	for (size_t i = 0; i < timer_command.nopts; i++) {
		const struct opt *o = &timer_command.opts[i];
		const char *unit;
		if (o->kind == OPT_DURATION)
			unit = "ns";
		else if (o->kind == OPT_UINT)
			unit = "";
		else
			continue;
		assert_true(o->min <= o->max);
		snprintf(lng, sizeof(lng), "--%s", o->name);
		uint64_t *field = (uint64_t *)(void *)((char *)&c + o->offset);

		snprintf(v, sizeof(v), "%" PRIu64 "%s", o->min, unit);
		assert_parse_ok(OPT_ONLY(&c, &res, lng, v));
		assert_int_equal(*field, o->min);
		snprintf(v, sizeof(v), "%" PRIu64 "%s", o->max, unit);
		assert_parse_ok(OPT_ONLY(&c, &res, lng, v));
		assert_int_equal(*field, o->max);

		if (o->min > 0) {
			snprintf(v, sizeof(v), "%" PRIu64 "%s", o->min - 1u, unit);
			expect_opt_error((const char *const[]){ lng, v, NULL }, opt_named(lng), quoted(v),
					 o->kind == OPT_DURATION ? "is below the minimum of" : "is out of range");
		}
		if (o->max < UINT64_MAX) {
			snprintf(v, sizeof(v), "%" PRIu64 "%s", o->max + 1u, unit);
			expect_opt_error((const char *const[]){ lng, v, NULL }, opt_named(lng), quoted(v),
					 o->kind == OPT_DURATION ? "is above the maximum of" : "is out of range");
		}
	}
}

static void test_checkpoint_zero_or_none_turns_it_off_and_anything_else_below_a_second_is_refused(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_OK(&c, "--checkpoint", "0");
	assert_int_equal(c.out.checkpoint_ns, 0);
	EXPECT_OK(&c, "--checkpoint=none");
	assert_int_equal(c.out.checkpoint_ns, 0);
	EXPECT_OK(&c, "--checkpoint", "0ms", "-D", "2h");
	assert_int_equal(c.out.checkpoint_ns, 0);
	EXPECT_OK(&c, "--checkpoint", "1");
	assert_int_equal(c.out.checkpoint_ns, NS_PER_SEC);
	EXPECT_ERROR("option '--checkpoint'", "'999ms'", "is below the minimum of 1s", "--checkpoint", "999ms");
	EXPECT_ERROR("option '--checkpoint'", "'None'", "is not a duration", "--checkpoint", "None");
	/* "none" means off for this option only */
	EXPECT_ERROR("option '--window'", "'none'", "is not a duration", "--window", "none");
}

static void test_checkpoint_defaults_to_ten_minutes_for_a_run_over_an_hour_or_without_an_end(void **state)
{
	(void)state;
	static const struct {
		const char *args[3];
		uint64_t want;
	} k[] = {
		{ { NULL }, 10u * 60u * NS_PER_SEC },
		{ { "-l", "1000", NULL }, 10u * 60u * NS_PER_SEC },
		{ { "-D", "1h", NULL }, 0 },
		{ { "-D", "3601", NULL }, 10u * 60u * NS_PER_SEC },
		{ { "-D", "3m", NULL }, 0 },
	};
	struct timer_cmd c;

	for (size_t i = 0; i < ARRAY_SIZE(k); i++) {
		expect_ok(&c, k[i].args);
		if (c.out.checkpoint_ns != k[i].want) {
			print_error("args %s: checkpoint %" PRIu64 " ns, want %" PRIu64 "\n", argv_text(),
				    c.out.checkpoint_ns, k[i].want);
			fail();
		}
	}
	/* given, it is kept whatever the duration */
	EXPECT_OK(&c, "-D", "3m", "--checkpoint", "30s");
	assert_int_equal(c.out.checkpoint_ns, 30u * NS_PER_SEC);
}

static void test_documented_limits_hold_through_every_check(void **state)
{
	(void)state;
	struct timer_cmd c;

	/* priority: 1 to 99 for fifo */
	EXPECT_OK(&c, "-p", "1");
	assert_int_equal(c.run.priority, 1);
	EXPECT_OK(&c, "-p", "99");
	assert_int_equal(c.run.priority, 99);
	EXPECT_ERROR("option '-p'", "'100'", "is out of range (0 to 99)", "-p", "100");

	/* interval: 1us (the clock's floor) to 1h, when the window is long enough */
	EXPECT_OK(&c, "-i", "1us");
	assert_int_equal(c.p.interval_ns, NS_PER_US);
	EXPECT_OK(&c, "-i", "1", "--window", "1");
	assert_int_equal(c.p.interval_ns, NS_PER_US);      /* a bare number is microseconds */
	EXPECT_ERROR("option '-i'", "999ns", "below the minimum of 1us", "-i", "999ns");
	EXPECT_OK(&c, "-i", "1h", "--window", "1h");
	assert_int_equal(c.p.interval_ns, 3600u * NS_PER_SEC);
	EXPECT_ERROR("option '-i'", "'3600000000001ns'", "above the maximum of 1h", "-i", "3600000000001ns",
		     "--window", "1h");
	EXPECT_ERROR("option '--window'", "shorter than the interval", NULL, "-i", "2s");
	EXPECT_ERROR("option '-i'", "'0'", "below the minimum", "-i", "0");

	/* window: 10ms to 1h */
	EXPECT_OK(&c, "--window", "10ms");
	assert_int_equal(c.run.window_ns, 10u * NS_PER_MS);
	EXPECT_ERROR("option '--window'", "'9999999ns'", "below the minimum of 10ms", "--window", "9999999ns");
	EXPECT_OK(&c, "--window", "1h");
	EXPECT_ERROR("option '--window'", "'3601'", "above the maximum of 1h", "--window", "3601");

	/* duration: 1ms to 30 days; a bare number is seconds */
	EXPECT_OK(&c, "-D", "1ms");
	assert_int_equal(c.run.duration_ns, NS_PER_MS);
	EXPECT_ERROR("option '-D'", "'999999ns'", "below the minimum of 1ms", "-D", "999999ns");
	EXPECT_OK(&c, "-D", "720h");
	assert_int_equal(c.run.duration_ns, 720u * 3600u * NS_PER_SEC);
	EXPECT_ERROR("option '-D'", "'2592000000000001ns'", "above the maximum", "-D", "2592000000000001ns");
	EXPECT_ERROR("option '-D'", "'0'", "below the minimum", "-D", "0");

	/* loops: 1 to 2^48 */
	EXPECT_OK(&c, "-l", "1");
	EXPECT_OK(&c, "-l", "281474976710656");
	assert_int_equal(c.run.loops, UINT64_C(1) << 48);
	EXPECT_ERROR("option '-l'", "'281474976710657'", "is out of range", "-l", "281474976710657");
	EXPECT_ERROR("option '--loops'", "'0'", "is out of range (1 to", "--loops", "0");

	/* warmup: 0 to 1000000 */
	EXPECT_OK(&c, "--warmup", "0");
	assert_int_equal(c.run.warmup, 0);
	EXPECT_OK(&c, "--warmup=1000000");
	EXPECT_ERROR("option '--warmup'", "'1000001'", "is out of range (0 to 1000000)", "--warmup=1000001");

	/* threshold and fail-above: 1ns to 1h; a bare number is microseconds */
	EXPECT_OK(&c, "--threshold", "1ns", "--fail-above", "1h");
	assert_int_equal(c.run.threshold_ns, 1);
	assert_int_equal(c.out.fail_above_ns, 3600u * NS_PER_SEC);
	EXPECT_ERROR("option '--threshold'", "'0'", "below the minimum of 1ns", "--threshold", "0");
	EXPECT_ERROR("option '--fail-above'", "'0us'", "below the minimum", "--fail-above", "0us");
	EXPECT_ERROR("option '--fail-above'", "'61m'", "above the maximum of 1h", "--fail-above", "61m");

	/* timer slack: 1ns to 1s; a bare number is microseconds */
	EXPECT_OK(&c, "--timer-slack", "1ns");
	assert_int_equal(c.run.timer_slack_ns, 1);
	EXPECT_OK(&c, "--timer-slack", "1s");
	assert_int_equal(c.run.timer_slack_ns, NS_PER_SEC);
	EXPECT_ERROR("option '--timer-slack'", "'0'", "below the minimum of 1ns", "--timer-slack", "0");
	EXPECT_ERROR("option '--timer-slack'", "'1000000001ns'", "above the maximum of 1s", "--timer-slack",
		     "1000000001ns");
}

/* ---- --policy deadline ---- */

static void test_deadline_takes_its_period_from_the_interval_its_deadline_from_the_period(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_OK(&c, "--policy", "deadline", "-i", "2ms");
	assert_int_equal(c.run.policy, POLICY_DEADLINE);
	assert_int_equal(c.run.priority, 0);
	assert_int_equal(c.run.dl.period_ns, 2u * NS_PER_MS);
	assert_int_equal(c.run.dl.deadline_ns, 2u * NS_PER_MS);
	assert_int_equal(c.run.dl.runtime_ns, 100u * NS_PER_US);
	/* --period alone sets the interval the windows and notes read */
	EXPECT_OK(&c, "--policy", "deadline", "--period", "5ms");
	assert_int_equal(c.p.interval_ns, 5u * NS_PER_MS);
	assert_int_equal(c.run.dl.deadline_ns, 5u * NS_PER_MS);
	EXPECT_OK(&c, "--policy", "deadline", "--period", "5ms", "-i", "5ms");
	assert_int_equal(c.run.dl.period_ns, 5u * NS_PER_MS);
}

static void test_deadline_runtime_defaults_to_half_a_deadline_shorter_than_200us(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_OK(&c, "--policy", "deadline", "-i", "150us");
	assert_int_equal(c.run.dl.runtime_ns, 75u * NS_PER_US);
	/* never below 5 us (a job overrunning its runtime is throttled a period), nor above the deadline */
	EXPECT_OK(&c, "--policy", "deadline", "--deadline", "8us");
	assert_int_equal(c.run.dl.runtime_ns, 5u * NS_PER_US);
	EXPECT_OK(&c, "--policy", "deadline", "--deadline", "1500ns");
	assert_int_equal(c.run.dl.runtime_ns, 1500u);
	EXPECT_OK(&c, "--policy", "deadline", "--runtime", "1024ns", "--deadline", "1024ns");
	assert_int_equal(c.run.dl.runtime_ns, 1024u);
	EXPECT_ERROR("option '--runtime'", "'1023ns'", "is below the minimum of 1.024us", "--policy", "deadline",
		     "--runtime", "1023ns");
}

static void test_deadline_refuses_a_runtime_over_the_deadline_or_a_deadline_over_the_period(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_ERROR("option '--runtime'", "2ms is longer than the deadline 1ms", NULL, "--policy", "deadline",
		     "--runtime", "2ms");
	EXPECT_ERROR("option '--runtime'", "600us is longer than the deadline 500us", NULL, "--policy", "deadline",
		     "--runtime", "600us", "--deadline", "500us");
	EXPECT_ERROR("option '--deadline'", "2ms is longer than the period 1ms", NULL, "--policy", "deadline",
		     "--deadline", "2ms");
	EXPECT_OK(&c, "--policy", "deadline", "--runtime", "1ms");      /* runtime = deadline = period */
	assert_int_equal(c.run.dl.runtime_ns, NS_PER_MS);
}

static void test_deadline_refuses_periods_the_kernel_refuses_and_a_period_that_is_not_the_interval(void **state)
{
	(void)state;
	EXPECT_ERROR("option '-i'", "50us is outside SCHED_DEADLINE's periods", NULL, "--policy", "deadline",
		     "-i", "50us");
	EXPECT_ERROR("option '--interval'", "5s is outside SCHED_DEADLINE's periods", NULL, "--policy", "deadline",
		     "--interval", "5s", "--window", "10s");
	EXPECT_ERROR("option '--period'", "'99999ns'", "below the minimum of 100us", "--policy", "deadline",
		     "--period", "99999ns");
	EXPECT_ERROR("option '--period'", "2ms is not --interval 1ms", NULL, "--policy", "deadline", "--period", "2ms",
		     "-i", "1ms");
}

static void test_deadline_options_need_the_deadline_policy_and_it_refuses_what_it_cannot_honour(void **state)
{
	(void)state;
	EXPECT_ERROR("option '--runtime'", "needs '--policy deadline'", NULL, "--runtime", "100us");
	EXPECT_ERROR("option '--deadline'", "needs '--policy deadline'", NULL, "--policy", "rr", "--deadline", "1ms");
	EXPECT_ERROR("option '--period'", "needs '--policy deadline'", NULL, "--period", "1ms");
	EXPECT_ERROR("option '-p'", "has no priority", NULL, "--policy", "deadline", "-p", "50");
	EXPECT_ERROR("option '--mode'", "sched_yield", NULL, "--policy", "deadline", "--mode", "nanosleep");
	EXPECT_ERROR("option '--clock'", "CLOCK_MONOTONIC", NULL, "--policy", "deadline", "--clock", "boottime");
	EXPECT_ERROR("option '-d'", "one period", NULL, "--policy", "deadline", "-d", "10us");
	EXPECT_ERROR("option '--trace'", "not available with --policy deadline", NULL, "--policy", "deadline", "--trace");
}

static void test_params_json_has_the_reservation_only_under_the_deadline_policy(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_OK(&c, "--policy", "fifo");
	json_t *j = opt_params_json(timer_command.opts, timer_command.nopts, &c);
	assert_non_null(j);
	assert_null(json_object_get(j, "runtime_ns"));
	assert_null(json_object_get(j, "deadline_ns"));
	assert_null(json_object_get(j, "period_ns"));
	json_decref(j);
	EXPECT_OK(&c, "--policy", "deadline", "-i", "2ms", "--runtime", "30us");
	j = opt_params_json(timer_command.opts, timer_command.nopts, &c);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "policy")), "deadline");
	assert_int_equal(json_integer_value(json_object_get(j, "runtime_ns")), 30000);
	assert_int_equal(json_integer_value(json_object_get(j, "deadline_ns")), 2000000);
	assert_int_equal(json_integer_value(json_object_get(j, "period_ns")), 2000000);
	json_decref(j);
}

/* ---- --aligned, --aligned-offset ---- */

static void test_aligned_refuses_a_distance_and_takes_an_offset_with_any_policy(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_ERROR("option '--aligned'", "--distance gives each CPU its own period", NULL, "--aligned",
		     "-d", "10us");
	EXPECT_ERROR("option '--aligned'", "meet only at the start", NULL, "-d", "1", "--aligned");
	EXPECT_OK(&c, "--aligned", "-d", "0");
	EXPECT_OK(&c, "--aligned", "--aligned-offset", "250us");
	assert_true(c.aligned);
	assert_int_equal(c.p.aligned_offset_ns, 250u * NS_PER_US);
	/* an offset spreads the wakeups; with --distance it places each CPU's first deadline */
	EXPECT_OK(&c, "--aligned-offset", "250us", "-d", "100us");
	assert_false(c.aligned);
	assert_int_equal(c.p.distance_ns, 100u * NS_PER_US);
	EXPECT_OK(&c, "--aligned-offset", "1h");        /* past the period: taken modulo it */
	EXPECT_ERROR("option '--aligned-offset'", "'3601s'", "above the maximum of 1h",
		     "--aligned-offset", "3601s");
	EXPECT_OK(&c, "--aligned-offset", "300us", "--policy", "deadline");
	EXPECT_OK(&c, "--aligned-offset", "300us", "--clock", "realtime", "--mode", "timerfd");
}

static void test_params_json_has_the_aligned_offset_when_set_and_never_aligned(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_OK(&c, "--aligned");
	json_t *j = opt_params_json(timer_command.opts, timer_command.nopts, &c);
	assert_non_null(j);
	assert_null(json_object_get(j, "aligned_offset_ns"));
	assert_null(json_object_get(j, "aligned"));
	json_decref(j);
	EXPECT_OK(&c, "--aligned-offset", "500");
	j = opt_params_json(timer_command.opts, timer_command.nopts, &c);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "aligned_offset_ns")), 500000);
	json_decref(j);
}

static void test_the_timer_slack_defaults_to_one_nanosecond_and_the_clock_to_monotonic(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_OK(&c, "-l", "1");
	assert_int_equal(c.run.timer_slack_ns, 1);
	assert_int_equal(c.p.clock, TIMER_CLOCK_MONOTONIC);
	assert_int_equal(run_timer_slack(&(struct run_params){ .timer_slack_ns = 0 }), 1);
}

static void test_every_clock_is_accepted_but_tai_cannot_drive_a_timerfd(void **state)
{
	(void)state;
	struct timer_cmd c;
	static const char *const names[] = { "monotonic", "realtime", "tai", "boottime" };

	for (int k = 0; k < TIMER_CLOCKS; k++) {
		EXPECT_OK(&c, "--clock", names[k]);
		assert_int_equal(c.p.clock, k);
		EXPECT_OK(&c, "--clock", names[k], "--mode", "posix");
	}
	EXPECT_OK(&c, "--clock", "realtime", "--mode", "timerfd");
	EXPECT_ERROR("option '--clock'", "'tai' cannot drive --mode timerfd", NULL, "--clock", "tai", "--mode", "timerfd");
}

/* ---- CPUs ---- */

static void test_cpu_lists_that_are_malformed_are_rejected_with_the_option_as_typed(void **state)
{
	(void)state;
	static const char *const junk[] = { "", "a", "1-0", "0,", ",0", "0-", "-1", "0--1", " 0", "0 ", "0;1", "0-1-2",
					    "all", "1.0" };
	char attached[64];

	for (size_t i = 0; i < ARRAY_SIZE(junk); i++) {
		EXPECT_ERROR("option '--cpus'", quoted(junk[i]), "is not a CPU list", "--cpus", junk[i]);
		EXPECT_ERROR("option '-a'", quoted(junk[i]), "is not a CPU list", "-a", junk[i]);
		if (junk[i][0]) {
			snprintf(attached, sizeof(attached), "-a%s", junk[i]);
			EXPECT_ERROR("option '-a'", quoted(junk[i]), "is not a CPU list", attached);
		}
	}
	EXPECT_ERROR("option '-a'", "'4096'", "names a CPU above 4095", "-a", "4096");
	EXPECT_ERROR("option '--cpus'", "'0,99999999999'", "names a CPU above 4095", "--cpus=0,99999999999");
}

static void test_a_cpu_that_is_not_online_is_rejected_and_named(void **state)
{
	(void)state;
	char beyond[32], mixed[64], want[320], online_text[256];
	unsigned off = last_online + 1u;

	if (off >= CPUSET_MAX)
		skip_because("this machine has CPU 4095 online: no CPU above the last online one to name");
	cpuset_format(&online_cpus, online_text, sizeof(online_text));
	snprintf(beyond, sizeof(beyond), "%u", off);
	snprintf(want, sizeof(want), "cpu %u is not online (online: %s)", off, online_text);
	EXPECT_ERROR("option '-a'", want, NULL, "-a", beyond);      /* named as typed */
	EXPECT_ERROR("option '--cpus'", want, NULL, "--cpus", beyond);

	/* One good CPU and one offline one: only the offline one is named. */
	snprintf(mixed, sizeof(mixed), "%u,%u", first_online, off);
	EXPECT_ERROR("option '-a'", want, NULL, "-a", mixed);
	if (off + 1u < CPUSET_MAX) {
		snprintf(mixed, sizeof(mixed), "%u-%u", off, off + 1u);
		snprintf(want, sizeof(want), "cpu %u-%u is not online", off, off + 1u);
		EXPECT_ERROR("option '--cpus'", want, NULL, "--cpus", mixed);
	}
}

static void test_cpu_lists_of_online_cpus_are_accepted_as_given(void **state)
{
	(void)state;
	struct timer_cmd c;
	char text[256];
	struct cpuset usable;

	/* Every online CPU this process may be pinned to, written as a list. */
	cpuset_clear(&usable);
	for (unsigned i = 0; i < CPUSET_WORDS; i++)
		usable.bits[i] = online_cpus.bits[i] & allowed_cpus.bits[i];
	assert_true(cpuset_count(&usable) > 0);
	cpuset_format(&usable, text, sizeof(text));
	EXPECT_OK(&c, "-a", text);
	assert_memory_equal(&c.run.cpus, &usable, sizeof(usable));

	/* A CPU given twice is still one CPU. */
	snprintf(text, sizeof(text), "%u,%u-%u", first_online, first_online, first_online);
	EXPECT_OK(&c, "--cpus", text);
	assert_int_equal(cpuset_count(&c.run.cpus), 1);
	assert_true(cpuset_has(&c.run.cpus, first_online));
}

/* ---- policy and priority ---- */

static void test_priority_zero_is_an_error_with_fifo_and_rr(void **state)
{
	(void)state;
	EXPECT_ERROR("option '-p'", "0 is out of range for --policy fifo (1 to 99)", NULL, "-p", "0");
	EXPECT_ERROR("option '-p'", "0 is out of range for --policy fifo", NULL, "--policy", "fifo", "-p0");
	EXPECT_ERROR("option '--priority'", "0 is out of range for --policy rr (1 to 99)", NULL,
		     "--policy", "rr", "--priority=0");
}

static void test_policy_other_takes_only_priority_zero_and_defaults_to_it(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_ERROR("option '-p'", "5 is out of range for --policy other (only 0)", NULL,
		     "--policy", "other", "-p", "5");
	/* The order of the options does not matter. */
	EXPECT_ERROR("option '-p'", "95 is out of range for --policy other", NULL,
		     "-p", "95", "--policy=other");
	EXPECT_OK(&c, "--policy", "other", "-p", "0");
	assert_int_equal(c.run.policy, POLICY_OTHER);
	assert_int_equal(c.run.priority, 0);
	/* Without -p the fifo default of 95 does not apply to other. */
	EXPECT_OK(&c, "--policy", "other");
	assert_int_equal(c.run.priority, 0);
	EXPECT_OK(&c, "--policy", "rr", "-p", "1");
	assert_int_equal(c.run.policy, POLICY_RR);
	assert_int_equal(c.run.priority, 1);
}

/* ---- unknown options, bundles, positionals ---- */

static void test_a_mistyped_long_option_names_the_nearest_one(void **state)
{
	(void)state;
	EXPECT_ERROR("unknown option '--treshold'; did you mean '--threshold'?", NULL, NULL, "--treshold", "5");
	EXPECT_ERROR("unknown option '--intreval'; did you mean '--interval'?", NULL, NULL, "--intreval=1ms");
	EXPECT_ERROR("unknown option '--quit'; did you mean '--quiet'?", NULL, NULL, "--quit");
	/* nothing near enough: no guess */
	EXPECT_ERROR("unknown option '--bogus'", NULL, NULL, "--bogus");
	struct timer_cmd c;
	assert_int_equal(parse_args(&c, (const char *const[]){ "--bogus", NULL }), -EINVAL);
	assert_null(strstr(last_err.msg, "did you mean"));
}

static void test_unknown_options_are_rejected_by_the_name_typed(void **state)
{
	(void)state;
	EXPECT_ERROR("unknown option '--bogus'", NULL, NULL, "--bogus");
	EXPECT_ERROR("unknown option '--bogus'", NULL, NULL, "--bogus=3");
	EXPECT_ERROR("unknown option '--interva'", NULL, NULL, "--interva", "5");      /* no prefix matching */
	EXPECT_ERROR("unknown option '--Interval'", NULL, NULL, "--Interval", "5");
	EXPECT_ERROR("unknown option '-z'", NULL, NULL, "-z");
	EXPECT_ERROR("unknown option '-z'", NULL, NULL, "-qz");
	EXPECT_ERROR("unknown option '-I'", NULL, NULL, "-I", "5");
	EXPECT_ERROR("unknown option '--'", NULL, NULL, "--=5");
	EXPECT_ERROR("unknown option '---quiet'", NULL, NULL, "---quiet");

	/* A very long unknown name is cut short in the message, not overflowed. */
	char lng[400];
	memset(lng, 'x', sizeof(lng) - 1u);
	lng[0] = lng[1] = '-';
	lng[sizeof(lng) - 1u] = '\0';
	EXPECT_ERROR("unknown option '--xxxx", NULL, NULL, lng);
	assert_true(strlen(last_err.msg) < sizeof(last_err.msg));
}

static void test_bundled_short_flags_end_with_an_option_taking_the_rest_as_value(void **state)
{
	(void)state;
	struct timer_cmd c;
	char bundle[32];

	snprintf(bundle, sizeof(bundle), "-qa%u", first_online);
	EXPECT_OK(&c, bundle);
	assert_true(c.out.quiet);
	assert_int_equal(cpuset_count(&c.run.cpus), 1);
	assert_true(cpuset_has(&c.run.cpus, first_online));

	/* The value may also be the next argument. */
	EXPECT_OK(&c, "-qa", first_online_text);
	assert_true(c.out.quiet);
	assert_true(cpuset_has(&c.run.cpus, first_online));

	/* Everything after the valued option is its value, even letters of flags. */
	EXPECT_ERROR("option '-i'", "'q5'", "is not a duration", "-iq5");
	EXPECT_OK(&c, "-qi250");
	assert_true(c.out.quiet);
	assert_int_equal(c.p.interval_ns, 250u * NS_PER_US);

	/* A flag given twice is fine. */
	EXPECT_OK(&c, "-qq", "--quiet");
	assert_true(c.out.quiet);
}

static void test_a_value_may_start_with_a_dash_or_look_like_an_option(void **state)
{
	(void)state;
	struct timer_cmd c;

	/* The next argument is taken as the value, whatever it looks like. */
	EXPECT_ERROR("option '-i'", "'-q'", NULL, "-i", "-q");
	EXPECT_ERROR("option '--interval'", "'--quiet'", NULL, "--interval", "--quiet");
	EXPECT_OK(&c, "--json", "-");
	assert_string_equal(c.out.json_path, "-");
	EXPECT_OK(&c, "--label", "k=-v");
	assert_string_equal(c.out.labels.items[0].value, "-v");
}

static void test_double_dash_ends_options_and_a_positional_is_unexpected(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_ERROR("unexpected argument '-q'", NULL, NULL, "--", "-q");
	EXPECT_ERROR("unexpected argument '--help'", NULL, NULL, "-q", "--", "--help");
	EXPECT_ERROR("unexpected argument 'extra'", NULL, NULL, "extra");
	EXPECT_ERROR("unexpected argument 'extra'", NULL, NULL, "-q", "extra", "-i", "5ms");
	EXPECT_ERROR("unexpected argument '-'", NULL, NULL, "-");
	/* "--" with nothing after it is allowed, and options before it count. */
	EXPECT_OK(&c, "-q", "--");
	assert_true(c.out.quiet);
	/* A second "--" after the first is a positional. */
	EXPECT_ERROR("unexpected argument '--'", NULL, NULL, "--", "--");
}

static void test_option_engine_collects_positionals_in_order_and_limits_them(void **state)
{
	(void)state;
	struct timer_cmd c;
	struct opt_result res;

	assert_parse_ok(OPT_ONLY(&c, &res, "a", "-q", "b", "--", "-i", "c"));
	assert_int_equal(res.npos, 4);
	assert_string_equal(res.pos[0], "a");
	assert_string_equal(res.pos[1], "b");
	assert_string_equal(res.pos[2], "-i");
	assert_string_equal(res.pos[3], "c");
	assert_true(c.out.quiet);
	assert_int_equal(c.p.interval_ns, NS_PER_MS);

	/* As many as the result holds, and one more. */
	enum { MAXPOS = ARRAY_SIZE(res.pos) };
	static char names[MAXPOS + 1][8];
	static const char *many[MAXPOS + 2];
	for (size_t i = 0; i <= MAXPOS; i++) {
		snprintf(names[i], sizeof(names[i]), "%zu", i + 1u);
		many[i] = names[i];
	}
	many[MAXPOS] = NULL;
	assert_parse_ok(opt_only(&c, &res, many));
	assert_int_equal(res.npos, MAXPOS);
	many[MAXPOS] = names[MAXPOS];
	many[MAXPOS + 1] = NULL;
	char want[64];
	snprintf(want, sizeof(want), "too many arguments at '%zu'", (size_t)MAXPOS + 1u);
	expect_opt_error(many, want, NULL, NULL);
}

static void expect_ids(const char *const *args, size_t nargs, const int64_t *want, size_t nwant)
{
	struct lat_error err;
	int64_t *ids = NULL;
	size_t n = 0;
	assert_int_equal(storecmd_parse_ids(args, nargs, &ids, &n, &err), 0);
	assert_int_equal(n, nwant);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ids[i], want[i]);
	free(ids);
}

static void test_run_ids_named_twice_are_kept_once_where_first_named(void **state)
{
	(void)state;
	static const char *const a1[] = { "7,3-5", "4", "1,7" };
	static const int64_t w1[] = { 7, 3, 4, 5, 1 };
	expect_ids(a1, 3, w1, 5);
	static const char *const a2[] = { "9-12", "1-10" };
	static const int64_t w2[] = { 9, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8 };
	expect_ids(a2, 2, w2, 12);

	/* Every id of a long range once, in order, and its repeat adds nothing. */
	static const char *const a3[] = { "1-100000", "100000-1" };
	struct lat_error err;
	int64_t *ids = NULL;
	size_t n = 0;
	assert_int_equal(storecmd_parse_ids(a3, 1, &ids, &n, &err), 0);
	assert_int_equal(n, 100000);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(ids[i], (int64_t)i + 1);
	free(ids);
	assert_int_equal(storecmd_parse_ids(a3, 2, &ids, &n, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'100000-1'"));
}

/* A check names options by their long names; the message the user reads names them as typed. */
static void test_a_message_names_each_option_as_it_was_typed(void **state)
{
	struct timer_cmd c;
	struct opt_result res;
	char msg[512] = "options '--duration' and '--loops' exclude each other; '--cpus' and '--interval' too";
	(void)state;

	assert_int_equal(OPT_ONLY(&c, &res, "-D", "1", "--loops", "5", "-a", "0", "--cpus", "0"), 0);
	opt_msg_as_typed(timer_command.opts, timer_command.nopts, &res, msg, sizeof(msg));
	/* -D typed short, --loops long, -a then --cpus (the last wins), --interval not given */
	assert_string_equal(msg, "options '-D' and '--loops' exclude each other; '--cpus' and '--interval' too");

	assert_int_equal(OPT_ONLY(&c, &res, "-p", "5", "--priority", "6", "-p", "7"), 0);
	snprintf(msg, sizeof(msg), "option '--priority': 7; option '--frobnicate'; option '--priority");
	opt_msg_as_typed(timer_command.opts, timer_command.nopts, &res, msg, sizeof(msg));
	assert_string_equal(msg, "option '-p': 7; option '--frobnicate'; option '--priority");

	/* a caller that sets the parameters itself passes on how its own user typed them */
	memset(&res, 0, sizeof(res));
	assert_int_equal(opt_mark_typed(timer_command.nopts, &res, TIMER_OPT_CPUS, true), 0);
	snprintf(msg, sizeof(msg), "option '--cpus': cpu 7 is not online");
	opt_msg_as_typed(timer_command.opts, timer_command.nopts, &res, msg, sizeof(msg));
	assert_string_equal(msg, "option '-a': cpu 7 is not online");
	assert_int_equal(opt_mark_typed(timer_command.nopts, &res, timer_command.nopts, true), -ENOENT);
}

static void test_an_action_list_splits_at_commas_until_exec_which_takes_the_rest(void **state)
{
	struct action_list l = { 0 };
	struct lat_error err;
	(void)state;

	assert_int_equal(action_parse_list("stop,trace", false, &l, &err), 0);
	assert_int_equal(action_parse_list(" signal 12:USR1 , exec echo a,b", false, &l, &err), 0);
	assert_int_equal(l.n, 4);
	assert_int_equal(l.a[0].kind, ACTION_STOP);
	assert_int_equal(l.a[1].kind, ACTION_TRACE);
	assert_int_equal(l.a[2].kind, ACTION_SIGNAL);
	assert_int_equal(l.a[2].pid, 12);
	assert_int_equal(l.a[3].kind, ACTION_EXEC);
	assert_string_equal(l.a[3].cmd, "echo a,b");
	/* each as given, for the result */
	assert_int_equal(l.a[0].text_len, 4);
	assert_memory_equal(l.a[1].text, "trace", 5);
	assert_int_equal(l.a[1].text_len, 5);
	assert_int_equal(l.a[2].text_len, 14);
	assert_memory_equal(l.a[2].text, "signal 12:USR1", 14);
	assert_string_equal(l.a[3].text, "exec echo a,b");

	l.n = 0;
	assert_int_equal(action_parse_list("stop,,trace", false, &l, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "an empty action"));
	assert_int_equal(action_parse_list("stop,", false, &l, &err), -EINVAL);
	assert_int_equal(action_parse_list("stop,frob", false, &l, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'frob' is not an action"));
	assert_int_equal(action_parse_list("exec x,stop", true, &l, &err), 0);   /* the command is "x,stop" */
	assert_int_equal(action_parse_list("signal 1:USR1,stop", true, &l, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'stop' cannot be done after the run"));
	l.n = 0;
	assert_int_equal(action_parse_list("stop,stop,stop,stop,stop,stop,stop,stop,stop", false, &l, &err), -E2BIG);
}

static void test_run_ids_past_the_limit_in_all_are_refused(void **state)
{
	(void)state;
	static const char *const args[] = { "1-100000", "5-6" };
	struct lat_error err;
	int64_t *ids = NULL;
	size_t n = 0;
	assert_int_equal(storecmd_parse_ids(args, 2, &ids, &n, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'5-6': more than 100000 run ids in all"));
	assert_null(ids);
}

static void test_option_engine_marks_exactly_the_rows_given(void **state)
{
	(void)state;
	struct timer_cmd c;
	struct opt_result res;
	const struct opt *opts = timer_command.opts;
	size_t n = timer_command.nopts;

	assert_parse_ok(OPT_ONLY(&c, &res, "-q", "--interval=5ms", "-i", "6ms"));
	for (size_t i = 0; i < n; i++) {
		bool want = strcmp(opts[i].name, "quiet") == 0 || strcmp(opts[i].name, "interval") == 0;
		assert_int_equal((res.seen >> i) & 1u, want);
		assert_int_equal(opt_given(opts, n, &res, opts[i].name), want);
	}
	assert_false(opt_given(opts, n, &res, "no-such-option"));
	assert_null(opt_find(opts, n, "no-such-option"));
	assert_null(opt_find(opts, n, "q"));
	assert_int_equal(opt_find(opts, n, "quiet")->short_name, 'q');
	/* The last value given wins. */
	assert_int_equal(c.p.interval_ns, 6u * NS_PER_MS);

	assert_parse_ok(OPT_ONLY(&c, &res, "--help"));
	assert_true(opt_given(opts, n, &res, "help"));
	assert_true(c.help);
}

static void test_option_engine_refuses_a_table_over_its_limit(void **state)
{
	(void)state;
	static struct opt big[OPT_MAX + 1];
	struct opt_result res;
	struct lat_error err;
	bool flag = false;
	char a0[] = "x";
	char *argv[] = { a0, NULL };

	for (size_t i = 0; i < ARRAY_SIZE(big); i++)
		big[i] = (struct opt){ .name = "f", .kind = OPT_FLAG, .offset = 0 };
	assert_int_equal(opt_parse(big, ARRAY_SIZE(big), 1, argv, &flag, &res, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "more than 64 options"));
	assert_int_equal(opt_parse(big, OPT_MAX, 1, argv, &flag, &res, &err), 0);
	assert_int_equal(err.msg[0], '\0');
}

/* ---- cross-option checks ---- */

static void test_duration_and_loops_exclude_each_other(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_ERROR("options '-D' and '-l' exclude each other", NULL, NULL, "-D", "10", "-l", "100");
	EXPECT_ERROR("options '--duration' and '-l' exclude each other", NULL, NULL, "-l100", "--duration=1m");
	EXPECT_OK(&c, "-D", "10");
	assert_int_equal(c.run.duration_ns, 10u * NS_PER_SEC);
	assert_int_equal(c.run.loops, 0);
	EXPECT_OK(&c, "-l", "100");
	assert_int_equal(c.run.loops, 100);
	assert_int_equal(c.run.duration_ns, 0);
}

static void test_fail_stat_needs_fail_above(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_ERROR("option '--fail-stat' needs '--fail-above'", NULL, NULL, "--fail-stat", "p99");
	EXPECT_ERROR("option '--fail-stat' needs '--fail-above'", NULL, NULL, "--fail-stat=max");
	EXPECT_OK(&c, "--fail-stat", "warm_max", "--fail-above", "200us");
	assert_int_equal(c.out.fail_stat, FAIL_WARM_MAX);
	assert_int_equal(c.out.fail_above_ns, 200u * NS_PER_US);
	/* --fail-above alone judges the max. */
	EXPECT_OK(&c, "--fail-above", "200");
	assert_int_equal(c.out.fail_stat, FAIL_MAX);
	assert_int_equal(c.out.fail_above_ns, 200u * NS_PER_US);
}

/* ---- labels ---- */

static void test_repeated_labels_accumulate_in_order(void **state)
{
	(void)state;
	struct timer_cmd c;

	EXPECT_OK(&c, "--label", "config=guest", "--label=host.name=a=b", "--label", "x_1-y=z");
	assert_int_equal(c.out.labels.n, 3);
	assert_string_equal(c.out.labels.items[0].key, "config");
	assert_string_equal(c.out.labels.items[0].value, "guest");
	assert_string_equal(c.out.labels.items[1].key, "host.name");
	assert_string_equal(c.out.labels.items[1].value, "a=b");
	assert_string_equal(c.out.labels.items[2].key, "x_1-y");
	assert_string_equal(c.out.labels.items[2].value, "z");
}

static void test_a_duplicate_label_key_is_rejected(void **state)
{
	(void)state;
	EXPECT_ERROR("option '--label'", "label 'config' is given twice", NULL,
		     "--label", "config=a", "--label", "other=b", "--label", "config=c");
	EXPECT_ERROR("option '--label'", "label 'k' is given twice", NULL, "--label=k=v", "--label=k=v");
}

static void test_labels_are_checked_for_form_length_and_number(void **state)
{
	(void)state;
	static const char *const junk[] = { "novalue", "k=", "=v", "1k=v", "k y=v", "k=a\tb", "" };
	char key[LABEL_KEY_MAX + 8], args_store[LABELS_MAX + 1][32];
	const char *args[2 * (LABELS_MAX + 1) + 1];

	for (size_t i = 0; i < ARRAY_SIZE(junk); i++)
		EXPECT_ERROR("option '--label'", quoted(junk[i]), "is not KEY=VALUE", "--label", junk[i]);

	memset(key, 'k', LABEL_KEY_MAX);
	snprintf(key + LABEL_KEY_MAX, sizeof(key) - LABEL_KEY_MAX, "=v");
	EXPECT_ERROR("option '--label'", "is too long", NULL, "--label", key);

	for (size_t i = 0; i <= LABELS_MAX; i++) {
		snprintf(args_store[i], sizeof(args_store[i]), "k%zu=v", i);
		args[2 * i] = "--label";
		args[2 * i + 1] = args_store[i];
	}
	args[2 * LABELS_MAX] = NULL;
	struct timer_cmd c;
	expect_ok(&c, args);
	assert_int_equal(c.out.labels.n, LABELS_MAX);
	args[2 * LABELS_MAX] = "--label";
	args[2 * (LABELS_MAX + 1)] = NULL;
	expect_error(args, "option '--label'", "more than 32 labels", NULL);
}

/* ---- --help ---- */

static void test_help_stops_parsing_even_before_bad_options(void **state)
{
	(void)state;
	struct timer_cmd c;

	assert_int_equal(PARSE(&c, "--help", "--bogus", "-i", "123abc", "extra"), 1);
	assert_true(c.help);
	assert_int_equal(PARSE(&c, "-h", "-z"), 1);
	assert_int_equal(PARSE(&c, "-qh", "--interval=junk"), 1);
	assert_true(c.out.quiet);
	assert_int_equal(PARSE(&c, "-hq", "-p", "0"), 1);
	assert_int_equal(PARSE(&c, "-i", "5ms", "--help", "-D", "1", "-l", "1"), 1);
	assert_int_equal(c.p.interval_ns, 5u * NS_PER_MS);
	/* The checks after parsing are skipped too. */
	assert_int_equal(PARSE(&c, "-p", "0", "--policy", "other", "--help"), 1);
	/* Unless "--" came first: then it is just an argument. */
	EXPECT_ERROR("unexpected argument '--help'", NULL, NULL, "--", "--help");
}

/* ---- defaults ---- */

static void test_defaults_when_nothing_is_given(void **state)
{
	(void)state;
	struct timer_cmd c;
	struct cpuset want;

	EXPECT_OK(&c, "--");
	assert_int_equal(c.p.interval_ns, NS_PER_MS);
	assert_int_equal(c.p.mode, TIMER_NANOSLEEP);
	assert_false(c.p.co_correct);
	assert_int_equal(c.run.priority, 95);
	assert_int_equal(c.run.policy, POLICY_FIFO);
	assert_int_equal(c.run.window_ns, NS_PER_SEC);
	assert_int_equal(c.run.warmup, 2);
	assert_int_equal(c.run.threshold_ns, 100u * NS_PER_US);
	assert_int_equal(c.run.duration_ns, 0);
	assert_int_equal(c.run.loops, 0);
	assert_int_equal(c.out.fail_above_ns, 0);
	assert_int_equal(c.out.fail_stat, FAIL_MAX);
	assert_null(c.out.json_path);
	assert_int_equal(c.out.labels.n, 0);
	assert_false(c.out.quiet);
	assert_false(c.out.live);
	assert_false(c.run.no_pm_qos);
	assert_false(c.run.strict);
	assert_false(c.help);

	/* Every online CPU this process may be pinned to: on a test machine, every online CPU. */
	cpuset_clear(&want);
	for (unsigned i = 0; i < CPUSET_WORDS; i++)
		want.bits[i] = online_cpus.bits[i] & allowed_cpus.bits[i];
	assert_memory_equal(&c.run.cpus, &want, sizeof(want));
	if (cpuset_subset(&online_cpus, &allowed_cpus))
		assert_memory_equal(&c.run.cpus, &online_cpus, sizeof(online_cpus));

	/* Leftovers in the struct are overwritten by the defaults. */
	int argc = build_argv((const char *const[]){ NULL });
	struct timer_cmd dirty;
	memset(&dirty, 0xff, sizeof(dirty));
	dirty.out.json_path = NULL;
	assert_int_equal(measure_parse(&timer_command, argc, arg_v, &dirty, &last_err), 0);
	assert_same_cmd(&dirty, &c, "defaults over a dirty struct");
}

static void test_parsing_does_not_change_argv(void **state)
{
	(void)state;
	struct timer_cmd c;
	const char *const args[] = { "-qa", first_online_text, "--interval=5ms", "--label", "a=b", "--json", "x.json", NULL };

	assert_parse_ok(parse_args(&c, args));
	for (size_t i = 0; args[i]; i++)
		assert_string_equal(arg_v[i + 1u], args[i]);
	/* The path points into argv, not into a copy. */
	assert_ptr_equal(c.out.json_path, arg_v[7]);
}

/* ---- help text ---- */

static void test_help_lists_every_option_with_its_short_name_and_default(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct timer_cmd d;
	char want[96];

	assert_non_null(f);
	memset(&d, 0, sizeof(d));
	timer_command.defaults(&d);
	opt_print_help(f, timer_command.opts, timer_command.nopts, &d);
	fclose(f);
	for (size_t i = 0; i < timer_command.nopts; i++) {
		const struct opt *o = &timer_command.opts[i];
		if (o->short_name)
			snprintf(want, sizeof(want), "-%c, --%s", o->short_name, o->name);
		else
			snprintf(want, sizeof(want), "    --%s", o->name);
		if (!strstr(text, want)) {
			print_error("help lacks \"%s\":\n%s", want, text);
			fail();
		}
		assert_non_null(strstr(text, o->help));
	}
	assert_non_null(strstr(text, "(default 1ms; 1us to 1h)"));
	assert_non_null(strstr(text, "(default 95; 0 to 99)"));
	assert_non_null(strstr(text, "(default 1s; 10ms to 1h)"));   /* the window's minimum is said */
	assert_non_null(strstr(text, "(default fifo)"));
	assert_non_null(strstr(text, "--policy fifo|rr|other"));
	free(text);
}

/* ---- the parameters as JSON ---- */

static void test_params_json_has_every_parameter_row_and_no_other(void **state)
{
	(void)state;
	struct timer_cmd c;
	char key[96], plain[80];
	size_t params = 0;

	EXPECT_OK(&c, "-i", "250us", "--policy", "rr", "--co-correct", "-a", first_online_text,
		  "--fail-above", "2ms", "--fail-stat", "p99.99", "--label", "k=v", "--json", "o.json", "-q", "--live");
	json_t *j = opt_params_json(timer_command.opts, timer_command.nopts, &c);
	assert_non_null(j);
	assert_true(json_is_object(j));

	for (size_t i = 0; i < timer_command.nopts; i++) {
		const struct opt *o = &timer_command.opts[i];
		snprintf(plain, sizeof(plain), "%s", o->name);
		for (char *p = plain; *p; p++)
			if (*p == '-')
				*p = '_';
		snprintf(key, sizeof(key), "%s%s", plain, o->kind == OPT_DURATION ? "_ns" : "");
		json_t *v = json_object_get(j, key);

		if ((o->flags & OPT_NOT_PARAM) || o->kind == OPT_HELP) {
			assert_null(v);
			assert_null(json_object_get(j, o->name));
			continue;
		}
		/* a setting of another mode (--policy deadline's) is left out while 0 */
		if ((o->flags & OPT_PARAM_IF_SET) && *(const uint64_t *)(const void *)((const char *)&c + o->offset) == 0) {
			assert_null(v);
			continue;
		}
		if (!v) {
			print_error("params lack '%s'\n", key);
			fail();
		}
		params++;
		const void *fld = (const char *)&c + o->offset;
		switch (o->kind) {
		case OPT_DURATION:
			assert_null(json_object_get(j, plain));     /* only the _ns form */
			assert_true(json_is_integer(v));
			assert_int_equal(json_integer_value(v), *(const uint64_t *)fld);
			break;
		case OPT_UINT:
			if (o->flags & OPT_UNSET_NULL && *(const uint64_t *)fld == OPT_UNSET) {
				assert_true(json_is_null(v));       /* not given */
				break;
			}
			assert_true(json_is_integer(v));
			assert_int_equal(json_integer_value(v), *(const uint64_t *)fld);
			break;
		case OPT_ENUM:
			assert_true(json_is_string(v));
			assert_string_equal(json_string_value(v), o->choices[*(const int *)fld]);
			break;
		case OPT_FLAG:
			assert_true(json_is_boolean(v));
			assert_int_equal(json_is_true(v), *(const bool *)fld);
			break;
		case OPT_CPUS: {
			char list[256];
			cpuset_format(fld, list, sizeof(list));
			assert_true(json_is_string(v));
			assert_string_equal(json_string_value(v), list);
			break;
		}
		case OPT_STRING: {
			const char *text = *(const char *const *)fld;
			assert_true(text ? json_is_string(v) : json_is_null(v));
			if (text)
				assert_string_equal(json_string_value(v), text);
			break;
		}
		case OPT_STRLIST:
			assert_true(json_is_array(v));
			assert_int_equal(json_array_size(v), ((const struct strlist *)fld)->n);
			break;
		case OPT_SIZE:
		case OPT_LABEL:
		case OPT_HELP:
			print_error("'%s' is a parameter of a kind the test does not expect\n", o->name);
			fail();
		}
	}
	assert_int_equal(json_object_size(j), params);

	/* What the user asked, by name. */
	assert_int_equal(json_integer_value(json_object_get(j, "interval_ns")), 250000);
	assert_int_equal(json_integer_value(json_object_get(j, "fail_above_ns")), 2000000);
	assert_int_equal(json_integer_value(json_object_get(j, "window_ns")), 1000000000);
	assert_int_equal(json_integer_value(json_object_get(j, "threshold_ns")), 100000);
	assert_int_equal(json_integer_value(json_object_get(j, "duration_ns")), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "priority")), 95);
	assert_int_equal(json_integer_value(json_object_get(j, "warmup")), 2);
	assert_string_equal(json_string_value(json_object_get(j, "policy")), "rr");
	assert_string_equal(json_string_value(json_object_get(j, "mode")), "nanosleep");
	assert_string_equal(json_string_value(json_object_get(j, "fail_stat")), "p99.99");
	assert_string_equal(json_string_value(json_object_get(j, "cpus")), first_online_text);
	assert_true(json_is_true(json_object_get(j, "co_correct")));
	assert_true(json_is_false(json_object_get(j, "strict")));
	assert_true(json_is_false(json_object_get(j, "no_pm_qos")));
	static const char *const absent[] = { "json", "label", "labels", "quiet", "live", "help", "interval", "db",
					      "db_trust", "db-trust", "no_store", "checkpoint", "checkpoint_ns",
					      "co-correct", "fail-above" };
	for (size_t i = 0; i < ARRAY_SIZE(absent); i++)
		assert_null(json_object_get(j, absent[i]));
	json_decref(j);
}

static void test_params_json_writes_a_long_sparse_cpu_list_whole(void **state)
{
	(void)state;
	struct timer_cmd c;
	char *want;
	size_t need;

	memset(&c, 0, sizeof(c));
	timer_command.defaults(&c);
	/* Every other CPU up to the largest: thousands of characters as a list. */
	for (unsigned cpu = 0; cpu < CPUSET_MAX; cpu += 2u)
		cpuset_add(&c.run.cpus, cpu);
	need = cpuset_format(&c.run.cpus, NULL, 0) + 1u;
	assert_true(need > 4096u);
	want = test_malloc(need);
	assert_int_equal(cpuset_format(&c.run.cpus, want, need), need - 1u);

	json_t *j = opt_params_json(timer_command.opts, timer_command.nopts, &c);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "cpus")), want);
	json_decref(j);
	test_free(want);
}

/* A tool that execs oslat or cyclictest with an empty environment (cnf-tests
 * does) still gets a store: the user's home from the password database. */
static void test_without_home_in_the_environment_the_store_is_under_the_password_databases_home(void **state)
{
	(void)state;
	const char *names[] = { "HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "LATSCOPE_DB" };
	char *saved[4];
	char buf[4096], want[4096];
	bool chosen = true;

	for (size_t i = 0; i < 4; i++) {
		const char *v = getenv(names[i]);
		saved[i] = v ? strdup(v) : NULL;
		unsetenv(names[i]);
	}
	const struct passwd *pw = getpwuid(geteuid());
	assert_non_null(pw);
	int r = store_path_resolve(NULL, buf, sizeof(buf), &chosen);
	snprintf(want, sizeof(want), "%s/.local/share/latscope/runs.db", pw->pw_dir);
	int u = unstored_dir_resolve(buf + 2048, sizeof(buf) - 2048);
	for (size_t i = 0; i < 4; i++) {
		if (saved[i])
			setenv(names[i], saved[i], 1);
		free(saved[i]);
	}
	assert_int_equal(r, 0);
	assert_false(chosen);
	assert_string_equal(buf, want);
	assert_int_equal(u, 0);
	snprintf(want, sizeof(want), "%s/.local/state/latscope/unstored", pw->pw_dir);
	assert_string_equal(buf + 2048, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_without_home_in_the_environment_the_store_is_under_the_password_databases_home),
		cmocka_unit_test(
			test_every_option_is_accepted_in_each_form_and_lands_in_its_own_field),
		cmocka_unit_test(
			test_shared_rows_are_found_by_their_enum_in_every_measuring_command),
		cmocka_unit_test(test_timer_table_has_the_documented_short_names),
		cmocka_unit_test(
			test_each_named_row_of_the_timer_and_noise_tables_is_the_option_of_that_name),
		cmocka_unit_test(
			test_flags_reject_a_value_in_long_form_and_an_attached_character_in_short_form),
		cmocka_unit_test(test_every_valued_option_at_the_end_of_argv_needs_a_value),
		cmocka_unit_test(test_every_duration_option_rejects_junk_in_every_form),
		cmocka_unit_test(test_every_counting_option_rejects_junk_in_every_form),
		cmocka_unit_test(test_enum_options_reject_unknown_and_differently_cased_choices),
		cmocka_unit_test(
			test_every_range_is_inclusive_at_min_and_max_and_rejects_one_beyond),
		cmocka_unit_test(
			test_checkpoint_zero_or_none_turns_it_off_and_anything_else_below_a_second_is_refused),
		cmocka_unit_test(
			test_checkpoint_defaults_to_ten_minutes_for_a_run_over_an_hour_or_without_an_end),
		cmocka_unit_test(test_documented_limits_hold_through_every_check),
		cmocka_unit_test(
			test_the_timer_slack_defaults_to_one_nanosecond_and_the_clock_to_monotonic),
		cmocka_unit_test(test_every_clock_is_accepted_but_tai_cannot_drive_a_timerfd),
		cmocka_unit_test(
			test_cpu_lists_that_are_malformed_are_rejected_with_the_option_as_typed),
		cmocka_unit_test(test_a_cpu_that_is_not_online_is_rejected_and_named),
		cmocka_unit_test(test_cpu_lists_of_online_cpus_are_accepted_as_given),
		cmocka_unit_test(test_priority_zero_is_an_error_with_fifo_and_rr),
		cmocka_unit_test(test_policy_other_takes_only_priority_zero_and_defaults_to_it),
		cmocka_unit_test(test_unknown_options_are_rejected_by_the_name_typed),
		cmocka_unit_test(test_a_mistyped_long_option_names_the_nearest_one),
		cmocka_unit_test(
			test_bundled_short_flags_end_with_an_option_taking_the_rest_as_value),
		cmocka_unit_test(test_a_value_may_start_with_a_dash_or_look_like_an_option),
		cmocka_unit_test(test_double_dash_ends_options_and_a_positional_is_unexpected),
		cmocka_unit_test(test_option_engine_collects_positionals_in_order_and_limits_them),
		cmocka_unit_test(test_option_engine_marks_exactly_the_rows_given),
		cmocka_unit_test(test_option_engine_refuses_a_table_over_its_limit),
		cmocka_unit_test(test_duration_and_loops_exclude_each_other),
		cmocka_unit_test(test_fail_stat_needs_fail_above),
		cmocka_unit_test(test_repeated_labels_accumulate_in_order),
		cmocka_unit_test(test_a_duplicate_label_key_is_rejected),
		cmocka_unit_test(test_labels_are_checked_for_form_length_and_number),
		cmocka_unit_test(test_help_stops_parsing_even_before_bad_options),
		cmocka_unit_test(test_defaults_when_nothing_is_given),
		cmocka_unit_test(test_parsing_does_not_change_argv),
		cmocka_unit_test(test_help_lists_every_option_with_its_short_name_and_default),
		cmocka_unit_test(test_params_json_has_every_parameter_row_and_no_other),
		cmocka_unit_test(
			test_deadline_takes_its_period_from_the_interval_its_deadline_from_the_period),
		cmocka_unit_test(
			test_deadline_runtime_defaults_to_half_a_deadline_shorter_than_200us),
		cmocka_unit_test(
			test_deadline_refuses_a_runtime_over_the_deadline_or_a_deadline_over_the_period),
		cmocka_unit_test(
			test_deadline_refuses_periods_the_kernel_refuses_and_a_period_that_is_not_the_interval),
		cmocka_unit_test(
			test_deadline_options_need_the_deadline_policy_and_it_refuses_what_it_cannot_honour),
		cmocka_unit_test(
			test_params_json_has_the_reservation_only_under_the_deadline_policy),
		cmocka_unit_test(
			test_aligned_refuses_a_distance_and_takes_an_offset_with_any_policy),
		cmocka_unit_test(
			test_params_json_has_the_aligned_offset_when_set_and_never_aligned),
		cmocka_unit_test(test_params_json_writes_a_long_sparse_cpu_list_whole),
		cmocka_unit_test(test_run_ids_named_twice_are_kept_once_where_first_named),
		cmocka_unit_test(test_run_ids_past_the_limit_in_all_are_refused),
		cmocka_unit_test(test_a_message_names_each_option_as_it_was_typed),
		cmocka_unit_test(
			test_an_action_list_splits_at_commas_until_exec_which_takes_the_rest),
	};
	return cmocka_run_group_tests(tests, read_machine, NULL);
}
