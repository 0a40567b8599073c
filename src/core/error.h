/*
 * The one error convention of latscope's library code (all of src/ but the
 * command files of cli/ and main.c, which print and choose exit codes):
 *
 *  - A function that can fail returns int: >= 0 on success (0, a count, or
 *    a value its header names), a negative errno on failure.  It never
 *    prints and never exits.
 *  - It says why in the struct lat_error its caller passes: one line a user
 *    can act on, naming the option, file or value and the reason, with no
 *    trailing period or newline.  err_set and err_prefix take a NULL err (the
 *    reason is dropped); a function may take NULL only where its header says so.
 *  - err_set() is the only way a reason is written, so a failing path is one
 *    statement: return err_set(err, -EINVAL, "option '--x': ...", ...).
 *  - A parser (of options or arguments) returns LAT_GO_ON to go on, LAT_DONE
 *    when the command is already done (its --help was printed), or a negative
 *    errno with the reason; the command turns that into its exit status.
 *  - A reason from a callee keeps its words; a caller that knows more puts
 *    it in front with err_prefix() ("FILE: ").
 */
#ifndef LATSCOPE_CORE_ERROR_H
#define LATSCOPE_CORE_ERROR_H

#include <stdarg.h>

struct lat_error {
	char msg[512];
};

enum { LAT_GO_ON = 0, LAT_DONE = 1 };

/* Write the reason into err (NULL: nowhere) and return r. */
int err_set(struct lat_error *err, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int err_vset(struct lat_error *err, int r, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Put the formatted context in front of err's reason; returns r. */
int err_prefix(struct lat_error *err, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
