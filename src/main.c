/* latscope: the dispatcher of the command table (cli/commands.c). */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/version.h"
#include "measure/exitcode.h"
#include "config.h"
#include "describe.h"
#include "core/suggest.h"
#include "front/driver.h"
#include "report/tprint.h"

static void usage(FILE *out)
{
	fprintf(out, "Usage: latscope COMMAND [OPTIONS]\n\nCommands:\n");
	for (size_t i = 0; i < ncommands; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(out, "\n'latscope COMMAND --help' describes a command.  'latscope --version' prints the version.\n");
}

/*
 * Output that could not be written is an error, whatever the command said;
 * but a reader that went away (`latscope sys | head -1`) chose to stop
 * reading, as git takes a pager that quits: the command's own status, quietly.
 * Commands leave standard output's failures to this one place.
 */
static int finish(int code)
{
	int flushed = fflush(stdout);
	int err = errno;

	if (flushed != 0 || ferror(stdout)) {
		/* errno is stale when an earlier write failed: ask the pipe whether its reader left. */
		struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };
		bool closed = (flushed != 0 && err == EPIPE) || (poll(&p, 1, 0) == 1 && (p.revents & POLLERR));
		if (closed)
			return code;
		fprintf(stderr, "latscope: cannot write to standard output%s%s\n",
			flushed ? ": " : "", flushed ? strerror(err) : "");
		return code == EXIT_OK ? EXIT_ERROR : code;
	}
	return code;
}

int main(int argc, char **argv)
{
	/* A closed pipe on stdout must not kill a run before its results are written. */
	signal(SIGPIPE, SIG_IGN);
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;
	/* called through a link of a front end's name, latscope is that tool, options and all */
	for (size_t i = 0; argc > 0 && i < nfront_ends; i++)
		if (strcmp(base ? base + 1 : argv[0], front_ends[i]->name) == 0)
			return finish(front_run(front_ends[i], argc, argv));
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return finish(EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0) {
		char line[256];
		version_line(line, sizeof(line), LATSCOPE_VERSION, LATSCOPE_DESCRIBE);
		printf("%s\n", line);
		return finish(EXIT_OK);
	}
	for (size_t i = 0; i < ncommands; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return finish(command_run(&commands[i], argc - 1, argv + 1));
	const char *names[64] = { 0 };
	size_t n = ncommands < 64 ? ncommands : 64;
	for (size_t i = 0; i < n; i++)
		names[i] = commands[i].name;
	long near = suggest_word(argv[1], strlen(argv[1]), names, n);
	if (near >= 0)
		tprintf(stderr, "latscope: unknown command '%s'; did you mean '%s'?\n", argv[1], names[near]);
	else
		tprintf(stderr, "latscope: unknown command '%s'\n", argv[1]);
	fprintf(stderr, "Try 'latscope --help'.\n");
	return EXIT_USAGE;
}
