/* latscope import: results made elsewhere (other hosts, --json files) into the store. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "measure/exitcode.h"
#include "measure/storecmd.h"
#include "core/array.h"
#include "probe/probe.h"
#include "result/json.h"
#include "report/tprint.h"

struct import_cmd {
	const char *db;
	bool db_trust;
	bool help;
};

static const struct opt import_opts[] = {
	DB_OPT(struct import_cmd),
	{ "help", 'h', OPT_HELP, offsetof(struct import_cmd, help), .help = "show this help" },
};

static const struct cmd_spec import_spec = {
	.name = "import",
	.synopsis = "FILE.json... [--db PATH]",
	.about = "Store results written with --json, here or on other hosts.  Every file is checked first; when\n"
		 "one is not a latscope result, nothing is stored.  A run already in the store is skipped.\n"
		 "A file's figures must agree with its histograms and its \"all\" block with its CPUs; what is\n"
		 "stored is what latscope computes from the histograms and CPUs again, not the file's text.\n"
		 "A file may be at most 256 MiB.",
	.opts = import_opts,
	.nopts = ARRAY_SIZE(import_opts),
	.help_offset = offsetof(struct import_cmd, help),
	.min_pos = 1,
	.max_pos = sizeof(((struct opt_result *)0)->pos) / sizeof(((struct opt_result *)0)->pos[0]),
	.pos_name = "file",
	.pos_values = OPT_VALUES_FILE,
};

const struct cmd_spec *cmd_import_spec(void)
{
	return &import_spec;
}

/* The whole file, refused unread when larger than a result may be; *ret_unread
 * set when it could not be opened or read (not there, not the user's to read). */
static int read_file(const char *path, char **ret_text, size_t *ret_len, bool *ret_unread,
		     struct lat_error *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *text = NULL;
	size_t len = 0;
	int r = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		*ret_unread = true;
		err_set(err, 0, "%s", strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		err_set(err, 0, "not a regular file");
	} else if ((r = result_text_too_large((size_t)st.st_size, err)) == 0) {
		/* One byte more than the limit shows a file that grew meanwhile. */
		size_t cap = (size_t)st.st_size + 1u;
		if (!(text = malloc(cap + 1u)))
			r = -ENOMEM;
		while (r == 0) {
			ssize_t n = read(fd, text + len, cap - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				r = -errno;
				*ret_unread = true;
				err_set(err, 0, "%s", strerror(errno));
			} else if (n == 0) {
				break;
			} else if ((len += (size_t)n) == cap) {
				r = result_text_too_large(RESULT_TEXT_MAX + 1u, err);
				if (len <= RESULT_TEXT_MAX)
					err_set(err, 0, "it changed while it was read");
			}
		}
		if (r == -ENOMEM)
			err_set(err, 0, "out of memory");
	}
	if (fd >= 0)
		close(fd);
	if (r < 0) {
		free(text);
		return r;
	}
	text[len] = '\0';
	*ret_text = text;
	*ret_len = len;
	return 0;
}

/*
 * The file's result in the store's form: checked whole, then written again by
 * latscope.  Says why not; returns an exit status: EXIT_ERROR for a file that
 * is not there or cannot be read, EXIT_USAGE for one that is not a result
 * latscope takes.
 */
static int load_file(const char *path, char **ret_text)
{
	struct lat_error err;
	char *text;
	size_t len;
	bool unread = false;
	int r = read_file(path, &text, &len, &unread, &err);

	if (r == 0) {
		struct result res;
		r = result_from_text(text, len, &res, &err);
		free(text);             /* before the result is written again: what import takes is the larger */
		if (r == 0 && (r = probe_check_result(&res, &err)) < 0)
			result_free(&res);
		if (r == 0) {
			probe_result_ops(&res);         /* a file from before they were kept */
			if (!(*ret_text = result_store_text(&res)))
				r = -ENOMEM;
			/* Written again with every figure and the merged row's windows, a compact file grows:
			 * the store must not keep what no command could read back. */
			else if (result_text_too_large(strlen(*ret_text), &err) < 0) {
				err_set(&err, 0, "as latscope writes it, the result would be larger than %u MiB, "
					 "the most a result may be", RESULT_TEXT_MAX >> 20);
				free(*ret_text);
				*ret_text = NULL;       /* the caller frees every text it was given */
				r = -EFBIG;
			}
			result_free(&res);
		}
	}
	if (r == -ENOMEM)
		err_set(&err, 0, "out of memory");
	if (r < 0)
		tprintf(stderr, "latscope import: '%s': %s\n", path, err.msg);
	return r == 0 ? EXIT_OK : unread || r == -ENOMEM ? EXIT_ERROR : EXIT_USAGE;
}

int cmd_import(int argc, char **argv)
{
	struct import_cmd c = { 0 };
	struct opt_result given;
	struct store *st = NULL;
	char **texts;
	int code = storecmd_parse(&import_spec, argc, argv, &c, &given);

	if (code != LAT_GO_ON)
		return storecmd_exit(code);
	texts = calloc(given.npos, sizeof(*texts));
	if (!texts)
		return EXIT_ERROR;
	code = EXIT_OK;
	/* Any file refused makes it bad usage, with the hint; else one not there is an error. */
	for (size_t i = 0; i < given.npos; i++) {
		int fcode = load_file(given.pos[i], &texts[i]);
		if (fcode == EXIT_USAGE || code == EXIT_OK)
			code = fcode;
	}
	if (code == EXIT_USAGE)
		fprintf(stderr, "Try 'latscope import --help'.\n");    /* once, after each file's reason */
	if (code == EXIT_OK &&
	    (code = storecmd_open("import", c.db, STORE_CREATE | (c.db_trust ? STORE_TRUST : 0u),
				  &st)) == EXIT_OK) {
		struct lat_error serr;
		int64_t *ids = calloc(given.npos, sizeof(*ids));
		bool *dup = calloc(given.npos, sizeof(*dup));
		if (!ids || !dup)
			code = EXIT_ERROR;
		else if (store_put_all(st, (const char *const *)texts, given.npos, ids, dup, &serr) < 0) {
			tprintf(stderr, "latscope import: %s; nothing was stored\n", serr.msg);
			code = EXIT_ERROR;
		} else {
			for (size_t i = 0; i < given.npos; i++)
				tprintf(stdout, "%s: %s run %lld\n", given.pos[i], dup[i] ? "already stored as" : "stored as",
				       (long long)ids[i]);
		}
		free(ids);
		free(dup);
	}
	for (size_t i = 0; i < given.npos; i++)
		free(texts[i]);
	free(texts);
	store_close(st);
	return code;
}
