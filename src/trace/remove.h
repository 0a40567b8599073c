/*
 * Removing latscope's tracefs instances without a session: one by name (the
 * guard, after latscope died), or every one whose run was killed.  Never
 * mounts tracefs: where it is not mounted there is nothing to remove.
 */
#ifndef LATSCOPE_TRACE_REMOVE_H
#define LATSCOPE_TRACE_REMOVE_H

/*
 * Remove latscope instances whose process is gone (killed by SIGKILL before it
 * could clean up).  Instances of live processes, and of other pid namespaces,
 * are left alone.
 * *ret_removed (may be NULL) counts removals.  Returns 0 or a negative errno;
 * 0 when tracefs is absent (nothing can be stale).
 */
int trace_remove_stale_instances(unsigned *ret_removed);

/* Stop and remove the instance called name, when it exists.  0, -ENOENT
 * (also when tracefs is not mounted: it is never mounted for this), or -errno;
 * -ENOTSUP without tracefs support. */
int trace_instance_remove(const char *name);

#endif
