"""latscope tune: it measures each fix off and on, and leaves the machine as it found it, also after
kill -9 and the next run.  The machine's own files are the subject (root): every file a fix may
write is compared before and after each test.  No latency is judged: the verdicts' method is
compare's, tested there."""
import glob
import os
import re
import shutil
import signal
import subprocess
import time

import harness
from harness import LATSCOPE, TempDirCase, main, needs, online_cpus, run

CPU = online_cpus()[-1]
# Every file a fix may write on this machine (sys/tunefix.c); cpufreq has none here.
FILES = ["/proc/sys/kernel/timer_migration", "/proc/sys/vm/stat_interval", "/proc/sys/kernel/nmi_watchdog",
         "/proc/sys/kernel/watchdog_cpumask", "/proc/sys/kernel/sched_rt_runtime_us",
         "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/devices/virtual/workqueue/cpumask"]
STATE_DIR = "/run/latscope"


def snapshot():
    files = FILES + sorted(glob.glob("/proc/irq/*/smp_affinity_list")) + \
        sorted(glob.glob("/sys/devices/system/cpu/cpu*/cpufreq/scaling_*"))
    out = {}
    for f in files:
        try:
            with open(f) as fh:
                out[f] = fh.read()
        except OSError as e:
            out[f] = "unreadable: %s" % e.strerror
    return out


@needs(root=True)
class Tune(TempDirCase):
    def setUp(self):
        super().setUp()
        self.before = snapshot()
        self.addCleanup(self.assert_restored)

    def assert_restored(self):
        self.assertEqual(snapshot(), self.before)
        left = [f for f in os.listdir(STATE_DIR) if f.startswith("tune")] if os.path.isdir(STATE_DIR) else []
        self.assertEqual(left, [])

    def tune(self, *args, timeout=300):
        return run("tune", "-a", str(CPU), "--db", self.path("runs.db"), *args, timeout=timeout)

    def test_each_fix_is_measured_off_and_on_and_the_machine_is_left_as_it_was(self):
        p = self.tune("-D", "1s", "--rounds", "2", "--only", "timer-migration,vmstat-interval,thp-never,cpufreq-performance")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"\n\| fix +\| change +\| p50 +\| p99 +\| max +\| verdict \(p99\) +\| 1h level +\| kept +\|\n")
        tried = re.findall(r"^\| (timer-migration|vmstat-interval|thp-never) +\| (\S+ -> \S+) +\| \S+ -> \S+ +\| "
                           r"\S+ -> \S+ +\| \S+ -> \S+ +\| (better|worse|no difference at this length) +\|",
                           p.stdout, re.M)
        self.assertGreater(len(tried), 0, p.stdout)
        # cpufreq: none on this machine, listed and never tried
        self.assertRegex(p.stdout, r"\ncpufreq-performance: not here: ")
        # every trial is a stored run: 2 rounds of A and B for each fix tried
        runs = run("runs", "--db", self.path("runs.db"), "--label", "state=b").stdout
        self.assertEqual(len(re.findall(r"fix=", runs)), 2 * len(tried), runs)

    def test_a_tune_killed_mid_trial_is_undone_by_the_next_run(self):
        proc = subprocess.Popen([LATSCOPE, "tune", "-a", str(CPU), "-D", "3s", "--rounds", "1", "--no-store",
                                 "--only", "timer-migration"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        self.addCleanup(harness.kill_and_close, proc)
        # B's trial has begun when its line is printed: the setting is changed and the state file written
        for line in proc.stderr:
            if "B (with the fix)" in line:
                break
        deadline = time.monotonic() + 10
        while open("/proc/sys/kernel/timer_migration").read() == self.before["/proc/sys/kernel/timer_migration"] \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertNotEqual(open("/proc/sys/kernel/timer_migration").read(),
                            self.before["/proc/sys/kernel/timer_migration"])
        proc.kill()
        proc.wait()
        # the next latscope run, any measuring one, puts it back
        p = run("timer", "-a", str(CPU), "-D", "200ms", "--no-store", "-q")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_a_signal_ends_the_tune_restores_and_prints_the_table_so_far(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with self.subTest(sig=sig.name):
                proc = subprocess.Popen([LATSCOPE, "tune", "-a", str(CPU), "-D", "3s", "--no-store",
                                         "--only", "timer-migration"], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
                for line in proc.stderr:
                    if "B (with the fix)" in line:
                        break
                time.sleep(0.5)     # orchestration: the trial is under way
                proc.send_signal(sig)
                out, err = proc.communicate(timeout=60)
                self.assertEqual(proc.returncode, 0, err)
                self.assertIn("stopped by a signal: the table holds what was measured; every change was undone", out)
                self.assertEqual(snapshot(), self.before)

    def test_write_config_writes_only_into_its_directory_and_valid_files(self):
        d = self.path("cfg")
        os.mkdir(d)
        p = self.tune("-D", "1s", "--rounds", "1", "--only", "isolcpus,timer-migration",
                      "--write-config", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        written = sorted(os.listdir(d))
        self.assertIn("kernel-cmdline.txt", written)
        with open(os.path.join(d, "kernel-cmdline.txt")) as f:
            text = f.read()
        self.assertRegex(text, r"\nisolcpus=managed_irq,domain,%d\n" % CPU)
        for name in written:
            self.assertRegex(name, r"^(99-latscope-tune\.conf|latscope-tune\.service|kernel-cmdline\.txt)$")
        conf = os.path.join(d, "99-latscope-tune.conf")
        if os.path.exists(conf):
            for line in open(conf):
                if line.strip() and not line.startswith("#"):
                    key = line.split("=")[0].strip()
                    self.assertTrue(os.path.exists("/proc/sys/" + key.replace(".", "/")), line)
        unit = os.path.join(d, "latscope-tune.service")
        if os.path.exists(unit) and shutil.which("systemd-analyze"):
            v = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True)
            self.assertNotIn("Unknown key", v.stderr)

    def test_a_name_that_is_no_fix_is_a_usage_error(self):
        p = run("tune", "--only", "turbo")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.splitlines()[0],
                         "latscope tune: option '--only': 'turbo' is not a fix (latscope tune --help lists them)")

    @needs(root=True, programs=("runuser",))
    def test_as_nobody_it_says_tuning_needs_root_and_what_it_would_try(self):
        p = self.as_nobody("tune", "--only", "timer-migration,thp-never")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.splitlines()[0], "latscope tune: tuning needs root: it changes system settings for "
                                                   "each trial (it would try: timer-migration, thp-never)")


if __name__ == "__main__":
    main()
