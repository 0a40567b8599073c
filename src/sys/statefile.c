#include "sys/statefile.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "sys/pidns.h"
#include "sys/procpid.h"
#include "sys/textfile.h"

int statefile_head(const char *magic, char *buf, size_t size)
{
	struct proc_pid_stat self = { .start = 0 };
	proc_pid_stat(getpid(), &self); /* start 0 when /proc cannot say: judged by name then */
	int n = snprintf(buf, size, "%s\npid %ld\npidns %lu\nstart %llu\n", magic, (long)getpid(),
			 pidns_self(), self.start);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int statefile_read_owner(FILE *in, const char *magic, struct statefile_owner *ret)
{
	struct statefile_owner o = { .start = 0 };
	char line[128];
	size_t len = strlen(magic);

	if (!fgets(line, sizeof(line), in) || strncmp(line, magic, len) != 0 ||
	    strcmp(line + len, "\n") != 0)
		return -EINVAL;
	if (!fgets(line, sizeof(line), in) || sscanf(line, "pid %ld", &o.pid) != 1 || o.pid <= 0)
		return -EINVAL;
	if (!fgets(line, sizeof(line), in) || sscanf(line, "pidns %lu", &o.pidns) != 1)
		return -EINVAL;
	long at = ftell(in);
	if (!fgets(line, sizeof(line), in) || sscanf(line, "start %llu", &o.start) != 1) {
		o.start = 0; /* written before it was kept */
		if (at < 0 || fseek(in, at, SEEK_SET) != 0)
			return -EINVAL;
	}
	*ret = o;
	return 0;
}

bool statefile_owner_alive(const struct statefile_owner *o, unsigned long self_ns)
{
	if (self_ns == PIDNS_UNKNOWN || o->pidns != self_ns)
		return true; /* not ours to judge */
	if (o->pid == (long)getpid()) {
		/* This process's own, or a killed one's whose pid this one got. */
		struct proc_pid_stat self;
		return o->start && proc_pid_stat(getpid(), &self) == 0 && self.start == o->start;
	}
	if (kill((pid_t)o->pid, 0) < 0 && errno == ESRCH)
		return false;
	/* The pid may since have gone to another process: the owner is the one
	 * that started when it did, whatever name it runs under (rtla, oslat). */
	if (o->start) {
		struct proc_pid_stat st;
		int r = proc_pid_stat(o->pid, &st);
		return r == -ENOENT ? false : r < 0 ? true : st.start == o->start;
	}
	/* A file of an older latscope: only a latscope (its copies too,
	 * "latscope-nobody") can hold the changes. */
	char path[64], comm[32];
	snprintf(path, sizeof(path), "/proc/%ld/comm", o->pid);
	if (textfile_read(path, comm, sizeof(comm)) < 0)
		return true; /* cannot tell: leave it alone */
	return strncmp(comm, "latscope", strlen("latscope")) == 0;
}

int statefile_each(const char *dir, const char *prefix,
		   int (*fn)(const char *path, FILE *in, void *data), void *data,
		   struct lat_error *err)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int r = 0;

	if (!d)
		return errno == ENOENT
			       ? 0
			       : err_set(err, -errno, "cannot open '%s': %s", dir, strerror(errno));
	while (r >= 0 && (e = readdir(d)) != NULL) {
		char path[768];
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		int n = snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		FILE *in = fopen(path, "re");
		if (!in)
			continue; /* gone meanwhile */
		r = fn(path, in, data);
		fclose(in);
	}
	closedir(d);
	return r;
}
