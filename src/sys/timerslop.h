/*
 * The hypervisor's timer slop as the guest sees it.  Xen's is the minimum
 * delta of its clock event device ("xen"): a timer due sooner than that after
 * it is programmed fires that much later.  Linux takes it from xen_timer_slop=
 * on the kernel command line (an early parameter: nothing in /sys/module) and
 * shows what is in effect in /proc/timer_list (root only).
 */
#ifndef LATSCOPE_SYS_TIMERSLOP_H
#define LATSCOPE_SYS_TIMERSLOP_H

#include <stdint.h>
#include <stdio.h>

/* The kernel's default xen_timer_slop (arch/x86/xen/time.c): 100 us. */
#define XEN_TIMER_SLOP_DEFAULT_NS 100000u

/*
 * The min_delta_ns of the first clock event device named device in a
 * /proc/timer_list read from f ("Clock Event Device: xen" and, below it,
 * " min_delta_ns:   100000").  0, -ENOENT when no such device is listed,
 * -EINVAL when its min_delta_ns is not a number.
 */
int timer_list_min_delta(FILE *f, const char *device, uint64_t *ret_ns);

#endif
