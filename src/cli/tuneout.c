/*
 * What latscope tune leaves behind when asked: --apply keeps the fixes judged
 * better until the next reboot (nothing persistent), --write-config writes
 * into DIR only what would make them persistent, each file commented with the
 * measured gain and the date: a sysctl.d file for /proc/sys settings, a
 * systemd oneshot unit for the other files (IRQ affinity, sysfs), and the
 * kernel command line for the boot-only fixes.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/tuneout.h"
#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "report/tprint.h"
#include "sys/atomicfile.h"
#include "sys/filehold.h"

void tune_cmdline(const struct tune_fix *f, const char *cpus, char *buf, size_t size)
{
	const char *c = f->cmdline ? f->cmdline : "", *at = strstr(c, "%s");
	if (at)
		snprintf(buf, size, "%.*s%s%s", (int)(at - c), c, cpus, at + 2);
	else
		snprintf(buf, size, "%s", c);
}

int tuneout_check_dir(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return storecmd_refuse("tune", "option '--write-config': '%s': %s", dir,
				       strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return storecmd_refuse("tune", "option '--write-config': '%s' is not a directory",
				       dir);
	if (access(dir, W_OK) < 0)
		return storecmd_refuse("tune", "option '--write-config': '%s' is not writable: %s",
				       dir, strerror(errno));
	return EXIT_OK;
}

/* "  echo OLD > /PATH" for each write h did, last first as a restore goes: malloc'd, or NULL. */
static char *undo_lines(const struct file_hold *h)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	if (!f)
		return NULL;
	for (size_t k = h->n; k-- > 0;)
		fprintf(f, "  echo %s > /%s\n", h->old[k].value, h->old[k].path);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

int tuneout_apply(const struct tune_where *w, struct tune_run *tr)
{
	int code = EXIT_OK;
	for (size_t i = 0; i < tr->n; i++) {
		struct tune_trial *t = &tr->t[i];
		struct file_hold h;
		struct lat_error err;
		if (t->verdict != TUNE_BETTER || t->fix->kind != TUNE_FILES)
			continue;
		file_hold_init(&h);
		if (file_hold_apply(w, t->fix->name, &t->plan, &h, &err) < 0) {
			tprintf(stderr, "latscope tune: --apply: %s: %s\n", t->fix->name, err.msg);
			code = EXIT_ERROR;
			continue;
		}
		t->undo = undo_lines(&h);
		t->kept = true;
		if (file_hold_keep(&h, &err) < 0) {
			tprintf(stderr,
				"latscope tune: --apply: %s: %s (the next latscope run puts it "
				"back)\n",
				t->fix->name, err.msg);
			code = EXIT_ERROR;
		}
	}
	return code;
}

/* "proc/sys/kernel/timer_migration" -> "kernel.timer_migration"; false for any other file. */
static bool sysctl_key(const char *path, char *buf, size_t size)
{
	if (strncmp(path, "proc/sys/", 9) != 0 || strlen(path + 9) >= size)
		return false;
	snprintf(buf, size, "%s", path + 9);
	for (char *p = buf; *p; p++)
		if (*p == '/')
			*p = '.';
	return true;
}

/* "p99 41.2us -> 30.1us" */
static void gain(const struct tune_trial *t, char *buf, size_t size)
{
	snprintf(buf, size,
		 "p99 %.1fus -> %.1fus, max %.1fus -> %.1fus (B against A, 95%% CI "
		 "%+.0f%%..%+.0f%%)",
		 t->p99[0] / 1e3, t->p99[1] / 1e3, t->max[0] / 1e3, t->max[1] / 1e3,
		 (t->v99.lo - 1.0) * 100.0, (t->v99.hi - 1.0) * 100.0);
}

struct config_files {
	FILE *f[3];
	struct atomic_file af[3];
	const char *name[3];
};

enum { CFG_SYSCTL, CFG_UNIT, CFG_CMDLINE };

static FILE *config_file(struct config_files *cf, int which, const char *dir, const char *date)
{
	static const char *const names[] = { "99-latscope-tune.conf", "latscope-tune.service",
					     "kernel-cmdline.txt" };
	/* one literal each: clang takes concatenated literals in an array for a missing comma */
	static const char sysctl_head[] =
		"# sysctl.d(5): copy to /etc/sysctl.d/ and run sysctl --system.\n";
	static const char unit_head[] =
		"# systemd.unit(5): copy to /etc/systemd/system/ and run systemctl enable "
		"latscope-tune.service.\n[Unit]\nDescription=latscope tune: the settings it "
		"measured better\nAfter=local-fs.target\n\n[Service]\nType=oneshot\n";
	static const char cmdline_head[] =
		"# Add these to the kernel command line (GRUB_CMDLINE_LINUX in "
		"/etc/default/grub, then update-grub).\n";
	static const char *const heads[] = { sysctl_head, unit_head, cmdline_head };
	if (cf->f[which])
		return cf->f[which];
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, names[which]);
	if (atomic_file_open(path, &cf->af[which]) < 0)
		return NULL;
	cf->f[which] = fdopen(dup(cf->af[which].fd), "w");
	if (cf->f[which])
		fprintf(cf->f[which], "# written by latscope tune on %s\n%s", date, heads[which]);
	cf->name[which] = names[which];
	return cf->f[which];
}

int tuneout_write_config(const struct tune_run *tr, const char *dir)
{
	struct config_files cf = { 0 };
	char date[32], line[512], cpus[128];
	time_t now = time(NULL);
	int code = EXIT_OK;

	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	cpuset_format(&tr->measured, cpus, sizeof(cpus));
	for (size_t i = 0; i < tr->n; i++) {
		const struct tune_trial *t = &tr->t[i];
		if (t->state == TRIAL_BOOT) {
			FILE *f = config_file(&cf, CFG_CMDLINE, dir, date);
			tune_cmdline(t->fix, cpus, line, sizeof(line));
			if (f)
				fprintf(f, "# %s: %s (not measured: only a reboot makes it)\n%s\n",
					t->fix->name, t->fix->about, line);
			continue;
		}
		if (t->verdict != TUNE_BETTER)
			continue;
		gain(t, line, sizeof(line));
		if (t->fix->kind != TUNE_FILES) {
			FILE *f = config_file(&cf, CFG_CMDLINE, dir, date);
			if (f)
				fprintf(f,
					"# %s measured better (%s): latscope holds it only while "
					"it measures; keep it "
					"with a process that holds it (tuned's latency-performance "
					"profile)\n",
					t->fix->name, line);
			continue;
		}
		for (size_t k = 0; k < t->plan.n; k++) {
			const struct tune_write *w = &t->plan.w[k];
			char key[192];
			bool sysctl = sysctl_key(w->path, key, sizeof(key));
			FILE *f = config_file(&cf, sysctl ? CFG_SYSCTL : CFG_UNIT, dir, date);
			if (!f)
				continue;
			if (k == 0)
				fprintf(f, "# %s: %s\n", t->fix->name, line);
			if (sysctl)
				fprintf(f, "%s = %s\n", key, w->value);
			else if (w->optional) /* "-": a refused write must not stop the rest */
				fprintf(f,
					"# may be refused (a managed interrupt)\n"
					"ExecStart=-/bin/sh -c 'echo %s > /%s'\n",
					w->value, w->path);
			else
				fprintf(f, "ExecStart=/bin/sh -c 'echo %s > /%s'\n", w->value, w->path);
		}
	}
	if (cf.f[CFG_UNIT])
		fprintf(cf.f[CFG_UNIT],
			"RemainAfterExit=yes\n\n[Install]\nWantedBy=multi-user.target\n");
	for (int k = 0; k < 3; k++) {
		if (!cf.name[k])
			continue;
		if (!cf.f[k] || fclose(cf.f[k]) != 0 || atomic_file_commit(&cf.af[k]) < 0) {
			tprintf(stderr, "latscope tune: --write-config: cannot write %s/%s\n", dir,
				cf.name[k]);
			code = EXIT_ERROR;
		} else {
			tprintf(stdout, "wrote %s/%s\n", dir, cf.name[k]);
		}
		atomic_file_close(&cf.af[k]);
	}
	return code;
}
