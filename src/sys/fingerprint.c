#include "sys/fingerprint.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define FP_X86 1
#else
#define FP_X86 0
#endif

#include "core/array.h"
#include "core/parse.h"
#include "sys/procstat.h"
#include "sys/smi.h"
#include "sys/sysfacts.h"
#include "sys/textfile.h"
#include "sys/timerslop.h"

#define SYS_CPU "/sys/devices/system/cpu"
#define CLOCKSOURCE "/sys/devices/system/clocksource/clocksource0"

/* Where files are read from: the sysroot without its trailing slash ("" for "/"). */
struct root {
	char dir[PATH_MAX];
	bool live;
};

static void copy_str(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void trim(char *s)
{
	size_t start = 0, len = strlen(s);
	while (len > 0 && is_space(s[len - 1]))
		s[--len] = '\0';
	while (is_space(s[start]))
		start++;
	memmove(s, s + start, len - start + 1);
}

__attribute__((format(printf, 4, 0)))
static int vpathf(const struct root *r, char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t len = strlen(r->dir);
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(buf, r->dir, len);
	int n = vsnprintf(buf + len, size - len, fmt, ap);
	return n < 0 || (size_t)n >= size - len ? -ENAMETOOLONG : 0;
}

__attribute__((format(printf, 4, 5)))
static int pathf(const struct root *r, char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int ret = vpathf(r, buf, size, fmt, ap);
	va_end(ap);
	return ret;
}

/* A small file's text, cut to fit and trimmed at both ends; "" and -errno when unreadable. */
static int read_small(const char *path, char *buf, size_t size)
{
	int r = textfile_read(path, buf, size);
	trim(buf);
	return r;
}

__attribute__((format(printf, 4, 5)))
static int read_at(const struct root *r, char *buf, size_t size, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	buf[0] = '\0';
	va_start(ap, fmt);
	int ret = vpathf(r, path, sizeof(path), fmt, ap);
	va_end(ap);
	return ret < 0 ? ret : read_small(path, buf, size);
}

__attribute__((format(printf, 2, 3)))
static bool exists_at(const struct root *r, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	int ret = vpathf(r, path, sizeof(path), fmt, ap);
	va_end(ap);
	return ret == 0 && access(path, F_OK) == 0;
}

/* The leading integer of text ("4\t4\t1\t7" gives 4). */
static int leading_i64(const char *text, int64_t *ret)
{
	char num[24];
	size_t n = strspn(text, "-0123456789");
	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, text, n);
	num[n] = '\0';
	return parse_i64(num, ret);
}

static int64_t read_i64(const struct root *r, const char *path)
{
	char buf[32];
	int64_t v;
	if (read_at(r, buf, sizeof(buf), "%s", path) < 0 || parse_i64(buf, &v) < 0)
		return FP_UNKNOWN;
	return v;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* ---- Kernel command line ---- */

/* The parameters worth showing: the rest of the line is noise for latency. */
static const char *const param_names[] = {
	"isolcpus", "nohz_full", "nohz", "rcu_nocbs", "rcu_nocb_poll", "irqaffinity", "kthread_cpus",
	"idle", "intel_idle.max_cstate", "processor.max_cstate", "cpuidle.off", "cpuidle.governor",
	"intel_pstate", "amd_pstate", "mitigations", "nosmt", "skew_tick", "tsc", "clocksource",
	"console", "quiet", "loglevel", "preempt", "threadirqs", "transparent_hugepage",
	"nowatchdog", "nmi_watchdog", "nosoftlockup", "rcutree.kthread_prio", "numa_balancing",
	"hugepages", "audit", "xen_timer_slop",
};

/* Names equal as the kernel compares them: '-' and '_' alike. */
static bool param_eq(const char *a, size_t alen, const char *b)
{
	size_t i = 0;
	for (; i < alen && b[i] != '\0'; i++) {
		char x = a[i] == '-' ? '_' : a[i];
		char y = b[i] == '-' ? '_' : b[i];
		if (x != y)
			return false;
	}
	return i == alen && b[i] == '\0';
}

static void add_param(struct fingerprint *fp, const char *name, const char *value, size_t vlen)
{
	struct fp_param *p = NULL;

	for (size_t i = 0; i < fp->nparams; i++)
		if (strcmp(fp->params[i].name, name) == 0)
			p = &fp->params[i];
	if (!p) {
		if (fp->nparams == FP_PARAMS_MAX)
			return;
		p = &fp->params[fp->nparams++];
		copy_str(p->name, sizeof(p->name), name);
		p->value[0] = '\0';
	} else if (strlen(p->value) + 1 < sizeof(p->value)) {
		strcat(p->value, " ");          /* console=tty0 console=ttyS0 */
	}
	size_t len = strlen(p->value);
	if (vlen > sizeof(p->value) - 1 - len)
		vlen = sizeof(p->value) - 1 - len;
	memcpy(p->value + len, value, vlen);
	p->value[len + vlen] = '\0';
}

/*
 * Blank-separated words, where double quotes keep blanks in a value
 * (param="a b") and are dropped.  What follows "--" belongs to init.
 */
static void parse_cmdline(struct fingerprint *fp, char *line)
{
	char *p = line;

	for (;;) {
		while (is_space(*p))
			p++;
		if (*p == '\0')
			return;
		char *word = p, *out = p;
		bool quoted = false;
		for (; *p != '\0' && (quoted || !is_space(*p)); p++) {
			if (*p == '"')
				quoted = !quoted;
			else
				*out++ = *p;
		}
		if (*p != '\0')
			p++;
		*out = '\0';
		if (strcmp(word, "--") == 0)
			return;
		char *eq = strchr(word, '=');
		size_t nlen = eq ? (size_t)(eq - word) : strlen(word);
		for (size_t i = 0; i < ARRAY_SIZE(param_names); i++)
			if (param_eq(word, nlen, param_names[i])) {
				const char *v = eq ? eq + 1 : "";
				add_param(fp, param_names[i], v, strlen(v));
				break;
			}
	}
}

static void collect_cmdline(const struct root *r, struct fingerprint *fp)
{
	char line[8192];
	if (read_at(r, line, sizeof(line), "/proc/cmdline") < 0)
		return;
	fp->cmdline_known = true;
	parse_cmdline(fp, line);
}

/* ---- Kernel config ---- */

struct kconfig {
	bool known;
	int64_t hz;
	bool rt, dynamic, none, voluntary, full, lazy, nohz_full, nohz_idle, hz_periodic;
};

static void kconfig_line(struct kconfig *k, const char *line)
{
	static const struct {
		const char *name;
		size_t offset;
	} flags[] = {
		{ "PREEMPT_RT", offsetof(struct kconfig, rt) },
		{ "PREEMPT_DYNAMIC", offsetof(struct kconfig, dynamic) },
		{ "PREEMPT_NONE", offsetof(struct kconfig, none) },
		{ "PREEMPT_VOLUNTARY", offsetof(struct kconfig, voluntary) },
		{ "PREEMPT", offsetof(struct kconfig, full) },
		{ "PREEMPT_LAZY", offsetof(struct kconfig, lazy) },
		{ "NO_HZ_FULL", offsetof(struct kconfig, nohz_full) },
		{ "NO_HZ_IDLE", offsetof(struct kconfig, nohz_idle) },
		{ "HZ_PERIODIC", offsetof(struct kconfig, hz_periodic) },
	};

	if (strncmp(line, "CONFIG_", 7) != 0)
		return;         /* "# CONFIG_X is not set" says no, which is the default */
	const char *key = line + 7, *eq = strchr(key, '=');
	if (!eq)
		return;
	size_t klen = (size_t)(eq - key);
	char value[32];
	copy_str(value, sizeof(value), eq + 1);
	trim(value);
	if (klen == 2 && memcmp(key, "HZ", 2) == 0) {
		int64_t hz;
		if (parse_i64(value, &hz) == 0 && hz > 0)
			k->hz = hz;
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++)
		if (strlen(flags[i].name) == klen && memcmp(key, flags[i].name, klen) == 0)
			*(bool *)(void *)((char *)k + flags[i].offset) = strcmp(value, "y") == 0;
}

static void kconfig_read(struct kconfig *k, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;

	while (getline(&line, &cap, f) > 0)
		kconfig_line(k, line);
	free(line);
}

/*
 * /proc/config.gz through "gzip -dc": the config is the only thing here that
 * needs zlib, and gzip is everywhere a kernel with that file is.  0 when the
 * whole file was read; -errno otherwise (k may then hold part of it).
 */
static int kconfig_read_gz(struct kconfig *k, const char *path)
{
	char arg0[] = "gzip", arg1[] = "-dc", arg2[] = "--", file[PATH_MAX];
	char *argv[] = { arg0, arg1, arg2, file, NULL };
	posix_spawn_file_actions_t fa;
	int fds[2], status, r;
	pid_t pid = -1;

	copy_str(file, sizeof(file), path);
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	r = -posix_spawn_file_actions_init(&fa);
	if (r == 0) {
		r = -posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		if (r == 0)
			r = -posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
		if (r == 0)
			r = -posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		if (r == 0)
			r = -posix_spawnp(&pid, "gzip", &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	close(fds[1]);
	if (r < 0) {
		close(fds[0]);
		return r;
	}
	FILE *f = fdopen(fds[0], "r");
	if (f) {
		kconfig_read(k, f);     /* to the end, so gzip never meets a closed pipe */
		fclose(f);
	} else {
		close(fds[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return f && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static void collect_kconfig(const struct root *r, struct fingerprint *fp, struct kconfig *k)
{
	char path[PATH_MAX];

	memset(k, 0, sizeof(*k));
	k->hz = FP_UNKNOWN;
	if (fp->release[0] != '\0' && pathf(r, path, sizeof(path), "/boot/config-%s", fp->release) == 0) {
		FILE *f = fopen(path, "re");
		if (f) {
			kconfig_read(k, f);
			fclose(f);
			k->known = true;
			snprintf(fp->config_source, sizeof(fp->config_source), "/boot/config-%s", fp->release);
		}
	}
	if (!k->known && pathf(r, path, sizeof(path), "/proc/config.gz") == 0 && access(path, R_OK) == 0) {
		struct kconfig gz = { .hz = FP_UNKNOWN };
		if (kconfig_read_gz(&gz, path) == 0) {
			*k = gz;
			k->known = true;
			copy_str(fp->config_source, sizeof(fp->config_source), "/proc/config.gz");
		}
	}
	if (!k->known)
		return;
	fp->hz = k->hz;
	copy_str(fp->nohz, sizeof(fp->nohz), k->nohz_full ? "full" : k->nohz_idle ? "idle" :
		 k->hz_periodic ? "periodic" : "");
}

/* ---- Kernel and preemption ---- */

/*
 * The model from uname -v, which carries one flag (PREEMPT_RT wins over
 * PREEMPT_DYNAMIC when a kernel has both, hence /sys/kernel/realtime too).
 * uname -v is the running kernel's own word: the config (read only for the
 * whole fingerprint, and perhaps another build's of the same release) fills
 * in only what the version leaves open, so the identity part and the whole
 * fingerprint name the same model.
 */
static void collect_preempt(const struct root *r, struct fingerprint *fp, const struct kconfig *k)
{
	const char *v = fp->version;
	char flag[8], modes[128];
	bool version_known = v[0] != '\0';

	/* "PREEMPT RT" is how RT patches before 5.3 spelled it in uname -v. */
	bool rt = (read_at(r, flag, sizeof(flag), "/sys/kernel/realtime") == 0 && strcmp(flag, "1") == 0) ||
		  (version_known ? textfile_has_word(v, "PREEMPT_RT") || textfile_has_word(v, "PREEMPT RT") : k->rt);
	bool dynamic = version_known ? textfile_has_word(v, "PREEMPT_DYNAMIC") : k->dynamic;
	bool full = version_known ? textfile_has_word(v, "PREEMPT") : k->full;
	const char *model = "", *mode = "";     /* mode: what the model alone implies */

	if (rt) {
		model = "PREEMPT_RT";
		mode = "full";
	} else if (dynamic) {
		model = "PREEMPT_DYNAMIC";
	} else if (full) {
		model = "PREEMPT";
		mode = "full";
	} else if (k->known) {
		model = k->voluntary ? "voluntary" : k->lazy ? "lazy" : "none";
		mode = model;
	} else if (version_known) {
		model = "none";
		mode = "none or voluntary";     /* uname -v cannot tell them apart */
	}
	if (rt || dynamic) {
		const char *param = fingerprint_param(fp, "preempt");
		/* debugfs knows the mode in effect: "none voluntary (full) lazy";
		 * it needs root and a mount. */
		if (read_at(r, modes, sizeof(modes), "/sys/kernel/debug/sched/preempt") == 0 &&
		    textfile_choice(modes, '(', ')', fp->preempt_mode, sizeof(fp->preempt_mode)) == 0) {
			fp->preempt_mode_source = "debugfs";
		} else if (dynamic && param && param[0] != '\0') {
			copy_str(fp->preempt_mode, sizeof(fp->preempt_mode), param);
			fp->preempt_mode_source = "cmdline";
		} else if (dynamic && k->known && !rt) {
			/* The build's choice is the boot default of a dynamic kernel. */
			copy_str(fp->preempt_mode, sizeof(fp->preempt_mode), k->full ? "full" : k->voluntary ? "voluntary" :
				 k->lazy ? "lazy" : "none");
			fp->preempt_mode_source = "config";
		} else if (rt) {
			copy_str(fp->preempt_mode, sizeof(fp->preempt_mode), mode);
			fp->preempt_mode_source = "model";
		}
	} else if (mode[0] != '\0') {
		copy_str(fp->preempt_mode, sizeof(fp->preempt_mode), mode);
		fp->preempt_mode_source = "model";
	}
	copy_str(fp->preempt, sizeof(fp->preempt), model);
}

static void collect_mitigations(const struct root *r, struct fingerprint *fp)
{
	char path[PATH_MAX], status[256];
	char names[32][48];
	size_t n = 0;

	if (pathf(r, path, sizeof(path), SYS_CPU "/vulnerabilities") < 0)
		return;
	DIR *d = opendir(path);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (e->d_name[0] == '.' || n == ARRAY_SIZE(names))
			continue;
		if (read_at(r, status, sizeof(status), SYS_CPU "/vulnerabilities/%s", e->d_name) == 0 &&
		    strncmp(status, "Mitigation", 10) == 0)
			copy_str(names[n++], sizeof(names[0]), e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_name);
	fp->mitigations_known = true;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(fp->mitigated);
		snprintf(fp->mitigated + len, sizeof(fp->mitigated) - len, "%s%s", i ? ", " : "", names[i]);
	}
}

/* ---- CPU identity and hypervisor ---- */

struct cpuinfo {
	bool flags_known;
	bool hypervisor_flag;
};

/*
 * The first CPU's block of /proc/cpuinfo: its model and (x86) flags.  Read
 * on past it only while no model is known: old arm32 kernels name the core
 * after the last CPU.  Boards without either name themselves in the device tree.
 */
static void collect_cpuinfo(const struct root *r, struct fingerprint *fp, struct cpuinfo *ci)
{
	char path[PATH_MAX], implementer[16] = "", part[16] = "";
	char *line = NULL;
	size_t cap = 0;
	bool seen = false;

	memset(ci, 0, sizeof(*ci));
	if (pathf(r, path, sizeof(path), "/proc/cpuinfo") < 0)
		return;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');
		if (!colon) {
			if (seen && (fp->cpu_model[0] != '\0' || implementer[0] != '\0'))
				break;  /* the blank line after the first CPU */
			continue;
		}
		seen = true;
		*colon = '\0';
		char *key = line, *value = colon + 1;
		trim(key);
		trim(value);
		if (strcmp(key, "model name") == 0 && fp->cpu_model[0] == '\0')
			copy_str(fp->cpu_model, sizeof(fp->cpu_model), value);
		else if (strcmp(key, "CPU implementer") == 0)
			copy_str(implementer, sizeof(implementer), value);
		else if (strcmp(key, "CPU part") == 0)
			copy_str(part, sizeof(part), value);
		else if (strcmp(key, "flags") == 0 && !ci->flags_known) {
			ci->flags_known = true;
			ci->hypervisor_flag = textfile_has_word(value, "hypervisor");
			fp->cpu_flags_known = true;
			fp->constant_tsc = textfile_has_word(value, "constant_tsc");
			fp->nonstop_tsc = textfile_has_word(value, "nonstop_tsc");
			fp->tsc_reliable = textfile_has_word(value, "tsc_reliable");
			fp->tsc_known_freq = textfile_has_word(value, "tsc_known_freq");
		}
	}
	free(line);
	fclose(f);
	if (fp->cpu_model[0] == '\0' && implementer[0] != '\0')
		snprintf(fp->cpu_model, sizeof(fp->cpu_model), "implementer %s part %s", implementer, part);
	if (fp->cpu_model[0] == '\0')      /* the board, not the core, but better than nothing */
		read_at(r, fp->cpu_model, sizeof(fp->cpu_model), "/proc/device-tree/model");
}

#if FP_X86
static const struct {
	char signature[13];
	const char *name;
} hypervisors[] = {
	{ "KVMKVMKVM\0\0\0", "KVM" },
	{ "XenVMMXenVMM", "Xen" },
	{ "Microsoft Hv", "Hyper-V" },
	{ "VMwareVMware", "VMware" },
	{ "TCGTCGTCGTCG", "QEMU-TCG" },
	{ "ACRNACRNACRN", "ACRN" },
	{ "bhyve bhyve ", "bhyve" },
	{ " lrpepyh  vr", "Parallels" },
	{ "VBoxVBoxVBox", "VirtualBox" },
};

/* The hypervisor CPUID names, into buf; "" when CPUID says there is none. */
static void hypervisor_cpuid(char *buf, size_t size)
{
	unsigned eax, ebx, ecx, edx;
	char sig[12];
	size_t len = 0;

	buf[0] = '\0';
	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 31)))
		return;
	/* Not __get_cpuid: it checks the leaf against the basic range, which the
	 * hypervisor range 0x40000000 is outside of.  Bit 31 promises the leaf. */
	__cpuid(0x40000000, eax, ebx, ecx, edx);
	memcpy(sig, &ebx, 4);
	memcpy(sig + 4, &ecx, 4);
	memcpy(sig + 8, &edx, 4);
	for (size_t i = 0; i < ARRAY_SIZE(hypervisors); i++)
		if (memcmp(sig, hypervisors[i].signature, sizeof(sig)) == 0) {
			copy_str(buf, size, hypervisors[i].name);
			return;
		}
	/* Unknown: the signature itself still tells a reader which one it was. */
	for (size_t i = 0; i < sizeof(sig) && len + 1 < size; i++)
		if (isprint((unsigned char)sig[i]) && !(len == 0 && sig[i] == ' '))
			buf[len++] = sig[i];
	buf[len] = '\0';
	trim(buf);
}
#endif

static void set_hypervisor(struct fingerprint *fp, const char *name, const char *source)
{
	/* One spelling whatever told us, so that runs compare equal. */
	if (strcmp(name, "xen") == 0 || strncmp(name, "xen,", 4) == 0)
		name = "Xen";
	copy_str(fp->hypervisor, sizeof(fp->hypervisor), name);
	fp->guest = FP_TRI_YES;
	fp->hypervisor_source = source;
}

static void collect_hypervisor(const struct root *r, const struct fingerprint_opts *o, const struct cpuinfo *ci,
			       struct fingerprint *fp)
{
	char buf[64];

	if (o->hypervisor) {
		copy_str(fp->hypervisor, sizeof(fp->hypervisor), o->hypervisor);
		fp->guest = o->hypervisor[0] ? FP_TRI_YES : FP_TRI_NO;
		fp->hypervisor_source = "given";
		return;
	}
#if FP_X86
	/* CPUID describes the CPU we run on, so only for this machine. */
	if (r->live) {
		hypervisor_cpuid(buf, sizeof(buf));
		if (buf[0] != '\0') {
			set_hypervisor(fp, buf, "cpuid/firmware");
			return;
		}
	}
#endif
	/* Xen PV guests and non-x86 guests announce themselves through firmware and sysfs. */
	if (read_at(r, buf, sizeof(buf), "/sys/hypervisor/type") == 0 && buf[0] != '\0') {
		set_hypervisor(fp, buf, r->live ? "cpuid/firmware" : "sysfs");
		return;
	}
	if (read_at(r, buf, sizeof(buf), "/proc/device-tree/hypervisor/compatible") == 0 && buf[0] != '\0') {
		set_hypervisor(fp, buf, r->live ? "cpuid/firmware" : "device tree");
		return;
	}
	if (ci->hypervisor_flag) {
		fp->guest = FP_TRI_YES;
		fp->hypervisor_source = "cpuinfo flag";
	} else if (ci->flags_known) {
		fp->guest = FP_TRI_NO;     /* x86 guests set the flag; other CPUs have no such flag */
	}
}

/* ---- CPUs, idle and frequency ---- */

static void collect_cpu(const struct root *r, unsigned cpu, struct fp_cpu *c)
{
	char buf[32];
	int ret;

	c->cpu = cpu;
	read_at(r, c->siblings, sizeof(c->siblings), SYS_CPU "/cpu%u/topology/thread_siblings_list", cpu);
	ret = read_at(r, c->governor, sizeof(c->governor), SYS_CPU "/cpu%u/cpufreq/scaling_governor", cpu);
	/* Many guests have no cpufreq at all: that is "none", not unknown. */
	if (ret == -ENOENT && exists_at(r, SYS_CPU "/cpu%u", cpu) && !exists_at(r, SYS_CPU "/cpu%u/cpufreq", cpu))
		copy_str(c->governor, sizeof(c->governor), "none");
	for (unsigned k = 0; k < FP_IDLE_STATES_MAX; k++) {
		struct fp_idle_state *s = &c->idle[c->nidle];
		if (read_at(r, s->name, sizeof(s->name), SYS_CPU "/cpu%u/cpuidle/state%u/name", cpu, k) < 0)
			break;
		s->latency_us = FP_UNKNOWN;
		s->disabled = FP_TRI_UNKNOWN;
		int64_t v;
		if (read_at(r, buf, sizeof(buf), SYS_CPU "/cpu%u/cpuidle/state%u/latency", cpu, k) == 0 &&
		    parse_i64(buf, &v) == 0)
			s->latency_us = v;
		if (read_at(r, buf, sizeof(buf), SYS_CPU "/cpu%u/cpuidle/state%u/disable", cpu, k) == 0 &&
		    parse_i64(buf, &v) == 0)
			s->disabled = v ? FP_TRI_YES : FP_TRI_NO;
		c->nidle++;
	}
}

static void collect_online(const struct root *r, struct fingerprint *fp)
{
	char buf[4096];
	struct cpuset set;

	if (read_at(r, buf, sizeof(buf), SYS_CPU "/online") == 0 && cpuset_parse(buf, &set) == 0) {
		fp->online_known = true;
		fp->online = set;
	}
}

static int collect_cpus(const struct root *r, struct fingerprint *fp)
{
	char buf[4096];
	struct cpuset set;

	if (fp->online_known) {
		fp->cpus = calloc(cpuset_count(&fp->online) + 1u, sizeof(*fp->cpus));
		if (!fp->cpus)
			return -ENOMEM;
		cpuset_foreach(cpu, &fp->online)
			collect_cpu(r, (unsigned)cpu, &fp->cpus[fp->ncpus++]);
	}
	read_at(r, fp->smt_control, sizeof(fp->smt_control), SYS_CPU "/smt/control");
	int64_t active = read_i64(r, SYS_CPU "/smt/active");
	fp->smt_active = active == FP_UNKNOWN ? FP_TRI_UNKNOWN : active ? FP_TRI_YES : FP_TRI_NO;
	if (read_at(r, buf, sizeof(buf), "/sys/devices/system/node/online") == 0 && cpuset_parse(buf, &set) == 0)
		fp->numa_nodes = cpuset_count(&set);
	read_at(r, fp->cpuidle_driver, sizeof(fp->cpuidle_driver), SYS_CPU "/cpuidle/current_driver");
	if (read_at(r, fp->cpuidle_governor, sizeof(fp->cpuidle_governor), SYS_CPU "/cpuidle/current_governor_ro") < 0)
		read_at(r, fp->cpuidle_governor, sizeof(fp->cpuidle_governor), SYS_CPU "/cpuidle/current_governor");
	return 0;
}

/* ---- Isolation ---- */

/* A CPU list where "" (as sysfs writes an empty set) is the empty set. */
static int parse_list(const char *text, struct cpuset *ret)
{
	if (text[0] == '\0') {
		cpuset_clear(ret);
		return 0;
	}
	return cpuset_parse(text, ret);
}

/* "nohz,domain,managed_irq,2-3" without its flags: "2-3". */
static int isolcpus_list(const char *value, struct cpuset *ret)
{
	char list[256] = "";
	const char *p = value;

	while (*p != '\0') {
		size_t n = strcspn(p, ",");
		if (p[0] >= '0' && p[0] <= '9') {
			size_t len = strlen(list);
			if (len + n + 2 > sizeof(list))
				return -E2BIG;
			if (len > 0)
				list[len++] = ',';
			memcpy(list + len, p, n);
			list[len + n] = '\0';
		}
		p += n + (p[n] == ',');
	}
	return parse_list(list, ret);
}

/*
 * sysfs says what the running kernel made of the command line: "isolated"
 * always exists, "nohz_full" only with CONFIG_NO_HZ_FULL ("(null)" when none).
 */
static void collect_isolation(const struct root *r, struct fingerprint *fp)
{
	char buf[4096];
	const char *param;

	if (read_at(r, buf, sizeof(buf), SYS_CPU "/isolated") == 0)
		fp->isolated_known = parse_list(buf, &fp->isolated) == 0;
	else if ((param = fingerprint_param(fp, "isolcpus")) != NULL)
		fp->isolated_known = isolcpus_list(param, &fp->isolated) == 0;
	else
		fp->isolated_known = fp->cmdline_known;

	if (read_at(r, buf, sizeof(buf), SYS_CPU "/nohz_full") == 0)
		fp->nohz_full_known = strcmp(buf, "(null)") == 0 || parse_list(buf, &fp->nohz_full) == 0;
	else if ((param = fingerprint_param(fp, "nohz_full")) != NULL && strcmp(fp->nohz, "idle") != 0 &&
		 strcmp(fp->nohz, "periodic") != 0)
		fp->nohz_full_known = cpuset_parse(param, &fp->nohz_full) == 0;
	else
		fp->nohz_full_known = fp->cmdline_known || fp->nohz[0] != '\0';
}

/* ---- Interrupts ---- */

static int collect_irqs(const struct root *r, struct fingerprint *fp)
{
	char path[PATH_MAX];
	struct proc_table t;
	struct cpuset none;
	int ret;

	cpuset_clear(&none);
	if (pathf(r, path, sizeof(path), "/proc/interrupts") < 0 || proc_table_init(&t, &none) < 0)
		return 0;
	ret = proc_read_interrupts(&t, path);
	if (ret == 0 && t.nsrc > 0 && !(fp->irqs = calloc(t.nsrc, sizeof(*fp->irqs))))
		ret = -ENOMEM;
	for (size_t s = 0; ret == 0 && s < t.nsrc; s++) {
		const char *name = t.names[s];
		uint64_t irq;
		size_t digits = strspn(name, "0123456789");
		char num[24];
		if (digits == 0 || digits >= sizeof(num) || (name[digits] != '\0' && name[digits] != ' '))
			continue;       /* LOC, NMI, IPI0: not devices */
		memcpy(num, name, digits);
		num[digits] = '\0';
		if (parse_u64(num, &irq) < 0 || irq > UINT_MAX)
			continue;
		struct fp_irq *q = &fp->irqs[fp->nirqs++];
		q->irq = (unsigned)irq;
		copy_str(q->name, sizeof(q->name), name + digits + (name[digits] == ' '));
		read_at(r, q->affinity, sizeof(q->affinity), "/proc/irq/%u/smp_affinity_list", q->irq);
		read_at(r, q->effective, sizeof(q->effective), "/proc/irq/%u/effective_affinity_list", q->irq);
	}
	fp->irqs_known = ret == 0;
	proc_table_free(&t);
	return ret == -ENOMEM ? ret : 0;
}

/* ---- Console ---- */

static bool serial_console(const char *name)
{
	static const char *const prefixes[] = { "ttyS", "ttyAMA", "hvc", "ttyPS", "ttymxc", "ttySC", "ttyMSM",
						"ttyLP", "ttyO", "ttyAML", "ttyTHS", "ttyUSB", "ttysclp" };
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* "ttyS0                -W- (EC  p a)    4:64" */
static void collect_consoles(const struct root *r, struct fingerprint *fp)
{
	char path[PATH_MAX];
	char *line = NULL;
	size_t cap = 0;

	if (pathf(r, path, sizeof(path), "/proc/consoles") < 0)
		return;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	fp->consoles_known = true;
	while (getline(&line, &cap, f) > 0 && fp->nconsoles < FP_CONSOLES_MAX) {
		struct fp_console *c = &fp->consoles[fp->nconsoles];
		size_t n = strcspn(line, " \t\n");
		if (n == 0)
			continue;
		line[n] = '\0';
		copy_str(c->name, sizeof(c->name), line);
		const char *open_p = strchr(line + n + 1, '(');
		const char *close_p = open_p ? strchr(open_p, ')') : NULL;
		size_t len = 0;
		for (const char *p = open_p ? open_p + 1 : close_p; p && p < close_p; p++)
			if (!is_space(*p) && len + 1 < sizeof(c->flags))
				c->flags[len++] = *p;
		c->flags[len] = '\0';
		c->enabled = strchr(c->flags, 'E') != NULL;
		c->serial = serial_console(c->name);
		fp->nconsoles++;
	}
	free(line);
	fclose(f);
}

/* ---- Scheduling ---- */

static void add_sysctl(const struct root *r, struct fingerprint *fp, const char *dotted)
{
	char rel[128], value[64];

	if (fp->nsysctls == FP_SYSCTLS_MAX)
		return;
	snprintf(rel, sizeof(rel), "/proc/sys/%s", dotted);
	for (char *p = rel + 10; *p; p++)
		if (*p == '.')
			*p = '/';
	if (read_at(r, value, sizeof(value), "%s", rel) < 0)
		return;
	for (char *p = value; *p; p++)
		if (*p == '\t')
			*p = ' ';       /* kernel.printk: "4\t4\t1\t7" */
	struct fp_sysctl *s = &fp->sysctls[fp->nsysctls++];
	copy_str(s->name, sizeof(s->name), dotted);
	copy_str(s->value, sizeof(s->value), value);
}

/* The kernel.sched_* knobs there are (they vary by version), then a few others that matter. */
static void collect_sysctls(const struct root *r, struct fingerprint *fp)
{
	static const char *const others[] = {
		"kernel.nmi_watchdog", "kernel.watchdog", "kernel.watchdog_thresh", "kernel.numa_balancing",
		"kernel.timer_migration", "kernel.printk", "vm.stat_interval",
	};
	char path[PATH_MAX], names[24][64];
	size_t n = 0;

	if (pathf(r, path, sizeof(path), "/proc/sys/kernel") == 0) {
		DIR *d = opendir(path);
		for (struct dirent *e; d && (e = readdir(d)) != NULL;)
			if (strncmp(e->d_name, "sched_", 6) == 0 && n < ARRAY_SIZE(names))
				snprintf(names[n++], sizeof(names[0]), "kernel.%.50s", e->d_name);
		if (d)
			closedir(d);
	}
	qsort(names, n, sizeof(names[0]), cmp_name);
	for (size_t i = 0; i < n; i++)
		add_sysctl(r, fp, names[i]);
	for (size_t i = 0; i < ARRAY_SIZE(others); i++)
		add_sysctl(r, fp, others[i]);
}

static void collect_steal(const struct root *r, struct fingerprint *fp)
{
	char path[PATH_MAX];
	struct proc_table t;
	struct proc_stat m;
	struct cpuset none;

	cpuset_clear(&none);
	if (pathf(r, path, sizeof(path), "/proc/stat") < 0 || proc_table_init(&t, &none) < 0)
		return;
	if (proc_read_stat(&t, NULL, &m, path) == 0) {
		uint64_t total = 0;
		for (int k = 0; k < CPU_TIME_KINDS; k++)
			total += m.cpu.ns[k];
		fp->steal_ns = (int64_t)(m.cpu.ns[CPU_STEAL] & INT64_MAX);
		fp->cpu_ns = (int64_t)(total & INT64_MAX);
	}
	proc_table_free(&t);
}

static void collect_smis(const struct root *r, struct fingerprint *fp)
{
	struct smi_counter *c;
	struct cpuset first;
	uint64_t n;
	int cpu = cpuset_next(&fp->online, 0);

	if (cpu < 0)
		return;
	cpuset_clear(&first);
	cpuset_add(&first, (unsigned)cpu);
	if (smi_open(&c, &first, &(struct smi_env){ .sysroot = r->dir }, NULL) == 0) {
		fp->smi_source = smi_source_name(smi_counter_source(c));
		smi_close(c);
	}
	if (smi_msr_since_reset(r->dir, cpu, &n) == 0)
		fp->smis = (int64_t)n;
}

static void collect_timer_slack(const struct root *r, const struct fingerprint_opts *o, struct fingerprint *fp)
{
	if (o->timer_slack_ns) {
		fp->timer_slack_ns = (int64_t)(o->timer_slack_ns & INT64_MAX);
	} else if (r->live) {
		int slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
		fp->timer_slack_ns = slack >= 0 ? slack : FP_UNKNOWN;
	} else {
		fp->timer_slack_ns = read_i64(r, "/proc/self/timerslack_ns");
	}
}

/*
 * Xen's timer slop: what /proc/timer_list shows in effect (root only), else
 * xen_timer_slop= on the command line (memparse: "100000", "100k").  Other
 * hypervisors do not show theirs to the guest.
 */
static void collect_timer_slop(const struct root *r, struct fingerprint *fp)
{
	char path[PATH_MAX];
	uint64_t ns;

	if (strcmp(fp->hypervisor, "Xen") != 0)
		return;
	if (pathf(r, path, sizeof(path), "/proc/timer_list") == 0) {
		FILE *f = fopen(path, "re");
		int rc = f ? timer_list_min_delta(f, "xen", &ns) : -errno;
		bool read = f != NULL;
		if (f)
			fclose(f);
		if (rc == 0 && ns <= INT64_MAX) {
			fp->timer_slop_ns = (int64_t)ns;
			fp->timer_slop_source = "/proc/timer_list";
			return;
		}
		if (read && rc == -ENOENT) {
			/* Read, and no xen device: the guest's timer (lapic on HVM) has no such slop,
			 * whatever the command line asks of a device not in use. */
			fp->timer_slop_ns = 0;
			fp->timer_slop_source = "/proc/timer_list";
			return;
		}
	}
	const char *v = fingerprint_param(fp, "xen_timer_slop");
	if (v && parse_size(v, &ns) == 0 && ns <= INT64_MAX) {
		fp->timer_slop_ns = (int64_t)ns;
		fp->timer_slop_source = "cmdline";
	}
}

/* On this machine uname(), which a 32-bit personality answers as it asked;
 * in another tree the files that hold the same names. */
static void collect_kernel(const struct root *r, struct fingerprint *fp)
{
	struct utsname u;

	if (r->live && uname(&u) == 0) {
		copy_str(fp->hostname, sizeof(fp->hostname), u.nodename);
		copy_str(fp->release, sizeof(fp->release), u.release);
		copy_str(fp->version, sizeof(fp->version), u.version);
		copy_str(fp->arch, sizeof(fp->arch), u.machine);
		return;
	}
	read_at(r, fp->hostname, sizeof(fp->hostname), "/proc/sys/kernel/hostname");
	read_at(r, fp->release, sizeof(fp->release), "/proc/sys/kernel/osrelease");
	read_at(r, fp->version, sizeof(fp->version), "/proc/sys/kernel/version");
	read_at(r, fp->arch, sizeof(fp->arch), "/proc/sys/kernel/arch");
}

/* "[madvise]" of a sysfs file under the root; "" when unreadable or unmarked. */
static void read_choice(const struct root *r, const char *path, char *buf, size_t size)
{
	char text[128];
	if (read_at(r, text, sizeof(text), "%s", path) < 0 || textfile_choice(text, '[', ']', buf, size) < 0)
		buf[0] = '\0';
}

static int root_init(const char *sysroot, struct root *r)
{
	struct stat st;
	size_t len;

	if (!sysroot || sysroot[0] == '\0')
		sysroot = "/";
	len = strlen(sysroot);
	while (len > 1 && sysroot[len - 1] == '/')
		len--;
	if (len >= sizeof(r->dir) - 256)
		return -ENAMETOOLONG;   /* room for the longest path read under it */
	if (stat(sysroot, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	memcpy(r->dir, sysroot, len);
	r->dir[len] = '\0';
	char *real = realpath(r->dir, NULL);
	r->live = real && strcmp(real, "/") == 0;
	free(real);
	if (strcmp(r->dir, "/") == 0 || r->live)
		r->dir[0] = '\0';
	return 0;
}

int fingerprint_collect(const struct fingerprint_opts *opts, struct fingerprint **ret)
{
	static const struct fingerprint_opts defaults;
	struct root *r = calloc(1, sizeof(*r));
	struct fingerprint *fp = calloc(1, sizeof(*fp));
	struct kconfig k;
	struct cpuinfo ci;
	int ret_code;

	if (!opts)
		opts = &defaults;
	if (!r || !fp) {
		ret_code = -ENOMEM;
		goto fail;
	}
	if ((ret_code = root_init(opts->sysroot, r)) < 0)
		goto fail;
	fp->guest = FP_TRI_UNKNOWN;
	fp->hypervisor_source = "";
	fp->preempt_mode_source = "";
	fp->timer_slop_source = "";
	fp->hz = fp->timer_slop_ns = fp->timer_slack_ns = fp->numa_nodes = fp->steal_ns = fp->cpu_ns = FP_UNKNOWN;
	fp->smis = FP_UNKNOWN;
	fp->smi_source = "";

	/* The identity part first: all that sysdesc shows, and nothing else. */
	memset(&k, 0, sizeof(k));
	k.hz = FP_UNKNOWN;
	collect_kernel(r, fp);
	if (!opts->identity_only) {
		collect_cmdline(r, fp);
		collect_kconfig(r, fp, &k);
	}
	collect_preempt(r, fp, &k);
	collect_cpuinfo(r, fp, &ci);
	collect_hypervisor(r, opts, &ci, fp);
	read_at(r, fp->clocksource, sizeof(fp->clocksource), CLOCKSOURCE "/current_clocksource");
	read_at(r, fp->clocksources, sizeof(fp->clocksources), CLOCKSOURCE "/available_clocksource");
	collect_online(r, fp);
	if (opts->identity_only)
		goto done;

	collect_mitigations(r, fp);
	collect_timer_slack(r, opts, fp);
	collect_timer_slop(r, fp);
	if ((ret_code = collect_cpus(r, fp)) < 0)
		goto fail;
	collect_isolation(r, fp);
	if ((ret_code = collect_irqs(r, fp)) < 0)
		goto fail;

	sys_thp_mode(r->dir, fp->thp_enabled, sizeof(fp->thp_enabled));
	read_choice(r, "/sys/kernel/mm/transparent_hugepage/defrag", fp->thp_defrag, sizeof(fp->thp_defrag));
	collect_consoles(r, fp);
	collect_sysctls(r, fp);
	collect_steal(r, fp);
	collect_smis(r, fp);
done:
	free(r);
	*ret = fp;
	return 0;
fail:
	free(r);
	fingerprint_free(fp);
	return ret_code;
}

void fingerprint_free(struct fingerprint *fp)
{
	if (!fp)
		return;
	free(fp->cpus);
	free(fp->irqs);
	free(fp);
}

const char *fingerprint_param(const struct fingerprint *fp, const char *name)
{
	for (size_t i = 0; i < fp->nparams; i++)
		if (param_eq(name, strlen(name), fp->params[i].name))
			return fp->params[i].value;
	return NULL;
}

const char *fingerprint_sysctl(const struct fingerprint *fp, const char *name)
{
	for (size_t i = 0; i < fp->nsysctls; i++)
		if (strcmp(fp->sysctls[i].name, name) == 0)
			return fp->sysctls[i].value;
	return NULL;
}

int fingerprint_sysctl_i64(const struct fingerprint *fp, const char *name, int64_t *ret)
{
	const char *v = fingerprint_sysctl(fp, name);
	return v ? leading_i64(v, ret) : -ENOENT;
}

bool fingerprint_is_x86(const struct fingerprint *fp)
{
	return strcmp(fp->arch, "x86_64") == 0 || (fp->arch[0] == 'i' && strcmp(fp->arch + 2, "86") == 0);
}
