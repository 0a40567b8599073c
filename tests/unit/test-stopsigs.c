/*
 * Unit tests for the set of signals that end a run (runner_stop_signals,
 * src/probe/runner.c): SIGINT, SIGTERM, SIGHUP and SIGQUIT, blocked before
 * anything is measured and taken by the runner; SIGHUP left out when the
 * process was started with it ignored (nohup), so such a run goes on after a
 * hangup (README, "Signals").  A test that ends a run with SIGHUP must start
 * it with SIGHUP at its default: test_rtla.py's did not, and hung when the
 * suite ran under nohup.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "probe/runner.h"

static const int stops[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static const int others[] = { SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM, SIGCHLD, SIGKILL };

static void on_signal(int sig)
{
	(void)sig;
}

static void set_disposition(int sig, void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(sig, &sa, NULL), 0);
}

static int defaults(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		set_disposition(stops[i], SIG_DFL);
	return 0;
}

static void test_at_their_defaults_int_term_hup_and_quit_end_a_run_and_no_other_signal_does(void **state)
{
	(void)state;
	sigset_t s;
	runner_stop_signals(&s);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		assert_true(sigismember(&s, stops[i]));
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		assert_false(sigismember(&s, others[i]));
}

static void test_an_ignored_sighup_stays_ignored_as_nohup_asks_and_the_others_still_end_the_run(void **state)
{
	(void)state;
	sigset_t s;
	set_disposition(SIGHUP, SIG_IGN);
	runner_stop_signals(&s);
	assert_false(sigismember(&s, SIGHUP));
	assert_true(sigismember(&s, SIGINT));
	assert_true(sigismember(&s, SIGTERM));
	assert_true(sigismember(&s, SIGQUIT));
}

static void test_sigint_and_sigquit_end_the_run_even_when_a_scripts_ampersand_ignored_them(void **state)
{
	(void)state;
	sigset_t s;
	set_disposition(SIGINT, SIG_IGN);
	set_disposition(SIGQUIT, SIG_IGN);
	runner_stop_signals(&s);
	assert_true(sigismember(&s, SIGINT));
	assert_true(sigismember(&s, SIGQUIT));
	assert_true(sigismember(&s, SIGHUP));
	assert_true(sigismember(&s, SIGTERM));
}

static void test_a_sighup_with_a_handler_is_not_ignored_and_ends_the_run(void **state)
{
	(void)state;
	sigset_t s;
	set_disposition(SIGHUP, on_signal);
	runner_stop_signals(&s);
	assert_true(sigismember(&s, SIGHUP));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_at_their_defaults_int_term_hup_and_quit_end_a_run_and_no_other_signal_does, defaults, defaults),
		cmocka_unit_test_setup_teardown(
			test_an_ignored_sighup_stays_ignored_as_nohup_asks_and_the_others_still_end_the_run, defaults,
			defaults),
		cmocka_unit_test_setup_teardown(
			test_sigint_and_sigquit_end_the_run_even_when_a_scripts_ampersand_ignored_them, defaults, defaults),
		cmocka_unit_test_setup_teardown(test_a_sighup_with_a_handler_is_not_ignored_and_ends_the_run, defaults,
						defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
