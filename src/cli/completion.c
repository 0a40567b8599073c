/* latscope completion: the script that teaches a shell latscope's commands and options. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/compbash.h"
#include "core/array.h"
#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "report/tprint.h"

/* The shells a script is written for. */
static const struct shell {
	const char *name;
	int (*write)(FILE *out, const struct command *cmds, size_t n, struct lat_error *err);
} shells[] = {
	{ "bash", compbash_write },
};

static const char *shell_word(size_t i)
{
	return i < ARRAY_SIZE(shells) ? shells[i].name : NULL;
}

static void list_shells(FILE *out)
{
	fprintf(out, "\nShells:");
	for (size_t i = 0; i < ARRAY_SIZE(shells); i++)
		fprintf(out, " %s", shells[i].name);
	fprintf(out, "\n");
}

struct completion_cmd {
	bool help;
};

static const struct opt completion_opts[] = {
	{ "help", 'h', OPT_HELP, offsetof(struct completion_cmd, help), .help = "show this help" },
};

static const struct cmd_spec completion_spec = {
	.name = "completion",
	.synopsis = "SHELL",
	.about = "Print SHELL's completion script for latscope: its commands, each one's options,\n"
		 "the values of an option that takes one of a list, the online CPUs for a CPU\n"
		 "list, the stored runs' ids and their label keys for compare --by and --columns\n"
		 "(latscope runs --ids, --label-keys, in the store --db or LATSCOPE_DB names;\n"
		 "none where there is no store).  It is written from the option tables latscope\n"
		 "reads its command line with; the build installs bash's where bash-completion\n"
		 "looks for it.  To try it in the current shell:\n"
		 "source <(latscope completion bash)",
	.opts = completion_opts,
	.nopts = ARRAY_SIZE(completion_opts),
	.help_offset = offsetof(struct completion_cmd, help),
	.help_more = list_shells,
	.min_pos = 1,
	.max_pos = 1,
	.pos_name = "shell",
	.pos_values = OPT_VALUES_WORDS,
	.pos_words = shell_word,
};

const struct cmd_spec *cmd_completion_spec(void)
{
	return &completion_spec;
}

int cmd_completion(int argc, char **argv)
{
	struct completion_cmd c = { 0 };
	struct opt_result given;
	struct lat_error err;
	char names[128] = "";
	int code = storecmd_parse(&completion_spec, argc, argv, &c, &given);

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
	for (size_t i = 0, len = 0; i < ARRAY_SIZE(shells); i++) {
		if (strcmp(shells[i].name, given.pos[0]) == 0) {
			if (shells[i].write(stdout, commands, ncommands, &err) < 0) {
				tprintf(stderr, "latscope completion: %s\n", err.msg);
				return EXIT_ERROR;
			}
			return EXIT_OK;
		}
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
						i ? ", " : "", shells[i].name);
	}
	return storecmd_refuse("completion",
			       "'%s' is not a shell latscope writes completion for (%s)",
			       given.pos[0], names);
}
