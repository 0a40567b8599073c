#include "report/jsonexport.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "result/json.h"

int json_export_write(FILE *out, const struct result *const *results, const int64_t *ids, size_t n, struct lat_error *err)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		json_t *doc = results[i] ? result_to_json(results[i]) : NULL;
		bool ok = doc && json_object_set_new(doc, "id", json_integer(ids[i])) == 0;
		if (!ok)
			json_decref(doc);
		/* append_new takes doc, also when it fails */
		if (!ok || json_array_append_new(arr, doc) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	char *text = arr ? result_json_dump(arr) : NULL;
	json_decref(arr);
	if (!text)
		return err_set(err, -ENOMEM, "out of memory");
	int r = fprintf(out, "%s\n", text) < 0 ? err_set(err, -EIO, "%s", strerror(EIO)) : 0;
	free(text);
	return r;
}
