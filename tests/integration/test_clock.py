"""latscope clock: what each clock costs to read, checked against what Python and strace see."""
import os
import re
import subprocess
import time

from harness import LATSCOPE, TempDirCase, check_consistent, load, main, needs, online_cpus, run

CLOCKS = {"monotonic": time.CLOCK_MONOTONIC, "monotonic_raw": time.CLOCK_MONOTONIC_RAW,
          "realtime": time.CLOCK_REALTIME, "tai": time.CLOCK_TAI, "boottime": time.CLOCK_BOOTTIME}
CPU = online_cpus()[-1]


class ClockRuns(TempDirCase):
    def measure(self, *args, json_name="c.json"):
        out = self.path(json_name)
        p = run("clock", *args, "-q", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        return p, doc

    def test_every_clock_is_a_metric_with_samples_and_the_resolution_the_kernel_gives(self):
        """Relations a stall cannot turn: a stall is one slow read among 20,000, the smallest
        step and the median are the fast ones, and no stall turns a clock backwards."""
        p, doc = self.measure("-a", str(CPU), "-l", "20000", "--no-store")
        self.assertEqual(doc["probe"], "clock")
        self.assertEqual(doc["metrics"][:5], list(CLOCKS))
        observed = doc["params"]["observed"]["clocks"]
        for name, clk in CLOCKS.items():
            m = doc["cpus"][0]["metrics"][name]
            self.assertGreater(m["count"], 1000, name)
            o = observed[name]
            # clock_getres as Python's own call gives it: an independent reading of the same answer.
            self.assertEqual(o["getres_ns"], round(time.clock_getres(clk) * 1e9), name)
            self.assertIn(o["served_by"], ("vdso", "syscall"), name)
            step = o["cpus"][0]["min_step_ns"]
            # The smallest step is a read's cost at least once: never above the median read.
            self.assertIsNotNone(step, name)
            self.assertLessEqual(step, m["p50_ns"] + m["p50_ns"] // 8 + 1, name)
            self.assertEqual(o["backwards"], 0, name + " went backwards on one CPU")
            self.assertTrue(any(n.startswith(name + ": ") for n in doc["notes"]), doc["notes"])
        if "tsc" in doc["metrics"]:
            self.assertEqual(observed["tsc"]["served_by"], "instruction")
            self.assertGreater(observed["tsc"]["cycle_ps_min"], 0)
        else:
            self.assertTrue(any("no tsc metric" in n for n in doc["notes"]), doc["notes"])

    @needs(cpus=2)
    def test_two_cpus_compare_their_clocks_and_monotonic_never_runs_backwards_across_them(self):
        """A relation a stall cannot turn: a stall of 20 ms costs 200 of the 2,000 cross checks, and
        a stalled CPU's clock is not turned backwards."""
        cpus = online_cpus()[:2]
        _, doc = self.measure("-a", "%d,%d" % tuple(cpus), "-D", "200ms", "--no-store")
        self.assertEqual([c["cpu"] for c in doc["cpus"]], cpus)
        mono = doc["params"]["observed"]["clocks"]["monotonic"]
        self.assertGreater(mono["cross_checks"], 100, "one check every 100 us for 200 ms")
        self.assertEqual(mono["cross_backwards"], 0)
        self.assertGreaterEqual(mono["cross_margin_ns"], 0)

    @needs(programs=("strace",))
    def test_the_served_by_verdict_matches_the_system_calls_strace_counts(self):
        """Judges no latency: counts of system calls, clock by clock."""
        log = self.path("strace.log")
        out = self.path("s.json")
        p = run_traced(log, "clock", "-a", str(CPU), "-l", "20000", "-q", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        calls = strace_calls(log, "clock_gettime")
        rounds = doc["cpus"][0]["metrics"]["monotonic"]["count"]
        observed = doc["params"]["observed"]["clocks"]
        verdicts = {o["served_by"] for k, o in observed.items() if k in CLOCKS}
        if verdicts == {"vdso"}:
            # Setup's own timed system calls only: far fewer than two reads a clock a round.
            self.assertLess(calls, rounds, "vDSO said, but the reads were system calls")
        elif verdicts == {"syscall"}:
            self.assertGreaterEqual(calls, 2 * len(CLOCKS) * rounds)
        # Clock by clock, from the clock id strace names in each call: also where some clocks
        # are served one way and some the other.
        by_clock = strace_clock_calls(log)
        for name in CLOCKS:
            n = by_clock.get("CLOCK_" + name.upper(), 0)
            if observed[name]["served_by"] == "vdso":
                self.assertLess(n, rounds, "%s: vDSO said, but %d reads were system calls" % (name, n))
            else:
                self.assertGreaterEqual(n, 2 * rounds, "%s: system call said, but strace saw %d" % (name, n))

    def test_a_stored_clock_run_shows_compares_and_reports(self):
        db = self.path("runs.db")
        for i in (1, 2):
            p = run("clock", "-a", str(CPU), "-l", "20000", "-q", "--db", db, "--label", "n=%d" % i)
            self.assertEqual(p.returncode, 0, p.stderr)
        p = run("show", "1", "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("monotonic_raw (ns)", p.stdout)
        self.assertIn("monotonic:", p.stdout)
        p = run("compare", "1", "2", "--db", db, "--metric", "boottime")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"\n\| 2 +\| +\d+ \|")
        html = self.path("r.html")
        p = run("report", "1", "2", "-o", html, "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(html, encoding="utf-8") as f:
            page = f.read()
        self.assertIn("clock read cost", page)
        self.assertIn("realtime", page)

    def test_bad_input_is_one_line_naming_the_option_then_the_hint(self):
        for args, words in ((["-a", "999"], "option '-a'"), (["-D", "0"], "option '-D'"), (["--bogus"], "--bogus")):
            p = run("clock", *args, "--no-store")
            self.assertEqual(p.returncode, 2, args)
            first, hint = p.stderr.strip().splitlines()
            self.assertIn(words, first)
            self.assertEqual(hint, "Try 'latscope clock --help'.")


def run_traced(log, *args):
    """latscope under strace, every clock_gettime system call of every thread logged."""
    # LeakSanitizer cannot work under ptrace: it would fail the run (the other tests check for leaks).
    env = dict(os.environ, ASAN_OPTIONS=":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"])))
    return subprocess.run(["strace", "-f", "-qq", "-e", "trace=clock_gettime", "-o", log, LATSCOPE, *args],
                          capture_output=True, text=True, timeout=120, env=env)


def strace_calls(log, name):
    with open(log, encoding="utf-8", errors="replace") as f:
        return sum(1 for line in f if re.search(r"\b%s\(" % name, line))


def strace_clock_calls(log):
    """clock_gettime system calls by the clock id strace prints (CLOCK_MONOTONIC, ...)."""
    calls = {}
    with open(log, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"\bclock_gettime\((CLOCK_[A-Z_]+)[,)]", line)
            if m:
                calls[m.group(1)] = calls.get(m.group(1), 0) + 1
    return calls


if __name__ == "__main__":
    main()
