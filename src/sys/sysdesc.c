#include "sys/sysdesc.h"

#include <string.h>

#include "core/array.h"
#include "core/cpuset.h"
#include "sys/fingerprint.h"

/* A field of the fingerprint into one of sysdesc's, which is never smaller: nothing is cut. */
#define COPY(dst, src)                                                                  \
	do {                                                                            \
		_Static_assert(sizeof(dst) >= sizeof(src), #dst " is smaller than " #src); \
		memcpy((dst), (src), sizeof(src));                                      \
	} while (0)

static const char *preempt_word(const char *model)
{
	static const char *const kept[] = { "PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT" };

	if (model[0] == '\0')
		return "unknown";
	for (size_t i = 0; i < ARRAY_SIZE(kept); i++)
		if (strcmp(model, kept[i]) == 0)
			return kept[i];
	return "none";          /* also voluntary and lazy: uname -v cannot tell them apart */
}

void sysdesc_from_fingerprint(const struct fingerprint *fp, struct sysdesc *ret)
{
	struct sysdesc d;

	memset(&d, 0, sizeof(d));
	COPY(d.hostname, fp->hostname);
	COPY(d.kernel_release, fp->release);
	COPY(d.kernel_version, fp->version);
	COPY(d.machine, fp->arch);
	strcpy(d.preempt, preempt_word(fp->preempt));
	if (strcmp(fp->preempt_mode_source, "debugfs") == 0)
		COPY(d.preempt_mode, fp->preempt_mode);
	COPY(d.clocksource, fp->clocksource);
	COPY(d.clocksources, fp->clocksources);
	COPY(d.cpu_model, fp->cpu_model);
	COPY(d.hypervisor, fp->hypervisor);
	if (fp->online_known) {
		/* The text is for people and may be cut short (at a whole range); the count is the whole set's. */
		cpuset_format(&fp->online, d.online_cpus, sizeof(d.online_cpus));
		d.ncpus_online = cpuset_count(&fp->online);
	}
	*ret = d;
}

int sysdesc_collect(struct sysdesc *ret)
{
	const struct fingerprint_opts opts = { .identity_only = true };
	struct fingerprint *fp;
	int r = fingerprint_collect(&opts, &fp);

	if (r < 0)
		return r;
	sysdesc_from_fingerprint(fp, ret);
	fingerprint_free(fp);
	return 0;
}
