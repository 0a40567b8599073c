#include "cli/commands.h"

#include "measure/clock.h"
#include "measure/io.h"
#include "measure/measure.h"
#include "measure/noise.h"
#include "measure/timer.h"
#include "measure/wake.h"
#include "core/array.h"
#include "front/driver.h"

const struct command commands[] = {
	{ "run", cmd_run, NULL, "the suite to start with: timer, noise and wake, stored and summed up" },
	{ "timer", NULL, &timer_command, "timer wakeup latency per CPU (cyclictest class)" },
	{ "noise", NULL, &noise_command, "OS and hypervisor noise seen by a busy loop (oslat class)" },
	{ "wake", NULL, &wake_command, "thread-to-thread wakeup latency, on one CPU and across CPUs" },
	{ "io", cmd_io, &io_command, "read throughput, per-read latency and the CPU cost of each read" },
	{ "clock", NULL, &clock_command, "what each clock costs to read per CPU, vDSO or system call, resolution" },
	{ "sys", cmd_sys, NULL, "system fingerprint and latency advice" },
	{ "tune", cmd_tune, NULL, "try each fix sys would suggest, measured off and on, and keep what helps" },
	{ "monitor", cmd_monitor, NULL, "measure timer latency continuously, serve it to Prometheus, store each period" },
	{ "host", cmd_host, NULL, "the agent on a VM's host: finds its vCPU threads, lines a guest's clock up with the host's" },
	{ "cyclictest", cmd_cyclictest, NULL, "cyclictest's options and output, measured and stored by latscope" },
	{ "rtla", cmd_rtla, NULL, "rtla timerlat hist and top: their options and output, measured and stored by latscope" },
	{ "oslat", cmd_oslat, NULL, "oslat's options and output, measured and stored by latscope" },
	{ "runs", cmd_runs, NULL, "list the stored runs" },
	{ "show", cmd_show, NULL, "print a stored run (--json: its JSON result)" },
	{ "compare", cmd_compare, NULL, "stored runs side by side, with a verdict on each difference and CI gates" },
	{ "report", cmd_report, NULL, "stored runs as one self-contained HTML page with plots" },
	{ "export", cmd_export, NULL, "stored runs as OpenMetrics (Prometheus), JSON or a gnuplot script" },
	{ "import", cmd_import, NULL, "store results written with --json, here or elsewhere" },
	{ "merge", cmd_merge, NULL, "merge runs of one probe into one exact result" },
	{ "rm", cmd_rm, NULL, "remove stored runs" },
};

const size_t ncommands = ARRAY_SIZE(commands);

int command_run(const struct command *c, int argc, char **argv)
{
	return c->fn ? c->fn(argc, argv) : measure_main(c->mc, argc, argv);
}
