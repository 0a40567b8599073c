#include "trace/hwlat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "core/nstime.h"
#include "sys/textfile.h"

#if HAVE_TRACEFS
#include <tracefs.h>
#endif

/* ---- the trace's lines ---- */

/* The number after key in line, as u64; NULL when key is absent; *ok false when it is no number. */
static const char *number_after(const char *line, const char *key, uint64_t *ret, bool *ok)
{
	const char *p = strstr(line, key);
	char *end;

	if (!p)
		return NULL;
	p += strlen(key);
	while (*p == ' ')
		p++;
	errno = 0;
	unsigned long long v = strtoull(p, &end, 10);
	*ok = *ok && end != p && errno == 0 && *p != '-';
	*ret = v;
	return end;
}

int hwlat_parse_line(const char *line, struct hwlat_sample *ret)
{
	struct hwlat_sample s = { .cpu = -1 };
	const char *p = line + strspn(line, " \t");
	uint64_t cpu, inner, outer, sec, nsec;
	bool ok = true;

	if (*p == '#' || !strstr(p, "inner/outer(us):"))
		return -ENOENT;
	const char *br = strchr(p, '[');
	const char *seq = strstr(p, ": #");
	if (!br || !seq || br > seq || !number_after(br, "[", &cpu, &ok) || cpu >= CPUSET_MAX ||
	    !number_after(seq, ": #", &s.seqnum, &ok))
		return -EINVAL;
	const char *io = number_after(seq, "inner/outer(us):", &inner, &ok);
	if (!io || *io != '/' || !number_after(io, "/", &outer, &ok))
		return -EINVAL;
	const char *ts = number_after(io, "ts:", &sec, &ok);
	if (!ts || *ts != '.' || !number_after(ts, ".", &nsec, &ok) || nsec >= NS_PER_SEC ||
	    sec > UINT64_MAX / NS_PER_SEC)
		return -EINVAL;
	number_after(ts, " count:", &s.count, &ok); /* the space: not nmi-count's */
	s.has_nmi_total = number_after(ts, "nmi-total:", &s.nmi_total_ns, &ok) != NULL;
	number_after(ts, "nmi-count:", &s.nmi_count, &ok);
	const uint64_t us_max = UINT64_MAX / NS_PER_US;
	if (!ok || inner > us_max || outer > us_max || s.nmi_total_ns > us_max)
		return -EINVAL;
	s.cpu = (int)cpu;
	s.inner_ns = inner * NS_PER_US;
	s.outer_ns = outer * NS_PER_US;
	s.nmi_total_ns *= NS_PER_US;
	s.ts_ns = sec * NS_PER_SEC + nsec;
	*ret = s;
	return 0;
}

static json_t *sample_json(const struct hwlat_sample *s)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "cpu", json_integer(s->cpu));
	json_object_set_new(o, "seqnum", json_integer((json_int_t)s->seqnum));
	json_object_set_new(o, "inner_ns", json_integer((json_int_t)s->inner_ns));
	json_object_set_new(o, "outer_ns", json_integer((json_int_t)s->outer_ns));
	json_object_set_new(o, "ts_ns", json_integer((json_int_t)s->ts_ns));
	json_object_set_new(o, "count", json_integer((json_int_t)s->count));
	json_object_set_new(o, "nmi_count", json_integer((json_int_t)s->nmi_count));
	json_object_set_new(o, "nmi_total_ns",
			    s->has_nmi_total ? json_integer((json_int_t)s->nmi_total_ns)
					     : json_null());
	return o;
}

json_t *hwlat_samples_json(const char *text)
{
	json_t *doc = json_object(), *arr = json_array();
	uint64_t max_inner = 0, max_outer = 0, nmis = 0, unread = 0;
	char *copy = strdup(text ? text : ""), *save = NULL;

	if (!doc || !arr || !copy) {
		json_decref(doc);
		json_decref(arr);
		free(copy);
		return NULL;
	}
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct hwlat_sample s;
		int r = hwlat_parse_line(line, &s);
		if (r == -EINVAL)
			unread++;
		if (r < 0)
			continue;
		max_inner = s.inner_ns > max_inner ? s.inner_ns : max_inner;
		max_outer = s.outer_ns > max_outer ? s.outer_ns : max_outer;
		nmis += s.nmi_count;
		json_array_append_new(arr, sample_json(&s));
	}
	free(copy);
	json_object_set_new(doc, "samples", arr);
	json_object_set_new(doc, "max_inner_ns", json_integer((json_int_t)max_inner));
	json_object_set_new(doc, "max_outer_ns", json_integer((json_int_t)max_outer));
	json_object_set_new(doc, "nmi_count", json_integer((json_int_t)nmis));
	json_object_set_new(doc, "lines_unread", json_integer((json_int_t)unread));
	return doc;
}

/* ---- running the tracer ---- */

#define SAVED_LEN 256

struct hwlat_run {
	char dir[512];
	char tracer[SAVED_LEN], cpumask[SAVED_LEN], on[SAVED_LEN];
	bool stopped;
};

int hwlat_tracing_dir(const char *sysroot, char *buf, size_t size)
{
	if (sysroot && *sysroot && strcmp(sysroot, "/") != 0) {
		int n = snprintf(buf, size, "%s/sys/kernel/tracing", sysroot);
		return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
	}
#if HAVE_TRACEFS
	const char *dir = tracefs_tracing_dir();
	if (!dir)
		return -ENODEV;
	int n = snprintf(buf, size, "%s", dir);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
#else
	(void)buf;
	(void)size;
	return -ENODEV;
#endif
}

static void path_of(const char *dir, const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

int hwlat_available(const char *dir, struct lat_error *err)
{
	char path[600], list[512];
	path_of(dir, "available_tracers", path, sizeof(path));
	int r = textfile_read(path, list, sizeof(list));
	if (r < 0)
		return err_set(err, r, "cannot read '%s': %s", path, strerror(-r));
	if (!textfile_has_word(list, "hwlat"))
		return err_set(err, -ENOENT,
			       "the kernel offers no hwlat tracer (available_tracers: %s)", list);
	return 0;
}

static int put(const char *dir, const char *name, const char *val)
{
	char path[600];
	path_of(dir, name, path, sizeof(path));
	/* O_TRUNC: writing "" to trace is how its buffer is cleared */
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t len = strlen(val);
	ssize_t n = len ? write(fd, val, len) : 0;
	int r = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
	close(fd);
	return r;
}

static int get(const char *dir, const char *name, char *buf, size_t size)
{
	char path[600];
	path_of(dir, name, path, sizeof(path));
	return textfile_read(path, buf, size);
}

/* tracing_cpumask's form: 32-bit hex groups, the highest first, comma-separated. */
static void cpumask_text(const struct cpuset *cpus, char *buf, size_t size)
{
	int top = -1;
	for (int c = cpuset_next(cpus, 0); c >= 0; c = cpuset_next(cpus, (unsigned)c + 1u))
		top = c;
	size_t len = 0;
	buf[0] = '\0';
	for (int g = top < 0 ? 0 : top / 32; g >= 0 && len < size; g--) {
		uint32_t bits = 0;
		for (unsigned b = 0; b < 32; b++)
			if (cpuset_has(cpus, (unsigned)g * 32u + b))
				bits |= UINT32_C(1) << b;
		len += (size_t)snprintf(buf + len, size - len,
					g == top / 32 || top < 0 ? "%x" : ",%08x", bits);
	}
}

static void restore(const struct hwlat_run *h)
{
	put(h->dir, "tracing_on", "0");
	put(h->dir, "current_tracer", h->tracer);
	put(h->dir, "tracing_cpumask", h->cpumask);
	put(h->dir, "tracing_on", h->on);
}

int hwlat_start(struct hwlat_run **ret, const char *dir, const struct cpuset *cpus,
		struct lat_error *err)
{
	struct hwlat_run *h = calloc(1, sizeof(*h));
	char mask[CPUSET_MAX / 4u + CPUSET_MAX / 32u + 8u];
	int r;

	if (!h)
		return err_set(err, -ENOMEM, "out of memory");
	snprintf(h->dir, sizeof(h->dir), "%s", dir);
	if ((r = get(dir, "current_tracer", h->tracer, sizeof(h->tracer))) < 0 ||
	    (r = get(dir, "tracing_cpumask", h->cpumask, sizeof(h->cpumask))) < 0 ||
	    (r = get(dir, "tracing_on", h->on, sizeof(h->on))) < 0) {
		free(h);
		return err_set(err, r, "cannot read the tracer's settings in '%s': %s", dir,
			       strerror(-r));
	}
	cpumask_text(cpus, mask, sizeof(mask));
	if ((r = put(dir, "tracing_on", "0")) < 0 || (r = put(dir, "current_tracer", "nop")) < 0 ||
	    (r = put(dir, "trace", "")) < 0 || (r = put(dir, "tracing_cpumask", mask)) < 0 ||
	    (r = put(dir, "current_tracer", "hwlat")) < 0 ||
	    (r = put(dir, "tracing_on", "1")) < 0) {
		restore(h);
		free(h);
		return err_set(err, r, "cannot start the hwlat tracer in '%s': %s", dir,
			       strerror(-r));
	}
	*ret = h;
	return 0;
}

/* The whole trace file; NULL with -errno in *r. */
static char *read_all(const char *dir, int *r)
{
	char path[600];
	path_of(dir, "trace", path, sizeof(path));
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;

	*r = f && out ? 0 : -errno;
	while (*r == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (fwrite(chunk, 1, n, out) != n)
			*r = -ENOMEM;
	if (*r == 0 && ferror(f))
		*r = -EIO;
	if (f)
		fclose(f);
	if (out && fclose(out) != 0 && *r == 0)
		*r = -ENOMEM;
	if (*r < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void hwlat_stop(struct hwlat_run *h, json_t **ret_doc, struct lat_error *err)
{
	int r;

	*ret_doc = NULL;
	if (!h || h->stopped)
		return;
	h->stopped = true;
	put(h->dir, "tracing_on", "0");
	char *text = read_all(h->dir, &r);
	if (text)
		*ret_doc = hwlat_samples_json(text);
	else
		err_set(err, r, "cannot read the hwlat trace in '%s': %s", h->dir, strerror(-r));
	free(text);
	restore(h);
}

void hwlat_free(struct hwlat_run *h)
{
	if (h && !h->stopped)
		restore(h);
	free(h);
}
