#include "sys/smi.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/parse.h"
#include "sys/textfile.h"

#define PMU_DIR "sys/bus/event_source/devices/msr"

struct smi_counter {
	int source;
	size_t n;
	int *fd;	/* per CPU of the set */
	uint64_t *base; /* MSR: the count when opened (its low 32 bits) */
	uint64_t *now;	/* a read in progress, kept until it all succeeds */
};

static const char *const source_names[SMI_SOURCES] = {
	[SMI_SOURCE_PMU] = "msr_pmu", [SMI_SOURCE_MSR] = "msr"
};

const char *smi_source_name(int source)
{
	return source > SMI_SOURCE_NONE && source < SMI_SOURCES ? source_names[source] : NULL;
}

int smi_source_parse(const char *name, int *ret_source)
{
	for (int s = SMI_SOURCE_NONE + 1; s < SMI_SOURCES; s++)
		if (name && strcmp(name, source_names[s]) == 0) {
			*ret_source = s;
			return 0;
		}
	return -EINVAL;
}

int smi_parse_event(const char *text, uint64_t *ret_config)
{
	uint64_t v;
	char num[32];
	size_t len;

	if (strncmp(text, "event=", 6) != 0)
		return -EINVAL;
	text += 6;
	len = strcspn(text, " \t\n");
	if (len == 0 || len >= sizeof(num) || text[len + strspn(text + len, " \t\n")] != '\0')
		return -EINVAL; /* "event=0x04,umask=..." is no msr PMU event */
	memcpy(num, text, len);
	num[len] = '\0';
	if (strncmp(num, "0x", 2) == 0) {
		char *end;
		errno = 0;
		v = strtoull(num + 2, &end, 16);
		if (errno || end == num + 2 || *end)
			return -EINVAL;
	} else if (parse_u64(num, &v) < 0) {
		return -EINVAL;
	}
	*ret_config = v;
	return 0;
}

static void join(char *buf, size_t size, const char *root, const char *rel)
{
	bool here = !root || !*root || strcmp(root, "/") == 0;
	snprintf(buf, size, "%s/%s", here ? "" : root, rel);
}

static int real_perf_open(uint32_t type, uint64_t config, int cpu)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	long fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

static struct smi_counter *counter_new(size_t n)
{
	struct smi_counter *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->n = n;
	c->fd = malloc((n ? n : 1u) * sizeof(*c->fd));
	c->base = calloc(n ? n : 1u, sizeof(*c->base));
	c->now = calloc(n ? n : 1u, sizeof(*c->now));
	if (!c->fd || !c->base || !c->now) {
		smi_close(c);
		return NULL;
	}
	for (size_t k = 0; k < n; k++)
		c->fd[k] = -1;
	return c;
}

/* The msr PMU's smi event on every CPU.  -ENOENT or -errno, why saying which. */
static int open_pmu(struct smi_counter *c, const struct cpuset *cpus, const struct smi_env *env,
		    struct lat_error *why)
{
	char path[512], text[64];
	uint64_t type, config;
	int (*open_fn)(uint32_t, uint64_t, int) =
		env && env->perf_open ? env->perf_open : real_perf_open;
	const char *root = env ? env->sysroot : NULL;

	join(path, sizeof(path), root, PMU_DIR "/type");
	int r = textfile_read(path, text, sizeof(text));
	if (r < 0)
		return err_set(why, r, "msr PMU: cannot read '%s': %s", path, strerror(-r));
	if (parse_u64(text, &type) < 0 || type > UINT32_MAX)
		return err_set(why, -EINVAL, "msr PMU: '%s' holds no PMU type", path);
	join(path, sizeof(path), root, PMU_DIR "/events/smi");
	if ((r = textfile_read(path, text, sizeof(text))) < 0)
		return err_set(why, r, "msr PMU: it has no smi event ('%s': %s)", path,
			       strerror(-r));
	if (smi_parse_event(text, &config) < 0)
		return err_set(why, -EINVAL, "msr PMU: '%s' is not of the form event=N", path);
	size_t k = 0;
	for (int cpu = cpuset_next(cpus, 0); cpu >= 0;
	     cpu = cpuset_next(cpus, (unsigned)cpu + 1u), k++) {
		int fd = open_fn((uint32_t)type, config, cpu);
		if (fd < 0)
			return err_set(why, fd,
				       "msr PMU: its smi event does not open on CPU %d: %s", cpu,
				       strerror(-fd));
		c->fd[k] = fd;
	}
	c->source = SMI_SOURCE_PMU;
	return 0;
}

static int read_msr(int fd, uint64_t *ret)
{
	uint64_t v;
	ssize_t n = pread(fd, &v, sizeof(v), SMI_MSR);
	if (n != (ssize_t)sizeof(v))
		return n < 0 ? -errno : -EIO;
	*ret = v & UINT32_MAX;
	return 0;
}

static int open_msr(struct smi_counter *c, const struct cpuset *cpus, const struct smi_env *env,
		    struct lat_error *why)
{
	char path[512], rel[64];
	size_t k = 0;

	for (int cpu = cpuset_next(cpus, 0); cpu >= 0;
	     cpu = cpuset_next(cpus, (unsigned)cpu + 1u), k++) {
		snprintf(rel, sizeof(rel), "dev/cpu/%d/msr", cpu);
		join(path, sizeof(path), env ? env->sysroot : NULL, rel);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return err_set(why, -errno, "MSR: cannot open '%s': %s", path,
				       strerror(errno));
		c->fd[k] = fd;
		int r = read_msr(fd, &c->base[k]);
		if (r < 0)
			return err_set(why, r, "MSR: '%s' gives no MSR_SMI_COUNT: %s", path,
				       strerror(-r));
	}
	c->source = SMI_SOURCE_MSR;
	return 0;
}

int smi_msr_since_reset(const char *sysroot, int cpu, uint64_t *ret)
{
	char path[512], rel[64];
	snprintf(rel, sizeof(rel), "dev/cpu/%d/msr", cpu);
	join(path, sizeof(path), sysroot, rel);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = read_msr(fd, ret);
	close(fd);
	return r;
}

static void close_fds(struct smi_counter *c)
{
	for (size_t k = 0; k < c->n; k++) {
		if (c->fd[k] >= 0)
			close(c->fd[k]);
		c->fd[k] = -1;
	}
}

int smi_open(struct smi_counter **ret, const struct cpuset *cpus, const struct smi_env *env,
	     struct lat_error *err)
{
	struct lat_error pmu = { "" }, msr = { "" };
	struct smi_counter *c = counter_new(cpuset_count(cpus));

	if (!c)
		return err_set(err, -ENOMEM, "no memory for the SMI counter");
	if (open_pmu(c, cpus, env, &pmu) == 0) {
		*ret = c;
		return 0;
	}
	close_fds(c);
	if (open_msr(c, cpus, env, &msr) == 0) {
		*ret = c;
		return 0;
	}
	smi_close(c);
	return err_set(err, -ENODEV, "%s; %s", pmu.msg, msr.msg);
}

int smi_counter_source(const struct smi_counter *c)
{
	return c ? c->source : SMI_SOURCE_NONE;
}

int smi_read(struct smi_counter *c, uint64_t *ret)
{
	uint64_t *now = c->now;
	int r = 0;

	for (size_t k = 0; r == 0 && k < c->n; k++) {
		if (c->source == SMI_SOURCE_MSR) {
			r = read_msr(c->fd[k], &now[k]);
			/* 32 bits that may wrap between two reads a window apart */
			now[k] = (now[k] - c->base[k]) & UINT32_MAX;
		} else {
			ssize_t n = read(c->fd[k], &now[k], sizeof(now[k]));
			r = n == (ssize_t)sizeof(now[k]) ? 0 : n < 0 ? -errno : -EIO;
		}
	}
	if (r == 0)
		memcpy(ret, now, c->n * sizeof(*now));
	return r;
}

void smi_close(struct smi_counter *c)
{
	if (!c)
		return;
	if (c->fd)
		close_fds(c);
	free(c->fd);
	free(c->base);
	free(c->now);
	free(c);
}

const char *smi_sysroot_env(void)
{
	return getenv("LATSCOPE_SYSROOT");
}
