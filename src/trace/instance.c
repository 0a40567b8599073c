#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "core/error.h"
#include "trace/eventlist.h"
#include "trace/guard.h"
#include "trace/instance.h"
#include "trace/mount.h"
#include "trace/names.h"
#include "trace/remove.h"
#include "trace/session.h"

#if HAVE_TRACEFS
#include <sys/syscall.h>
#include <tracefs.h>
#endif

bool trace_supported(void)
{
	return HAVE_TRACEFS;
}

const char *trace_session_dir(const struct trace_session *s)
{
	return s ? s->dir : "";
}

unsigned trace_session_events(const struct trace_session *s)
{
	return s ? s->events : 0;
}

const char *trace_session_mounted(const struct trace_session *s)
{
	return s && s->mounted ? s->mount.dir : NULL;
}

int trace_session_unmounted(const struct trace_session *s, const char **note)
{
	bool done = s && s->mounted && s->unmounted != 1;
	*note = done ? s->unmount_note.msg : "";
	return done ? s->unmounted : 1;
}

int trace_session_abandon(struct trace_session *s, int r, struct lat_error *err)
{
	const char *note;

	trace_session_destroy(s);
	if (trace_session_unmounted(s, &note) < 0 && err) {
		char cause[sizeof(err->msg)];
		snprintf(cause, sizeof(cause), "%s", err->msg);
		err_set(err, r, "%s; %s", cause, note);
	}
	trace_session_free(s);
	return r;
}

#if !HAVE_TRACEFS

int trace_session_start(const struct trace_opts *o, struct trace_session **ret,
			struct lat_error *err)
{
	(void)o;
	(void)ret;
	return err_set(err, -ENOTSUP, "built without tracefs support");
}

int trace_session_stop(struct trace_session *s)
{
	(void)s;
	return -ENOTSUP;
}

int trace_session_destroy(struct trace_session *s)
{
	(void)s;
	return 0;
}

void trace_session_free(struct trace_session *s)
{
	free(s);
}

#else


static bool event_exists(const char *sys, const char *name, void *ctx)
{
	(void)ctx;
	return tracefs_event_file_exists(NULL, sys, name, "enable");
}

/* tracefs' own checks come first: each failure has one clear cause.  *want
 * loses the optional groups this kernel lacks. */
static int check_tracefs(unsigned *want, struct lat_error *err)
{
	const char *dir = NULL;
	/* libtracefs 1.6 hands back a strdup()ed path (LeakSanitizer shows it). */
	int mounted = tracefs_tracing_dir_is_mounted(false, &dir);
	if (mounted <= 0 || !dir) {
		free((char *)dir);
		return err_set(err, -ENODEV, "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
	}
	if (access(dir, W_OK) != 0) {
		int r = errno;
		err_set(err, 0, "cannot write '%s': %s (tracing needs root)", dir, strerror(r));
		free((char *)dir);
		return r == EACCES || r == EPERM || r == EROFS ? -EACCES : -r;
	}
	free((char *)dir);
	const struct trace_event_name *missing = NULL;
	unsigned had = 0;
	if (trace_events_available(*want, event_exists, NULL, &had, &missing) < 0) {
		return err_set(err, -ENOENT, "trace event '%s:%s' is missing from this kernel", missing->sys,
			       missing->name);
	}
	if (!had)
		return err_set(err, -ENOENT, "none of the trace events asked for is in this kernel");
	*want = had;
	char *clocks = tracefs_instance_file_read(NULL, "trace_clock", NULL);
	bool mono = false;
	char *save = NULL;
	for (char *tok = clocks ? strtok_r(clocks, " \n[]", &save) : NULL; tok; tok = strtok_r(NULL, " \n[]", &save))
		mono = mono || strcmp(tok, "mono") == 0;
	free(clocks);
	if (!mono) {
		return err_set(err, -ENOENT, "trace clock 'mono' is missing from this kernel");
	}
	return 0;
}

/* Writes a string, mapping libtracefs' -1 to a negative errno. */
static int write_file(struct tracefs_instance *inst, const char *file, const char *val)
{
	errno = 0;
	if (tracefs_instance_file_write(inst, file, val) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

static int configure(struct trace_session *s, const struct trace_opts *o, struct lat_error *err)
{
	struct tracefs_instance *inst = s->inst;
	int r;
	char list[1024];

	tracefs_trace_off(inst);
	/* Changing the clock also empties the buffers. */
	r = write_file(inst, "trace_clock", "mono");
	if (r < 0) {
		return err_set(err, r, "cannot set trace clock 'mono' in '%s': %s", s->dir, strerror(-r));
	}
	if (cpuset_format(&o->cpus, list, sizeof(list)) >= sizeof(list) || list[0] == '\0') {
		return err_set(err, -EINVAL, "cannot trace an empty or oversized CPU list");
	}
	errno = 0;
	if (tracefs_instance_set_affinity(inst, list) < 0) {
		r = errno ? -errno : -EINVAL;
		return err_set(err, r, "cannot restrict tracing to CPUs %s: %s", list, strerror(-r));
	}
	/* Per-CPU sizes: CPUs outside the mask record nothing, so they get one page. */
	unsigned kb = o->buffer_kb ? o->buffer_kb : trace_buffer_kb_for(0, 0);
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	for (long c = 0; c < ncpus; c++) {
		size_t size = cpuset_has(&o->cpus, (unsigned)c) ? kb : 4;
		errno = 0;
		if (tracefs_instance_set_buffer_size(inst, size, (int)c) < 0) {
			r = errno ? -errno : -EIO;
			return err_set(err, r, "cannot set a %zu KiB trace buffer on CPU %ld: %s",
				size, c, strerror(-r));
		}
	}
	for (size_t i = 0; i < trace_event_count; i++) {
		if (!(s->events & trace_event_names[i].want))
			continue;
		if (trace_event_names[i].want == TRACE_WANT_SLEEP_EXIT) {
			/* A timerfd's read returns its 8-byte count: a load's reads on the CPU stay out. */
			char filter[48];
			if (o->sleep_call == TRACE_SLEEP_READ)
				snprintf(filter, sizeof(filter), "id == %ld && ret == 8", (long)SYS_read);
			else
				snprintf(filter, sizeof(filter), "id == %ld", o->sleep_call == TRACE_SLEEP_SIGWAIT
					 ? (long)SYS_rt_sigtimedwait : (long)SYS_clock_nanosleep);
			errno = 0;
			if (tracefs_event_file_write(inst, trace_event_names[i].sys, trace_event_names[i].name, "filter", filter) < 0) {
				r = errno ? -errno : -EIO;
				return err_set(err, r, "cannot filter trace event '%s:%s': %s",
					trace_event_names[i].sys, trace_event_names[i].name, strerror(-r));
			}
		}
		errno = 0;
		if (tracefs_event_enable(inst, trace_event_names[i].sys, trace_event_names[i].name) < 0) {
			r = errno ? -errno : -ENOENT;
			return err_set(err, r, "cannot enable trace event '%s:%s': %s",
				trace_event_names[i].sys, trace_event_names[i].name, strerror(-r));
		}
	}
	write_file(inst, "trace", "");    /* anything recorded while configuring */
	if (tracefs_trace_on(inst) < 0) {
		return err_set(err, -EIO, "cannot start tracing in '%s'", s->dir);
	}
	return 0;
}

int trace_session_start(const struct trace_opts *o, struct trace_session **ret,
			struct lat_error *err)
{
	unsigned want = o->events;
	struct trace_session *s;
	int r;

	if (!want)
		return err_set(err, -EINVAL, "no trace events asked for");
	if (!(s = calloc(1, sizeof(*s)))) {
		return err_set(err, -ENOMEM, "out of memory");
	}
	s->cpus = o->cpus;
	s->events = want;
	s->guard = o->guard;
	s->unmounted = 1;
	/* Before any libtracefs call: finding tracefs unmounted, it would mount it unasked. */
	if ((r = tracefs_mount(&s->mount, err)) < 0) {
		free(s);
		return r;
	}
	s->mounted = s->mount.ours;
	if (s->mounted)
		trace_guard_mounted(s->guard, true);
	if ((r = check_tracefs(&s->events, err)) < 0)
		return trace_session_abandon(s, r, err);
	trace_remove_stale_instances(NULL);
	if ((r = trace_instance_name(trace_pidns(), (long)getpid(), s->name, sizeof(s->name))) < 0)
		return trace_session_abandon(s, err_set(err, r, "cannot name the tracefs instance"), err);
	if (tracefs_instance_exists(s->name)) {
		r = err_set(err, -EBUSY, "tracefs instance '%s' is in use: this process traces already", s->name);
		return trace_session_abandon(s, r, err);
	}

	errno = 0;
	s->inst = tracefs_instance_create(s->name);
	if (!s->inst) {
		r = errno ? -errno : -EIO;
		err_set(err, 0, "cannot create tracefs instance '%s': %s%s", s->name, strerror(-r),
			r == -EACCES || r == -EPERM ? " (tracing needs root)" : "");
		return trace_session_abandon(s, r == -EPERM ? -EACCES : r, err);
	}
	char *dir = tracefs_instance_get_dir(s->inst);
	snprintf(s->dir, sizeof(s->dir), "%s", dir ? dir : s->name);
	tracefs_put_tracing_file(dir);

	if ((r = configure(s, o, err)) < 0)
		return trace_session_abandon(s, r, err);
	*ret = s;
	return 0;
}

int trace_session_stop(struct trace_session *s)
{
	if (!s || s->destroyed)
		return -EINVAL;
	if (!s->stopped && tracefs_trace_off(s->inst) < 0)
		return -EIO;
	s->stopped = true;
	return 0;
}

int trace_session_destroy(struct trace_session *s)
{
	int r = 0;

	if (!s || s->destroyed)
		return 0;
	if (s->inst) {
		tracefs_trace_off(s->inst);
		tracefs_event_disable(s->inst, NULL, NULL);
		errno = 0;
		r = tracefs_instance_destroy(s->inst) < 0 ? (errno ? -errno : -EIO) : 0;
	}
	s->stopped = true;
	s->destroyed = true;
	if (s->mount.ours) {            /* after the instance: its own is no use of the mount */
		s->unmounted = tracefs_unmount(&s->mount, &s->unmount_note);
		trace_guard_mounted(s->guard, false);
	}
	return r;
}

void trace_session_free(struct trace_session *s)
{
	if (!s)
		return;
	trace_session_destroy(s);
	if (s->inst)
		tracefs_instance_free(s->inst);
	if (s->tep)
		tep_free(s->tep);
	free(s);
}

#endif
