#!/usr/bin/env python3
"""--load and --load-cmd: built-in loads change what the probes see, and a load
command never outlives the measurement."""
import os
import re
import signal
import stat
import subprocess
import time

from harness import test_cpu, LATSCOPE, TempDirCase, check_consistent, load, main, needs, online_cpus, run

CPU = test_cpu()
SECONDS = 1


def noise_share(doc):
    """The share of the run the spinner lost in gaps of 1 us or more."""
    cpu = doc["cpus"][0]
    lost = sum((low + high) / 2 * n for low, high, n in cpu["metrics"]["gap"]["histogram"]["buckets"]
               if low >= 1000)
    return lost / doc["elapsed_ns"]


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone in all but name; only its parent's wait is missing.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False                    # gone between the two looks


class BuiltInLoads(TempDirCase):
    """The noise probe's spinner runs under SCHED_OTHER, so a load on its CPU takes
    a share of it: the share it loses must grow, by much, under every load.
    Injected: a load that takes a fifth of the CPU or more, 200 ms of each second, far above
    this host's stalls (a few of 3-30 ms in a second); a share, not a latency, is judged, and
    the lighter load's against the full one's (a relation)."""

    # The run under a full cpu load, which two tests judge: made once, by the first of them.
    full = {}

    def noise(self, *specs):
        out = self.path("n.json")
        args = ["noise", "-a", str(CPU), "-D", str(SECONDS), "-q", "--no-store", "--json", out]
        for spec in specs:
            args += ["--load", spec]
        p = run(*args, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        return doc

    def full_cpu_load(self):
        if "doc" not in self.full:
            self.full["doc"] = self.noise("cpu:cpus=%d" % CPU)
        return self.full["doc"]

    def test_every_built_in_load_takes_a_share_of_the_measured_cpu(self):
        base = noise_share(self.noise())
        for kind in ("cpu", "sched", "console", "mem", "syscall", "io"):
            with self.subTest(load=kind):
                doc = self.full_cpu_load() if kind == "cpu" else self.noise("%s:cpus=%d" % (kind, CPU))
                loaded = noise_share(doc)
                self.assertGreater(loaded, base + 0.2, f"share lost {loaded:.3f} under load, {base:.3f} without")
                self.assertTrue(doc["labels"]["load"].startswith(kind + ":cpus=%d" % CPU), doc["labels"])

    def test_a_lighter_load_takes_less(self):
        light = noise_share(self.noise("cpu:cpus=%d,intensity=10%%" % CPU))
        full = noise_share(self.full_cpu_load())
        self.assertGreater(full, 1.5 * light, f"100%: {full:.3f}, 10%: {light:.3f}")

    def test_compare_groups_runs_by_load(self):
        db = self.path("c.db")
        for extra in ([], ["--load", "cpu:cpus=%d" % CPU]):
            p = run("noise", "-a", str(CPU), "-D", "0.2", "-q", "--db", db, *extra)
            self.assertEqual(p.returncode, 0, p.stderr)
        p = run("compare", "--db", db, "1", "2", "--by", "load", "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("cpu:cpus=%d,intensity=100%%" % CPU, p.stdout)


class LoadCommand(TempDirCase):
    """The command and everything it starts are gone when latscope is.  The times judged have
    margins of 0.6 s or more, which no stall of this host (30 ms at worst) fills."""

    def start(self, seconds, extra_cmd=""):
        self.pids = self.path("pids")
        cmd = ("sleep 300 & echo $! >> %s; (sleep 300; true) & echo $! >> %s; echo $$ >> %s; %s wait"
               % (self.pids, self.pids, self.pids, extra_cmd))
        self.out = self.path("r.json")
        return subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-D", str(seconds), "-q", "--no-store",
                                 "--json", self.out, "--load-cmd", cmd],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def started(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if os.path.exists(self.pids):
                with open(self.pids) as f:
                    pids = [int(x) for x in f.read().split()]
                if len(pids) == 3:
                    return pids
            time.sleep(0.05)
        self.fail("the load command did not start")

    def assert_gone(self, pids, within=5):
        deadline = time.monotonic() + within
        while time.monotonic() < deadline and any(alive(p) for p in pids):
            time.sleep(0.05)
        self.assertEqual([p for p in pids if alive(p)], [], "left behind")

    def test_command_and_its_children_are_stopped_at_the_end(self):
        p = self.start(1)
        pids = self.started()
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, err)
        self.assert_gone(pids, within=1)
        doc = load(self.out)
        check_consistent(self, doc)
        self.assertTrue(doc["labels"]["load"].startswith("cmd:sleep 300"), doc["labels"])
        outcome = doc["params"]["load_cmd_outcome"]
        self.assertFalse(outcome["ended_early"])
        self.assertIn("signal", outcome, "a command still running at the end is stopped by a signal")

    def test_interrupted_run_stops_the_command_and_keeps_the_result(self):
        p = self.start(60)
        pids = self.started()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("latency", out)
        self.assert_gone(pids, within=1)
        self.assertTrue(load(self.out)["interrupted"])

    def test_killed_latscope_leaves_nothing_behind(self):
        p = self.start(60)
        pids = self.started()
        p.kill()
        p.wait()
        self.assert_gone(pids)

    @needs(root=True, programs=("strace",))
    def test_the_command_group_is_never_signalled_after_its_leader_is_reaped(self):
        # Once reaped, the leader's pid (its group's id) is free for any new process
        # group: a kill(-pid) after that may hit an unrelated one.
        pidfile, log = self.path("pid"), self.path("strace.log")
        p = strace(log, "kill,tkill,tgkill,wait4,waitid", "timer", "-a", str(CPU), "-D", "0.5", "-q",
                   "--no-store", "--load-cmd", "echo $$ > %s" % pidfile)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(pidfile) as f:
            leader = int(f.read())
        with open(log) as f:
            lines = f.read().splitlines()
        reaped = [i for i, line in enumerate(lines)
                  if (re.search(r"wait4\(.*= %d$" % leader, line)
                      or (re.search(r"waitid\(.*si_pid=%d\b.*= 0$" % leader, line) and "WNOWAIT" not in line))]
        self.assertEqual(len(reaped), 1, "the leader is reaped once")
        signalled = [i for i, line in enumerate(lines) if re.search(r"\bkill\(-?%d," % leader, line)]
        self.assertTrue(any("kill(-%d," % leader in lines[i] for i in signalled), "its group is signalled")
        self.assertEqual([lines[i] for i in signalled if i > reaped[0]], [])

    def test_a_command_that_ends_early_is_noted_with_its_status(self):
        out = self.path("e.json")
        p = run("timer", "-a", str(CPU), "-D", "1", "-q", "--no-store", "--json", out, "--load-cmd", "sleep 0.3; exit 3")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        outcome = doc["params"]["load_cmd_outcome"]
        self.assertEqual(outcome["exit_status"], 3)
        self.assertTrue(outcome["ended_early"])
        self.assertGreater(outcome["ran_ns"], 0.25e9)
        self.assertLess(outcome["ran_ns"], 0.9e9)
        self.assertTrue(any("exit status 3" in n for n in doc["notes"]), doc["notes"])


def strace(log, syscalls, *args):
    """Run latscope under strace -f, which writes every named syscall of every process to log."""
    # LeakSanitizer cannot work under ptrace: it would fail the run.
    env = dict(os.environ, ASAN_OPTIONS=":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"])))
    return subprocess.run(["strace", "-f", "-qq", "--seccomp-bpf", "-e", "trace=" + syscalls, "-o", log,
                           LATSCOPE, *args], capture_output=True, text=True, timeout=120, env=env)


def unused_block_major():
    """A block major no driver has: a node with it can be opened by nothing."""
    with open("/proc/devices") as f:
        used = {int(line.split()[0]) for line in f.read().split("Block devices:")[1].splitlines() if line.strip()}
    return next(m for m in range(240, 255) if m not in used)


class ConsoleDevice(TempDirCase):
    """console:dev= writes only into a terminal or /dev/kmsg: anything else is refused
    while the options are checked, and never opened for writing."""

    def console(self, dev, *extra):
        return run("timer", "-a", str(CPU), "-l", "200", "-q", "--no-store", *extra,
                   "--load", "console:cpus=%d,intensity=10%%,dev=%s" % (CPU, dev))

    def assert_refused(self, p, says):
        self.assertEqual(p.returncode, 2, p.stderr)
        first = p.stderr.splitlines()[0]
        self.assertIn("'--load'", first)
        self.assertIn(says, first)
        self.assertNotIn("latency", p.stdout, "nothing is measured")

    def test_console_load_refuses_a_regular_file_and_leaves_it_unchanged(self):
        f = self.path("victim")
        with open(f, "w") as out:
            out.write("precious\n")
        self.assert_refused(self.console(f), "'%s' is a regular file, not a terminal or /dev/kmsg" % f)
        with open(f) as back:
            self.assertEqual(back.read(), "precious\n")

    def test_console_load_refuses_a_symlink_to_a_regular_file(self):
        f, link = self.path("victim"), self.path("link")
        with open(f, "w") as out:
            out.write("precious\n")
        os.symlink(f, link)
        self.assert_refused(self.console(link), "is a regular file")
        with open(f) as back:
            self.assertEqual(back.read(), "precious\n")

    def test_console_load_refuses_a_directory(self):
        self.assert_refused(self.console(self.tmp), "is a directory")

    def test_console_load_refuses_a_character_device_that_is_no_terminal(self):
        self.assert_refused(self.console("/dev/null"), "'/dev/null' is a character device, not a terminal")

    def test_console_load_refuses_a_path_that_does_not_exist(self):
        self.assert_refused(self.console(self.path("nonexistent")), "No such file or directory")

    @needs(root=True, programs=("strace",))
    def test_console_load_refuses_a_block_device_and_never_opens_it_for_writing(self):
        node, log = self.path("disk"), self.path("strace.log")
        os.mknod(node, stat.S_IFBLK | 0o600, os.makedev(unused_block_major(), 0))
        p = strace(log, "open,openat,openat2", "timer", "-a", str(CPU), "-l", "200", "-q", "--no-store",
                   "--load", "console:cpus=%d,dev=%s" % (CPU, node))
        self.assert_refused(p, "'%s' is a block device" % node)
        with open(log) as f:
            opens = [line for line in f if node in line]
        self.assertTrue(opens, "the check looks at the node")
        self.assertEqual([o for o in opens if "O_WRONLY" in o or "O_RDWR" in o], [])

    def test_console_load_writes_to_a_pty(self):
        master, slave = os.openpty()
        try:
            p = self.console(os.ttyname(slave))
            self.assertEqual(p.returncode, 0, p.stderr)
            os.set_blocking(master, False)
            self.assertIn(b"latscope console load", os.read(master, 65536))
        finally:
            os.close(master)
            os.close(slave)

    @needs(root=True)
    def test_console_load_writes_to_dev_kmsg(self):
        with open("/proc/sys/kernel/printk_devkmsg") as f:
            setting = f.read().strip()
        if setting != "ratelimit":
            self.skipTest("this machine's kernel log would take every line (kernel.printk_devkmsg is %s, not "
                          "ratelimit)" % setting)
        p = self.console("/dev/kmsg")
        self.assertEqual(p.returncode, 0, p.stderr)


class BadLoads(TempDirCase):
    def test_bad_specs_are_named_before_anything_runs(self):
        for spec, says in (("frob", "unknown load 'frob'"), ("cpu:intensity=150%", "150%"),
                           ("cpu:cpus=4095", "4095"), ("cpu:speed=2", "speed")):
            p = run("timer", "-D", "1", "--no-store", "--load", spec)
            self.assertEqual(p.returncode, 2, (spec, p.stderr))
            first = p.stderr.splitlines()[0]
            self.assertIn("'--load'", first)
            self.assertIn(says, first)

    def test_a_load_that_cannot_start_is_an_error_that_says_why(self):
        p = run("timer", "-D", "1", "--no-store", "--load", "io:dir=" + self.path("missing"))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("'--load'", p.stderr)
        self.assertIn("missing", p.stderr)


if __name__ == "__main__":
    main()
