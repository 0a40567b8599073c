/*
 * The writes of a latscope tune fix (sys/tunefix.h) applied and put back.
 *
 * As with --deepest-idle-state (sys/cpuidle.h), the old values are listed in
 * a state file, written whole and atomically before the first write and
 * removed after the restore, so that a run killed with SIGKILL leaves them
 * named and the next run puts them back (file_hold_restore_stale).
 */
#ifndef LATSCOPE_SYS_FILEHOLD_H
#define LATSCOPE_SYS_FILEHOLD_H

#include "sys/tunefix.h"

struct file_hold { /* opaque enough; a fixed struct the caller keeps */
	char root[256];
	char file[512];			 /* the state file; "" when none was written */
	size_t n;			 /* writes done, to undo */
	struct tune_write *old;		 /* the values read before writing (malloc'd) */
	unsigned skipped;		 /* optional writes the kernel refused */
	char skipped_what[256];		 /* the first of them, for the note */
	int (*refuse)(const char *path); /* the where's, for the restore */
};

/* A hold with nothing to restore (for every exit path before file_hold_apply). */
void file_hold_init(struct file_hold *h);

/*
 * Apply plan p: read every file's current value, write a state file (whole,
 * atomically, mode 0600, in the state dir, named after the fix and this pid)
 * listing each path and its old value, then write the new values.  On a
 * failure of a non-optional write, restore what was already written, remove
 * the state file and return -errno with err naming the file.  Never O_CREAT a
 * kernel file.  A file whose old value cannot be read fails before anything is
 * written.  -EEXIST when this process holds fix already (or a killed one with
 * its pid left it: file_hold_restore_stale first).  h is initialized here.
 */
int file_hold_apply(const struct tune_where *w, const char *fix, const struct tune_plan *p,
		    struct file_hold *h, struct lat_error *err);

/* Write the old values back, then remove the state file (kept when a write
 * back failed, for the next run to retry; a file gone meanwhile is reported in
 * err, not crashed on).  Safe to call twice. */
int file_hold_restore(struct file_hold *h, struct lat_error *err);

/*
 * Keep what file_hold_apply wrote (latscope tune --apply): the state file is
 * removed, so that no later run takes it for a killed run's and puts the old
 * values back, and h is emptied as a restore would empty it.  Read h->old[0]
 * to h->old[h->n - 1] first for the values to write back by hand.
 */
int file_hold_keep(struct file_hold *h, struct lat_error *err);

/*
 * Restore every state file of a process that is gone (a live one's, or
 * another pid namespace's, is left alone), then remove it.  0 when the
 * directory is absent.  *ret_files: state files restored.  A file gone since
 * (an IRQ freed, a CPU unplugged) has nothing to restore and is passed over.
 */
int file_hold_restore_stale(const struct tune_where *w, unsigned *ret_files, struct lat_error *err);

/*
 * One tune at a time on a machine: two would measure each other, and each
 * would read the other's trial setting as the machine's own and put it back
 * at its end.  An flock on tune.lock in the state dir, held while the
 * returned fd is open; the kernel drops it when the process ends, SIGKILL
 * too.  -EBUSY with err naming the holder's pid, or another -errno.
 */
int file_hold_lock(const struct tune_where *w, struct lat_error *err);
/* Let go of the lock: its file is removed, then fd closed.  fd < 0: nothing. */
void file_hold_unlock(const struct tune_where *w, int fd);

#endif
