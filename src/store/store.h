/*
 * The run store: every result kept in one SQLite file.  A run is the result's
 * JSON, given back as the same JSON value (its windows kept apart, both
 * written compact: store/split.h), plus the columns it is listed and filtered
 * by.  Every write is one transaction.
 */
#ifndef LATSCOPE_STORE_STORE_H
#define LATSCOPE_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/parse.h"
#include "store/identity.h"

struct store;

/* Create the file (and, with STORE_MKDIR, its directory) when it does not exist. */
#define STORE_CREATE 0x1u
#define STORE_MKDIR  0x2u
#define STORE_READONLY 0x4u
/* Write a store that exists although another user owns it or others may write it. */
#define STORE_TRUST 0x8u

/*
 * Open the store at path, migrating an older schema.  A file that is not a
 * latscope store (another SQLite database, or not SQLite at all) is refused
 * and left untouched: -EINVAL.  -ENOENT when missing and not STORE_CREATE.
 * A symbolic link at path is never followed: -ELOOP.  A new store is 0600 and
 * the directories STORE_MKDIR makes 0700 (less what the umask takes).  Opened
 * to write, a file this user or file system cannot write is -EACCES or -EROFS
 * at once.  STORE_READONLY reads a store even where no -shm file can be made
 * beside it (a directory the user cannot write, a read-only mount, a full
 * disk).  Opened to write, an existing store (or its -wal or -shm) that
 * another user owns or others may write is refused, -EPERM (store/trust.h),
 * unless STORE_TRUST.  A store whose version number was reset to 0 is read
 * as the version its tables are, and given the number back when written.
 */
int store_open(const char *path, unsigned flags, struct store **ret, struct lat_error *err);
void store_close(struct store *s);
const char *store_path(const struct store *s);

/* What a run is listed by. */
struct run_info {
	int64_t id;
	char start_time[40];
	uint64_t start_realtime_ns;
	char host[256];
	char probe[32];
	struct labels labels;
	bool interrupted;
	uint64_t count, min_ns, p50_ns, p99_ns, max_ns, missed;
	double mean_ns;
	bool has_warm_max;
	uint64_t warm_max_ns;
	bool partial;                   /* a checkpoint of a run: the final result replaces it */
};

/*
 * Store a result given as its JSON text (already checked by result_from_json).
 * *ret_id is the new run's id; -EEXIST with *ret_id the stored copy when the
 * same run (the same identity, store/identity.h) is already there.  A stored
 * run that is partial (its document says "partial": true: a checkpoint of a
 * run still measuring) is replaced instead, partial or final, labels and all,
 * and keeps its id.
 */
int store_put(struct store *s, const char *json_text, int64_t *ret_id, struct lat_error *err);
/* Several results in one transaction: all are stored or none.  A run already
 * there is not an error: ret_dup[i] says so and ret_ids[i] is its id. */
int store_put_all(struct store *s, const char *const *texts, size_t n, int64_t *ret_ids, bool *ret_dup,
		  struct lat_error *err);

/* The identity of run id, what a merge of it lists.  -ENOENT for an unknown id. */
int store_identity(struct store *s, int64_t id, char ret[STORE_IDENTITY_SIZE], struct lat_error *err);

/* The stored JSON text of run id (malloc'ed), whole.  -ENOENT for an unknown id. */
int store_get(struct store *s, int64_t id, char **ret_json, struct lat_error *err);

/* Leave out the "all" block's windows (an empty array in their place): the
 * result reader derives them again from the CPUs' and never reads them. */
#define STORE_LEAVE_ALL_WINDOWS 0x1u
/*
 * The same, leaving out what leave_out says: what a run is read back for is
 * a quarter smaller.  Windows are kept apart in the store, so what is left
 * out is not read at all.
 */
int store_read(struct store *s, int64_t id, unsigned leave_out, char **ret_json, struct lat_error *err);

struct run_filter {
	const char *probe;              /* NULL: any */
	struct labels labels;           /* every one must match */
	uint64_t since_ns;              /* 0: any; else start time at or after (CLOCK_REALTIME ns) */
	uint64_t limit;                 /* 0: all; else the newest N */
	bool partial_only;              /* only partial runs */
};

/* Runs matching f in the order they were stored, oldest first (malloc'ed
 * array); f->limit keeps the last stored. */
int store_list(struct store *s, const struct run_filter *f, struct run_info **ret, size_t *ret_n,
	       struct lat_error *err);
/* The ids of the same runs, in the same order (malloc'ed array): what a
 * caller that needs no more reads, without their figures and labels. */
int store_ids(struct store *s, const struct run_filter *f, int64_t **ret, size_t *ret_n, struct lat_error *err);
/* The label keys the same runs have, each once, sorted (malloc'ed array; *ret
 * NULL when there is none): what completes a key without reading a run. */
int store_label_keys(struct store *s, const struct run_filter *f, char (**ret)[LABEL_KEY_MAX],
		     size_t *ret_n, struct lat_error *err);
/* One run's info.  -ENOENT for an unknown id. */
int store_info(struct store *s, int64_t id, struct run_info *ret, struct lat_error *err);

/* Remove runs, all or none: -ENOENT (nothing removed) when an id is unknown. */
int store_rm(struct store *s, const int64_t *ids, size_t n, struct lat_error *err);

#endif
