#include "sys/sysfacts.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "core/parse.h"
#include "sys/textfile.h"

/* root's path (NULL or "" is "/") followed by rel, which starts with '/'. */
static int path_at(const char *root, const char *rel, char *buf, size_t size)
{
	size_t len = root ? strlen(root) : 0;
	while (len > 0 && root[len - 1] == '/')
		len--;
	int n = snprintf(buf, size, "%.*s%s", (int)len, root ? root : "", rel);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int read_at(const char *root, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	int r = path_at(root, rel, path, sizeof(path));
	if (r < 0) {
		buf[0] = '\0';
		return r;
	}
	return textfile_read(path, buf, size);
}

/* root's rel opened for reading: 0, or -errno. */
static int open_at(const char *root, const char *rel, FILE **ret)
{
	char path[PATH_MAX];
	int r = path_at(root, rel, path, sizeof(path));
	if (r < 0)
		return r;
	*ret = fopen(path, "re");
	return *ret ? 0 : -errno;
}

static int read_i64(const char *root, const char *rel, int64_t *ret)
{
	char text[32];
	int r = read_at(root, rel, text, sizeof(text));
	return r < 0 ? r : parse_i64(text, ret);
}

int sys_rt_runtime(const char *root, int64_t *ret_runtime_us, int64_t *ret_period_us)
{
	int64_t runtime, period;
	int r;

	if ((r = read_i64(root, "/proc/sys/kernel/sched_rt_runtime_us", &runtime)) < 0 ||
	    (r = read_i64(root, "/proc/sys/kernel/sched_rt_period_us", &period)) < 0)
		return r;
	*ret_runtime_us = runtime;
	*ret_period_us = period;
	return 0;
}

int sys_thp_mode(const char *root, char *buf, size_t size)
{
	char text[128];
	int r = read_at(root, "/sys/kernel/mm/transparent_hugepage/enabled", text, sizeof(text));
	if (r < 0) {
		buf[0] = '\0';
		return r;
	}
	return textfile_choice(text, '[', ']', buf, size);
}

int sys_huge_bytes(const char *root, uintptr_t addr, size_t len, uint64_t *ret_huge)
{
	char line[512];
	FILE *f;
	int r = open_at(root, "/proc/self/smaps", &f);
	if (r < 0)
		return r;
	uint64_t huge = 0, overlap = 0;
	bool inside = false, found = false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, kb;
		int used = 0;
		/* A mapping's first line: "lo-hi perms offset dev inode [path]", in hex. */
		if (sscanf(line, "%llx-%llx %n", &lo, &hi, &used) == 2 && used > 0) {
			uintptr_t a = lo > addr ? (uintptr_t)lo : addr;
			uintptr_t b = hi < addr + len ? (uintptr_t)hi : addr + len;
			inside = a < b;
			overlap = inside ? b - a : 0;
			found = found || inside;
		} else if (inside && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1) {
			huge += kb * 1024u < overlap ? kb * 1024u : overlap;
		}
	}
	fclose(f);
	if (!found)
		return -ENOENT;
	*ret_huge = huge;
	return 0;
}

int sys_cpu_flag(const char *root, const char *flag)
{
	char line[8192];
	FILE *f;
	int r = open_at(root, "/proc/cpuinfo", &f);
	if (r < 0)
		return r;
	r = -ENOENT;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "flags", 5) == 0 && strchr(line, ':')) {
			textfile_trim_end(line);
			r = textfile_has_word(strchr(line, ':') + 1, flag);
			break;
		}
	fclose(f);
	return r;
}

int sys_clocksource_offered(const char *root, const char *name)
{
	char text[512];
	int r = read_at(root, "/sys/devices/system/clocksource/clocksource0/available_clocksource", text, sizeof(text));
	return r < 0 ? r : textfile_has_word(text, name);
}

int sys_loadavg(const char *root, char *buf, size_t size)
{
	return read_at(root, "/proc/loadavg", buf, size);
}

int sys_cpu_node(const char *root, unsigned cpu, unsigned *ret_node)
{
	char rel[64], path[PATH_MAX];
	uint64_t node, best = UINT64_MAX;
	int r;

	snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu%u", cpu);
	if ((r = path_at(root, rel, path, sizeof(path))) < 0)
		return r;
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	/* One link, "node1"; the lowest should a kernel ever list more. */
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		if (strncmp(e->d_name, "node", 4) == 0 && parse_u64(e->d_name + 4, &node) == 0 && node < best)
			best = node;
	closedir(d);
	if (best > UINT_MAX)
		return -ENOENT;
	*ret_node = (unsigned)best;
	return 0;
}

int sys_io_uring_usable(void)
{
	struct io_uring ring;
	int r = io_uring_queue_init(1, &ring, 0);
	if (r == 0)
		io_uring_queue_exit(&ring);
	return r;
}
