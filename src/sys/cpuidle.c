#include "sys/cpuidle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/atomicfile.h"
#include "sys/mkdirs.h"
#include "sys/pidns.h"
#include "sys/statefile.h"
#include "sys/textfile.h"

#define STATE_PREFIX "cpuidle-"
#define STATE_MAGIC  "latscope cpuidle 1"
static int root_of(const struct cpuidle_where *w, char *buf, size_t size)
{
	const char *root = w && w->sysroot ? w->sysroot : "/";
	size_t len = strlen(root);
	while (len > 0 && root[len - 1] == '/')
		len--;
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, root, len);
	buf[len] = '\0';
	return 0;
}

static const char *state_dir(const struct cpuidle_where *w)
{
	return w && w->state_dir ? w->state_dir : CPUIDLE_STATE_DIR;
}

/* <root>/sys/devices/system/cpu/cpuC/cpuidle/stateK[/file] */
static int state_path(const char *root, unsigned cpu, unsigned state, const char *file, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/sys/devices/system/cpu/cpu%u/cpuidle/state%u%s%s", root, cpu, state,
			 file ? "/" : "", file ? file : "");
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* A permission refusal says what would have been allowed. */
static const char *needs_root(int r)
{
	return r == -EACCES || r == -EPERM ? " (needs root)" : "";
}

static int write_disable(const char *root, const struct cpuidle_change *c, const char *value, struct lat_error *err)
{
	char path[512];
	int r = state_path(root, c->cpu, c->state, "disable", path, sizeof(path));
	if (r < 0)
		return err_set(err, r, "cannot name the disable file of cpu %u state %u", c->cpu, c->state);
	int fd = open(path, O_WRONLY | O_CLOEXEC);      /* never O_CREAT: only the kernel's files */
	if (fd < 0) {
		int e = errno;
		return err_set(err, -e, "cannot open '%s': %s%s", path, strerror(e), needs_root(-e));
	}
	ssize_t n;
	do
		n = write(fd, value, strlen(value));
	while (n < 0 && errno == EINTR);
	r = n == (ssize_t)strlen(value) ? 0 : n < 0 ? -errno : -EIO;
	close(fd);
	return r < 0 ? err_set(err, r, "cannot write '%s': %s%s", path, strerror(-r), needs_root(r)) : 0;
}

void cpuidle_hold_init(struct cpuidle_hold *h)
{
	memset(h, 0, sizeof(*h));
}

/* ---- the state file ------------------------------------------------------ */

static int write_state_file(struct cpuidle_hold *h, const char *dir, struct lat_error *err)
{
	struct atomic_file f = { .fd = -1 };
	char head[128];
	int r;

	int n = snprintf(h->file, sizeof(h->file), "%s/" STATE_PREFIX "%lu-%ld", dir, pidns_self(), (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(h->file)) {
		h->file[0] = '\0';
		return err_set(err, -ENAMETOOLONG, "cannot name a state file in '%s'", dir);
	}
	if ((r = make_dirs(dir, 0755)) < 0 || (r = atomic_file_open(h->file, &f)) < 0) {
		err_set(err, r, "cannot write '%s': %s%s", h->file, strerror(-r), needs_root(r));
		h->file[0] = '\0';
		return r;
	}
	r = statefile_head(STATE_MAGIC, head, sizeof(head));
	if (r == 0)
		r = atomic_file_write(&f, head, strlen(head));
	for (size_t i = 0; r == 0 && i < h->n; i++) {
		char line[64];
		snprintf(line, sizeof(line), "cpu %u state %u\n", h->ch[i].cpu, h->ch[i].state);
		r = atomic_file_write(&f, line, strlen(line));
	}
	if (r == 0)
		r = atomic_file_commit(&f);
	atomic_file_close(&f);
	if (r < 0) {
		err_set(err, r, "cannot write '%s': %s", h->file, strerror(-r));
		h->file[0] = '\0';
	}
	return r;
}

struct busy {
	unsigned long self_ns;
	struct lat_error *err;
};

static int busy_one(const char *path, FILE *in, void *data)
{
	struct busy *b = data;
	struct statefile_owner o;
	if (statefile_read_owner(in, STATE_MAGIC, &o) < 0 || !statefile_owner_alive(&o, b->self_ns) ||
	    o.pidns != b->self_ns)
		return 0;
	return err_set(b->err, -EBUSY, "idle states are limited by latscope pid %ld already (its state file '%s')",
		       o.pid, path);
}

/* ---- limit and restore --------------------------------------------------- */

/* cpu's states deeper than deepest: their names into text, the enabled ones into h. */
static int scan_cpu(struct cpuidle_hold *h, unsigned cpu, unsigned deepest, size_t *nstates, char *text,
		    size_t size, struct lat_error *err)
{
	size_t len = 0;

	text[0] = '\0';
	*nstates = 0;
	for (unsigned k = 0; k < CPUIDLE_STATES_MAX; k++) {
		char path[512], name[32], disable[16];
		struct stat st;
		if (state_path(h->sysroot, cpu, k, NULL, path, sizeof(path)) < 0 || stat(path, &st) < 0 ||
		    !S_ISDIR(st.st_mode))
			break;
		(*nstates)++;
		if (k <= deepest)
			continue;
		state_path(h->sysroot, cpu, k, "disable", path, sizeof(path));
		int r = textfile_read(path, disable, sizeof(disable));
		if (r < 0 || (strcmp(disable, "0") != 0 && strcmp(disable, "1") != 0))
			return err_set(err, r < 0 ? r : -EINVAL, "cannot read '%s': %s", path,
				       r < 0 ? strerror(-r) : "neither 0 nor 1");
		state_path(h->sysroot, cpu, k, "name", path, sizeof(path));
		if (textfile_read(path, name, sizeof(name)) < 0 || !name[0])
			snprintf(name, sizeof(name), "?");
		int n = snprintf(text + len, size - len, "%sstate%u (%s)", len ? ", " : "", k, name);
		if (n > 0)
			len = (size_t)n < size - len ? len + (size_t)n : size - 1;
		if (strcmp(disable, "0") == 0)
			h->ch[h->n++] = (struct cpuidle_change){ cpu, k };
	}
	return 0;
}

/* h->fact: each text of the CPUs' disabled states once, with the CPUs it holds for. */
static void describe(struct cpuidle_hold *h, const unsigned *cpus, char (*texts)[256], size_t n)
{
	size_t len = 0;
	h->fact[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		bool said = false;
		for (size_t k = 0; k < i && !said; k++)
			said = strcmp(texts[k], texts[i]) == 0;
		if (said || !texts[i][0])
			continue;
		struct cpuset set;
		char list[128];
		cpuset_clear(&set);
		for (size_t k = i; k < n; k++)
			if (strcmp(texts[k], texts[i]) == 0)
				cpuset_add(&set, cpus[k]);
		cpuset_format(&set, list, sizeof(list));
		int m = snprintf(h->fact + len, sizeof(h->fact) - len, "%s%s disabled on cpu %s", len ? "; " : "",
				 texts[i], list);
		if (m > 0)
			len = (size_t)m < sizeof(h->fact) - len ? len + (size_t)m : sizeof(h->fact) - 1;
	}
}

int cpuidle_limit(const struct cpuidle_where *w, const struct cpuset *cpus, unsigned deepest,
		  struct cpuidle_hold *h, struct lat_error *err)
{
	const size_t ncpus = cpuset_count(cpus);
	unsigned *list = calloc(ncpus ? ncpus : 1, sizeof(*list));
	char (*texts)[256] = calloc(ncpus ? ncpus : 1, sizeof(*texts));
	size_t any = 0, i = 0;
	int r;

	cpuidle_hold_init(h);
	h->ch = calloc(ncpus * CPUIDLE_STATES_MAX + 1u, sizeof(*h->ch));
	if (!list || !texts || !h->ch) {
		r = err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	if ((r = root_of(w, h->sysroot, sizeof(h->sysroot))) < 0) {
		err_set(err, r, "the sysfs root is too long");
		goto fail;
	}
	struct busy b = { .self_ns = pidns_self(), .err = err };
	if ((r = statefile_each(state_dir(w), STATE_PREFIX, busy_one, &b, err)) < 0)
		goto fail;
	cpuset_foreach(c, cpus) {
		size_t nstates;
		list[i] = (unsigned)c;
		if ((r = scan_cpu(h, (unsigned)c, deepest, &nstates, texts[i], sizeof(texts[i]), err)) < 0)
			goto fail;
		any += nstates;
		h->limited |= texts[i][0] != '\0';
		i++;
	}
	if (!any)
		snprintf(h->fact, sizeof(h->fact), "nothing to limit: no cpuidle driver");
	else if (!h->limited)
		snprintf(h->fact, sizeof(h->fact), "nothing to limit: no idle state deeper than %u", deepest);
	else
		describe(h, list, texts, ncpus);
	free(list);
	free(texts);
	list = NULL;
	texts = NULL;
	if (h->n == 0)
		return 0;

	/* Named before changed: a kill from here on leaves what to restore. */
	if ((r = write_state_file(h, state_dir(w), err)) < 0)
		goto fail;
	for (size_t k = 0; k < h->n; k++) {
		if ((r = write_disable(h->sysroot, &h->ch[k], "1", err)) < 0) {
			h->n = k;               /* the ones before are disabled: enable them again */
			cpuidle_restore(h, NULL);
			goto fail;
		}
	}
	return 0;
fail:
	free(list);
	free(texts);
	free(h->ch);
	h->ch = NULL;
	h->n = 0;
	h->limited = false;
	h->file[0] = '\0';
	return r;
}

int cpuidle_restore(struct cpuidle_hold *h, struct lat_error *err)
{
	int first = 0;
	for (size_t k = 0; k < h->n; k++) {
		int r = write_disable(h->sysroot, &h->ch[k], "0", first ? NULL : err);
		if (r < 0 && !first)
			first = r;
	}
	if (first == 0 && h->file[0] && unlink(h->file) < 0 && errno != ENOENT)
		first = err_set(err, -errno, "cannot remove '%s': %s", h->file, strerror(errno));
	free(h->ch);
	h->ch = NULL;
	h->n = 0;
	h->file[0] = '\0';
	return first;
}

struct stale {
	const char *root;
	unsigned long self_ns;
	struct cpuidle_stale *out;
	struct lat_error *err;
	int first;
};

static int stale_one(const char *path, FILE *in, void *data)
{
	struct stale *st = data;
	struct statefile_owner o;
	char line[64];
	int first = 0;
	unsigned states = 0;

	if (statefile_read_owner(in, STATE_MAGIC, &o) < 0 || statefile_owner_alive(&o, st->self_ns))
		return 0;
	while (fgets(line, sizeof(line), in)) {
		struct cpuidle_change c;
		if (sscanf(line, "cpu %u state %u", &c.cpu, &c.state) != 2 || c.cpu >= CPUSET_MAX ||
		    c.state >= CPUIDLE_STATES_MAX)
			continue;
		int r = write_disable(st->root, &c, "0", first || st->first ? NULL : st->err);
		if (r < 0 && !first)
			first = r;
		else if (r == 0)
			states++;
	}
	st->out->states += states;
	st->out->pid = o.pid;
	if (first == 0 && unlink(path) < 0 && errno != ENOENT)
		first = err_set(st->first ? NULL : st->err, -errno, "cannot remove '%s': %s", path, strerror(errno));
	if (first == 0)
		st->out->files++;
	else if (!st->first)
		st->first = first;
	return 0;
}

int cpuidle_restore_stale(const struct cpuidle_where *w, struct cpuidle_stale *ret, struct lat_error *err)
{
	char root[256];
	int r;

	memset(ret, 0, sizeof(*ret));
	if ((r = root_of(w, root, sizeof(root))) < 0)
		return err_set(err, r, "the sysfs root is too long");
	struct stale st = { .root = root, .self_ns = pidns_self(), .out = ret, .err = err };
	if ((r = statefile_each(state_dir(w), STATE_PREFIX, stale_one, &st, err)) < 0)
		return r;
	return st.first;
}
