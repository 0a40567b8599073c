#include "measure/onend.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/wait.h>

#include "measure/exitcode.h"
#include "report/tprint.h"

/* The first sample above the trigger, as --on-threshold kept it in the result. */
static void first_sample(const struct result *res, struct action_env *env)
{
	const json_t *first = res->on_threshold ? json_object_get(res->on_threshold, "first") : NULL;
	const json_t *cpu = json_object_get(first, "cpu"), *lat = json_object_get(first, "latency_ns");

	env->cpu = -1;
	if (json_is_integer(cpu) && json_is_integer(lat)) {
		env->cpu = (int)json_integer_value(cpu);
		env->latency_ns = (uint64_t)json_integer_value(lat);
	}
}

int on_end_run(const char *name, const struct action_list *l, const struct result *res, int64_t stored_id)
{
	char id[24] = "";
	struct action_env env = { .run_id = id };
	int code = EXIT_OK;

	if (stored_id > 0)
		snprintf(id, sizeof(id), "%" PRId64, stored_id);
	first_sample(res, &env);
	for (unsigned i = 0; i < l->n; i++) {
		const struct action *a = &l->a[i];
		struct lat_error why;
		pid_t pid;
		int status;
		if (a->kind == ACTION_SIGNAL ? action_signal(a, &why) < 0 : action_spawn(a, &env, &pid, &why) < 0) {
			tprintf(stderr, "latscope %s: option '--on-end': %s\n", name, why.msg);
			code = EXIT_ERROR;
			continue;
		}
		if (a->kind == ACTION_SIGNAL)
			continue;
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR) {
				status = -1;
				break;
			}
		if (status == -1 || action_exit_code(status) != 0)
			tprintf(stderr, "latscope %s: option '--on-end': '%s' exited with status %d\n", name, a->cmd,
				status == -1 ? -1 : action_exit_code(status));
	}
	return code;
}
