/* --trace-spikes' queue: what is queued, what is dropped, and what a period's run is told. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "core/nstime.h"
#include "monitor/spikes.h"

static void test_only_windows_above_the_limit_are_queued(void **state)
{
	struct spikes sp = { .above_ns = NS_PER_MS };

	(void)state;
	spikes_offer(&sp, 1, 100, NS_PER_MS, 0, NS_PER_SEC);
	assert_int_equal(sp.nqueue, 0);
	spikes_offer(&sp, 1, 100, NS_PER_MS + 1u, 0, NS_PER_SEC);
	assert_int_equal(sp.nqueue, 1);
	assert_int_equal(sp.queue[0].cpu, 1);
	assert_int_equal(sp.queue[0].to_ns, NS_PER_SEC);
}

static void test_a_full_queue_counts_the_window_as_not_queued(void **state)
{
	struct spikes sp = { .above_ns = 1 };

	(void)state;
	for (unsigned i = 0; i < SPIKES_QUEUE + 3u; i++)
		spikes_offer(&sp, 0, 1, 2, i, i + 1u);
	assert_int_equal(sp.nqueue, SPIKES_QUEUE);
	assert_int_equal(sp.dropped, 3);
}

static void test_the_oldest_is_explained_first_and_the_queue_empties(void **state)
{
	struct spikes sp = { .above_ns = 1 };

	(void)state;
	spikes_offer(&sp, 0, 1, 2, 10, 20);
	spikes_offer(&sp, 1, 2, 2, 30, 40);
	assert_true(spikes_explain_one(&sp, NULL, 0));
	assert_int_equal(sp.nqueue, 1);
	assert_int_equal(sp.queue[0].from_ns, 30);
	assert_true(spikes_explain_one(&sp, NULL, 0));
	assert_false(spikes_explain_one(&sp, NULL, 0));
	assert_int_equal(sp.unexplained, 2);            /* no ring held them */
}

static void test_the_period_is_told_its_counts_and_the_next_starts_clean(void **state)
{
	static struct result res;
	struct spikes sp = { .above_ns = 10u * NS_PER_MS, .explained = 1, .unexplained = 2, .dropped = 3 };

	(void)state;
	sp.by_kind[SPIKE_TASK] = 1;
	spikes_note(&sp, &res);
	assert_int_equal(res.nnotes, 1);
	assert_non_null(strstr(res.notes[0], ": 1 window explained (irq 0, softirq 0, task 1, no event 0), 2 not "
					     "held by the ring, 3 not queued"));
	assert_int_equal(sp.explained + sp.unexplained + sp.dropped + sp.by_kind[SPIKE_TASK], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_windows_above_the_limit_are_queued),
		cmocka_unit_test(test_a_full_queue_counts_the_window_as_not_queued),
		cmocka_unit_test(test_the_oldest_is_explained_first_and_the_queue_empties),
		cmocka_unit_test(test_the_period_is_told_its_counts_and_the_next_starts_clean),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
