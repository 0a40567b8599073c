#include "sys/tunefix_cpus.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/textfile.h"

#define CPU_DIR "sys/devices/system/cpu/"

static int no_memory(struct tune_plan *p, int r, struct lat_error *why)
{
	tune_plan_free(p);
	return err_set(why, r,
		       r == -ENOMEM ? "out of memory" : "a file name or value too long to keep");
}

/* Whether a and b share a CPU. */
static bool meets(const struct cpuset *a, const struct cpuset *b)
{
	struct cpuset outside;
	if (!b)
		return false;
	cpuset_diff(&outside, a, b);
	return cpuset_count(&outside) < cpuset_count(a);
}

/* ---- cpufreq-performance --------------------------------------------------- */

/* cpu's cpufreq file name, relative to the root. */
static const char *freq_file(unsigned cpu, const char *name, char buf[static 128])
{
	snprintf(buf, 128, CPU_DIR "cpu%u/cpufreq/%s", cpu, name);
	return buf;
}

/* What cpu needs to run at its highest clock from the first moment of a wakeup. */
struct freq_text {
	char govs[96], mins[96], maxes[96]; /* the distinct values seen, for from and to */
};

static int plan_cpu_freq(const struct tune_where *w, unsigned cpu, struct tune_plan *p,
			 struct freq_text *t)
{
	char rel[128], gov[64], avail[512], min[32], max[32], limit[32];
	int r;

	tune_read(w, freq_file(cpu, "scaling_governor", rel), gov, sizeof(gov));
	tune_read(w, freq_file(cpu, "scaling_available_governors", rel), avail, sizeof(avail));
	if (gov[0] && textfile_has_word(avail, "performance")) {
		tune_text_add(t->govs, sizeof(t->govs), gov);
		if (strcmp(gov, "performance") != 0 &&
		    (r = tune_plan_add(p, freq_file(cpu, "scaling_governor", rel), "performance",
				       false)) < 0)
			return r;
	}
	tune_read(w, freq_file(cpu, "scaling_min_freq", rel), min, sizeof(min));
	tune_read(w, freq_file(cpu, "cpuinfo_max_freq", rel), max, sizeof(max));
	/* The kernel refuses a minimum above the policy's maximum: a lowered
	 * scaling_max_freq is the highest that can be asked for. */
	if (tune_read(w, freq_file(cpu, "scaling_max_freq", rel), limit, sizeof(limit)) == 0 &&
	    max[0] && strtoull(limit, NULL, 10) < strtoull(max, NULL, 10))
		memcpy(max, limit, sizeof(max));
	if (min[0] && max[0]) {
		tune_text_add(t->mins, sizeof(t->mins), min);
		tune_text_add(t->maxes, sizeof(t->maxes), max);
		if (strcmp(min, max) != 0 &&
		    (r = tune_plan_add(p, freq_file(cpu, "scaling_min_freq", rel), max, false)) < 0)
			return r;
	}
	return 0;
}

int tune_plan_cpufreq(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
		      struct tune_plan *ret, struct lat_error *why)
{
	struct tune_plan p = { .n = 0 };
	struct freq_text t = { "", "", "" };
	char rel[128], from[320], to[320];
	unsigned with = 0;
	int r;

	(void)busy_poll;
	cpuset_foreach (cpu, measured) {
		if (!tune_exists(w, freq_file((unsigned)cpu, "", rel)))
			continue;
		with++;
		if ((r = plan_cpu_freq(w, (unsigned)cpu, &p, &t)) < 0)
			return no_memory(&p, r, why);
	}
	if (!with)
		return err_set(why, -TUNE_NOT_HERE,
			       "not here: no cpufreq (no /" CPU_DIR "cpu%d/cpufreq)",
			       cpuset_next(measured, 0) < 0 ? 0 : cpuset_next(measured, 0));
	if (!p.n)
		return err_set(
			why, -TUNE_ALREADY,
			"already so: the measured CPUs run performance at their highest minimum");
	snprintf(from, sizeof(from), "%s%smin %s kHz", t.govs, t.govs[0] ? ", " : "", t.mins);
	snprintf(to, sizeof(to), "%smin %s kHz", t.govs[0] ? "performance, " : "", t.maxes);
	tune_plan_say(&p, from, to);
	*ret = p;
	return 0;
}

/* ---- irq-affinity ---------------------------------------------------------- */

static int by_number(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* The IRQ numbers of proc/irq, sorted: their count, or -errno. */
static int irq_numbers(const struct tune_where *w, unsigned **ret)
{
	char dir[512];
	unsigned *irqs = NULL;
	size_t n = 0, room = 0;
	struct dirent *e;
	int r = tune_path(w, "proc/irq", dir, sizeof(dir));
	DIR *d = r < 0 ? NULL : opendir(dir);
	if (!d)
		return r < 0 ? r : -errno;
	while ((e = readdir(d)) != NULL) {
		char *end;
		unsigned long irq = strtoul(e->d_name, &end, 10);
		if (end == e->d_name || *end || irq > 0xffffffffUL)
			continue;
		if (n == room) {
			unsigned *more =
				realloc(irqs, (room = room ? 2 * room : 64) * sizeof(*irqs));
			if (!more) {
				free(irqs);
				closedir(d);
				return -ENOMEM;
			}
			irqs = more;
		}
		irqs[n++] = (unsigned)irq;
	}
	closedir(d);
	if (n)
		qsort(irqs, n, sizeof(*irqs), by_number);
	*ret = irqs;
	return (int)n;
}

int tune_plan_irq_affinity(const struct tune_where *w, const struct cpuset *measured,
			   bool busy_poll, struct tune_plan *ret, struct lat_error *why)
{
	struct tune_plan p = { .n = 0 };
	struct cpuset rest;
	char to[256], from[192] = "";
	unsigned *irqs = NULL;
	int r, n;

	(void)busy_poll;
	if ((r = tune_housekeeping(w, measured, &rest, why)) < 0)
		return r;
	if ((n = irq_numbers(w, &irqs)) < 0)
		return n == -ENOMEM ? err_set(why, n, "out of memory")
				    : err_set(why, -TUNE_NOT_HERE, "not here: no /proc/irq");
	if (cpuset_format(&rest, to, sizeof(to)) >= sizeof(to)) {
		free(irqs);
		return err_set(why, -ENAMETOOLONG,
			       "the CPUs left for the IRQs are too many to name");
	}
	for (int i = 0; i < n; i++) {
		char rel[64], list[1024];
		struct cpuset now;
		snprintf(rel, sizeof(rel), "proc/irq/%u/smp_affinity_list", irqs[i]);
		if (tune_read(w, rel, list, sizeof(list)) < 0 || cpuset_parse(list, &now) < 0)
			continue; /* IRQ 0 has none on some machines; one freed meanwhile */
		if (!meets(&now, measured))
			continue;
		tune_text_add(from, sizeof(from), list);
		/* A managed IRQ (one per queue of a device) refuses a new affinity with EIO. */
		if ((r = tune_plan_add(&p, rel, to, true)) < 0) {
			free(irqs);
			return no_memory(&p, r, why);
		}
	}
	free(irqs);
	if (!p.n) {
		char list[128];
		cpuset_format(measured, list, sizeof(list));
		return err_set(why, -TUNE_ALREADY, "already so: no IRQ may run on CPU %s", list);
	}
	tune_plan_say(&p, from, to);
	*ret = p;
	return 0;
}

/* ---- workqueue-cpumask, soft-watchdog ----------------------------------- */

/* Move what a CPU set file allows off the measured CPUs: the file's CPUs
 * become the housekeeping ones, in its own format (a mask or a list). */
static int plan_cpus_file(const struct tune_where *w, const struct cpuset *measured,
			  const char *rel, bool mask, struct tune_plan *ret, struct lat_error *why)
{
	struct tune_plan p = { .n = 0 };
	struct cpuset rest, now;
	char text[1200], to[1200];
	int r = tune_read(w, rel, text, sizeof(text));

	if (r == -ENOENT)
		return err_set(why, -TUNE_NOT_HERE, "not here: no /%s", rel);
	if (r < 0 || (mask ? tune_mask_parse(text, &now) : cpuset_parse(text, &now)) < 0)
		return err_set(why, r < 0 ? r : -EINVAL, "cannot read '/%s': %s", rel,
			       r < 0 ? strerror(-r) : "not a CPU set");
	if ((r = tune_housekeeping(w, measured, &rest, why)) < 0)
		return r;
	if (!meets(&now, measured))
		return err_set(why, -TUNE_ALREADY, "already so: /%s is %s, no measured CPU", rel,
			       text);
	size_t need = mask ? tune_mask_format(&rest, to, sizeof(to))
			   : cpuset_format(&rest, to, sizeof(to));
	if (need >= sizeof(to) || (r = tune_plan_add(&p, rel, to, false)) < 0)
		return no_memory(&p, r < 0 ? r : -ENAMETOOLONG, why);
	tune_plan_say(&p, text, to);
	*ret = p;
	return 0;
}

int tune_plan_workqueue(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
			struct tune_plan *ret, struct lat_error *why)
{
	(void)busy_poll;
	return plan_cpus_file(w, measured, "sys/devices/virtual/workqueue/cpumask", true, ret, why);
}

int tune_plan_soft_watchdog(const struct tune_where *w, const struct cpuset *measured,
			    bool busy_poll, struct tune_plan *ret, struct lat_error *why)
{
	char on[16];
	(void)busy_poll;
	if (tune_read(w, "proc/sys/kernel/watchdog", on, sizeof(on)) == 0 && strcmp(on, "0") == 0)
		return err_set(why, -TUNE_ALREADY, "already so: the lockup watchdogs are off");
	return plan_cpus_file(w, measured, "proc/sys/kernel/watchdog_cpumask", false, ret, why);
}
