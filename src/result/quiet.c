#include "result/quiet.h"

#include "sys/procstat.h"

int quiet_cause_of(const struct result *res, const struct win_context *ctx)
{
	bool counted = res->smi_asked && res->smi_source != SMI_SOURCE_NONE;

	if (!ctx->valid)
		return QUIET_UNCOUNTED;
	if (counted && ctx->smis)
		return QUIET_SMI;
	if (ctx->cpu_ns[CPU_STEAL])
		return QUIET_STEAL;
	return counted ? QUIET_NEITHER : QUIET_UNCOUNTED;
}

static const char *const names[QUIET_CAUSES] = { "smi", "steal", "neither", "smis_not_counted" };

static const char *const texts[QUIET_CAUSES] = {
	"with an SMI counted in their window (firmware stopped the CPU)",
	"with steal time in their window (the hypervisor ran something else)",
	"with neither an SMI nor steal counted in their window (the hardware, or firmware the SMI "
	"counter does not see)",
	"with no steal in their window and SMIs not counted here (the hypervisor unseen, firmware "
	"or the hardware)",
};

const char *quiet_cause_name(int cause)
{
	return cause >= 0 && cause < QUIET_CAUSES ? names[cause] : NULL;
}

const char *quiet_cause_text(int cause)
{
	return cause >= 0 && cause < QUIET_CAUSES ? texts[cause] : "";
}
