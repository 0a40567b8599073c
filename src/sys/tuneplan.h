/*
 * What one fix of latscope tune would write (sys/tunefix.h names the fixes),
 * and the helpers the fixes' plan functions build it with.  Apart from
 * tunefix.h so that the fixes can live in files of their own without an
 * include cycle: tunefix.c's table names them, they need only these types.
 */
#ifndef LATSCOPE_SYS_TUNEPLAN_H
#define LATSCOPE_SYS_TUNEPLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/cpuset.h"
#include "core/error.h"

#define TUNE_STATE_DIR "/run/latscope"

/* Where the files are: a test's fake tree, or (NULLs) this machine. */
struct tune_where {
	const char *sysroot;   /* NULL: "/" */
	const char *state_dir; /* NULL: TUNE_STATE_DIR */
	/* Tests only: a kernel that refuses some writes.  Returns 0 to let the
	 * write of path (the full path) go on, or the -errno the kernel would
	 * answer with; NULL: every write goes on. */
	int (*refuse)(const char *path);
};

/* One file write of a fix: path relative to the sysroot ("proc/sys/kernel/timer_migration"). */
struct tune_write {
	char path[192];
	char value[256]; /* what to write (a newline is added) */
	bool optional;	 /* a write the kernel refuses (EIO, EINVAL: a managed IRQ) is skipped and
			    counted, not an error */
};

struct tune_plan {
	size_t n;
	struct tune_write *w;	 /* malloc'd; tune_plan_free */
	char from[192], to[192]; /* what changes, for the table: "1" -> "0", "0-1" -> "0" (shortened
				    with "..." when long) */
};

/* Free p's writes and empty it; a zeroed plan is fine. */
void tune_plan_free(struct tune_plan *p);

/* ---- for the plan functions ---------------------------------------------- */

/* The errnos of a fix that does not apply, each with its why. */
#define TUNE_NOT_HERE  ENOENT	  /* "not here: ..." the machine lacks what it changes */
#define TUNE_ALREADY   EALREADY	  /* "already so: ..." it would change nothing */
#define TUNE_NOT_TRIED EOPNOTSUPP /* "not tried: ..." it cannot help this probe */

/* rel under w's sysroot, in buf. */
int tune_path(const struct tune_where *w, const char *rel, char *buf, size_t size);
/* The text of rel under the sysroot, as textfile_read gives it: -errno, buf "" on failure. */
int tune_read(const struct tune_where *w, const char *rel, char *buf, size_t size);
bool tune_exists(const struct tune_where *w, const char *rel);

/* Append the write of value to rel: -ENOMEM, or -ENAMETOOLONG when either does not fit. */
int tune_plan_add(struct tune_plan *p, const char *rel, const char *value, bool optional);
/* p's from and to, each cut short with "..." when it does not fit. */
void tune_plan_say(struct tune_plan *p, const char *from, const char *to);
/* Add value to the list in buf ("a, b"), unless it is there already. */
void tune_text_add(char *buf, size_t size, const char *value);

/* The online CPUs minus measured; -TUNE_NOT_HERE with why when none is left
 * (what is left does the work moved off the measured CPUs) or the online CPUs
 * cannot be read. */
int tune_housekeeping(const struct tune_where *w, const struct cpuset *measured, struct cpuset *ret,
		      struct lat_error *why);

/* A CPU mask as the kernel writes one: hex in 32-bit groups, the highest
 * first, joined by commas ("3", "1,00000000").  Returns what it needed, like
 * snprintf. */
size_t tune_mask_format(const struct cpuset *s, char *buf, size_t size);
/* A mask read back ("00000003", "ff,ffffffff"): 0, or -EINVAL / -ERANGE. */
int tune_mask_parse(const char *text, struct cpuset *ret);

#endif
