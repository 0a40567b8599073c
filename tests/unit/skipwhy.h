/* A unit test that skips says why, as the integration tests do (tests/integration/harness.py):
 * ./check lists the reason, and counts as a failure a skip whose reason does not begin with
 * "this machine" or "this build", which only what the machine cannot have may give. */
#ifndef LATSCOPE_TESTS_SKIPWHY_H
#define LATSCOPE_TESTS_SKIPWHY_H

#include <stdio.h>

#define skip_because(why)                                                  \
	do {                                                               \
		printf("latscope-skip: %s: %s\n", __func__, (why));        \
		fflush(stdout);                                            \
		skip();                                                    \
	} while (0)

#endif
