/*
 * A result's windows kept apart from the rest of it (store schema 4).  The
 * windows are most of a long run's text and only some readers need them, so
 * the store keeps each block's "windows" array (a CPU's, "all"'s, the
 * machine's) as its own compact JSON text, and the rest of the document with
 * a placeholder where each array was.  Windows are copied as JSON values,
 * whatever their members: nothing here reads them.
 */
#ifndef LATSCOPE_STORE_SPLIT_H
#define LATSCOPE_STORE_SPLIT_H

#include <jansson.h>
#include <stddef.h>

/* A block's name: its CPU number in decimal, "all" or "machine". */
#define SPLIT_NAME_SIZE 24

struct split_block {
	char name[SPLIT_NAME_SIZE];
	char *body;                     /* the windows array, compact JSON (malloc'ed) */
};

struct split {
	char *rest;                     /* the document without its windows, compact JSON (malloc'ed) */
	struct split_block *blocks;
	size_t n;
};

/*
 * Take the windows out of doc (they are removed from it) into ret.  A block
 * whose name is not one of its own (a CPU listed twice) keeps its windows in
 * the rest.  Numbers are written with the fewest digits, of latscope's and
 * all, that give every real of doc back exactly.  -ENOMEM.
 */
int split_windows(json_t *doc, struct split *ret);
void split_free(struct split *sp);

/*
 * The document again: rest with each placeholder replaced by the body of the
 * block of its name, bodies[i] for names[i] (n of them); a NULL body is put
 * back as an empty array.  -ENOENT with ret_missing naming the block when a
 * placeholder has no block, -ENOMEM.
 */
int split_join(const char *rest, const char *const *names, const char *const *bodies, size_t n, char **ret,
	       char ret_missing[SPLIT_NAME_SIZE]);

#endif
