/*
 * Merging results: histograms and statistics add without loss, so runs of one
 * probe (on many hosts, or one after another) become one exact result.
 */
#ifndef LATSCOPE_RESULT_MERGE_H
#define LATSCOPE_RESULT_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "result/result.h"

/*
 * ret = the merge of in[0..n-1] (all of one probe with the same metrics):
 * CPUs are merged by number and windows by index, labels kept where every
 * run agrees, the system described where every run agrees ("(mixed)" where
 * not), and the host called "merged: ..." so the store tells it apart from
 * its sources.  ids name the runs in the merged result's notes and params
 * (merged_from); identities, their store identities (store_identity), are
 * what the merged result is (params.merged_members).
 * -EINVAL with err filled (runs of different probes or metrics), -EOVERFLOW
 * with err filled when a count or sum would pass 2^63 - 1 ("runs 3 and 4
 * cannot be merged: cpu 0's sample count would reach 2^63"), -ENOMEM.
 */
int result_merge(const struct result *in, const int64_t *ids, const char *const *identities, size_t n,
		 struct result *ret, struct lat_error *err);

#endif
