/* --load and --load-cmd for every measuring command: checked with the other
 * options, started just before the measurement, stopped just after it. */
#ifndef LATSCOPE_MEASURE_LOADRUN_H
#define LATSCOPE_MEASURE_LOADRUN_H

#include "measure/opt.h"
#include "core/error.h"
#include "load/load.h"
#include "result/result.h"

struct loadrun {
	struct load_spec specs[STRLIST_MAX];
	size_t n;
	const char *cmd;
	struct load_set *set;
	uint64_t started_ns;
	char text[LABEL_VALUE_MAX];     /* the canonical description: the load= label */
};

/* Parse the --load specs and --load-cmd (NULL: none) into lr, and describe
 * them; -EINVAL with err filled. */
int loadrun_parse(const struct strlist *load, const char *load_cmd, struct loadrun *lr, struct lat_error *err);
/* The description as the label load=..., unless the user gave that label. */
void loadrun_label(const struct loadrun *lr, struct labels *labels);
/* Start the load, if any; -errno with err filled. */
int loadrun_start(struct loadrun *lr, struct lat_error *err);
/* Stop it, and say in res what the command did.  No-op without a load. */
void loadrun_stop(struct loadrun *lr, struct result *res);

/* --load's kinds, for a shell to offer: the i-th, NULL past the last. */
const char *loadrun_kind_word(size_t i);

#endif
