/* The three texts the server hands out (/metrics in both formats and /), made whole and swapped in. */
#ifndef LATSCOPE_MONITOR_PUBLISH_H
#define LATSCOPE_MONITOR_PUBLISH_H

#include <stddef.h>
#include <stdint.h>

#include "monitor/metrics.h"
#include "monitor/page.h"
#include "serve/http.h"

/* The n probes' figures (ms[0] the page's) as of now_mono_ns: 0 or -ENOMEM
 * (the last texts stay served). */
int mon_publish(struct metrics_server *s, const struct mon_metrics *const *ms, size_t n,
		const struct mon_page_info *info, uint64_t now_mono_ns);

#endif
