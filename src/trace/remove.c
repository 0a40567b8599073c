#include "trace/remove.h"

#include <errno.h>
#include <stdlib.h>

#include "config.h"

#if !HAVE_TRACEFS

int trace_remove_stale_instances(unsigned *ret_removed)
{
	if (ret_removed)
		*ret_removed = 0;
	return 0;
}

int trace_instance_remove(const char *name)
{
	(void)name;
	return -ENOTSUP;
}

#else

#include <signal.h>
#include <sys/types.h>
#include <tracefs.h>
#include <unistd.h>

#include "trace/names.h"

struct stale {
	pid_t self;
	unsigned long pidns;
	unsigned removed;
	int err;
};

static int stale_one(const char *name, void *data)
{
	struct stale *st = data;
	unsigned long owner_ns;
	long pid;

	if (trace_instance_parse(name, &owner_ns, &pid) < 0 || pid == st->self ||
	    !trace_instance_judgeable(owner_ns, st->pidns))
		return 0;
	if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;               /* alive, or not ours to judge (EPERM) */

	int r = trace_instance_remove(name);
	if (r == 0)
		st->removed++;
	else if (r != -ENOENT && !st->err)
		st->err = r;
	return 0;
}

/* tracefs mounted, asking libtracefs in a way that does not mount it. */
static bool tracefs_is_mounted(void)
{
	const char *dir = NULL;
	int mounted = tracefs_tracing_dir_is_mounted(false, &dir);
	free((char *)dir);
	return mounted > 0;
}

int trace_instance_remove(const char *name)
{
	if (!tracefs_is_mounted() || !tracefs_instance_exists(name))
		return -ENOENT;
	struct tracefs_instance *inst = tracefs_instance_alloc(NULL, name);
	if (!inst)
		return -ENOMEM;
	tracefs_trace_off(inst);
	tracefs_event_disable(inst, NULL, NULL);
	errno = 0;
	int r = tracefs_instance_destroy(inst) == 0 ? 0 : errno ? -errno : -EIO;
	tracefs_instance_free(inst);
	return r;
}

int trace_remove_stale_instances(unsigned *ret_removed)
{
	struct stale st = { .self = getpid(), .pidns = trace_pidns() };

	if (ret_removed)
		*ret_removed = 0;
	if (!tracefs_is_mounted())
		return 0;
	errno = 0;
	if (tracefs_instances_walk(stale_one, &st) < 0 && errno)
		return -errno;
	if (ret_removed)
		*ret_removed = st.removed;
	return st.err;
}

#endif
