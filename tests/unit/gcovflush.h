/*
 * For a test of code that runs in forked processes which never return from main: the load's
 * supervisor and workers end by _exit() or by a signal, and gcov writes a process's counts
 * only at exit(), so in a coverage build their lines, which the tests do run, would show as
 * never run.  Link the test with -Wl,--wrap=_exit,--wrap=child_close_fds
 * (tests/unit/meson.build) and include this once:
 *  - _exit first writes the counts, with every signal blocked, so that the SIGTERM a failing
 *    supervisor sends its workers cannot cut the writing short;
 *  - a forked process, once it has closed what it inherited (child_close_fds, the first
 *    step of a worker and of the supervisor), writes them when a SIGTERM comes and then
 *    dies of that signal as before (the supervisor blocks SIGTERM and reads it from a
 *    signalfd: there the handler never runs).
 * Without gcov (__gcov_dump absent) both only call through: what is tested is the
 * product's own behaviour in every build.
 */
#ifndef LATSCOPE_TESTS_GCOVFLUSH_H
#define LATSCOPE_TESTS_GCOVFLUSH_H

#include <signal.h>
#include <string.h>

#include "load/child.h"

/* The names are gcov's and the linker's (--wrap), reserved as they must be. */
/* NOLINTBEGIN(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
extern void __gcov_dump(void) __attribute__((weak));

void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));
void __real_child_close_fds(const int *keep, size_t n);
void __wrap_child_close_fds(const int *keep, size_t n);
/* NOLINTEND(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */

void __wrap__exit(int status)
{
	if (__gcov_dump) {
		/* A supervisor that fails signals its workers as they exit: let the counts be
		 * written whole (a SIGKILL after its grace still ends the process). */
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		__gcov_dump();
	}
	__real__exit(status);
}

static void gcovflush_on_term(int sig)
{
	__gcov_dump();
	signal(sig, SIG_DFL);
	raise(sig);
}

void __wrap_child_close_fds(const int *keep, size_t n)
{
	__real_child_close_fds(keep, n);
	if (__gcov_dump) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = gcovflush_on_term;
		sigfillset(&sa.sa_mask);        /* one dump, whichever thread the signal finds */
		sigaction(SIGTERM, &sa, NULL);
	}
}

#endif
