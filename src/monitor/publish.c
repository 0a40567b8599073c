#include "monitor/publish.h"

#include <errno.h>
#include <stdlib.h>

int mon_publish(struct metrics_server *s, const struct mon_metrics *const *ms, size_t n,
		const struct mon_page_info *info, uint64_t now_mono_ns)
{
	char *prom = mon_metrics_render(ms, n, MON_PROMETHEUS, now_mono_ns);
	char *om = mon_metrics_render(ms, n, MON_OPENMETRICS, now_mono_ns);
	char *page = mon_page_render(ms[0], info, now_mono_ns);
	int r = prom && om && page ? metrics_server_publish(s, prom, om, page) : -ENOMEM;

	free(prom);
	free(om);
	free(page);
	return r;
}
