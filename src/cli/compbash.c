#include "cli/compbash.h"

#include <errno.h>
#include <stdlib.h>

#include "cli/compmodel.h"

/* How the script names what a value is (the cases of _latscope_offer below). */
static const char *const value_names[] = {
	[OPT_VALUES_TYPED] = "typed",
	[OPT_VALUES_FILE] = "file",
	[OPT_VALUES_DIR] = "dir",
	[OPT_VALUES_CPUS] = "cpus",
	[OPT_VALUES_RUN_ID] = "ids",
	[OPT_VALUES_WORDS] = "words",
	[OPT_VALUES_WORD_LIST] = "list",
	[OPT_VALUES_LABEL_KEYS] = "keys",
	[OPT_VALUES_WORD_KEY_LIST] = "keylist",
};

static const char header[] =
	"# bash completion for latscope: written by `latscope completion bash` from the option\n"
	"# tables latscope parses its command line with, when latscope is built.  Do not edit.\n"
	"\n"
	"# Each command's options, long and short.\n"
	"declare -gA _latscope_options=(\n";

/* The words are checked plain (comp_word_is_plain): single quotes keep them as they are. */
static void put_values(FILE *out, const char *key, const struct comp_values *v, bool optional)
{
	fprintf(out, "\t['%s']='%s%s%s%s'\n", key, optional ? "?" : "", value_names[v->kind],
		v->words[0] ? " " : "", v->words);
}

static void put_options(FILE *out, const struct comp_cmd *cc)
{
	const char *sep = "";

	fprintf(out, "\t[%s]='", cc->name);
	for (size_t i = 0; i < cc->nopts; i++, sep = " ") {
		if (cc->opts[i].name)
			fprintf(out, "%s--%s", sep, cc->opts[i].name);
		if (cc->opts[i].letter)
			fprintf(out, "%s-%c", cc->opts[i].name ? " " : sep, cc->opts[i].letter);
	}
	fprintf(out, "'\n");
}

/* "CMD -x" and "CMD --name" of each option that takes a value. */
static void put_option_values(FILE *out, const struct comp_cmd *cc)
{
	char key[128];

	for (size_t i = 0; i < cc->nopts; i++) {
		const struct comp_opt *o = &cc->opts[i];
		if (!o->takes)
			continue;
		if (o->name) {
			snprintf(key, sizeof(key), "%s --%s", cc->name, o->name);
			put_values(out, key, &o->v, o->optional);
		}
		if (o->letter) {
			snprintf(key, sizeof(key), "%s -%c", cc->name, o->letter);
			put_values(out, key, &o->v, o->optional);
		}
	}
}

/* "CMD N" for the Nth argument where they differ, "CMD" for any other. */
static void put_args(FILE *out, const struct comp_cmd *cc)
{
	char key[128];

	for (size_t i = 0; i < cc->nargs; i++) {
		snprintf(key, sizeof(key), "%s %zu", cc->name, i + 1);
		if (cc->args[i].kind != OPT_VALUES_TYPED)
			put_values(out, key, &cc->args[i], false);
	}
	if (cc->rest.kind != OPT_VALUES_TYPED)
		put_values(out, cc->name, &cc->rest, false);
}

/*
 * The part that is the same whatever the tables say.  The machine's CPUs and
 * the stored run ids are read when a word is completed, never when latscope
 * was built.  bash-completion's _init_completion splits "--opt=value" and
 * keeps "host:port" one word (-n :), as latscope reads them.
 */
static const char functions[] =
	"# The words of $1 that start as cur does.\n"
	"_latscope_words()\n"
	"{\n"
	"\tmapfile -t COMPREPLY < <(compgen -W \"$1\" -- \"$cur\")\n"
	"}\n"
	"\n"
	"# The last element of the list cur (a,b,c), from the words of $1 not listed before it.\n"
	"_latscope_list()\n"
	"{\n"
	"\tlocal w left='' listed=''\n"
	"\t[[ $cur == *,* ]] && listed=${cur%,*},\n"
	"\tfor w in $1; do\n"
	"\t\t[[ ,$listed == *,\"$w\",* ]] || left+=\" $w\"\n"
	"\tdone\n"
	"\tmapfile -t COMPREPLY < <(compgen -P \"$listed\" -W \"$left\" -- \"${cur##*,}\")\n"
	"}\n"
	"\n"
	"# The online CPUs.\n"
	"_latscope_cpus()\n"
	"{\n"
	"\tlocal range c IFS=,\n"
	"\tfor range in $(</sys/devices/system/cpu/online); do\n"
	"\t\tfor ((c = ${range%%-*}; c <= ${range##*-}; c++)); do\n"
	"\t\t\techo \"$c\"\n"
	"\t\tdone\n"
	"\tdone 2>/dev/null\n"
	"}\n"
	"\n"
	"# The stored runs' ids; $1 is latscope as typed, $2 the store the command line names.\n"
	"_latscope_ids()\n"
	"{\n"
	"\t\"$1\" runs --ids ${2:+--db \"$2\"} 2>/dev/null\n"
	"}\n"
	"\n"
	"# The stored runs' label keys, asked as _latscope_ids asks; only words a key can be\n"
	"# (compgen expands what it offers).\n"
	"_latscope_keys()\n"
	"{\n"
	"\tlocal k\n"
	"\t\"$1\" runs --label-keys ${2:+--db \"$2\"} 2>/dev/null | while read -r k; do\n"
	"\t\t[[ $k =~ ^[A-Za-z][A-Za-z0-9_.-]*$ ]] && echo \"$k\"\n"
	"\tdone\n"
	"}\n"
	"\n"
	"# Offer what spec $2 names; $1 and $3 as _latscope_ids takes them.\n"
	"_latscope_offer()\n"
	"{\n"
	"\tcase $2 in\n"
	"\tfile) _filedir ;;\n"
	"\tdir) _filedir -d ;;\n"
	"\tcpus) _latscope_list \"$(_latscope_cpus)\" ;;\n"
	"\tids) _latscope_words \"$(_latscope_ids \"$1\" \"$3\")\" ;;\n"
	"\tkeys) _latscope_list \"$(_latscope_keys \"$1\" \"$3\")\" ;;\n"
	"\twords\\ *) _latscope_words \"${2#words }\" ;;\n"
	"\tlist\\ *) _latscope_list \"${2#list }\" ;;\n"
	"\tkeylist\\ *) _latscope_list \"${2#keylist } $(_latscope_keys \"$1\" \"$3\")\" ;;\n"
	"\tesac\n"
	"}\n"
	"\n"
	"_latscope()\n"
	"{\n"
	"\tdeclare -F _init_completion >/dev/null || return\n"
	"\tlocal cur prev words cword split\n"
	"\t_init_completion -s -n : || return\n"
	"\n"
	"\tif ((cword == 1)); then\n"
	"\t\t_latscope_words \"$_latscope_commands --help --version\"\n"
	"\t\treturn\n"
	"\tfi\n"
	"\tlocal cmd=${words[1]}\n"
	"\t[[ $cmd && ${_latscope_options[$cmd]+set} ]] || return\n"
	"\n"
	"\t# The words before: which take a value, how many are arguments, the store --db names.\n"
	"\tlocal i w spec db='' n=0 only_args=''\n"
	"\tfor ((i = 2; i < cword; i++)); do\n"
	"\t\tw=${words[i]}\n"
	"\t\tif [[ $only_args || $w != -?* ]]; then\n"
	"\t\t\tn=$((n + 1))\n"
	"\t\telif [[ $w == -- ]]; then\n"
	"\t\t\tonly_args=1\n"
	"\t\telif [[ $w == --*=* ]]; then\n"
	"\t\t\t[[ ${w%%=*} == --db ]] && db=${w#*=}\n"
	"\t\telse\n"
	"\t\t\tspec=${_latscope_values[\"$cmd $w\"]-}\n"
	"\t\t\tif [[ $spec && ( $spec != \\?* || ${words[i + 1]} != -* ) ]]; then\n"
	"\t\t\t\ti=$((i + 1))\n"
	"\t\t\t\t[[ $w == --db ]] && db=${words[i]}\n"
	"\t\t\tfi\n"
	"\t\tfi\n"
	"\tdone\n"
	"\t[[ $db == \\~/* ]] && db=$HOME/${db#\\~/}\n"
	"\n"
	"\t# The value of the option before, or after its '='.\n"
	"\tspec=\n"
	"\t[[ ! $only_args && $prev == -?* ]] && spec=${_latscope_values[\"$cmd $prev\"]-}\n"
	"\tif [[ $spec == \\?* ]]; then\n"
	"\t\tspec=${spec#\\?}\n"
	"\t\t[[ $cur == -* && $split != true ]] && spec=\n"
	"\tfi\n"
	"\tif [[ ! $spec && ( $only_args || $cur != -* ) ]]; then\n"
	"\t\tspec=${_latscope_args[\"$cmd $((n + 1))\"]-${_latscope_args[$cmd]-}}\n"
	"\t\t# where no argument goes, the options\n"
	"\t\t[[ $spec || $only_args ]] || spec=options\n"
	"\tfi\n"
	"\tcase $spec in\n"
	"\t'' | options) [[ $only_args ]] || _latscope_words \"${_latscope_options[$cmd]}\" ;;\n"
	"\t*) _latscope_offer \"$1\" \"$spec\" \"$db\" ;;\n"
	"\tesac\n"
	"\t__ltrim_colon_completions \"$cur\"\n"
	"}\n"
	"\n"
	"complete -F _latscope latscope\n";

int compbash_write(FILE *out, const struct command *cmds, size_t n, struct lat_error *err)
{
	struct comp_cmd *cc = calloc(n ? n : 1, sizeof(*cc));
	int r = 0;

	if (!cc)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < n && r == 0; i++)
		r = comp_describe(&cmds[i], &cc[i], err);
	if (r < 0) {
		free(cc);
		return r;
	}
	fputs(header, out);
	for (size_t i = 0; i < n; i++)
		put_options(out, &cc[i]);
	fprintf(out,
		")\n\n# What an option's value is: typed (nothing to offer), file, dir, cpus,\n"
		"# ids (stored runs), keys (their label keys, comma-separated), words W...,\n"
		"# list W... (comma-separated), keylist W... (W and the keys); '?' first:\n"
		"# it may be left out.\n"
		"declare -gA _latscope_values=(\n");
	for (size_t i = 0; i < n; i++)
		put_option_values(out, &cc[i]);
	fprintf(out,
		")\n\n# What an argument is, the same way: \"CMD N\" the Nth, \"CMD\" any other.\n"
		"declare -gA _latscope_args=(\n");
	for (size_t i = 0; i < n; i++)
		put_args(out, &cc[i]);
	fprintf(out, ")\n\n_latscope_commands='");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? " " : "", cc[i].name);
	fprintf(out, "'\n\n%s", functions);
	free(cc);
	return 0;
}
