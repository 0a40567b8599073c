/*
 * A JUnit XML report, the format CI systems (GitLab, Jenkins, GitHub actions)
 * read to show gates as test cases.
 */
#ifndef LATSCOPE_REPORT_JUNIT_H
#define LATSCOPE_REPORT_JUNIT_H

#include <stdbool.h>
#include <stddef.h>

struct junit_case {
	const char *classname;          /* NULL: the suite's name */
	const char *name;
	bool failed;
	const char *message;            /* the failure's one line; NULL: none */
	const char *detail;             /* the failure's text; NULL: none */
};

/*
 * Write <testsuites> holding one <testsuite> of the n cases to path, whole or
 * not at all: a temporary file beside path replaces it once complete and on
 * disk.  Text is escaped; characters XML 1.0 does not allow (most control
 * characters, U+FFFE, U+FFFF) are left out and bytes that are not UTF-8 become
 * U+FFFD.  -EINVAL for a NULL suite or case name, -ENOMEM, or the errno of the
 * failed file operation (-EISDIR when path is a directory).
 */
int junit_write(const char *path, const char *suite, const struct junit_case *cases, size_t n);

struct atomic_file;
/* The same into a file the caller opened (atomic_file_open) before its work: committed here. */
int junit_write_to(struct atomic_file *sink, const char *suite, const struct junit_case *cases, size_t n);

#endif
