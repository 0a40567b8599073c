/*
 * A fake machine for the tests of sys/filehold.h (test-filehold.c,
 * test-tunehold.c): its files, a state directory of its own, and a child
 * process that holds a plan until it is killed.  Include after systree.h.
 */
#ifndef LATSCOPE_TESTS_HOLDTREE_H
#define LATSCOPE_TESTS_HOLDTREE_H

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/filehold.h"

struct tree {
	char dir[64];
	char states[128];
	struct tune_where w;
};

/* files written under a fresh directory; the state files go to its run/latscope. */
static void tree_make_of(struct tree *t, const struct systree_file *files)
{
	systree_make(t->dir, files);
	snprintf(t->states, sizeof(t->states), "%s/run/latscope", t->dir);
	t->w = (struct tune_where){ .sysroot = t->dir, .state_dir = t->states };
}

/* The text of rel in t, whole. */
static const char *text_of(const struct tree *t, const char *rel)
{
	static char buf[256];
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", t->dir, rel);
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A child that applies p and waits to be ended; its pid once it has applied. */
static pid_t live_run(const struct tree *t, const char *fix, const struct tune_plan *p)
{
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct file_hold h;
		close(ready[0]);
		alarm(30); /* gone even when a failed assertion skips the kill */
		if (file_hold_apply(&t->w, fix, p, &h, NULL) < 0 || write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	char c = 0;
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

#endif
