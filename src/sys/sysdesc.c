#include "sys/sysdesc.h"

#include "core/cpuset.h"
#include "sys/cpus.h"
#include "sys/textfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define SYSDESC_X86 1
#else
#define SYSDESC_X86 0
#endif

#define CLOCKSOURCE_DIR "/sys/devices/system/clocksource/clocksource0/"

/* Copy src into dst[size], cutting it short rather than overflowing. */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/*
 * The first value of key in /proc/cpuinfo ("model name\t: X" gives "X").  Read
 * line by line: on a large machine the file runs to hundreds of kilobytes and the
 * first CPU's block is all we need.  -ENOENT when no line has the key.
 */
static int cpuinfo_field(const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);
	char *line = NULL;
	size_t cap = 0;
	int r = -ENOENT;

	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, key, klen) != 0)
			continue;
		const char *p = line + klen;
		p += strspn(p, " \t");
		if (*p != ':')          /* a longer key with the same prefix */
			continue;
		p++;
		p += strspn(p, " \t");
		copy_str(buf, size, p);
		textfile_trim_end(buf);
		r = 0;
		break;
	}
	free(line);
	fclose(f);
	return r;
}

/* Whether word (which may contain spaces) appears in s delimited by spaces or the ends. */
static bool has_word(const char *s, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = s; (p = strstr(p, word)) != NULL; p += n) {
		bool starts = p == s || p[-1] == ' ';
		bool ends = p[n] == '\0' || p[n] == ' ';
		if (starts && ends)
			return true;
	}
	return false;
}

/* "none voluntary (full) lazy": the active mode is the one in parentheses. */
static int active_mode(const char *modes, char *buf, size_t size)
{
	const char *open_paren = strchr(modes, '(');
	const char *close_paren = open_paren ? strchr(open_paren, ')') : NULL;
	if (!close_paren)
		return -EINVAL;
	size_t len = (size_t)(close_paren - open_paren - 1);
	if (len >= size)
		return -ERANGE;        /* no mode name is that long: better empty than cut */
	memcpy(buf, open_paren + 1, len);
	buf[len] = '\0';
	return 0;
}

static void collect_preempt(struct sysdesc *d)
{
	char rt[8];
	const char *v = d->kernel_version;
	const char *model;

	/*
	 * uname -v carries one flag, and PREEMPT_RT wins over PREEMPT_DYNAMIC when a
	 * kernel has both, so the debugfs file below is read whatever the flag says.
	 * "PREEMPT RT" is how out-of-tree RT patches before 5.3 spelled it.
	 */
	if ((textfile_read("/sys/kernel/realtime", rt, sizeof(rt)) == 0 && strcmp(rt, "1") == 0) ||
	    has_word(v, "PREEMPT_RT") || has_word(v, "PREEMPT RT"))
		model = "PREEMPT_RT";
	else if (has_word(v, "PREEMPT_DYNAMIC"))
		model = "PREEMPT_DYNAMIC";
	else if (has_word(v, "PREEMPT"))
		model = "PREEMPT";
	else if (v[0] != '\0')
		model = "none";        /* also voluntary: uname cannot tell them apart */
	else
		model = "unknown";
	copy_str(d->preempt, sizeof(d->preempt), model);

	/* Needs debugfs mounted and usually root; otherwise the mode stays "". */
	char modes[128];
	if (textfile_read("/sys/kernel/debug/sched/preempt", modes, sizeof(modes)) == 0)
		active_mode(modes, d->preempt_mode, sizeof(d->preempt_mode));
}

static void collect_cpu_model(struct sysdesc *d)
{
	char implementer[16], part[16];

	if (cpuinfo_field("model name", d->cpu_model, sizeof(d->cpu_model)) == 0 &&
	    d->cpu_model[0] != '\0')
		return;
	/* arm64 has no model name; implementer and part identify the core. */
	if (cpuinfo_field("CPU implementer", implementer, sizeof(implementer)) == 0 &&
	    cpuinfo_field("CPU part", part, sizeof(part)) == 0) {
		int n = snprintf(d->cpu_model, sizeof(d->cpu_model), "implementer %s part %s",
				 implementer, part);
		if (n > 0 && (size_t)n < sizeof(d->cpu_model))
			return;
	}
	/* The board, not the core, but better than nothing; "" when absent too. */
	textfile_read("/proc/device-tree/model", d->cpu_model, sizeof(d->cpu_model));
}

#if SYSDESC_X86
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

static void hypervisor_cpuid(char *buf, size_t size)
{
	unsigned eax, ebx, ecx, edx;
	char sig[12];
	size_t len = 0;

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 31)))
		return;
	/* Not __get_cpuid: it checks the leaf against the basic range, which the
	 * hypervisor range 0x40000000 is outside of.  Bit 31 promises the leaf. */
	__cpuid(0x40000000, eax, ebx, ecx, edx);
	memcpy(sig, &ebx, 4);
	memcpy(sig + 4, &ecx, 4);
	memcpy(sig + 8, &edx, 4);
	for (size_t i = 0; i < sizeof(hypervisors) / sizeof(hypervisors[0]); i++)
		if (memcmp(sig, hypervisors[i].signature, sizeof(sig)) == 0) {
			copy_str(buf, size, hypervisors[i].name);
			return;
		}
	/* Unknown: the signature itself still tells a reader which one it was. */
	for (size_t i = 0; i < sizeof(sig) && len + 1 < size; i++)
		if (isprint((unsigned char)sig[i]) && !(len == 0 && sig[i] == ' '))
			buf[len++] = sig[i];
	buf[len] = '\0';
	textfile_trim_end(buf);
}
#endif

/* Xen PV guests and non-x86 guests announce themselves through firmware and sysfs. */
static void hypervisor_firmware(char *buf, size_t size)
{
	if (textfile_read("/sys/hypervisor/type", buf, size) < 0 || buf[0] == '\0')
		textfile_read("/proc/device-tree/hypervisor/compatible", buf, size);
	/* Same name as the CPUID path, so runs from both compare equal. */
	if (strcmp(buf, "xen") == 0 || strncmp(buf, "xen,", 4) == 0)
		copy_str(buf, size, "Xen");
}

static void collect_hypervisor(struct sysdesc *d)
{
	d->hypervisor[0] = '\0';
#if SYSDESC_X86
	hypervisor_cpuid(d->hypervisor, sizeof(d->hypervisor));
#endif
	if (d->hypervisor[0] == '\0')
		hypervisor_firmware(d->hypervisor, sizeof(d->hypervisor));
}

int sysdesc_collect(struct sysdesc *ret)
{
	struct sysdesc d;
	struct utsname u;
	struct cpuset online;

	if (uname(&u) < 0)
		return -errno;
	memset(&d, 0, sizeof(d));
	copy_str(d.hostname, sizeof(d.hostname), u.nodename);
	copy_str(d.kernel_release, sizeof(d.kernel_release), u.release);
	copy_str(d.kernel_version, sizeof(d.kernel_version), u.version);
	copy_str(d.machine, sizeof(d.machine), u.machine);

	collect_preempt(&d);
	textfile_read(CLOCKSOURCE_DIR "current_clocksource", d.clocksource, sizeof(d.clocksource));
	textfile_read(CLOCKSOURCE_DIR "available_clocksource", d.clocksources, sizeof(d.clocksources));
	collect_cpu_model(&d);
	collect_hypervisor(&d);

	/* The text is for people and may be cut short; the count comes from the
	 * whole list, which cpus_online reads without a length limit. */
	textfile_read("/sys/devices/system/cpu/online", d.online_cpus, sizeof(d.online_cpus));
	if (cpus_online(&online) == 0)
		d.ncpus_online = cpuset_count(&online);

	*ret = d;
	return 0;
}
