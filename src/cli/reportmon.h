/* latscope report --monitor: the long-run view of one monitor's stored periods. */
#ifndef LATSCOPE_CLI_REPORTMON_H
#define LATSCOPE_CLI_REPORTMON_H

#include <stddef.h>
#include <stdio.h>

#include "monitor/label.h"
#include "store/store.h"

/*
 * Write the page of monitor id ("latest": the monitor whose newest run was
 * stored last) to out, reading one run at a time.  Prints what is wrong;
 * returns an exit status, with *ret_n the periods and ret_id the monitor.
 */
int report_monitor(struct store *st, const char *id, FILE *out, char *ret_id, size_t id_size, size_t *ret_n);

#endif
