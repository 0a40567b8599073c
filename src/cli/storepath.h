/* Where runs are stored: --db, then $LATSCOPE_DB, then the XDG data directory. */
#ifndef LATSCOPE_CLI_STOREPATH_H
#define LATSCOPE_CLI_STOREPATH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The store's path into buf.  *ret_chosen is true when the user named it
 * (--db or LATSCOPE_DB): then a failure to open it is an error, while the
 * default location only earns a warning.  -ENOENT when no home is known.
 */
int store_path_resolve(const char *db_opt, char *buf, size_t size, bool *ret_chosen);

/* What chose the store, for messages: "'--db'", "LATSCOPE_DB" or "the default store". */
const char *store_path_source(const char *db_opt);

#endif
