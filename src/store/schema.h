/* The store's schema as a list of migrations: version N is migrations 1..N. */
#ifndef LATSCOPE_STORE_SCHEMA_H
#define LATSCOPE_STORE_SCHEMA_H

#include <stdbool.h>

/* 'LatS': marks a SQLite file as a latscope store. */
#define STORE_APPLICATION_ID 0x4c617453

unsigned schema_versions(void);
/* The SQL that takes the schema from version - 1 to version. */
const char *schema_migration(unsigned version);
/* Whether that migration leaves runs.identity for the store to fill in. */
bool schema_fills_identity(unsigned version);
/* Whether a store of this version has runs.identity. */
bool schema_has_identity(unsigned version);
/* Whether that migration leaves the windows of the rows stored before for the store to move. */
bool schema_moves_windows(unsigned version);
/* Whether a store of this version keeps windows apart (table windows) and has runs.partial. */
bool schema_has_windows(unsigned version);

/*
 * A store's version from its tables, for a store whose version number says
 * 0 (none) although it has tables: one SQLite tool or another resets
 * user_version.  has(table, column, ctx) says whether the store has that
 * table (column NULL) or that column of it.  The version whose tables and
 * columns are there, each migration's up to it and none after; -1 when what
 * is there is no version's (not a store, or a damaged one).
 */
int schema_version_of(bool (*has)(const char *table, const char *column, void *ctx), void *ctx);

#endif
