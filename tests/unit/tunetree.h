/*
 * The fake machine the tests of latscope tune's fixes plan on (test-tunefix.c)
 * and apply, restore and kill them on (test-tunehold.c).  Include after
 * systree.h.
 */
#ifndef LATSCOPE_TESTS_TUNETREE_H
#define LATSCOPE_TESTS_TUNETREE_H

#define FREQ(c) "sys/devices/system/cpu/cpu" #c "/cpufreq/"

/* Two CPUs, CPU 1 measured: every file fix has something to do. */
static const struct systree_file untuned[] = {
	{ "sys/devices/system/cpu/online", "0-1\n" },
	{ "proc/sys/kernel/timer_migration", "1\n" },
	{ "proc/sys/vm/stat_interval", "1\n" },
	{ "proc/sys/kernel/nmi_watchdog", "1\n" },
	{ "proc/sys/kernel/watchdog", "1\n" },
	{ "proc/sys/kernel/watchdog_cpumask", "0-1\n" },
	{ "proc/sys/kernel/sched_rt_runtime_us", "950000\n" },
	{ "sys/devices/virtual/workqueue/cpumask", "3\n" },
	{ "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n" },
	{ FREQ(1) "scaling_governor", "powersave\n" },
	{ FREQ(1) "scaling_available_governors", "performance powersave\n" },
	{ FREQ(1) "scaling_min_freq", "800000\n" },
	{ FREQ(1) "scaling_max_freq", "3000000\n" },
	{ FREQ(1) "cpuinfo_max_freq", "3000000\n" },
	{ "proc/irq/24/smp_affinity_list", "0-1\n" },
	{ "proc/irq/25/smp_affinity_list", "0\n" },
	{ "proc/irq/3/smp_affinity_list", "1\n" },
	{ "proc/irq/default_smp_affinity", "3\n" },
	{ "dev/cpu_dma_latency", "" },
	{ "sys/devices/system/cpu/cpu1/cpuidle/state0/name", "POLL\n" },
	{ "sys/devices/system/cpu/cpu1/cpuidle/state1/name", "C1\n" },
	{ "sys/devices/system/cpu/cpu1/cpuidle/state2/name", "C6\n" },
	{ "sys/devices/system/cpu/isolated", "\n" },
	{ "sys/devices/system/cpu/nohz_full", "(null)\n" },
	{ "proc/cmdline", "root=/dev/vda console=ttyS0\n" },
	{ "proc/consoles", "ttyS0                -W- (EC p a)    4:64\n" },
	{ NULL, NULL }
};

#endif
