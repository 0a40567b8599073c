/* latscope: the command table and its dispatcher. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/exitcode.h"
#include "config.h"
#include "core/suggest.h"
#include "report/tprint.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "run", cmd_run, "the suite to start with: timer, noise and wake, stored and summed up" },
	{ "timer", cmd_timer, "timer wakeup latency per CPU (cyclictest class)" },
	{ "noise", cmd_noise, "OS and hypervisor noise seen by a busy loop (oslat class)" },
	{ "wake", cmd_wake, "thread-to-thread wakeup latency, on one CPU and across CPUs" },
	{ "io", cmd_io, "read throughput, per-read latency and the CPU cost of each read" },
	{ "sys", cmd_sys, "system fingerprint and latency advice" },
	{ "cyclictest", cmd_cyclictest, "cyclictest's options and output, measured and stored by latscope" },
	{ "runs", cmd_runs, "list the stored runs" },
	{ "show", cmd_show, "print a stored run (--json: its JSON result)" },
	{ "compare", cmd_compare, "stored runs side by side, with a verdict on each difference and CI gates" },
	{ "report", cmd_report, "stored runs as one self-contained HTML page with plots" },
	{ "export", cmd_export, "stored runs as OpenMetrics (Prometheus), JSON or a gnuplot script" },
	{ "import", cmd_import, "store results written with --json, here or elsewhere" },
	{ "merge", cmd_merge, "merge runs of one probe into one exact result" },
	{ "rm", cmd_rm, "remove stored runs" },
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: latscope COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\n'latscope COMMAND --help' describes a command.  'latscope --version' prints the version.\n");
}

/* Output that could not be written is an error, whatever the command said. */
static int finish(int code)
{
	int flushed = fflush(stdout);
	int err = errno;

	if (flushed != 0 || ferror(stdout)) {
		/* errno is stale when an earlier write failed: ask the pipe whether its reader left. */
		struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };
		bool closed = (flushed != 0 && err == EPIPE) || (poll(&p, 1, 0) == 1 && (p.revents & POLLERR));
		if (!closed)
			fprintf(stderr, "latscope: cannot write to standard output%s%s\n", flushed ? ": " : "",
				flushed ? strerror(err) : "");
		return code == EXIT_OK ? EXIT_ERROR : code;
	}
	return code;
}

int main(int argc, char **argv)
{
	/* A closed pipe on stdout must not kill a run before its results are written. */
	signal(SIGPIPE, SIG_IGN);
	/* Called through a link named cyclictest: be cyclictest, options and all. */
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
	if (argc > 0 && strcmp(base ? base + 1 : argv[0], "cyclictest") == 0)
		return finish(cmd_cyclictest(argc, argv));
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return finish(EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("latscope %s\n", LATSCOPE_VERSION);
		return finish(EXIT_OK);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return finish(commands[i].fn(argc - 1, argv + 1));
	const char *names[sizeof(commands) / sizeof(commands[0])];
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		names[i] = commands[i].name;
	long near = suggest_word(argv[1], strlen(argv[1]), names, sizeof(names) / sizeof(names[0]));
	if (near >= 0)
		tprintf(stderr, "latscope: unknown command '%s'; did you mean '%s'?\n", argv[1], names[near]);
	else
		tprintf(stderr, "latscope: unknown command '%s'\n", argv[1]);
	fprintf(stderr, "Try 'latscope --help'.\n");
	return EXIT_USAGE;
}
