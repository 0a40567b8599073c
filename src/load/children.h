/* The direct children of the calling process, which as a subreaper include the
 * orphans of its descendants. */
#ifndef LATSCOPE_LOAD_CHILDREN_H
#define LATSCOPE_LOAD_CHILDREN_H

/* Send sig to each; returns how many there were, or -errno. */
int children_signal(int sig);

#endif
