/*
 * Content negotiation for /metrics: a scraper that asks for OpenMetrics
 * (Prometheus sends "application/openmetrics-text;version=1.0.0,...;
 * text/plain;version=0.0.4;q=0.5,...") gets it; everyone else, text 0.0.4.
 */
#ifndef LATSCOPE_SERVE_ACCEPT_H
#define LATSCOPE_SERVE_ACCEPT_H

#include <stdbool.h>

/* True when accept (NULL: no header) ranks application/openmetrics-text
 * with q > 0 and at least as high as text/plain. */
bool accept_wants_openmetrics(const char *accept);

#endif
