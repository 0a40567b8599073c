#include "store/identity.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "store/sha256.h"

static void finish(struct sha256 *c, const char *kind, char out[STORE_IDENTITY_SIZE])
{
	uint8_t d[SHA256_BYTES];
	int n = snprintf(out, STORE_IDENTITY_SIZE, "%s:", kind);

	sha256_end(c, d);
	for (size_t i = 0; i < sizeof(d); i++)
		n += snprintf(out + n, STORE_IDENTITY_SIZE - (size_t)n, "%02x", d[i]);
}

/* NUL ends every field: none can hold one, so no two lists of fields hash alike. */
static void field(struct sha256 *c, const char *s)
{
	sha256_add(c, s, strlen(s) + 1u);
}

bool identity_valid(const char *s)
{
	size_t pre = strncmp(s, "run:", 4) == 0 ? 4 : strncmp(s, "merge:", 6) == 0 ? 6 : 0;

	if (!pre || strlen(s) != pre + 2u * SHA256_BYTES)
		return false;
	return strspn(s + pre, "0123456789abcdef") == 2u * SHA256_BYTES;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int identity_compute(const char *host, const char *probe, uint64_t start_ns, const json_t *members,
		     char out[STORE_IDENTITY_SIZE], struct lat_error *err)
{
	struct sha256 c;
	const json_t *v;
	size_t i, n;

	sha256_init(&c);
	if (!members) {
		char start[24];
		snprintf(start, sizeof(start), "%" PRIu64, start_ns);
		field(&c, "latscope run");
		field(&c, host);
		field(&c, probe);
		field(&c, start);
		finish(&c, "run", out);
		return 0;
	}
	n = json_array_size(members);
	if (!json_is_array(members) || n == 0)
		return err_set(err, -EINVAL, "params.merged_members is not a list of run identities");
	const char **ids = malloc(n * sizeof(*ids));
	if (!ids)
		return err_set(err, -ENOMEM, "out of memory");
	json_array_foreach(members, i, v) {
		ids[i] = json_string_value(v);
		if (!ids[i] || !identity_valid(ids[i])) {
			free(ids);
			return err_set(err, -EINVAL, "params.merged_members[%zu] is not a run identity", i);
		}
	}
	/* The same runs merged in another order are the same merge. */
	qsort(ids, n, sizeof(*ids), by_text);
	field(&c, "latscope merge");
	for (i = 0; i < n; i++)
		field(&c, ids[i]);
	free(ids);
	finish(&c, "merge", out);
	return 0;
}

int identity_of_result(const json_t *doc, char out[STORE_IDENTITY_SIZE], struct lat_error *err)
{
	const char *host = json_string_value(json_object_get(json_object_get(doc, "system"), "hostname"));
	const char *probe = json_string_value(json_object_get(doc, "probe"));
	const json_t *start = json_object_get(doc, "start_realtime_ns");
	json_int_t ns = json_integer_value(start);

	return identity_compute(host ? host : "", probe ? probe : "", ns > 0 ? (uint64_t)ns : 0,
				json_object_get(json_object_get(doc, "params"), "merged_members"), out, err);
}
