#include "sys/tunefix_boot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sys/textfile.h"

/*
 * A boot option that puts the measured CPUs in a set the kernel lists
 * (isolated, nohz_full): from the set as it is to the set with them.  Already
 * so when they are all in it; not here when no CPU would be left for the rest.
 */
static int plan_cpu_option(const struct tune_where *w, const struct cpuset *measured,
			   const char *option, const struct cpuset *now, struct tune_plan *ret,
			   struct lat_error *why)
{
	struct tune_plan p = { .n = 0 };
	struct cpuset rest, want = *now;
	char from[192], to[192], list[192];
	int r;

	cpuset_format(measured, list, sizeof(list));
	if (cpuset_count(measured) == 0)
		return err_set(why, -TUNE_NOT_HERE, "not here: no CPU measured");
	if (cpuset_subset(measured, now))
		return err_set(why, -TUNE_ALREADY, "already so: %s holds CPU %s", option, list);
	if ((r = tune_housekeeping(w, measured, &rest, why)) < 0)
		return r;
	cpuset_foreach (cpu, measured)
		cpuset_add(&want, (unsigned)cpu);
	cpuset_format(now, from, sizeof(from));
	cpuset_format(&want, to, sizeof(to));
	tune_plan_say(&p, from[0] ? from : "none", to);
	*ret = p;
	return 0;
}

/* The CPU set a kernel file lists; empty when it lists none ("" or "(null)"). */
static void read_cpus(const struct tune_where *w, const char *rel, struct cpuset *ret)
{
	char text[1024];
	cpuset_clear(ret);
	if (tune_read(w, rel, text, sizeof(text)) == 0 && cpuset_parse(text, ret) < 0)
		cpuset_clear(ret);
}

int tune_plan_isolcpus(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
		       struct tune_plan *ret, struct lat_error *why)
{
	struct cpuset now;
	(void)busy_poll;
	read_cpus(w, "sys/devices/system/cpu/isolated", &now);
	return plan_cpu_option(w, measured, "isolcpus", &now, ret, why);
}

int tune_plan_nohz_full(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
			struct tune_plan *ret, struct lat_error *why)
{
	struct cpuset now;
	(void)busy_poll;
	/* The file exists only in a kernel built with CONFIG_NO_HZ_FULL. */
	if (!tune_exists(w, "sys/devices/system/cpu/nohz_full"))
		return err_set(why, -TUNE_NOT_HERE,
			       "not here: a kernel without nohz_full (no "
			       "/sys/devices/system/cpu/nohz_full)");
	read_cpus(w, "sys/devices/system/cpu/nohz_full", &now);
	return plan_cpu_option(w, measured, "nohz_full", &now, ret, why);
}

/* The CPUs rcu_nocbs= names on the command line: all of them for the bare word or "all". */
static void cmdline_nocbs(const struct tune_where *w, struct cpuset *ret)
{
	char line[4096];
	cpuset_clear(ret);
	tune_read(w, "proc/cmdline", line, sizeof(line));
	for (char *save = NULL, *tok = strtok_r(line, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (strcmp(tok, "rcu_nocbs") == 0 || strcmp(tok, "rcu_nocbs=all") == 0) {
			for (unsigned c = 0; c < CPUSET_MAX; c++)
				cpuset_add(ret, c);
		} else if (strncmp(tok, "rcu_nocbs=", 10) == 0 && cpuset_parse(tok + 10, ret) < 0) {
			cpuset_clear(ret);
		}
	}
}

int tune_plan_rcu_nocbs(const struct tune_where *w, const struct cpuset *measured, bool busy_poll,
			struct tune_plan *ret, struct lat_error *why)
{
	struct cpuset now, full;
	(void)busy_poll;
	cmdline_nocbs(w, &now);
	read_cpus(w, "sys/devices/system/cpu/nohz_full", &full); /* nohz_full implies rcu_nocbs */
	cpuset_foreach (cpu, &full)
		cpuset_add(&now, (unsigned)cpu);
	return plan_cpu_option(w, measured, "rcu_nocbs", &now, ret, why);
}

int tune_plan_serial_console(const struct tune_where *w, const struct cpuset *measured,
			     bool busy_poll, struct tune_plan *ret, struct lat_error *why)
{
	struct tune_plan p = { .n = 0 };
	char text[2048], ttys[128] = "", from[192];
	(void)measured;
	(void)busy_poll;
	if (tune_read(w, "proc/consoles", text, sizeof(text)) < 0)
		return err_set(why, -TUNE_NOT_HERE,
			       "not here: the consoles cannot be read (no /proc/consoles)");
	/* Each line starts with the console's name: "ttyS0  -W- (EC p a)  4:64". */
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[32];
		if (sscanf(line, "%31s", name) == 1 && strncmp(name, "ttyS", 4) == 0)
			tune_text_add(ttys, sizeof(ttys), name);
	}
	if (!ttys[0])
		return err_set(why, -TUNE_NOT_HERE, "not here: no serial console");
	snprintf(from, sizeof(from), "console on %s", ttys);
	tune_plan_say(&p, from, "no serial console");
	*ret = p;
	return 0;
}
