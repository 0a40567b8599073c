/*
 * The label `latscope monitor` puts on every run it stores, monitor=ID (ID:
 * the monitor's start, UTC), and the user's labels beside it, which /metrics
 * exports as label_KEY.
 */
#ifndef LATSCOPE_MONITOR_LABEL_H
#define LATSCOPE_MONITOR_LABEL_H

#include <stddef.h>

#include "core/error.h"
#include "core/parse.h"

#define MONITOR_LABEL "monitor"

/* The ID of a monitor starting now. */
void monitor_id_now(char *buf, size_t size);

/* The user's labels: not the monitor's own, and no two of one name on
 * /metrics (every scrape would fail).  -EINVAL with err filled. */
int monitor_check_labels(const struct labels *ls, struct lat_error *err);

/* Add monitor=id: -E2BIG when the labels are full. */
int monitor_add_label(struct labels *ls, const char *id);

#endif
