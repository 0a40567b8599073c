#include "probe/actions.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "core/parse.h"

extern char **environ;

const char *action_kind_name(int kind)
{
	switch ((enum action_kind)kind) {
	case ACTION_STOP: return "stop";
	case ACTION_TRACE: return "trace";
	case ACTION_EXEC: return "exec";
	case ACTION_SIGNAL: return "signal";
	}
	return "?";
}

/* "USR1", "SIGUSR1", "usr1" or "10": 0 when none of them. */
static int signal_number(const char *s)
{
	uint64_t n;

	if (parse_u64(s, &n) == 0)
		return n >= 1 && n < (uint64_t)NSIG ? (int)n : 0;
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && strcasecmp(abbrev, s) == 0)
			return sig;
	}
	return 0;
}

static int parse_signal(const char *arg, struct action *ret, struct lat_error *err)
{
	const char *colon = strchr(arg, ':');
	char pid[32];
	uint64_t n;

	if (!colon || (size_t)(colon - arg) >= sizeof(pid))
		return err_set(err, -EINVAL, "signal needs PID:SIG, such as 1234:USR1");
	memcpy(pid, arg, (size_t)(colon - arg));
	pid[colon - arg] = '\0';
	/* 0 and negative PIDs would signal groups, latscope's own among them. */
	if (parse_u64(pid, &n) < 0 || n < 1 || n > INT32_MAX)
		return err_set(err, -EINVAL, "'%s' is not a process id", pid);
	ret->pid = (pid_t)n;
	ret->sig = signal_number(colon + 1);
	if (!ret->sig)
		return err_set(err, -EINVAL, "'%s' is not a signal", colon + 1);
	return 0;
}

int action_parse(const char *text, bool on_end, struct action *ret, struct lat_error *err)
{
	size_t len = strcspn(text, " \t");
	const char *arg = text + len + strspn(text + len, " \t");
	static const int kinds[] = { ACTION_STOP, ACTION_TRACE, ACTION_EXEC, ACTION_SIGNAL };

	memset(ret, 0, sizeof(*ret));
	ret->text = text;
	ret->text_len = strlen(text);
	ret->kind = -1;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(action_kind_name(kinds[i])) == len && strncmp(text, action_kind_name(kinds[i]), len) == 0)
			ret->kind = kinds[i];
	if (ret->kind < 0)
		return err_set(err, -EINVAL, "'%s' is not an action (%s)", text,
			       on_end ? "exec CMD or signal PID:SIG" : "stop, trace, exec CMD or signal PID:SIG");
	if (on_end && (ret->kind == ACTION_STOP || ret->kind == ACTION_TRACE))
		return err_set(err, -EINVAL, "'%s' cannot be done after the run (exec CMD or signal PID:SIG)", text);
	switch ((enum action_kind)ret->kind) {
	case ACTION_STOP:
	case ACTION_TRACE:
		if (*arg)
			return err_set(err, -EINVAL, "'%s': %s takes nothing after it", text, action_kind_name(ret->kind));
		return 0;
	case ACTION_EXEC:
		if (!*arg)
			return err_set(err, -EINVAL, "'%s': exec needs a command, such as 'exec /path/to/script'", text);
		ret->cmd = arg;
		return 0;
	case ACTION_SIGNAL:
		if (parse_signal(arg, ret, err) < 0)
			return err_prefix(err, -EINVAL, "'%s': ", text);
		return 0;
	}
	return 0;
}

int action_parse_list(const char *text, bool on_end, struct action_list *l, struct lat_error *err)
{
	const char *p = text;

	for (;;) {
		p += strspn(p, " \t");         /* "stop, trace" reads as "stop,trace" */
		const size_t word = strcspn(p, " \t,");
		const bool exec = word == 4 && strncmp(p, "exec", 4) == 0;
		const size_t len = exec ? strlen(p) : strcspn(p, ",");
		char item[128];
		struct action a;

		if (len == 0)
			return err_set(err, -EINVAL, "'%s': an empty action in the list (stop, trace, exec CMD "
				       "or signal PID:SIG, separated by commas)", text);
		if (exec) {
			if (action_parse(p, on_end, &a, err) < 0)     /* its command points into text */
				return -EINVAL;
		} else {
			size_t n = len;
			while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
				n--;
			if (n >= sizeof(item))
				return err_set(err, -EINVAL, "'%.40s...' is not an action", p);
			snprintf(item, sizeof(item), "%.*s", (int)n, p);
			if (action_parse(item, on_end, &a, err) < 0)
				return -EINVAL;
			/* item is gone once this returns; stop, trace and signal keep no pointer into it */
			a.text = p;
			a.text_len = n;
		}
		if (action_list_add(l, &a) < 0)
			return err_set(err, -E2BIG, "more than %d actions", ACTIONS_MAX);
		if (!p[len])
			return 0;
		p += len + 1u;
	}
}

int action_list_add(struct action_list *l, const struct action *a)
{
	if (l->n >= ACTIONS_MAX)
		return -E2BIG;
	l->a[l->n++] = *a;
	return 0;
}

bool action_list_has(const struct action_list *l, int kind)
{
	for (unsigned i = 0; i < l->n; i++)
		if (l->a[i].kind == kind)
			return true;
	return false;
}

/* environ and the three variables (replacing any inherited ones): one allocation. */
static char **action_environ(const struct action_env *env, char vars[3][64])
{
	static const char *const names[] = { "LATSCOPE_RUN_ID=", "LATSCOPE_CPU=", "LATSCOPE_LATENCY_NS=" };
	size_t n = 0, k = 0;

	while (environ && environ[n])
		n++;
	char **envp = calloc(n + 4u, sizeof(*envp));
	if (!envp)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool ours = false;
		for (size_t v = 0; v < 3; v++)
			ours |= strncmp(environ[i], names[v], strlen(names[v])) == 0;
		if (!ours)
			envp[k++] = environ[i];
	}
	snprintf(vars[0], 64, "%s%.40s", names[0], env->run_id ? env->run_id : "");
	if (env->cpu >= 0)
		snprintf(vars[1], 64, "%s%d", names[1], env->cpu);
	else
		snprintf(vars[1], 64, "%s", names[1]);
	if (env->cpu >= 0)
		snprintf(vars[2], 64, "%s%" PRIu64, names[2], env->latency_ns);
	else
		snprintf(vars[2], 64, "%s", names[2]);
	for (size_t v = 0; v < 3; v++)
		envp[k++] = vars[v];
	return envp;
}

int action_spawn(const struct action *a, const struct action_env *env, pid_t *ret_pid, struct lat_error *err)
{
	char vars[3][64];
	char **envp = action_environ(env, vars);
	posix_spawnattr_t attr;
	struct sched_param sp = { .sched_priority = 0 };
	sigset_t none;
	int r;

	if (!envp)
		return err_set(err, -ENOMEM, "cannot run '%s': out of memory", a->cmd);
	if ((r = posix_spawnattr_init(&attr)) != 0) {
		free(envp);
		return err_set(err, -r, "cannot run '%s': %s", a->cmd, strerror(r));
	}
	/* The command is no part of the measurement: normal priority, and the
	 * stop signals latscope blocks for itself are not blocked for it. */
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&attr, &none);
	/* Every signal at its default, as a --load-cmd child gets them
	 * (child_reset_signals): a shell cannot undo a signal ignored at its
	 * start, and latscope ignores SIGPIPE, so a pipeline in CMD would see
	 * EPIPE instead of ending quietly. */
	sigset_t deflt;
	sigfillset(&deflt);
	posix_spawnattr_setsigdefault(&attr, &deflt);
	posix_spawnattr_setschedpolicy(&attr, SCHED_OTHER);
	posix_spawnattr_setschedparam(&attr, &sp);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSCHEDULER);
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)a->cmd, NULL };
	r = posix_spawn(ret_pid, "/bin/sh", NULL, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	free(envp);
	if (r != 0)
		return err_set(err, -r, "cannot run '%s': %s", a->cmd, strerror(r));
	return 0;
}

int action_signal(const struct action *a, struct lat_error *err)
{
	if (kill(a->pid, a->sig) < 0)
		return err_set(err, -errno, "cannot send signal %d to process %d: %s", a->sig, (int)a->pid,
			       strerror(errno));
	return 0;
}

int action_exit_code(int wait_status)
{
	if (WIFEXITED(wait_status))
		return WEXITSTATUS(wait_status);
	if (WIFSIGNALED(wait_status))
		return 128 + WTERMSIG(wait_status);
	return -1;
}
