/* Exit statuses, documented in the README and the man pages. */
#ifndef LATSCOPE_MEASURE_EXITCODE_H
#define LATSCOPE_MEASURE_EXITCODE_H

enum {
	EXIT_OK = 0,
	EXIT_ERROR = 1,          /* the run could not be done or its result not kept */
	EXIT_USAGE = 2,          /* bad options or arguments; nothing was measured */
	EXIT_THRESHOLD = 3,      /* --fail-above: a judged statistic was above the limit, or
				  * --on-threshold stop ended the run, or --until decided "above" */
	EXIT_UNDECIDED = 4,      /* --until: the run ended before its rule was decided */
};

#endif
