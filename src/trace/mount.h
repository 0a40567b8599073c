/*
 * tracefs for a traced run: mounted when it is not (as trace-cmd does), and
 * unmounted after the run only when latscope mounted it and nothing else
 * uses it.  A mount left behind (latscope and its guard killed) costs nothing.
 *
 * tracefs has one superblock for the whole machine: a mount is only a view,
 * and every mount namespace sees the same instances.  So "in use" means by a
 * latscope run of this mount namespace (another namespace's runs use their
 * own mount), or by a process with a file open in this mount (the kernel's
 * EBUSY).  Nothing here prints: the caller says what was done.
 */
#ifndef LATSCOPE_TRACE_MOUNT_H
#define LATSCOPE_TRACE_MOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/error.h"

#define TRACEFS_MOUNT_DIR "/sys/kernel/tracing"

enum tracefs_where {
	TRACEFS_ABSENT,         /* neither tracefs nor debugfs is mounted */
	TRACEFS_MOUNTED,        /* dir: the first tracefs mount, wherever it is */
	TRACEFS_IN_DEBUGFS,     /* dir: debugfs' "tracing", which the kernel mounts on first use */
};

/* Where the mount table (the text of /proc/self/mounts) shows tracefs.
 * dir is "" for TRACEFS_ABSENT, and when a mount point does not fit. */
enum tracefs_where tracefs_where(FILE *mounts, char *dir, size_t size);

/*
 * Whether a latscope run of this mount namespace has its instance in the
 * tracefs at dir (dir/instances/latscope-PIDNS-PID of a live process whose
 * /proc/PID/ns/mnt is ours); why names it.  Instances of other namespaces'
 * runs, of dead processes and of other tools are not judged here: a tool
 * using this mount holds a file open in it, and the unmount fails with EBUSY.
 */
bool tracefs_in_use(const char *dir, char *why, size_t size);

struct tracefs_mount {
	bool ours;              /* latscope mounted tracefs at dir: tracefs_unmount() undoes it */
	char dir[64];
};

/*
 * Make tracefs reachable: as it is when mounted; through debugfs' automount
 * when only debugfs is; else mount it at TRACEFS_MOUNT_DIR (m->ours then
 * true).  0, or -ENODEV with err saying why it is not mounted and cannot be
 * (not root, no tracefs in this kernel); -errno when the mount table cannot
 * be read (then nothing is mounted: better untraced than mounted twice).
 */
int tracefs_mount(struct tracefs_mount *m, struct lat_error *err);

/*
 * Undo tracefs_mount(): when latscope mounted it and nothing uses it,
 * unmount it.  1 when latscope had mounted nothing (note untouched), 0 when
 * unmounted, -EBUSY when left mounted because a run or a process uses it,
 * another -errno when the unmount failed; note says which.  m->ours is false
 * afterwards either way: the choice is made once.
 */
int tracefs_unmount(struct tracefs_mount *m, struct lat_error *note);

#endif
