/*
 * The store's schema, one migration per version.  A new store runs them all;
 * an older one runs those it lacks, in one transaction.  Never edit a released
 * migration: add the next one.
 */
#include "store/schema.h"

#include <stddef.h>

#include "core/array.h"

/* Version 3 onwards: runs.identity is filled in C (store/identity.h) for the rows stored before. */
#define FIRST_WITH_IDENTITY 3u
/* Version 4 onwards: windows apart (store/split.h), moved in C for the rows stored before. */
#define FIRST_WITH_WINDOWS 4u

static const char *const migrations[] = {
	/* 1: runs, kept whole as their JSON, with what lists and filters need */
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY,"
	"  stored_ns INTEGER NOT NULL,"
	"  start_time TEXT NOT NULL,"
	"  start_ns INTEGER NOT NULL,"
	"  host TEXT NOT NULL,"
	"  probe TEXT NOT NULL,"
	"  interrupted INTEGER NOT NULL,"
	"  count INTEGER NOT NULL,"
	"  min_ns INTEGER NOT NULL,"
	"  mean_ns REAL NOT NULL,"
	"  p50_ns INTEGER NOT NULL,"
	"  p99_ns INTEGER NOT NULL,"
	"  max_ns INTEGER NOT NULL,"
	"  warm_max_ns INTEGER,"
	"  missed INTEGER NOT NULL,"
	"  result TEXT NOT NULL);"
	"CREATE UNIQUE INDEX runs_identity ON runs(host, probe, start_ns);"
	"CREATE TABLE labels ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  key TEXT NOT NULL,"
	"  value TEXT NOT NULL,"
	"  PRIMARY KEY (run_id, key));",

	/* 2: per-CPU figures as a table of their own, for SQL users; filled in for
	 * runs stored before from their JSON */
	"CREATE TABLE cpu_stats ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  cpu TEXT NOT NULL,"
	"  metric TEXT NOT NULL,"
	"  count INTEGER NOT NULL,"
	"  min_ns INTEGER NOT NULL,"
	"  mean_ns REAL NOT NULL,"
	"  stddev_ns REAL NOT NULL,"
	"  p50_ns INTEGER NOT NULL,"
	"  p90_ns INTEGER NOT NULL,"
	"  p99_ns INTEGER NOT NULL,"
	"  p99_9_ns INTEGER NOT NULL,"
	"  p99_99_ns INTEGER NOT NULL,"
	"  max_ns INTEGER NOT NULL,"
	"  warm_max_ns INTEGER,"
	"  above INTEGER NOT NULL,"
	"  missed INTEGER NOT NULL,"
	"  PRIMARY KEY (run_id, cpu, metric));"
	"INSERT INTO cpu_stats"
	"  SELECT runs.id, CAST(json_extract(c.value, '$.cpu') AS TEXT), m.key,"
	"    json_extract(m.value, '$.count'), json_extract(m.value, '$.min_ns'),"
	"    json_extract(m.value, '$.mean_ns'), json_extract(m.value, '$.stddev_ns'),"
	"    json_extract(m.value, '$.p50_ns'), json_extract(m.value, '$.p90_ns'),"
	"    json_extract(m.value, '$.p99_ns'), json_extract(m.value, '$.p99_9_ns'),"
	"    json_extract(m.value, '$.p99_99_ns'), json_extract(m.value, '$.max_ns'),"
	"    json_extract(m.value, '$.warm_max_ns'), json_extract(m.value, '$.above'),"
	"    json_extract(c.value, '$.missed')"
	"  FROM runs,"
	"    json_each(json_insert(json_extract(runs.result, '$.cpus'), '$[#]', json(json_extract(runs.result, '$.all')))) AS c,"
	"    json_each(c.value, '$.metrics') AS m;"
	"CREATE INDEX labels_by_key ON labels(key, value);",

	/* 3: a run is told apart by its identity: a merge by the runs it is made
	 * of, not by its host, probe and start, which two merges can share */
	"ALTER TABLE runs ADD COLUMN identity TEXT;"
	"DROP INDEX runs_identity;"
	"CREATE UNIQUE INDEX runs_by_identity ON runs(identity);",

	/* 4: a run's windows, most of a long run's text, as a table of their own
	 * so that what lists and shows a run reads only the rest; and whether a
	 * run is a partial result (a checkpoint), which the final one replaces */
	"CREATE TABLE windows ("
	"  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
	"  block TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  PRIMARY KEY (run_id, block));"
	"ALTER TABLE runs ADD COLUMN partial INTEGER NOT NULL DEFAULT 0;"
	/* the long-run figures of the leading metric's rows (NULL for other
	 * metrics and for runs that did not count spikes) */
	"ALTER TABLE cpu_stats ADD COLUMN spikes INTEGER;"
	"ALTER TABLE cpu_stats ADD COLUMN spikes_per_hour REAL;"
	"ALTER TABLE cpu_stats ADD COLUMN mtbf_ns REAL;"
	"ALTER TABLE cpu_stats ADD COLUMN worst_at_ns INTEGER;",

	/* 5: a run of operations (io's reads): its throughput and the whole
	 * machine's CPU time per operation by category, from the result's
	 * throughput and cpu_per_op_ns (NULL for other probes and for runs
	 * stored before, whose results do not have them) */
	"ALTER TABLE runs ADD COLUMN ops_per_sec REAL;"
	"ALTER TABLE runs ADD COLUMN bytes_per_sec REAL;"
	"ALTER TABLE runs ADD COLUMN cpu_user_ns_per_op REAL;"
	"ALTER TABLE runs ADD COLUMN cpu_nice_ns_per_op REAL;"
	"ALTER TABLE runs ADD COLUMN cpu_system_ns_per_op REAL;"
	"ALTER TABLE runs ADD COLUMN cpu_idle_ns_per_op REAL;"
	"ALTER TABLE runs ADD COLUMN cpu_iowait_ns_per_op REAL;"
	"ALTER TABLE runs ADD COLUMN cpu_irq_ns_per_op REAL;"
	"ALTER TABLE runs ADD COLUMN cpu_softirq_ns_per_op REAL;"
	"ALTER TABLE runs ADD COLUMN cpu_steal_ns_per_op REAL;",

	/* 6: SMIs, for SQL users: where the run counted them from ("msr_pmu",
	 * "msr"; NULL: not available, or a run stored before) and each CPU's
	 * count over the run (NULL without a source) */
	"ALTER TABLE runs ADD COLUMN smi_source TEXT; ALTER TABLE cpu_stats ADD COLUMN smis INTEGER;",
};

/* What each migration made that no earlier one had: a table, or a column of one. */
static const struct {
	const char *table, *column;
} marks[] = {
	{ "runs", NULL }, { "cpu_stats", NULL }, { "runs", "identity" }, { "windows", NULL }, { "runs", "ops_per_sec" },
	{ "runs", "smi_source" },
};

_Static_assert(ARRAY_SIZE(marks) == ARRAY_SIZE(migrations), "a mark for every migration");

int schema_version_of(bool (*has)(const char *table, const char *column, void *ctx), void *ctx)
{
	unsigned version = 0;

	while (version < ARRAY_SIZE(marks) && has(marks[version].table, marks[version].column, ctx))
		version++;
	/* A later migration's mark without an earlier one's is no version of ours. */
	for (unsigned v = version + 1u; v < ARRAY_SIZE(marks); v++)
		if (has(marks[v].table, marks[v].column, ctx))
			return -1;
	return version == 0 ? -1 : (int)version;
}

unsigned schema_versions(void)
{
	return (unsigned)ARRAY_SIZE(migrations);
}

bool schema_fills_identity(unsigned version)
{
	return version == FIRST_WITH_IDENTITY;
}

bool schema_has_identity(unsigned version)
{
	return version >= FIRST_WITH_IDENTITY;
}

bool schema_moves_windows(unsigned version)
{
	return version == FIRST_WITH_WINDOWS;
}

bool schema_has_windows(unsigned version)
{
	return version >= FIRST_WITH_WINDOWS;
}

const char *schema_migration(unsigned version)
{
	if (version == 0 || version > schema_versions())
		return NULL;
	return migrations[version - 1u];
}
