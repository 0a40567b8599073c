#include "cli/commands.h"

#include "measure/attach.h"
#include "measure/clock.h"
#include "measure/io.h"
#include "measure/measure.h"
#include "measure/noise.h"
#include "measure/timer.h"
#include "measure/wake.h"
#include "core/array.h"
#include "front/driver.h"

const struct command commands[] = {
	{ "run", cmd_run, NULL, "the suite to start with: timer, noise and wake, stored and summed up", .spec = cmd_run_spec },
	{ "timer", NULL, &timer_command, "timer wakeup latency per CPU (cyclictest class)" },
	{ "noise", NULL, &noise_command, "OS and hypervisor noise seen by a busy loop (oslat class)" },
	{ "wake", NULL, &wake_command, "thread-to-thread wakeup latency, on one CPU and across CPUs" },
	{ "io", cmd_io, &io_command, "read throughput, per-read latency and the CPU cost of each read" },
	{ "clock", NULL, &clock_command, "what each clock costs to read per CPU, vDSO or system call, resolution" },
	{ "attach", NULL, &attach_command, "a running program's own cycles: each call of its function (uprobes) or loop.h wake" },
	{ "sys", cmd_sys, NULL, "system fingerprint and latency advice", .spec = cmd_sys_spec },
	{ "tune", cmd_tune, NULL, "try each fix sys would suggest, measured off and on, and keep what helps",
	  .spec = cmd_tune_spec },
	{ "monitor", cmd_monitor, NULL, "measure timer latency continuously, serve it to Prometheus, store each period",
	  .spec = cmd_monitor_spec },
	{ "host", cmd_host, NULL, "the agent on a VM's host: finds its vCPU threads, lines a guest's clock up with the host's",
	  .spec = cmd_host_spec },
	{ "cyclictest", cmd_cyclictest, NULL, "cyclictest's options and output, measured and stored by latscope",
	  .fe = &cyclictest_front },
	{ "rtla", cmd_rtla, NULL, "rtla timerlat hist and top: their options and output, measured and stored by latscope",
	  .fe = &rtla_front },
	{ "oslat", cmd_oslat, NULL, "oslat's options and output, measured and stored by latscope", .fe = &oslat_front },
	{ "runs", cmd_runs, NULL, "list the stored runs", .spec = cmd_runs_spec },
	{ "show", cmd_show, NULL, "print a stored run (--json: its JSON result)", .spec = cmd_show_spec },
	{ "compare", cmd_compare, NULL, "stored runs side by side, with a verdict on each difference and CI gates",
	  .spec = cmd_compare_spec },
	{ "report", cmd_report, NULL, "stored runs as one self-contained HTML page with plots", .spec = cmd_report_spec },
	{ "export", cmd_export, NULL, "stored runs as OpenMetrics (Prometheus), JSON or a gnuplot script",
	  .spec = cmd_export_spec },
	{ "import", cmd_import, NULL, "store results written with --json, here or elsewhere", .spec = cmd_import_spec },
	{ "merge", cmd_merge, NULL, "merge runs of one probe into one exact result", .spec = cmd_merge_spec },
	{ "rm", cmd_rm, NULL, "remove stored runs", .spec = cmd_rm_spec },
	{ "completion", cmd_completion, NULL, "the shell completion script, written from these commands' options",
	  .spec = cmd_completion_spec },
};

const size_t ncommands = ARRAY_SIZE(commands);

int command_run(const struct command *c, int argc, char **argv)
{
	return c->fn ? c->fn(argc, argv) : measure_main(c->mc, argc, argv);
}
