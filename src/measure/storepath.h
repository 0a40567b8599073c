/* Where runs are stored: --db, then $LATSCOPE_DB, then the XDG data directory;
 * and where a run the store could not take is kept instead. */
#ifndef LATSCOPE_MEASURE_STOREPATH_H
#define LATSCOPE_MEASURE_STOREPATH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The store's path into buf.  *ret_chosen is true when the user named it
 * (--db or LATSCOPE_DB): then a failure to open it is an error, while the
 * default location only earns a warning.  -ENOENT when no home is known.
 */
int store_path_resolve(const char *db_opt, char *buf, size_t size, bool *ret_chosen);

/*
 * Make the default store's missing directories (0700, less the umask): those
 * of its path below the home, or below $XDG_DATA_HOME's parent, never the
 * home or anything above it (root with HOME=/nonexistent makes nothing).  A
 * store the user chose is never given a directory: like --json's, it must
 * exist.  0 or -errno (-ENOENT: no home, or no such home).
 */
int store_default_dir_make(void);

/* What --db-trust, beside every --db, says in its command's help (store/trust.h). */
#define DB_TRUST_HELP "write to the store even when another user owns it or others may write it (reading never needs this)"

/* What chose the store, for messages: "'--db'", "LATSCOPE_DB" or "the default store". */
const char *store_path_source(const char *db_opt);

/* $XDG_STATE_HOME/latscope/unstored (default ~/.local/state/...) into buf;
 * -ENOENT when no home is known. */
int unstored_dir_resolve(char *buf, size_t size);

#endif
