/*
 * This process's pid namespace, which names what latscope leaves behind
 * for a later run to judge (tracefs instances, idle-state files): a pid
 * means something only in the namespace it was given in.
 */
#ifndef LATSCOPE_SYS_PIDNS_H
#define LATSCOPE_SYS_PIDNS_H

#define PIDNS_UNKNOWN 0ul

/* The inode of /proc/self/ns/pid; PIDNS_UNKNOWN when /proc cannot say. */
unsigned long pidns_self(void);

#endif
