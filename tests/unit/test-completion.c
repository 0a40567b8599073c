/*
 * Shell completion's view of a command (src/cli/compmodel.c) and the bash
 * script written from it (src/cli/compbash.c): what each kind of row offers,
 * read from fake tables, and that every row of latscope's own command table
 * can be described.  bash itself runs the script in tests/integration/test_completion.py.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/compbash.h"
#include "cli/compmodel.h"
#include "core/array.h"
#include "front/driver.h"
#include "measure/measure.h"
#include "measure/storecmd.h"

struct fake {
	int mode;
	struct cpuset cpus;
	const char *name, *kind, *by, *columns;
	bool flag, help;
};

static const char *const mode_choices[] = { "fast", "slow", NULL };

static const char *kind_word(size_t i)
{
	static const char *const kinds[] = { "a", "b", "c" };
	return i < ARRAY_SIZE(kinds) ? kinds[i] : NULL;
}

static const struct opt fake_opts[] = {
	{ "mode", 'm', OPT_ENUM, offsetof(struct fake, mode), .choices = mode_choices },
	{ "cpus", 'a', OPT_CPUS, offsetof(struct fake, cpus) },
	{ "out", 'o', OPT_STRING, offsetof(struct fake, name), .values = OPT_VALUES_FILE },
	{ "kinds", 0, OPT_STRING, offsetof(struct fake, kind), .values = OPT_VALUES_WORD_LIST,
	  .words = kind_word },
	{ "by", 0, OPT_STRING, offsetof(struct fake, by), .values = OPT_VALUES_LABEL_KEYS },
	{ "columns", 0, OPT_STRING, offsetof(struct fake, columns),
	  .values = OPT_VALUES_WORD_KEY_LIST, .words = kind_word },
	{ "flag", 0, OPT_FLAG, offsetof(struct fake, flag) },
	{ "help", 'h', OPT_HELP, offsetof(struct fake, help) },
};

static const struct measure_cmd fake_measure = { .name = "fake",
						 .opts = fake_opts,
						 .nopts = ARRAY_SIZE(fake_opts) };

static const struct comp_opt *find(const struct comp_cmd *cc, const char *name)
{
	for (size_t i = 0; i < cc->nopts; i++)
		if (cc->opts[i].name && strcmp(cc->opts[i].name, name) == 0)
			return &cc->opts[i];
	fail_msg("no option --%s", name);
	return NULL;
}

static struct comp_cmd *describe_ok(const struct command *c)
{
	static struct comp_cmd cc;
	struct lat_error err = { { 0 } };
	int r = comp_describe(c, &cc, &err);

	if (r != 0)
		fail_msg("%s: %d %s", c->name, r, err.msg);
	return &cc;
}

static void test_each_kind_of_row_offers_what_its_parser_takes(void **state)
{
	(void)state;
	const struct command c = { .name = "fake", .mc = &fake_measure };
	const struct comp_cmd *cc = describe_ok(&c);

	assert_int_equal(cc->nopts, ARRAY_SIZE(fake_opts));
	assert_int_equal(find(cc, "mode")->v.kind, OPT_VALUES_WORDS);
	assert_string_equal(find(cc, "mode")->v.words, "fast slow");
	assert_int_equal(find(cc, "mode")->letter, 'm');
	assert_int_equal(find(cc, "cpus")->v.kind, OPT_VALUES_CPUS);
	assert_int_equal(find(cc, "out")->v.kind, OPT_VALUES_FILE);
	assert_int_equal(find(cc, "kinds")->v.kind, OPT_VALUES_WORD_LIST);
	assert_string_equal(find(cc, "kinds")->v.words, "a b c");
	/* label keys are the store's, asked when completing: none are known here */
	assert_int_equal(find(cc, "by")->v.kind, OPT_VALUES_LABEL_KEYS);
	assert_string_equal(find(cc, "by")->v.words, "");
	assert_int_equal(find(cc, "columns")->v.kind, OPT_VALUES_WORD_KEY_LIST);
	assert_string_equal(find(cc, "columns")->v.words, "a b c");
	assert_true(find(cc, "out")->takes);
	assert_false(find(cc, "flag")->takes);
	assert_false(find(cc, "help")->takes);
	assert_int_equal(cc->nargs, 0);
	assert_int_equal(cc->rest.kind, OPT_VALUES_TYPED);
}

/* A command of the one row o is refused, the reason saying needle. */
static void assert_refused(const struct opt *o, const char *needle)
{
	const struct measure_cmd mc = { .name = "bad", .opts = o, .nopts = 1 };
	const struct command c = { .name = "bad", .mc = &mc };
	struct comp_cmd *cc = malloc(sizeof(*cc));
	struct lat_error err = { { 0 } };

	assert_non_null(cc);
	assert_int_equal(comp_describe(&c, cc, &err), -EINVAL);
	if (!strstr(err.msg, needle))
		fail_msg("'%s' does not say '%s'", err.msg, needle);
	free(cc);
}

static void test_a_row_that_offers_words_but_names_none_is_an_error(void **state)
{
	(void)state;
	static const struct opt o = { "kinds", 0, OPT_STRING, offsetof(struct fake, kind),
				      .values = OPT_VALUES_WORDS };
	assert_refused(&o, "bad --kinds");
}

static void test_a_word_a_shell_would_split_or_expand_is_refused(void **state)
{
	(void)state;
	static const char *const choices[] = { "ok", "two words", NULL };
	static const struct opt o = { "mode", 0, OPT_ENUM, offsetof(struct fake, mode),
				      .choices = choices };

	assert_refused(&o, "'two words'");
	assert_true(comp_word_is_plain("p99.9", 5));
	assert_true(comp_word_is_plain("io_uring", 8));
	for (const char *w = "$`'\"\\ *?![]{};|&<>=~#"; *w; w++)
		assert_false(comp_word_is_plain(w, 1));
	assert_false(comp_word_is_plain("", 0));
}

static const struct front_opt fake_front_opts[] = {
	{ .name = "mode", .letter = 'm', .arg = FRONT_ARG, .kind = FRONT_MAP, .to = FRONT_TO(0) },
	{ .name = "cpu-list",
	  .letter = 'c',
	  .arg = FRONT_ARG,
	  .kind = FRONT_SET,
	  .to = FRONT_TO(1),
	  .values = OPT_VALUES_CPUS },
	{ .name = "trace",
	  .letter = 't',
	  .arg = FRONT_OPT_NEXT,
	  .kind = FRONT_SET,
	  .values = OPT_VALUES_FILE },
	{ .name = "quiet", .letter = 'q', .arg = FRONT_NO_ARG, .kind = FRONT_FLAG },
	FRONT_DB_ROW,
};

static const char *const fake_modes[] = { "tool hist", "tool top", NULL };

static const struct front_end fake_front = {
	.name = "tool",
	.mc = &fake_measure,
	.opts = fake_front_opts,
	.nopts = ARRAY_SIZE(fake_front_opts),
	.mode_names = fake_modes,
};

static void test_a_front_ends_rows_and_modes_offer_what_its_parser_takes(void **state)
{
	(void)state;
	const struct command c = { .name = "tool", .fe = &fake_front };
	const struct comp_cmd *cc = describe_ok(&c);

	/* a row latscope's row parses offers that row's values */
	assert_string_equal(find(cc, "mode")->v.words, "fast slow");
	assert_int_equal(find(cc, "cpu-list")->v.kind, OPT_VALUES_CPUS);
	assert_int_equal(find(cc, "trace")->v.kind, OPT_VALUES_FILE);
	assert_true(find(cc, "trace")->optional);
	assert_false(find(cc, "mode")->optional);
	assert_false(find(cc, "quiet")->takes);
	assert_int_equal(find(cc, "db")->v.kind, OPT_VALUES_FILE);
	/* the modes' words, each at its place, said once */
	assert_int_equal(cc->nargs, 2);
	assert_string_equal(cc->args[0].words, "tool");
	assert_string_equal(cc->args[1].words, "hist top");
	assert_int_equal(cc->rest.kind, OPT_VALUES_TYPED);
}

static const struct opt spec_opts[] = {
	{ "help", 'h', OPT_HELP, offsetof(struct fake, help) },
};

static const char *shell_word(size_t i)
{
	return i == 0 ? "sh" : NULL;
}

static const struct cmd_spec one_arg = { .name = "one",
					 .opts = spec_opts,
					 .nopts = 1,
					 .max_pos = 1,
					 .pos_values = OPT_VALUES_WORDS,
					 .pos_words = shell_word };
static const struct cmd_spec many_args = { .name = "many",
					   .opts = spec_opts,
					   .nopts = 1,
					   .max_pos = 1024,
					   .pos_values = OPT_VALUES_RUN_ID };

static const struct cmd_spec *one_arg_spec(void)
{
	return &one_arg;
}

static const struct cmd_spec *many_args_spec(void)
{
	return &many_args;
}

static void test_a_spec_names_few_arguments_by_place_and_many_alike(void **state)
{
	(void)state;
	const struct command one = { .name = "one", .spec = one_arg_spec };
	const struct command many = { .name = "many", .spec = many_args_spec };
	const struct comp_cmd *cc = describe_ok(&one);

	assert_int_equal(cc->nargs, 1);
	assert_int_equal(cc->args[0].kind, OPT_VALUES_WORDS);
	assert_string_equal(cc->args[0].words, "sh");
	assert_int_equal(cc->rest.kind, OPT_VALUES_TYPED);
	cc = describe_ok(&many);
	assert_int_equal(cc->nargs, 0);
	assert_int_equal(cc->rest.kind, OPT_VALUES_RUN_ID);
}

static void test_every_command_of_the_table_is_described_with_its_help(void **state)
{
	(void)state;
	for (size_t i = 0; i < ncommands; i++) {
		const struct comp_cmd *cc = describe_ok(&commands[i]);
		assert_non_null(find(cc, "help"));
	}
}

static void test_the_bash_script_names_every_command_and_registers_for_latscope(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct lat_error err = { { 0 } };

	assert_non_null(out);
	assert_int_equal(compbash_write(out, commands, ncommands, &err), 0);
	assert_int_equal(fclose(out), 0);
	for (size_t i = 0; i < ncommands; i++) {
		char row[64];
		snprintf(row, sizeof(row), "\n\t[%s]='", commands[i].name);
		assert_non_null(strstr(text, row));
	}
	assert_non_null(strstr(text, "\n\t['timer --policy']='words fifo rr other deadline'\n"));
	assert_non_null(strstr(text, "\n\t['show 1']='ids'\n"));
	assert_non_null(strstr(text, "\n\t['compare --by']='keys'\n"));
	assert_non_null(strstr(text, "\n\t['compare --columns']='keylist count "));
	assert_non_null(strstr(text, "\ncomplete -F _latscope latscope\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_kind_of_row_offers_what_its_parser_takes),
		cmocka_unit_test(test_a_row_that_offers_words_but_names_none_is_an_error),
		cmocka_unit_test(test_a_word_a_shell_would_split_or_expand_is_refused),
		cmocka_unit_test(test_a_front_ends_rows_and_modes_offer_what_its_parser_takes),
		cmocka_unit_test(test_a_spec_names_few_arguments_by_place_and_many_alike),
		cmocka_unit_test(test_every_command_of_the_table_is_described_with_its_help),
		cmocka_unit_test(
			test_the_bash_script_names_every_command_and_registers_for_latscope),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
