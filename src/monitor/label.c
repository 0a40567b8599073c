#include "monitor/label.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report/omtext.h"

void monitor_id_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	if (gmtime_r(&now, &tm))
		strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
	else
		snprintf(buf, size, "%lld", (long long)now);
}

int monitor_check_labels(const struct labels *ls, struct lat_error *err)
{
	char a[LABEL_KEY_MAX + 8], b[LABEL_KEY_MAX + 8];

	for (unsigned i = 0; i < ls->n; i++) {
		if (strcmp(ls->items[i].key, MONITOR_LABEL) == 0)
			return err_set(err, -EINVAL, "option '--label': monitor is the monitor's own label (monitor=ID)");
		om_make_name(a, sizeof(a), "label_", ls->items[i].key);
		for (unsigned k = 0; k < i; k++) {
			om_make_name(b, sizeof(b), "label_", ls->items[k].key);
			if (strcmp(a, b) == 0)
				return err_set(err, -EINVAL, "option '--label': '%s' and '%s' are both %s on /metrics",
					       ls->items[k].key, ls->items[i].key, a);
		}
	}
	return 0;
}

int monitor_add_label(struct labels *ls, const char *id)
{
	if (ls->n >= LABELS_MAX)
		return -E2BIG;
	snprintf(ls->items[ls->n].key, LABEL_KEY_MAX, "%s", MONITOR_LABEL);
	snprintf(ls->items[ls->n].value, LABEL_VALUE_MAX, "%s", id);
	ls->n++;
	return 0;
}
