#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/array.h"
#include "core/nstime.h"
#include "store/identity.h"
#include "store/schema.h"
#include "store/split.h"
#include "store/trust.h"
#include "sys/mkdirs.h"

#define BUSY_TIMEOUT_MS 10000
/* SQLite's shared-lock bytes on the database file (its os_unix.c: PENDING_BYTE + 2, 510 of them). */
#define SHARED_FIRST 0x40000002
#define SHARED_SIZE 510

struct store {
	sqlite3 *db;
	char *path;                     /* as the user gave it: what messages name */
	char *real;                     /* its directory resolved: what SQLite opens, no symbolic link on the way */
	int lock_fd;                    /* reading a store nobody may write beside: keeps writers from checkpointing */
	int64_t version;                /* of the schema, as opened */
	int64_t stamp;                  /* its user_version: 0 in a store that has lost it (schema_version_of) */
};

static int symlink_refused(struct lat_error *err, const char *path)
{
	return err_set(err, -ELOOP, "'%s' is a symbolic link: a store is opened only by its own name "
		    "(give the path it points to)", path);
}

/* An SQLite failure as an errno and a sentence that names the file. */
static int db_fail(struct lat_error *err, const char *path, sqlite3 *db, int rc, const char *doing)
{
	/* The connection's message only when it is about rc: a rollback since may have reset it. */
	const char *why = db && sqlite3_extended_errcode(db) == rc ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
	if (rc == SQLITE_CANTOPEN_SYMLINK)
		return symlink_refused(err, path);
	switch (rc & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return err_set(err, -EINVAL, "'%s' is damaged or not a latscope store (%s); it was left as it is", path, why);
	case SQLITE_READONLY:
		return err_set(err, -EROFS, "cannot write '%s': it is read-only (%s)", path, why);
	case SQLITE_FULL:
		return err_set(err, -ENOSPC, "cannot write '%s': the disk is full", path);
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return err_set(err, -EBUSY, "'%s' stayed locked by another writer for %d s", path, BUSY_TIMEOUT_MS / 1000);
	case SQLITE_CANTOPEN:
		return err_set(err, -EACCES, "cannot open '%s': %s", path, why);
	case SQLITE_IOERR:
		/* SQLite's own text is only "disk I/O error"; the system's says why. */
		if (db && sqlite3_system_errno(db) == ENOSPC)
			return err_set(err, -ENOSPC, "cannot write '%s' or its journal: the disk is full", path);
		if (db && sqlite3_system_errno(db))
			return err_set(err, -EIO, "%s '%s': %s", doing, path, strerror(sqlite3_system_errno(db)));
		return err_set(err, -EIO, "%s '%s': %s", doing, path, why);
	case SQLITE_NOMEM:
		return err_set(err, -ENOMEM, "out of memory %s '%s'", doing, path);
	default:
		return err_set(err, -EIO, "%s '%s': %s", doing, path, why);
	}
}

static int exec(struct store *s, const char *sql, struct lat_error *err, const char *doing)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? 0 : db_fail(err, s->path, s->db, rc, doing);
}

static int pragma_int(sqlite3 *db, const char *sql, int64_t *ret)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*ret = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/* A non-empty file must start with SQLite's header before SQLite may touch it. */
static int check_header(const char *path, struct lat_error *err)
{
	static const char magic[16] = "SQLite format 3";
	char head[16];
	struct stat st;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 && errno == ELOOP)
		return symlink_refused(err, path);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : err_set(err, -errno, "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(err, -EINVAL, "'%s' is not a latscope store (%s); it was left as it is", path,
			    S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
	}
	ssize_t n = read(fd, head, sizeof(head));
	close(fd);
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(head) || memcmp(head, magic, sizeof(magic)) != 0)
		return err_set(err, -EINVAL, "'%s' is not a latscope store (not an SQLite database); it was left as it is", path);
	return 0;
}

/* The path with its directory resolved (malloc'ed): SQLite's NOFOLLOW refuses
 * a symbolic link anywhere on the way, and only the last name should count. */
static int resolve(const char *path, char **ret)
{
	char *dcopy = strdup(path), *bcopy = strdup(path), *dir = NULL;
	int r = -ENOMEM;

	if (dcopy && bcopy && (dir = realpath(dirname(dcopy), NULL)) == NULL)
		r = -errno;
	else if (dir)
		r = asprintf(ret, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, basename(bcopy)) < 0 ? -ENOMEM : 0;
	free(dir);
	free(dcopy);
	free(bcopy);
	return r;
}

/* A new store is the user's alone (less what the umask takes); SQLite gives its
 * journal files the same mode. */
static int create_private(struct store *s, struct lat_error *err)
{
	int fd = open(s->real, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EEXIST)            /* another latscope made it just now */
		return 0;
	return errno == ELOOP ? symlink_refused(err, s->path)
			      : err_set(err, -errno, "cannot create '%s': %s", s->path, strerror(errno));
}

static int open_db(struct store *s, const char *name, int flags, int *ret_rc, struct lat_error *err)
{
	int rc = sqlite3_open_v2(name, &s->db, flags | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE, NULL);

	*ret_rc = rc;
	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot open");
	sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
	return 0;
}

static bool has_part(const char *table, const char *column, void *ctx)
{
	sqlite3 *db = ctx;
	sqlite3_stmt *st;
	bool yes = false;

	if (sqlite3_prepare_v2(db, column ? "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2"
					  : "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
			       -1, &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	if (column)
		sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/*
 * The schema version of the store, read in a transaction: its user_version,
 * or in a store that has tables but says 0 (a tool reset it), the version its
 * tables are, -1 when they are none.  *ret_stamp is user_version.  SQLite's code.
 */
static int read_version(sqlite3 *db, int64_t *ret, int64_t *ret_stamp)
{
	int64_t tables = 0;
	int rc = pragma_int(db, "PRAGMA user_version", ret_stamp);

	*ret = *ret_stamp;
	if (rc == SQLITE_OK && *ret_stamp == 0 && (rc = pragma_int(db, "SELECT count(*) FROM sqlite_master", &tables)) ==
								SQLITE_OK && tables)
		*ret = schema_version_of(has_part, db);
	return rc;
}

/* Tables of no version under a latscope mark: refused, not guessed at. */
static int refuse_unversioned(struct store *s, struct lat_error *err)
{
	return err_set(err, -EINVAL, "'%s' is marked as a latscope store but its schema version is gone and its tables "
		       "are no version's; it was left as it is", s->path);
}

/* Identities for the runs stored before there were any (schema 3). */
static int fill_identities(struct store *s, struct lat_error *err);
/* Windows apart for the runs stored before (schema 4). */
static int move_windows(struct store *s, struct lat_error *err);

static int migrate(struct store *s, struct lat_error *err)
{
	char sql[64];
	int64_t from = 0, stamp = 0;
	int r, rc;

	if ((r = exec(s, "BEGIN IMMEDIATE", err, "cannot lock")) < 0)
		return r;
	/* Read again under the lock: another latscope may have just done it. */
	if ((rc = read_version(s->db, &from, &stamp)) != SQLITE_OK) {
		r = db_fail(err, s->path, s->db, rc, "cannot read");
		goto rollback;
	}
	if (from < 0) {
		r = refuse_unversioned(s, err);
		goto rollback;
	}
	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", STORE_APPLICATION_ID);
	if ((r = exec(s, sql, err, "cannot mark")) < 0)
		goto rollback;
	for (unsigned v = (unsigned)from + 1u; v <= schema_versions(); v++) {
		if ((r = exec(s, schema_migration(v), err, "cannot upgrade")) < 0)
			goto rollback;
		if (schema_fills_identity(v) && (r = fill_identities(s, err)) < 0)
			goto rollback;
		if (schema_moves_windows(v) && (r = move_windows(s, err)) < 0)
			goto rollback;
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %u", schema_versions());
	if ((r = exec(s, sql, err, "cannot upgrade")) < 0 || (r = exec(s, "COMMIT", err, "cannot upgrade")) < 0)
		goto rollback;
	s->version = s->stamp = schema_versions();
	return 0;
rollback:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

/*
 * WAL: readers never block the writer, and a killed writer leaves the last
 * committed state.  Switching needs the file to itself, and SQLite's busy
 * handler does not wait for that, so two latscopes creating the store at once
 * retry here.
 */
static int set_wal(struct store *s, struct lat_error *err)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	int rc;

	for (int waited = 0;; waited += 20) {
		rc = sqlite3_exec(s->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
		if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || waited >= BUSY_TIMEOUT_MS)
			break;
		nanosleep(&pause, NULL);
	}
	return rc == SQLITE_OK ? 0 : db_fail(err, s->path, s->db, rc, "cannot open");
}

/* Refuse what is not ours before changing anything in the file.  *ret_rc is
 * SQLite's code when reading failed. */
static int check_identity(struct store *s, bool readonly, int *ret_rc, struct lat_error *err)
{
	int64_t app = 0, version = 0, stamp = 0, tables = 0;
	int rc;

	/* One read transaction: another latscope creating the store between two
	 * reads would show tables without the mark, like a stranger's database. */
	if ((rc = sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL)) != SQLITE_OK) {
		*ret_rc = rc;
		return db_fail(err, s->path, s->db, rc, "cannot read");
	}
	if ((rc = pragma_int(s->db, "PRAGMA application_id", &app)) != SQLITE_OK ||
	    (rc = read_version(s->db, &version, &stamp)) != SQLITE_OK ||
	    (rc = pragma_int(s->db, "SELECT count(*) FROM sqlite_master", &tables)) != SQLITE_OK) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		*ret_rc = rc;
		return db_fail(err, s->path, s->db, rc, "cannot read");
	}
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	*ret_rc = SQLITE_OK;
	if (app != STORE_APPLICATION_ID && (app != 0 || tables != 0))
		return err_set(err, -EINVAL, "'%s' is an SQLite database of another program, not a latscope store; "
			    "it was left as it is", s->path);
	if (version < 0)
		return refuse_unversioned(s, err);
	if (version > (int64_t)schema_versions())
		return err_set(err, -EPROTO, "'%s' was written by a newer latscope (store schema %lld; this one knows up to %u)",
			    s->path, (long long)version, schema_versions());
	if (readonly && version == 0)
		return err_set(err, -ENOENT, "'%s' holds no runs yet", s->path);
	s->version = version;
	s->stamp = stamp;
	return 0;
}

/* SQLite opened the file read-only because this user or file system cannot write it. */
static int refuse_readonly(struct store *s, struct lat_error *err)
{
	int e = faccessat(AT_FDCWD, s->real, W_OK, AT_EACCESS) < 0 ? errno : EACCES;

	if (e == EROFS)
		return err_set(err, -EROFS, "cannot write '%s': it is on a read-only file system", s->path);
	return err_set(err, -EACCES, "cannot write '%s': it is read-only to this user (%s)", s->path, strerror(e));
}

/*
 * Refuse to write a store that is not this user's alone (store/trust.h),
 * before SQLite opens it: reading it would already make its -shm, as its
 * owner's.  A file this user cannot write is left to the read-only refusal,
 * which says more.
 */
static int check_trust(struct store *s, struct lat_error *err)
{
	static const char *const parts[] = { "", "-wal", "-shm" };
	char name[PATH_MAX + 8], shown[PATH_MAX + 8];
	struct stat st;
	int r;

	if (faccessat(AT_FDCWD, s->real, W_OK, AT_EACCESS) < 0)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(parts); i++) {
		snprintf(name, sizeof(name), "%s%s", s->real, parts[i]);
		snprintf(shown, sizeof(shown), "%s%s", s->path, parts[i]);
		if (lstat(name, &st) < 0)
			continue;       /* none yet: SQLite makes it from the store's own */
		if ((r = store_trust_file(&st, geteuid(), err)) < 0)
			return err_prefix(err, r, "will not write '%s': ", shown);
	}
	return 0;
}

static int open_writing(struct store *s, bool trust, struct lat_error *err)
{
	int r, rc;

	if (!trust && (r = check_trust(s, err)) < 0)
		return r;
	if ((r = open_db(s, s->real, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &rc, err)) < 0)
		return r;
	if (sqlite3_db_readonly(s->db, "main") == 1)
		return refuse_readonly(s, err);
	if ((r = check_identity(s, false, &rc, err)) < 0)
		return r;
	/* FULL: a committed run survives power loss too.  No automatic checkpoint:
	 * only the last connection's, at close, which waits for every reader's
	 * shared lock, so the file a lock-holding reader reads without the log
	 * (open_frozen) does not change under it. */
	if ((r = set_wal(s, err)) < 0 || (r = exec(s, "PRAGMA synchronous = FULL", err, "cannot open")) < 0 ||
	    (r = exec(s, "PRAGMA wal_autocheckpoint = 0", err, "cannot open")) < 0)
		return r;
	/* A store that lost its version number gets it back, whatever else it lacks. */
	return s->stamp != (int64_t)schema_versions() ? migrate(s, err) : 0;
}

/* The store's path as an SQLite URI that reads it as it is on disk. */
static char *frozen_uri(const char *path)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._~-";
	size_t len = strlen(path);
	char *uri = malloc(len * 3u + sizeof("file:?immutable=1")), *p = uri;

	if (!uri)
		return NULL;
	p += sprintf(p, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		p += strchr(safe, *c) ? sprintf(p, "%c", *c) : sprintf(p, "%%%02X", *c);
	sprintf(p, "?immutable=1");
	return uri;
}

/*
 * A reader that found no room on the disk may have left an empty -wal and an
 * -shm that SQLite made and could not size.  No connection uses them when none
 * holds the store (each holds a shared lock on it while it is open in WAL
 * mode, and takes it before it opens them): remove them then, as SQLite's
 * last connection does.  An exclusive lock needs a descriptor open to write.
 */
static void drop_unused_log(struct store *s)
{
	struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = SHARED_FIRST, .l_len = SHARED_SIZE };
	char name[PATH_MAX + 8];
	struct stat st;
	int fd = open(s->real, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fcntl(fd, F_OFD_SETLK, &lk) == 0) {
		snprintf(name, sizeof(name), "%s-wal", s->real);
		if (lstat(name, &st) < 0 || (S_ISREG(st.st_mode) && st.st_size == 0)) {
			unlink(name);
			snprintf(name, sizeof(name), "%s-shm", s->real);
			unlink(name);
		}
	}
	close(fd);                      /* and its lock with it */
}

/*
 * A reader that cannot make the -shm file (a directory it may not write, a
 * read-only mount) or size it (a full disk): with no write-ahead log there is nothing but the file, and
 * SQLite may read it as immutable while a shared lock, held the way SQLite's
 * readers hold theirs, keeps any writer that comes along from checkpointing
 * into it.
 */
static int open_frozen(struct store *s, bool full, struct lat_error *err)
{
	struct flock lk = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = SHARED_FIRST, .l_len = SHARED_SIZE };
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	struct stat st;
	char wal[PATH_MAX + 8], *uri;
	int r, rc;

	if (full)
		drop_unused_log(s);
	s->lock_fd = open(s->real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (s->lock_fd < 0)
		return err_set(err, -errno, "cannot open '%s': %s", s->path, strerror(errno));
	for (int waited = 0; fcntl(s->lock_fd, F_OFD_SETLK, &lk) < 0; waited += 20) {
		if ((errno != EAGAIN && errno != EACCES) || waited >= BUSY_TIMEOUT_MS)
			return err_set(err, -EBUSY, "'%s' stayed locked by another writer for %d s", s->path,
				    BUSY_TIMEOUT_MS / 1000);
		nanosleep(&pause, NULL);
	}
	snprintf(wal, sizeof(wal), "%s-wal", s->real);
	if (stat(wal, &st) == 0 && st.st_size > 0) {
		char *dcopy = strdup(s->real);
		r = err_set(err, -EACCES, "cannot read '%s': its write-ahead log holds runs that only a user who can write "
			 "'%s' can read (open the store once as one)", s->path, dcopy ? dirname(dcopy) : "its directory");
		free(dcopy);
		return r;
	}
	if (!(uri = frozen_uri(s->real)))
		return err_set(err, -ENOMEM, "out of memory");
	r = open_db(s, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, &rc, err);
	free(uri);
	return r < 0 ? r : check_identity(s, true, &rc, err);
}

/* Whether SQLite failed for want of room on the disk (its own code, or the system's under an I/O error). */
static bool no_room(sqlite3 *db, int rc)
{
	int e = db ? sqlite3_system_errno(db) : 0;
	return (rc & 0xff) == SQLITE_FULL || ((rc & 0xff) == SQLITE_IOERR && (e == ENOSPC || e == EDQUOT));
}

static int open_reading(struct store *s, struct lat_error *err)
{
	bool full;
	int r, rc;

	r = open_db(s, s->real, SQLITE_OPEN_READONLY, &rc, err);
	if (r == 0)
		r = check_identity(s, true, &rc, err);
	/* No -shm file could be made or opened for the write-ahead log, or no room to size one. */
	full = r < 0 && no_room(s->db, rc);
	if (r == 0 || ((rc & 0xff) != SQLITE_READONLY && (rc & 0xff) != SQLITE_CANTOPEN && !full))
		return r;
	sqlite3_close(s->db);
	s->db = NULL;
	return open_frozen(s, full, err);
}

int store_open(const char *path, unsigned flags, struct store **ret, struct lat_error *err)
{
	bool readonly = flags & STORE_READONLY, trust = flags & STORE_TRUST, create = false;
	struct store *s;
	int r;

	err->msg[0] = '\0';
	r = check_header(path, err);
	if (r == -ENOENT) {
		if (!(flags & STORE_CREATE) || readonly)
			return err_set(err, -ENOENT, "no store at '%s' yet: nothing has been stored there", path);
		char *dcopy = strdup(path);
		if (!dcopy)
			return err_set(err, -ENOMEM, "out of memory");
		/* Directories only latscope uses: the user's alone, like the store. */
		r = flags & STORE_MKDIR ? make_dirs(dirname(dcopy), 0700) : 0;
		free(dcopy);
		if (r < 0)
			return err_set(err, r, "cannot create the directory of '%s': %s", path, strerror(-r));
		create = true;
	} else if (r < 0) {
		return r;
	}

	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return err_set(err, -ENOMEM, "out of memory");
	}
	s->lock_fd = -1;
	if ((r = resolve(path, &s->real)) < 0) {
		r = err_set(err, r, "cannot open '%s': %s", path, strerror(-r));
		goto fail;
	}
	if ((create && (r = create_private(s, err)) < 0) ||
	    (r = readonly ? open_reading(s, err) : open_writing(s, trust, err)) < 0 ||
	    (r = exec(s, "PRAGMA foreign_keys = ON", err, "cannot open")) < 0)
		goto fail;
	*ret = s;
	return 0;
fail:
	store_close(s);
	return r;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	free(s->path);
	free(s->real);
	free(s);
}

const char *store_path(const struct store *s)
{
	return s->path;
}

/* ---- writing a run ---- */

static uint64_t ju64(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

static double jreal(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static void bind_opt_u64(sqlite3_stmt *st, int i, const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (json_is_integer(v))
		sqlite3_bind_int64(st, i, json_integer_value(v));
	else
		sqlite3_bind_null(st, i);
}

/* The leading metric's summary in a CPU block. */
static const json_t *lead_metric(const json_t *doc, const json_t *block)
{
	const char *name = json_string_value(json_array_get(json_object_get(doc, "metrics"), 0));
	return name ? json_object_get(json_object_get(block, "metrics"), name) : NULL;
}

static int step_done(struct store *s, sqlite3_stmt *st, struct lat_error *err)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : db_fail(err, s->path, s->db, rc, "cannot store in");
}

static void bind_opt_real(sqlite3_stmt *st, int i, const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (json_is_number(v))
		sqlite3_bind_double(st, i, json_number_value(v));
	else
		sqlite3_bind_null(st, i);
}

static int insert_cpu_stats(struct store *s, int64_t id, const json_t *doc, const json_t *block, const char *cpu,
			    struct lat_error *err)
{
	static const char sql[] =
		"INSERT INTO cpu_stats (run_id, cpu, metric, count, min_ns, mean_ns, stddev_ns, p50_ns, p90_ns, p99_ns,"
		" p99_9_ns, p99_99_ns, max_ns, warm_max_ns, above, missed, spikes, spikes_per_hour, mtbf_ns, worst_at_ns,"
		" smis) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	const json_t *lead = lead_metric(doc, block), *lr = json_object_get(block, "long_run");
	sqlite3_stmt *st;
	const char *name;
	json_t *m;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL), r = 0;

	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot store in");
	json_object_foreach(json_object_get(block, "metrics"), name, m) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, cpu, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 4, (int64_t)ju64(m, "count"));
		sqlite3_bind_int64(st, 5, (int64_t)ju64(m, "min_ns"));
		sqlite3_bind_double(st, 6, jreal(m, "mean_ns"));
		sqlite3_bind_double(st, 7, jreal(m, "stddev_ns"));
		sqlite3_bind_int64(st, 8, (int64_t)ju64(m, "p50_ns"));
		sqlite3_bind_int64(st, 9, (int64_t)ju64(m, "p90_ns"));
		sqlite3_bind_int64(st, 10, (int64_t)ju64(m, "p99_ns"));
		sqlite3_bind_int64(st, 11, (int64_t)ju64(m, "p99_9_ns"));
		sqlite3_bind_int64(st, 12, (int64_t)ju64(m, "p99_99_ns"));
		sqlite3_bind_int64(st, 13, (int64_t)ju64(m, "max_ns"));
		bind_opt_u64(st, 14, m, "warm_max_ns");
		sqlite3_bind_int64(st, 15, (int64_t)ju64(m, "above"));
		sqlite3_bind_int64(st, 16, (int64_t)ju64(block, "missed"));
		const json_t *mine = m == lead ? lr : NULL;       /* spikes are the leading metric's */
		bind_opt_u64(st, 17, mine, "spikes");
		bind_opt_real(st, 18, mine, "spikes_per_hour");
		bind_opt_real(st, 19, mine, "mtbf_ns");
		bind_opt_u64(st, 20, mine, "worst_at_ns");
		bind_opt_u64(st, 21, block, "smis");
		if ((r = step_done(s, st, err)) < 0)
			break;
	}
	sqlite3_finalize(st);
	return r;
}

/* cpu_per_op_ns's members in the order of their columns in runs (schema 5):
 * the stored format's order, so that a new kind in sys/procstat.h cannot
 * shift a value into its neighbour's column. */
static const char *const op_cpu_kinds[] = {
	"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
};

/* A run of operations: its throughput and CPU time per operation (schema 5), from doc's figures. */
static int update_op_figures(struct store *s, int64_t id, const json_t *doc, struct lat_error *err)
{
	static const char sql[] =
		"UPDATE runs SET ops_per_sec = ?, bytes_per_sec = ?, cpu_user_ns_per_op = ?, cpu_nice_ns_per_op = ?,"
		" cpu_system_ns_per_op = ?, cpu_idle_ns_per_op = ?, cpu_iowait_ns_per_op = ?, cpu_irq_ns_per_op = ?,"
		" cpu_softirq_ns_per_op = ?, cpu_steal_ns_per_op = ? WHERE id = ?";
	const json_t *tp = json_object_get(doc, "throughput"), *cpu = json_object_get(doc, "cpu_per_op_ns");
	sqlite3_stmt *st;
	int rc, r;

	if (!json_is_object(tp))
		return 0;
	if ((rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL)) != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot store in");
	bind_opt_real(st, 1, tp, "ops_per_sec");
	bind_opt_real(st, 2, tp, "bytes_per_sec");
	for (size_t k = 0; k < ARRAY_SIZE(op_cpu_kinds); k++)
		bind_opt_real(st, 3 + (int)k, cpu, op_cpu_kinds[k]);
	sqlite3_bind_int64(st, 3 + (int)ARRAY_SIZE(op_cpu_kinds), id);
	r = step_done(s, st, err);
	sqlite3_finalize(st);
	return r;
}

/* Where the run's SMIs came from (schema 6); NULL where none was named. */
static int update_smi_source(struct store *s, int64_t id, const json_t *doc, struct lat_error *err)
{
	const char *src = json_string_value(json_object_get(doc, "smi_source"));
	sqlite3_stmt *st;
	int rc, r;

	if (!src)
		return 0;
	if ((rc = sqlite3_prepare_v2(s->db, "UPDATE runs SET smi_source = ? WHERE id = ?", -1, &st, NULL)) != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot store in");
	sqlite3_bind_text(st, 1, src, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, id);
	r = step_done(s, st, err);
	sqlite3_finalize(st);
	return r;
}

/* Run *id (a new one when 0): its columns from doc, its result the text of rest. */
static int insert_run(struct store *s, const json_t *doc, const char *rest, const char *identity, int64_t *id,
		      struct lat_error *err)
{
	static const char sql[] =
		"INSERT INTO runs (stored_ns, start_time, start_ns, host, probe, interrupted, count, min_ns, mean_ns,"
		" p50_ns, p99_ns, max_ns, warm_max_ns, missed, result, identity, partial, id)"
		" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	const json_t *all = json_object_get(doc, "all"), *lead = lead_metric(doc, all);
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL), r;

	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot store in");
	sqlite3_bind_int64(st, 1, (int64_t)realtime_ns());
	sqlite3_bind_text(st, 2, jstr(doc, "start_time"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, (int64_t)ju64(doc, "start_realtime_ns"));
	sqlite3_bind_text(st, 4, jstr(json_object_get(doc, "system"), "hostname"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 5, jstr(doc, "probe"), -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 6, json_is_true(json_object_get(doc, "interrupted")));
	sqlite3_bind_int64(st, 7, (int64_t)ju64(lead, "count"));
	sqlite3_bind_int64(st, 8, (int64_t)ju64(lead, "min_ns"));
	sqlite3_bind_double(st, 9, jreal(lead, "mean_ns"));
	sqlite3_bind_int64(st, 10, (int64_t)ju64(lead, "p50_ns"));
	sqlite3_bind_int64(st, 11, (int64_t)ju64(lead, "p99_ns"));
	sqlite3_bind_int64(st, 12, (int64_t)ju64(lead, "max_ns"));
	bind_opt_u64(st, 13, lead, "warm_max_ns");
	sqlite3_bind_int64(st, 14, (int64_t)ju64(all, "missed"));
	sqlite3_bind_text(st, 15, rest, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 16, identity, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 17, json_is_true(json_object_get(doc, "partial")));
	if (*id)
		sqlite3_bind_int64(st, 18, *id);
	r = step_done(s, st, err);
	sqlite3_finalize(st);
	if (r == 0)
		*id = sqlite3_last_insert_rowid(s->db);
	return r;
}

static int insert_labels(struct store *s, int64_t id, const json_t *labels, struct lat_error *err)
{
	sqlite3_stmt *st;
	const char *key;
	json_t *v;
	int rc = sqlite3_prepare_v2(s->db, "INSERT INTO labels (run_id, key, value) VALUES (?, ?, ?)", -1, &st, NULL);
	int r = 0;

	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot store in");
	json_object_foreach((json_t *)labels, key, v) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, json_string_value(v) ? json_string_value(v) : "", -1, SQLITE_TRANSIENT);
		if ((r = step_done(s, st, err)) < 0)
			break;
	}
	sqlite3_finalize(st);
	return r;
}

static int find_same(struct store *s, const char *identity, int64_t *ret_id, bool *ret_partial)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT id, partial FROM runs WHERE identity = ?", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_text(st, 1, identity, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*ret_id = sqlite3_column_int64(st, 0);
		*ret_partial = sqlite3_column_int(st, 1) != 0;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Run id's windows, one row per block. */
static int insert_windows(struct store *s, int64_t id, const struct split *sp, struct lat_error *err)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "INSERT INTO windows (run_id, block, body) VALUES (?, ?, ?)", -1, &st, NULL);
	int r = 0;

	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot store in");
	for (size_t i = 0; i < sp->n && r == 0; i++) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, sp->blocks[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, sp->blocks[i].body, -1, SQLITE_STATIC);
		r = step_done(s, st, err);
	}
	sqlite3_finalize(st);
	return r;
}

/* Inside a transaction: doc as run *id (a new one when 0), its labels, figures and windows. */
static int insert_doc(struct store *s, json_t *doc, const char *identity, int64_t *id, struct lat_error *err)
{
	struct split sp;
	json_t *cpus = json_object_get(doc, "cpus"), *block;
	size_t i;
	int r;

	if (split_windows(doc, &sp) < 0)
		return err_set(err, -ENOMEM, "out of memory");
	if ((r = insert_run(s, doc, sp.rest, identity, id, err)) < 0 ||
	    (r = update_op_figures(s, *id, doc, err)) < 0 || (r = update_smi_source(s, *id, doc, err)) < 0 ||
	    (r = insert_windows(s, *id, &sp, err)) < 0 ||
	    (r = insert_labels(s, *id, json_object_get(doc, "labels"), err)) < 0)
		goto out;
	json_array_foreach(cpus, i, block) {
		char cpu[24];
		snprintf(cpu, sizeof(cpu), "%lld", (long long)json_integer_value(json_object_get(block, "cpu")));
		if ((r = insert_cpu_stats(s, *id, doc, block, cpu, err)) < 0)
			goto out;
	}
	r = insert_cpu_stats(s, *id, doc, json_object_get(doc, "all"), "all", err);
out:
	split_free(&sp);
	return r;
}

static int delete_run(struct store *s, int64_t id, struct lat_error *err)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "DELETE FROM runs WHERE id = ?", -1, &st, NULL), r;

	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot store in");
	sqlite3_bind_int64(st, 1, id);
	r = step_done(s, st, err);
	sqlite3_finalize(st);
	return r;
}

/* Inside a transaction: one run, or -EEXIST with the stored copy's id. */
static int put_locked(struct store *s, const char *json_text, int64_t *ret_id, struct lat_error *err)
{
	json_error_t jerr;
	json_t *doc = json_loads(json_text, 0, &jerr);
	int64_t id = 0;
	int r, rc;

	struct lat_error why;
	char identity[STORE_IDENTITY_SIZE];

	if (!doc)
		return err_set(err, -EINVAL, "the result to store is not JSON: %s", jerr.text);
	if ((r = identity_of_result(doc, identity, &why)) < 0) {
		r = err_set(err, r, "%s", why.msg);
		goto out;
	}
	bool partial = false;
	rc = find_same(s, identity, &id, &partial);
	if (rc == SQLITE_ROW && !partial) {
		*ret_id = id;
		r = err_set(err, -EEXIST, "this run is already stored as run %lld", (long long)id);
		goto out;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		r = db_fail(err, s->path, s->db, rc, "cannot read");
		goto out;
	}
	/* A checkpoint of this run: what comes now replaces it, labels and all, under its id. */
	if (rc == SQLITE_ROW && (r = delete_run(s, id, err)) < 0)
		goto out;
	if ((r = insert_doc(s, doc, identity, &id, err)) < 0)
		goto out;
	*ret_id = id;
out:
	json_decref(doc);
	return r;
}

int store_put(struct store *s, const char *json_text, int64_t *ret_id, struct lat_error *err)
{
	bool dup = false;
	int r = store_put_all(s, &json_text, 1, ret_id, &dup, err);
	if (r == 0 && dup)
		return err_set(err, -EEXIST, "this run is already stored as run %lld", (long long)*ret_id);
	return r;
}

int store_put_all(struct store *s, const char *const *texts, size_t n, int64_t *ret_ids, bool *ret_dup,
		  struct lat_error *err)
{
	int r;

	err->msg[0] = '\0';
	if ((r = exec(s, "BEGIN IMMEDIATE", err, "cannot lock")) < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		ret_dup[i] = false;
		r = put_locked(s, texts[i], &ret_ids[i], err);
		if (r == -EEXIST) {
			ret_dup[i] = true;
			continue;
		}
		if (r < 0)
			goto rollback;
	}
	if ((r = exec(s, "COMMIT", err, "cannot store in")) < 0)
		goto rollback;
	return 0;
rollback:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

/* ---- identities ---- */

/* The columns a run's identity is computed from, for a SELECT ... FROM runs. */
#define IDENTITY_SOURCE "host, probe, start_ns, CASE json_type(result, '$.params.merged_members') " \
			"WHEN 'array' THEN json_extract(result, '$.params.merged_members') END"

/* The identity of the row st is on, IDENTITY_SOURCE from column 'at'.  A
 * merged run whose member list is not one (a file made by hand) is known by
 * its host, probe and start, as before schema 3. */
static void row_identity(sqlite3_stmt *st, int at, bool as_run, char out[STORE_IDENTITY_SIZE])
{
	const char *host = (const char *)sqlite3_column_text(st, at);
	const char *probe = (const char *)sqlite3_column_text(st, at + 1);
	const char *members = (const char *)sqlite3_column_text(st, at + 3);
	uint64_t start = (uint64_t)sqlite3_column_int64(st, at + 2);
	json_t *list = members && !as_run ? json_loads(members, 0, NULL) : NULL;
	struct lat_error why;

	if (!list || identity_compute(host ? host : "", probe ? probe : "", start, list, out, &why) < 0)
		identity_compute(host ? host : "", probe ? probe : "", start, NULL, out, &why);
	json_decref(list);
}

struct pending {
	int64_t id;
	char identity[STORE_IDENTITY_SIZE];
};

/* Collected first, then written: rows are not changed under a running SELECT. */
static int collect_unnamed(struct store *s, struct pending **ret, size_t *ret_n, struct lat_error *err)
{
	sqlite3_stmt *st;
	struct pending *p = NULL;
	size_t n = 0, cap = 0;
	int rc = sqlite3_prepare_v2(s->db, "SELECT id, " IDENTITY_SOURCE " FROM runs WHERE identity IS NULL", -1, &st,
				    NULL);

	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot upgrade");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2u : 64u;
			struct pending *grown = realloc(p, cap * sizeof(*p));
			if (!grown) {
				sqlite3_finalize(st);
				free(p);
				return err_set(err, -ENOMEM, "out of memory");
			}
			p = grown;
		}
		p[n].id = sqlite3_column_int64(st, 0);
		row_identity(st, 1, false, p[n].identity);
		n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(p);
		return db_fail(err, s->path, s->db, rc, "cannot upgrade");
	}
	*ret = p;
	*ret_n = n;
	return 0;
}

static int set_identity(sqlite3_stmt *update, int64_t id, const char *identity)
{
	sqlite3_bind_text(update, 1, identity, -1, SQLITE_STATIC);
	sqlite3_bind_int64(update, 2, id);
	int rc = sqlite3_step(update);
	sqlite3_reset(update);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Run id's identity as a measured run's: its host, probe and start. */
static int own_identity(struct store *s, int64_t id, char out[STORE_IDENTITY_SIZE])
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT " IDENTITY_SOURCE " FROM runs WHERE id = ?", -1, &st, NULL);

	if (rc != SQLITE_OK)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		row_identity(st, 0, true, out);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

static int fill_identities(struct store *s, struct lat_error *err)
{
	struct pending *p = NULL;
	size_t n = 0;
	sqlite3_stmt *update = NULL;
	int r = collect_unnamed(s, &p, &n, err), rc;

	if (r < 0)
		return r;
	rc = sqlite3_prepare_v2(s->db, "UPDATE runs SET identity = ? WHERE id = ?", -1, &update, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < n; i++) {
		rc = set_identity(update, p[i].id, p[i].identity);
		/* Two rows that list the same members (files made by hand: real
		 * merges of the same runs share host, probe and start): the later
		 * one keeps the identity it had. */
		if (rc == SQLITE_CONSTRAINT_UNIQUE && strncmp(p[i].identity, "merge:", 6) == 0 &&
		    (rc = own_identity(s, p[i].id, p[i].identity)) == SQLITE_OK)
			rc = set_identity(update, p[i].id, p[i].identity);
	}
	sqlite3_finalize(update);
	free(p);
	return rc == SQLITE_OK ? 0 : db_fail(err, s->path, s->db, rc, "cannot upgrade");
}

/* Column 0 of every row st steps to, finalized; what: the failure's words. */
static int step_ids(struct store *s, sqlite3_stmt *st, const char *what, int64_t **ret, size_t *ret_n,
		    struct lat_error *err)
{
	int64_t *ids = NULL;
	size_t n = 0, cap = 0;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2u : 64u;
			int64_t *grown = realloc(ids, cap * sizeof(*ids));
			if (!grown) {
				sqlite3_finalize(st);
				free(ids);
				return err_set(err, -ENOMEM, "out of memory");
			}
			ids = grown;
		}
		ids[n++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(ids);
		return db_fail(err, s->path, s->db, rc, what);
	}
	*ret = ids;
	*ret_n = n;
	return 0;
}

/* The ids of every run, collected before any row is changed. */
static int all_ids(struct store *s, int64_t **ret, size_t *ret_n, struct lat_error *err)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT id FROM runs ORDER BY id", -1, &st, NULL);

	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot upgrade");
	return step_ids(s, st, "cannot upgrade", ret, ret_n, err);
}

/* Run id's result as doc with its windows apart (split_windows). */
static int rewrite_run(struct store *s, sqlite3_stmt *update, int64_t id, json_t *doc, struct lat_error *err)
{
	struct split sp;
	int r;

	if (split_windows(doc, &sp) < 0)
		return err_set(err, -ENOMEM, "out of memory");
	sqlite3_bind_text(update, 1, sp.rest, -1, SQLITE_STATIC);
	sqlite3_bind_int(update, 2, json_is_true(json_object_get(doc, "partial")));
	sqlite3_bind_int64(update, 3, id);
	r = step_done(s, update, err);
	if (r == 0)
		r = insert_windows(s, id, &sp, err);
	split_free(&sp);
	return r;
}

/* One run at a time: a store of long runs holds more text than memory might. */
static int move_windows(struct store *s, struct lat_error *err)
{
	sqlite3_stmt *get = NULL, *update = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	int r = all_ids(s, &ids, &n, err), rc;

	if (r < 0)
		return r;
	if ((rc = sqlite3_prepare_v2(s->db, "SELECT result FROM runs WHERE id = ?", -1, &get, NULL)) != SQLITE_OK ||
	    (rc = sqlite3_prepare_v2(s->db, "UPDATE runs SET result = ?, partial = ? WHERE id = ?", -1, &update, NULL)) !=
		    SQLITE_OK)
		r = db_fail(err, s->path, s->db, rc, "cannot upgrade");
	for (size_t i = 0; r == 0 && i < n; i++) {
		sqlite3_bind_int64(get, 1, ids[i]);
		rc = sqlite3_step(get);
		json_t *doc = rc == SQLITE_ROW ? json_loads((const char *)sqlite3_column_text(get, 0), 0, NULL) : NULL;
		sqlite3_reset(get);
		if (rc != SQLITE_ROW) {
			r = db_fail(err, s->path, s->db, rc, "cannot upgrade");
			break;
		}
		/* A text that is not JSON stays as it is, to be refused where it is read, as before. */
		if (doc)
			r = rewrite_run(s, update, ids[i], doc, err);
		json_decref(doc);
	}
	sqlite3_finalize(get);
	sqlite3_finalize(update);
	free(ids);
	return r;
}

/*
 * The one row of run id that sql selects, handed to take (which returns 0 or
 * a negative errno with err filled); -ENOENT for an unknown id.
 */
static int one_run(struct store *s, const char *sql, int64_t id, int (*take)(sqlite3_stmt *st, void *ctx,
									 struct lat_error *err),
		   void *ctx, struct lat_error *err)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL), r;

	err->msg[0] = '\0';
	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot read");
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		r = take(st, ctx, err);
	else if (rc == SQLITE_DONE)
		r = err_set(err, -ENOENT, "no run %lld in '%s'", (long long)id, s->path);
	else
		r = db_fail(err, s->path, s->db, rc, "cannot read");
	sqlite3_finalize(st);
	return r;
}

static int take_identity(sqlite3_stmt *st, void *ctx, struct lat_error *err)
{
	const char *text = (const char *)sqlite3_column_text(st, 0);
	(void)err;
	snprintf(ctx, STORE_IDENTITY_SIZE, "%s", text ? text : "");
	return 0;
}

static int take_computed_identity(sqlite3_stmt *st, void *ctx, struct lat_error *err)
{
	(void)err;
	row_identity(st, 0, false, ctx);
	return 0;
}

int store_identity(struct store *s, int64_t id, char ret[STORE_IDENTITY_SIZE], struct lat_error *err)
{
	if (schema_has_identity((unsigned)s->version))
		return one_run(s, "SELECT identity FROM runs WHERE id = ?", id, take_identity, ret, err);
	/* A store of an older schema, opened to read: as the upgrade would fill it in. */
	return one_run(s, "SELECT " IDENTITY_SOURCE " FROM runs WHERE id = ?", id, take_computed_identity, ret, err);
}

/* ---- reading ---- */

static int take_text(sqlite3_stmt *st, void *ctx, struct lat_error *err)
{
	const char *text = (const char *)sqlite3_column_text(st, 0);
	char **ret = ctx;

	*ret = text ? strdup(text) : NULL;
	return *ret ? 0 : err_set(err, -ENOMEM, "out of memory");
}

struct blocks {
	char **names, **bodies;
	size_t n;
};

static void blocks_free(struct blocks *b)
{
	for (size_t i = 0; i < b->n; i++) {
		free(b->names[i]);
		free(b->bodies[i]);
	}
	free(b->names);
	free(b->bodies);
}

/* Run id's blocks of windows; the body of "all" NULL (not read) when leave_all. */
static int load_blocks(struct store *s, int64_t id, bool leave_all, struct blocks *ret, struct lat_error *err)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc = sqlite3_prepare_v2(s->db, "SELECT block, CASE WHEN ? AND block = 'all' THEN NULL ELSE body END"
				    " FROM windows WHERE run_id = ?", -1, &st, NULL), r = 0;

	memset(ret, 0, sizeof(*ret));
	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot read");
	sqlite3_bind_int(st, 1, leave_all);
	sqlite3_bind_int64(st, 2, id);
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0), *body = (const char *)sqlite3_column_text(st, 1);
		if (ret->n == cap) {
			cap = cap ? cap * 2u : 8u;
			char **names = realloc(ret->names, cap * sizeof(*names));
			if (names)
				ret->names = names;
			char **bodies = names ? realloc(ret->bodies, cap * sizeof(*bodies)) : NULL;
			if (bodies)
				ret->bodies = bodies;
			if (!names || !bodies) {
				r = -ENOMEM;
				break;
			}
		}
		ret->names[ret->n] = strdup(name ? name : "");
		ret->bodies[ret->n] = body ? strdup(body) : NULL;
		ret->n++;
		if (!ret->names[ret->n - 1u] || (body && !ret->bodies[ret->n - 1u]))
			r = -ENOMEM;
	}
	sqlite3_finalize(st);
	if (r == 0 && rc != SQLITE_DONE)
		r = db_fail(err, s->path, s->db, rc, "cannot read");
	else if (r == -ENOMEM)
		err_set(err, r, "out of memory");
	if (r < 0)
		blocks_free(ret);
	return r;
}

int store_read(struct store *s, int64_t id, unsigned leave_out, char **ret_json, struct lat_error *err)
{
	char *rest = NULL, missing[SPLIT_NAME_SIZE];
	struct blocks b;
	int r = one_run(s, "SELECT result FROM runs WHERE id = ?", id, take_text, &rest, err);

	/* A store of an older schema, opened to read: the result is whole. */
	if (r < 0 || !schema_has_windows((unsigned)s->version)) {
		*ret_json = rest;
		return r;
	}
	if ((r = load_blocks(s, id, leave_out & STORE_LEAVE_ALL_WINDOWS, &b, err)) == 0) {
		r = split_join(rest, (const char *const *)b.names, (const char *const *)b.bodies, b.n, ret_json, missing);
		if (r == -ENOENT)
			r = err_set(err, -EIO, "run %lld in '%s' is damaged: the windows of its block '%s' are missing",
				    (long long)id, s->path, missing);
		else if (r < 0)
			err_set(err, r, "out of memory");
		blocks_free(&b);
	}
	free(rest);
	return r;
}

int store_get(struct store *s, int64_t id, char **ret_json, struct lat_error *err)
{
	return store_read(s, id, 0, ret_json, err);
}

/* What a run is listed by; a store of an older schema has no partial run. */
#define INFO_COLUMNS_OF(partial) "id, start_time, start_ns, host, probe, interrupted, count, min_ns, mean_ns, p50_ns," \
				 " p99_ns, max_ns, warm_max_ns, missed, " partial
#define INFO_COLUMNS(s) (schema_has_windows((unsigned)(s)->version) ? INFO_COLUMNS_OF("partial") : INFO_COLUMNS_OF("0"))

static int load_labels(struct store *s, struct run_info *ri, struct lat_error *err)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, "SELECT key, value FROM labels WHERE run_id = ? ORDER BY rowid", -1, &st,
				    NULL);
	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot read");
	sqlite3_bind_int64(st, 1, ri->id);
	ri->labels.n = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && ri->labels.n < LABELS_MAX) {
		struct label *l = &ri->labels.items[ri->labels.n++];
		snprintf(l->key, sizeof(l->key), "%s", (const char *)sqlite3_column_text(st, 0));
		snprintf(l->value, sizeof(l->value), "%s", (const char *)sqlite3_column_text(st, 1));
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_fail(err, s->path, s->db, rc, "cannot read");
}

static void read_info(sqlite3_stmt *st, struct run_info *ri)
{
	memset(ri, 0, sizeof(*ri));
	ri->id = sqlite3_column_int64(st, 0);
	snprintf(ri->start_time, sizeof(ri->start_time), "%s", (const char *)sqlite3_column_text(st, 1));
	ri->start_realtime_ns = (uint64_t)sqlite3_column_int64(st, 2);
	snprintf(ri->host, sizeof(ri->host), "%s", (const char *)sqlite3_column_text(st, 3));
	snprintf(ri->probe, sizeof(ri->probe), "%s", (const char *)sqlite3_column_text(st, 4));
	ri->interrupted = sqlite3_column_int(st, 5);
	ri->count = (uint64_t)sqlite3_column_int64(st, 6);
	ri->min_ns = (uint64_t)sqlite3_column_int64(st, 7);
	ri->mean_ns = sqlite3_column_double(st, 8);
	ri->p50_ns = (uint64_t)sqlite3_column_int64(st, 9);
	ri->p99_ns = (uint64_t)sqlite3_column_int64(st, 10);
	ri->max_ns = (uint64_t)sqlite3_column_int64(st, 11);
	ri->has_warm_max = sqlite3_column_type(st, 12) != SQLITE_NULL;
	ri->warm_max_ns = (uint64_t)sqlite3_column_int64(st, 12);
	ri->missed = (uint64_t)sqlite3_column_int64(st, 13);
	ri->partial = sqlite3_column_int(st, 14) != 0;
}

static int take_info(sqlite3_stmt *st, void *ctx, struct lat_error *err)
{
	(void)err;
	read_info(st, ctx);
	return 0;
}

int store_info(struct store *s, int64_t id, struct run_info *ret, struct lat_error *err)
{
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT %s FROM runs WHERE id = ?", INFO_COLUMNS(s));
	int r = one_run(s, sql, id, take_info, ret, err);
	return r < 0 ? r : load_labels(s, ret, err);
}

/*
 * The runs matching f, columns selected, every filter bound: in the order they
 * were stored (id), not their start, since a merge or an import of old runs is
 * the newest the user made.  Newest first, so that LIMIT keeps the newest.
 */
/* "SELECT columns FROM runs" of the runs f selects, newest first, between head and tail
 * (a query around it: "" and "" for none). */
static int list_query(struct store *s, const struct run_filter *f, const char *head,
		      const char *columns, const char *tail, sqlite3_stmt **ret,
		      struct lat_error *err)
{
	char sql[2048];
	size_t len;
	sqlite3_stmt *st;
	int rc, k = 1;

	len = (size_t)snprintf(sql, sizeof(sql), "%sSELECT %s FROM runs WHERE start_ns >= ?%s%s",
			       head, columns, f->probe ? " AND probe = ?" : "",
			       f->partial_only ? " AND partial" : "");
	for (unsigned i = 0; i < f->labels.n && len < sizeof(sql); i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len,
					" AND EXISTS (SELECT 1 FROM labels WHERE run_id = runs.id AND key = ? AND value = ?)");
	if (len < sizeof(sql))
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, " ORDER BY id DESC%s%s",
					f->limit ? " LIMIT ?" : "", tail);
	if (len >= sizeof(sql))
		return err_set(err, -E2BIG, "too many filters");
	rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(err, s->path, s->db, rc, "cannot read");
	sqlite3_bind_int64(st, k++, (int64_t)f->since_ns);
	if (f->probe)
		sqlite3_bind_text(st, k++, f->probe, -1, SQLITE_TRANSIENT);
	for (unsigned i = 0; i < f->labels.n; i++) {
		sqlite3_bind_text(st, k++, f->labels.items[i].key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, k++, f->labels.items[i].value, -1, SQLITE_TRANSIENT);
	}
	if (f->limit)
		sqlite3_bind_int64(st, k++, (int64_t)(f->limit > INT64_MAX ? INT64_MAX : f->limit));
	*ret = st;
	return 0;
}

int store_list(struct store *s, const struct run_filter *f, struct run_info **ret, size_t *ret_n,
	       struct lat_error *err)
{
	size_t n = 0, cap = 0;
	struct run_info *out = NULL;
	sqlite3_stmt *st;
	int rc, r;

	err->msg[0] = '\0';
	if ((r = list_query(s, f, "", INFO_COLUMNS(s), "", &st, err)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2u : 16u;
			struct run_info *grown = realloc(out, cap * sizeof(*out));
			if (!grown) {
				r = err_set(err, -ENOMEM, "out of memory");
				break;
			}
			out = grown;
		}
		read_info(st, &out[n++]);
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = db_fail(err, s->path, s->db, rc, "cannot read");
	sqlite3_finalize(st);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = load_labels(s, &out[i], err);
	if (r < 0) {
		free(out);
		return r;
	}
	/* handed back oldest first */
	for (size_t i = 0; i < n / 2u; i++) {
		struct run_info t = out[i];
		out[i] = out[n - 1u - i];
		out[n - 1u - i] = t;
	}
	*ret = out;
	*ret_n = n;
	return 0;
}

int store_ids(struct store *s, const struct run_filter *f, int64_t **ret, size_t *ret_n, struct lat_error *err)
{
	sqlite3_stmt *st;
	int64_t *ids;
	size_t n;
	int r;

	err->msg[0] = '\0';
	if ((r = list_query(s, f, "", "id", "", &st, err)) < 0 ||
	    (r = step_ids(s, st, "cannot read", &ids, &n, err)) < 0)
		return r;
	for (size_t i = 0; i < n / 2u; i++) {
		int64_t t = ids[i];
		ids[i] = ids[n - 1u - i];
		ids[n - 1u - i] = t;
	}
	*ret = ids;
	*ret_n = n;
	return 0;
}

int store_label_keys(struct store *s, const struct run_filter *f, char (**ret)[LABEL_KEY_MAX],
		     size_t *ret_n, struct lat_error *err)
{
	char(*keys)[LABEL_KEY_MAX] = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;
	int r, rc;

	err->msg[0] = '\0';
	if ((r = list_query(s, f, "SELECT DISTINCT key FROM labels WHERE run_id IN (", "id",
			    ") ORDER BY key", &st, err)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 0);
		if (!key || strlen(key) >= LABEL_KEY_MAX)
			continue; /* no key a label can have */
		if (n == cap) {
			cap = cap ? cap * 2u : 16u;
			char(*grown)[LABEL_KEY_MAX] = realloc(keys, cap * sizeof(*keys));
			if (!grown) {
				sqlite3_finalize(st);
				free(keys);
				return err_set(err, -ENOMEM, "out of memory");
			}
			keys = grown;
		}
		memcpy(keys[n++], key, strlen(key) + 1u);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(keys);
		return db_fail(err, s->path, s->db, rc, "cannot read");
	}
	*ret = keys;
	*ret_n = n;
	return 0;
}

int store_rm(struct store *s, const int64_t *ids, size_t n, struct lat_error *err)
{
	sqlite3_stmt *st = NULL;
	int r, rc;

	err->msg[0] = '\0';
	if ((r = exec(s, "BEGIN IMMEDIATE", err, "cannot lock")) < 0)
		return r;
	rc = sqlite3_prepare_v2(s->db, "DELETE FROM runs WHERE id = ?", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		r = db_fail(err, s->path, s->db, rc, "cannot remove from");
		goto rollback;
	}
	for (size_t i = 0; i < n; i++) {
		sqlite3_bind_int64(st, 1, ids[i]);
		if ((r = step_done(s, st, err)) < 0)
			goto rollback;
		if (sqlite3_changes(s->db) == 0) {
			r = err_set(err, -ENOENT, "no run %lld in '%s'; nothing was removed", (long long)ids[i], s->path);
			goto rollback;
		}
	}
	sqlite3_finalize(st);
	st = NULL;
	if ((r = exec(s, "COMMIT", err, "cannot remove from")) < 0)
		goto rollback;
	return 0;
rollback:
	sqlite3_finalize(st);
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}
