"""latscope wake: one thread waking another, on one CPU and across two, by every mechanism."""
import os
import signal
import statistics
import subprocess
import time
import unittest

from harness import LATSCOPE, TempDirCase, check_consistent, load, main, needs, online_cpus, run

CPUS = online_cpus()
TWO = len(CPUS) >= 2
CROSS = "%d,%d" % (CPUS[0], CPUS[1]) if TWO else None
SAME = "%d,%d" % (CPUS[-1], CPUS[-1])
MECHANISMS = ("futex", "eventfd", "pipe", "cond")


class WakeRuns(TempDirCase):
    def wake(self, *args, timeout=120):
        out = self.path("w.json")
        p = run("wake", *args, "-q", "--no-store", "--json", out, timeout=timeout)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        self.assertEqual(doc["probe"], "wake")
        return doc

    def test_every_mechanism_writes_a_consistent_result_with_latency_and_wake_call(self):
        for via in MECHANISMS:
            for pair in filter(None, (CROSS, SAME)):
                with self.subTest(via=via, pair=pair):
                    doc = self.wake("--via", via, "--cpus", pair, "-i", "200us", "-l", "300")
                    self.assertEqual(doc["metrics"], ["latency", "wake_call"])
                    self.assertEqual(doc["params"]["cpus"], pair)
                    self.assertEqual(doc["params"]["via"], via)
                    self.assertIs(doc["params"]["pingpong"], False)
                    self.assertEqual(doc["params"]["interval_ns"], 200000)
                    # One measuring thread, the waker, on the pair's first CPU.
                    self.assertEqual([c["cpu"] for c in doc["cpus"]], [int(pair.split(",")[0])])
                    m = doc["all"]["metrics"]
                    self.assertEqual(m["latency"]["count"], 300, "every wakeup is recorded")
                    self.assertEqual(m["wake_call"]["count"], 300)
                    self.assertGreater(m["latency"]["min_ns"], 0)
                    self.assertGreater(m["wake_call"]["min_ns"], 0)
                    self.assertEqual(doc["all"]["missed"], 0)

    def test_pingpong_adds_roundtrip_which_is_never_shorter_than_the_one_way_latency(self):
        for via in MECHANISMS:
            for pair in filter(None, (CROSS, SAME)):
                with self.subTest(via=via, pair=pair):
                    # -i 20us keeps one CPU from RT throttling (back to back it is busy all the time).
                    doc = self.wake("--via", via, "--cpus", pair, "--pingpong", "-i", "20us", "-l", "2000")
                    self.assertEqual(doc["metrics"], ["latency", "wake_call", "roundtrip"])
                    self.assertIs(doc["params"]["pingpong"], True)
                    m = doc["all"]["metrics"]
                    for name in doc["metrics"]:
                        self.assertEqual(m[name]["count"], 2000, name)
                    # Each round trip holds its wakeup (t3 > t2 > t0): so do the mean, min and max.
                    self.assertGreaterEqual(m["roundtrip"]["mean_ns"], m["latency"]["mean_ns"])
                    self.assertGreaterEqual(m["roundtrip"]["min_ns"], m["latency"]["min_ns"])
                    self.assertGreaterEqual(m["roundtrip"]["max_ns"], m["latency"]["max_ns"])
                    self.assertGreaterEqual(m["roundtrip"]["mean_ns"], m["wake_call"]["mean_ns"])

    def test_pingpong_runs_back_to_back_by_default_and_the_summary_shows_every_metric(self):
        """A relation a stall cannot turn: a stall falls inside a round trip, which still fills the run."""
        out = self.path("b.json")
        p = run("wake", "--pingpong", "--cpus", CROSS or SAME, "-D", "300ms", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        self.assertEqual(doc["params"]["interval_ns"], 0)
        # Back to back, the round trips fill the run; at an interval they would fill a few percent of it.
        rt = doc["all"]["metrics"]["roundtrip"]
        self.assertGreater(rt["count"] * rt["mean_ns"] / doc["elapsed_ns"], 0.5, "back to back")
        for title in ("latency (us)", "wake_call (us)", "roundtrip (us)"):
            self.assertIn(title, p.stdout)
        self.assertIn("ping-pong, back to back", p.stdout)

    def test_the_default_pair_is_the_first_two_usable_cpus(self):
        doc = self.wake("-l", "20")
        self.assertEqual(doc["params"]["cpus"], CROSS or SAME)
        doc = self.wake("-a", SAME, "-l", "20")
        self.assertEqual(doc["params"]["cpus"], SAME)

    def test_bad_input_is_one_line_naming_the_option_with_exit_2(self):
        top = CPUS[-1]
        cases = [
            (["--via", "carrier-pigeon"], "'--via'", "'carrier-pigeon' is not one of futex, eventfd, pipe, cond"),
            (["--cpus", "0,1,2"], "'--cpus'", "'0,1,2' is not a pair of CPUs such as 0,1"),
            (["--cpus", "0"], "'--cpus'", "not a pair"),
            (["--cpus", "a,b"], "'--cpus'", "not a pair"),
            (["--cpus", "0,-1"], "'--cpus'", "not a pair"),
            (["--cpus", "0,%d" % (top + 98)], "'--cpus'", "cpu %d is not online" % (top + 98)),
            (["--cpus", "0,99999"], "'--cpus'", "above"),
            (["-i", "1us"], "'-i'", "below the minimum of 10us without --pingpong"),
            (["-i", "20ms", "--window", "10ms"], "'--window'", "shorter than the interval"),
            (["--pingpong", "-i", "-3"], "'-i'", "cannot be negative"),
            (["-D", "1", "-l", "5"], "exclude each other"),
        ]
        for args, *needles in cases:
            with self.subTest(args=args):
                p = run("wake", *args, "--no-store", timeout=30)
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 2, p.stderr)
                self.assertTrue(lines[0].startswith("latscope wake: "), lines[0])
                for needle in needles:
                    self.assertIn(needle, lines[0])
                self.assertEqual(p.stdout, "")

    def test_short_intervals_are_allowed_with_pingpong(self):
        doc = self.wake("--pingpong", "-i", "1us", "-l", "100")
        self.assertEqual(doc["params"]["interval_ns"], 1000)

    def test_duration_and_loops_end_the_run_on_time(self):
        """A relation a stall cannot turn: a stall only skips the deadlines it covers, a third of
        the run would have to be stalled to fail; the end is judged to within seconds."""
        started = time.monotonic()
        doc = self.wake("-D", "1500ms", "--cpus", CROSS or SAME)
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(doc["stop_reason"], "duration")
        # One wakeup per 1 ms deadline; a late waker skips the deadlines that passed.
        self.assertLessEqual(doc["all"]["metrics"]["latency"]["count"], 1500)
        self.assertGreater(doc["all"]["metrics"]["latency"]["count"], 1000)
        doc = self.wake("--pingpong", "--via", "cond", "-D", "500ms", "--cpus", SAME, "-i", "50us")
        self.assertEqual(doc["stop_reason"], "duration")
        doc = self.wake("-l", "7", "--via", "pipe")
        self.assertEqual(doc["stop_reason"], "loops")
        self.assertEqual(doc["all"]["metrics"]["latency"]["count"], 7)

    def test_sigint_mid_run_ends_every_mode_and_writes_the_result(self):
        """Judges no latency: the 3 s a run has to end in are far above any stall.  SIGINT is sent once the run has
        taken a sample: each run signals this process (SIGUSR1) at its first sample above 1ns
        (--on-threshold), which the test waits for instead of a fixed sleep."""
        modes = [["--via", "futex"], ["--via", "cond", "--cpus", SAME], ["--pingpong", "--via", "pipe"],
                 ["--pingpong", "--via", "cond"], ["--pingpong", "--via", "futex", "--cpus", SAME, "-i", "20us"],
                 ["--via", "eventfd", "-i", "1s"]]
        usr1 = {signal.SIGUSR1}
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, usr1)
        self.addCleanup(signal.pthread_sigmask, signal.SIG_SETMASK, blocked)
        for args in modes:
            with self.subTest(args=args):
                while signal.sigtimedwait(usr1, 0):         # one a run before sent as it ended
                    pass
                out = self.path("i.json")
                proc = subprocess.Popen([LATSCOPE, "wake", *args, "-q", "--no-store", "--json", out, "--trigger", "1ns",
                                         "--on-threshold", "signal %d:USR1" % os.getpid()],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, blocked))
                try:
                    self.assertIsNotNone(signal.sigtimedwait(usr1, 20), "no sample signalled in 20 s")
                    sent = time.monotonic()
                    proc.send_signal(signal.SIGINT)
                    stdout, stderr = proc.communicate(timeout=20)
                finally:
                    if proc.poll() is None:
                        proc.kill()
                        proc.communicate()
                self.assertLess(time.monotonic() - sent, 3, "a signal ends the run promptly")
                self.assertEqual(proc.returncode, 0, stderr)
                self.assertIn("stopped early", stdout)
                doc = load(out)
                check_consistent(self, doc)
                self.assertTrue(doc["interrupted"])
                self.assertEqual(doc["stop_reason"], "signal SIGINT")
                self.assertGreater(doc["all"]["metrics"]["latency"]["count"], 0)
                os.unlink(out)

    @needs(root=True, programs=("runuser",))
    def test_non_root_measures_wakeups(self):
        for args in (["-l", "200"], ["--pingpong", "--via", "eventfd", "-l", "2000"]):
            with self.subTest(args=args):
                out = self.path("nobody.json")
                p = self.as_nobody("wake", *args, "-q", "--no-store", "--json", out)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("not applied: SCHED_FIFO", p.stderr)
                doc = load(out)
                check_consistent(self, doc)
                self.assertEqual(doc["all"]["metrics"]["latency"]["count"], int(args[-1]))


def polling_idle(cpus):
    """The cpuidle driver of the CPUs that poll when idle (an enabled POLL state, as haltpoll's
    on a KVM guest), or None: this known answer is for a CPU that halts."""
    for cpu in cpus:
        base = "/sys/devices/system/cpu/cpu%d/cpuidle" % cpu
        for state in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            with open(os.path.join(base, state, "name")) as f, open(os.path.join(base, state, "disable")) as g:
                if f.read().strip() == "POLL" and g.read().strip() == "0":
                    with open("/sys/devices/system/cpu/cpuidle/current_driver") as d:
                        return d.read().strip()
    return None


@needs(root=True, cpus=2)
@unittest.skipIf(TWO and polling_idle(CPUS[:2]), "this machine's idle CPUs poll (cpuidle driver %s, state POLL "
                 "enabled): the remote sleeper's CPU is awake, so a wakeup across CPUs need not be slower; the known "
                 "answer is for CPUs that halt" % polling_idle(CPUS[:2]))
class WakeKnownAnswer(TempDirCase):
    """Waking a thread on another CPU costs more than waking one on the waker's own CPU.

    On one CPU the wakeup only puts the sleeper on the waker's run queue: no
    interrupt, and the CPU is awake with warm caches.  At equal SCHED_FIFO
    priority the sleeper does not preempt the waker, so its latency is the rest
    of the wake call, the waker's way into its sleep and one context switch.
    Across CPUs the wakeup has to reach a CPU that sat idle for most of the 1 ms
    interval: a reschedule (or wake-list) IPI and the target's exit from idle.
    On a KVM guest both are the host's work: the IPI write traps to the
    hypervisor, and the halted target vCPU must be woken, scheduled and entered
    again.  Measured here: same CPU p50 8-10 us, across CPUs 13-33 us.

    (Where the idle CPU polls instead of halting, idle=poll on bare metal or the
    haltpoll cpuidle driver a KVM guest may boot with, the remote sleeper can
    start before the waker has even left its wake call and the direction may
    turn: measured on such a boot, same CPU 13-24 us, across 5-9 us.  There the
    test is skipped, saying so.)

    Single runs on this guest vary a lot (hypervisor preemption), so the test
    compares the medians of the p50s of alternating runs, not maxima.

    A relation a stall cannot turn: a stall delays the one or few wakeups it covers
    (a few of 1000 a run), and a p50 moves only when half of them move; three runs
    each side, alternating, so one noisy run is outvoted.  (Skipped on this project's
    guest, whose haltpoll driver polls: its length stays as measured where it ran.)
    """

    RUNS, LOOPS = 3, 1000

    def p50(self, pair):
        out = self.path("k.json")
        p = run("wake", "--cpus", pair, "-l", str(self.LOOPS), "-i", "1ms", "-q", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        return doc["all"]["metrics"]["latency"]["p50_ns"]

    def test_waking_a_thread_across_cpus_is_slower_than_on_the_same_cpu(self):
        a, b = CPUS[0], CPUS[1]
        same, cross = [], []
        for i in range(self.RUNS):
            # Alternate, and use both CPUs for both roles, so that drift and one noisy CPU weigh on both sides.
            x, y = (a, b) if i % 2 == 0 else (b, a)
            same.append(self.p50("%d,%d" % (x, x)))
            cross.append(self.p50("%d,%d" % (x, y)))
        s, c = statistics.median(same), statistics.median(cross)
        msg = "p50 same CPU %s us, across CPUs %s us" % ([round(v / 1e3, 1) for v in same],
                                                           [round(v / 1e3, 1) for v in cross])
        # The direction only: how much slower is the machine's (an IPI and, in a guest, a vCPU woken from halt).
        self.assertGreater(c, s, msg)


if __name__ == "__main__":
    main()
