"""Runs of latscope timer: results complete and consistent, ended by duration, loops or signal."""
import os
import shutil
import signal
import subprocess
import time
import unittest

from harness import (COVERAGE, COVERAGE_BUILD, LATSCOPE, SANITIZED, SANITIZED_BUILD, Started, TempDirCase,
                     check_consistent, hangup_as_default, load, main, needs, online_cpus, parse, run, test_cpu)

# The CPU the pinned runs measure (harness.test_cpu: ./check's lane)
CPU = test_cpu()


class TimerRuns(TempDirCase):
    """Most runs are short or counted (-l): their length is not what they test.  None asserts
    an absolute latency; where a host stall could matter, the test's docstring says why it cannot
    turn the answer."""

    def test_json_of_a_run_on_every_cpu_is_self_consistent(self):
        """Exact accounting (a stall makes wakeups late or missed, never uncounted)."""
        out = self.path("r.json")
        p = run("timer", "-D", "1", "--window", "250ms", "-q", "--json", out, "--label", "config=test",
                "--label", "sched=cfs")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        self.assertEqual([c["cpu"] for c in doc["cpus"]], online_cpus())
        self.assertEqual(doc["labels"], {"config": "test", "sched": "cfs"})
        self.assertEqual(doc["params"]["interval_ns"], 1000000)
        self.assertEqual(doc["params"]["duration_ns"], 1000000000)
        self.assertEqual(doc["command_line"][1:3], ["timer", "-D"])
        self.assertEqual(doc["stop_reason"], "duration")
        self.assertFalse(doc["interrupted"])
        for c in doc["cpus"]:
            lat = c["metrics"]["latency"]
            # 1 s at 1 ms: every deadline is either a sample or counted as missed.
            self.assertEqual(lat["count"] + c["missed"], 1000, f"cpu {c['cpu']}")
            # A window is where a sample was recorded: a late last wakeup opens one more, alone in it.
            self.assertEqual(len([w for w in c["windows"] if w["start_ns"] < 1e9]), 4)
            for w in c["windows"][4:]:
                self.assertEqual((w["start_ns"], w["latency"]["count"]), (1e9, 1), w)
            self.assertGreater(c["overhead"]["clock_read_ns"]["count"], 0)
            self.assertGreater(c["overhead"]["wakeup_to_recorded_ns"]["count"], 0)
        for key in ("kernel_release", "clocksource", "preempt", "online_cpus"):
            self.assertTrue(doc["system"][key], key)

    def test_a_folded_run_keeps_its_totals_and_its_p99_within_the_histograms_error(self):
        """Exact arithmetic over the windows: no stall can turn it."""
        # 400 windows of 10 ms on each CPU: past the 128 recent ones, so most are folded, and past
        # the most a run keeps (128 recent + a batch of 32 + 128 old blocks), so the old ones merge.
        out = self.path("f.json")
        p = run("timer", "-D", "4s", "--window", "10ms", "-i", "1ms", "--threshold", "30us", "-q", "--no-store",
                "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        for block in doc["cpus"] + [doc["all"]]:
            wins, lat = block["windows"], block["metrics"]["latency"]
            self.assertTrue(any(w.get("span", 1) > 1 for w in wins), "older windows are folded")
            self.assertLess(len(wins), 300, "a bounded number of windows, not 400")
            # what the windows hold is what was measured, sample by sample
            counted = [w["latency"] for w in wins if w["latency"]["count"]]
            self.assertEqual(sum(w["count"] for w in counted), lat["count"])
            self.assertEqual(min(w["min_ns"] for w in counted), lat["min_ns"])
            self.assertEqual(max(w["max_ns"] for w in counted), lat["max_ns"])
            self.assertEqual(sum(w["above"] for w in counted), lat["above"])
            buckets = {}
            for w in counted:
                for lo, hi, c in w["histogram"]["buckets"]:
                    buckets[(lo, hi)] = buckets.get((lo, hi), 0) + c
            rank, seen = -(-99 * lat["count"] // 100), 0
            for (lo, hi), c in sorted(buckets.items()):
                seen += c
                if seen >= rank:
                    break
            p99 = (lo + hi) / 2
            self.assertLessEqual(abs(p99 - lat["p99_ns"]), lat["p99_ns"] / 128 + 1, "p99 of the windows' histograms")

    def test_summary_table_has_a_row_per_cpu_and_one_for_all(self):
        p = run("timer", "-l", "200", "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [line.split()[0] for line in p.stdout.splitlines() if line[:1].isdigit() or line.startswith("all")]
        expect = [str(c) for c in online_cpus()] + (["all"] if len(online_cpus()) > 1 else [])
        self.assertEqual(rows, expect)
        self.assertIn("warm-max", p.stdout)
        self.assertIn("clock read", p.stdout)

    def test_live_lines_come_one_per_cpu_per_window(self):
        """Counts windows, not time (a late last wakeup's window is allowed for)."""
        p = run("timer", "-a", str(CPU), "-D", "0.4", "--window", "100ms", "--live")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = [l for l in p.stdout.splitlines() if " cpu%d " % CPU in l and "global" in l]
        # (and one for a late last wakeup's window at 0.40s, as above)
        self.assertEqual(len([l for l in lines if not l.lstrip().startswith("0.40s")]), 4, lines)
        self.assertLessEqual(len(lines), 5, lines)
        self.assertIn("above 100us", lines[0])

    def test_loops_stop_after_that_many_wakeups(self):
        out = self.path("r.json")
        p = run("timer", "-a", str(CPU), "-l", "300", "-i", "500us", "-q", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        self.assertEqual(doc["cpus"][0]["metrics"]["latency"]["count"], 300)
        self.assertEqual(doc["stop_reason"], "loops")

    @needs(cpus=2)
    def test_distance_gives_each_cpu_a_longer_period(self):
        """Exact accounting of deadlines (a stall makes them missed, never uncounted)."""
        cpus = online_cpus()[:2]
        out = self.path("d.json")
        p = run("timer", "-a", ",".join(map(str, cpus)), "-D", "0.5", "-i", "1ms", "-d", "1ms", "-q", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        self.assertEqual(doc["params"]["distance_ns"], 1000000)
        # 0.5 s: the first CPU's 1 ms periods, the second's 2 ms ones, each a sample or missed
        for c, periods in zip(doc["cpus"], (500, 250)):
            self.assertEqual(c["metrics"]["latency"]["count"] + c["missed"], periods, f"cpu {c['cpu']}")
        p = run("timer", "-a", ",".join(map(str, cpus)), "-i", "600ms", "-d", "500ms", "-D", "2")
        self.assertEqual(p.returncode, 2)
        self.assertIn("shorter than the longest interval 1.1s", p.stderr)

    @needs(cpus=2)
    def test_aligned_deadlines_meet_and_an_offset_spreads_them_by_exactly_its_amount(self):
        """Exact: a recorded wakeup's time less its latency ([at_ns, value] in `largest`) is its deadline,
        which no stall moves (a stall makes wakeups late or missed, each deadline still counted)."""
        cpus = online_cpus()[:2]
        spread = {}
        for name, extra in (("aligned", ["--aligned"]), ("offset", ["--aligned-offset", "500us"]),
                            ("offset past the period", ["--aligned-offset", "1.25ms"])):
            out = self.path(name + ".json")
            p = run("timer", "-a", ",".join(map(str, cpus)), "-D", "0.5", "-i", "1ms", "-q", "--no-store",
                    "--json", out, *extra)
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = load(out)
            check_consistent(self, doc)
            phases = []
            for c in doc["cpus"]:
                # 0.5 s of 1 ms periods on each CPU, shifted or not: each a sample or missed
                self.assertEqual(c["metrics"]["latency"]["count"] + c["missed"], 500, f"{name}: cpu {c['cpu']}")
                deadlines = {(at - v) % 1000000 for at, v in c["largest"]}
                self.assertEqual(len(deadlines), 1, f"{name}: cpu {c['cpu']}'s deadlines on one grid")
                phases.append(deadlines.pop())
            self.assertEqual(phases[0], 0, f"{name}: the first CPU's deadlines at k * interval from the start")
            d = (phases[1] - phases[0]) % 1000000
            spread[name] = min(d, 1000000 - d)
            self.assertEqual(doc["params"].get("aligned_offset_ns"), {"aligned": None, "offset": 500000,
                                                                       "offset past the period": 1250000}[name])
        # simultaneous deadlines with --aligned; 500 us apart, and 1.25 ms - 1 ms = 250 us apart, with an offset
        self.assertEqual(spread, {"aligned": 0, "offset": 500000, "offset past the period": 250000})
        self.assertLess(spread["aligned"], spread["offset"])
        for args, says in ((["--aligned", "-d", "100us"], "option '--aligned': --distance gives each CPU its own "
                            "period"), (["--aligned-offset", "-1ms"], "option '--aligned-offset'")):
            p = run("timer", "-l", "1", *args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn(says, p.stderr.splitlines()[0])

    def test_every_wait_mode_measures(self):
        """Exact accounting of deadlines (a stall makes them missed, never uncounted)."""
        for mode in ("nanosleep", "timerfd", "posix"):
            with self.subTest(mode=mode):
                out = self.path(mode + ".json")
                p = run("timer", "-a", str(CPU), "-D", "0.25", "-i", "500us", "--mode", mode, "-q", "--json", out)
                self.assertEqual(p.returncode, 0, p.stderr)
                doc = load(out)
                check_consistent(self, doc)
                c = doc["cpus"][0]
                self.assertEqual(c["metrics"]["latency"]["count"] + c["missed"], 500)
                self.assertEqual(doc["params"]["mode"], mode)

    def test_every_clock_runs_and_is_recorded_and_realtime_and_tai_warn_of_steps(self):
        """A relation a stall cannot turn: most of 500 wakeups before the next deadline (a
        30 ms stall misses 60 of them; a wrong clock offset misses all but the first)."""
        for clock, mode in (("monotonic", "nanosleep"), ("realtime", "nanosleep"), ("tai", "nanosleep"),
                            ("boottime", "nanosleep"), ("realtime", "timerfd"), ("tai", "posix"),
                            ("boottime", "timerfd")):
            with self.subTest(clock=clock, mode=mode):
                out = self.path(f"{clock}-{mode}.json")
                p = run("timer", "-a", str(CPU), "-D", "0.25", "-i", "500us", "--clock", clock, "--mode", mode,
                        "--no-store", "--json", out)
                self.assertEqual(p.returncode, 0, p.stderr)
                doc = load(out)
                check_consistent(self, doc)
                c = doc["cpus"][0]
                self.assertEqual(c["metrics"]["latency"]["count"] + c["missed"], 500)
                # deadlines on the right clock: most wakeups come before the next one is due
                # (a wrong offset makes the first wakeup late by years and the rest missed)
                self.assertGreater(c["metrics"]["latency"]["count"], 250)
                self.assertLess(c["metrics"]["latency"]["p50_ns"], 500_000)
                self.assertEqual(doc["params"]["clock"], clock)
                header = p.stdout.splitlines()[0]
                if clock == "monotonic":
                    self.assertIn(f"({mode}), timer slack 1ns,", header)
                else:
                    self.assertIn(f"({mode}, clock {clock}), timer slack 1ns,", header)
                warns = clock in ("realtime", "tai")
                self.assertEqual("shows as latency" in p.stderr, warns, p.stderr)
                self.assertEqual(any("shows as latency" in n for n in doc["notes"]), warns, doc["notes"])
                self.assertFalse(any("stepped during the run" in n for n in doc["notes"]), doc["notes"])

    @needs(root=True)
    def test_a_timer_slack_of_500us_raises_the_median_under_sched_other_by_about_the_slack(self):
        """An injected effect (500 us of slack on every wakeup) judged on the medians of 2000
        wakeups, which a host stall (a few late samples) cannot move; the runs alone on the CPU."""
        cpu = str(CPU)
        def median(*extra):
            out = self.path("slack%d.json" % len(extra))
            p = run("timer", "-a", cpu, "--policy", "other", "-i", "1ms", "-D", "2s", "-q", "--no-store",
                    "--json", out, *extra)
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = load(out)
            check_consistent(self, doc)
            self.assertGreater(doc["cpus"][0]["metrics"]["latency"]["count"], 1000)
            return doc["cpus"][0]["metrics"]["latency"]["p50_ns"], doc
        base, plain = median()
        slack, slacked = median("--timer-slack", "500us")
        self.assertEqual(plain["params"]["timer_slack_ns"], 1)
        self.assertEqual(slacked["params"]["timer_slack_ns"], 500000)
        # relations only: the slack lets the kernel fire the timer up to 500 us late, and an idle CPU waits it out
        self.assertGreater(slack - base, 0.5 * 500000, (base, slack))
        self.assertLess(slack - base, 1.5 * 500000, (base, slack))
        found = {f["id"]: f for f in slacked["findings"]}
        self.assertEqual(found["timer-slack"]["severity"], "warning")
        self.assertIn("measuring threads: 500us, 50 % of the measured interval 1ms", found["timer-slack"]["saw"])
        self.assertNotIn("timer-slack", {f["id"] for f in plain["findings"]})

    @needs(root=True)
    def test_a_timer_slack_under_a_real_time_policy_is_said_to_have_no_effect(self):
        out = self.path("r.json")
        p = run("timer", "-a", str(CPU), "-l", "200", "--timer-slack", "500us", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("timer slack 500us", p.stdout.splitlines()[0])
        self.assertIn("--timer-slack 500us had no effect: the kernel gives SCHED_FIFO threads no timer slack",
                      p.stderr)
        doc = load(out)
        self.assertEqual(doc["cpus"][0]["metrics"]["latency"]["count"], 200)
        self.assertNotIn("timer-slack", {f["id"] for f in doc["findings"]})

    def stop_with(self, sig):
        """Relations a stall cannot turn: the result holds at least what the live lines showed
        before the signal, and the run ends within 3 s of it (a stall is 30 ms at worst)."""
        out = self.path("r.json")
        bg = Started(self, [LATSCOPE, "timer", "-D", "60", "--json", out], preexec_fn=hangup_as_default)
        seen = bg.measured()
        sent = time.monotonic()
        bg.proc.send_signal(sig)
        stdout, stderr = bg.communicate()
        self.assertLess(time.monotonic() - sent, 3, "a signal ends the run promptly")
        self.assertEqual(bg.proc.returncode, 0, stderr)
        self.assertIn("stopped early", stdout)
        doc = load(out)
        check_consistent(self, doc)
        self.assertTrue(doc["interrupted"])
        self.assertGreaterEqual(doc["all"]["metrics"]["latency"]["count"], seen, "what was measured is kept")
        self.assertEqual([f for f in os.listdir(self.tmp)], ["r.json"], "no temporary file is left")
        return doc

    def test_sigint_mid_run_prints_the_summary_and_writes_the_result(self):
        self.assertEqual(self.stop_with(signal.SIGINT)["stop_reason"], "signal SIGINT")

    def test_sigterm_mid_run_prints_the_summary_and_writes_the_result(self):
        self.assertEqual(self.stop_with(signal.SIGTERM)["stop_reason"], "signal SIGTERM")

    def test_sighup_mid_run_prints_the_summary_and_writes_the_result(self):
        # A dropped SSH session: the run measured so far is kept, not lost.
        self.assertEqual(self.stop_with(signal.SIGHUP)["stop_reason"], "signal SIGHUP")

    def test_sigquit_mid_run_prints_the_summary_and_writes_the_result(self):
        self.assertEqual(self.stop_with(signal.SIGQUIT)["stop_reason"], "signal SIGQUIT")

    def test_a_stop_signal_also_stores_the_run(self):
        db = self.path("runs.db")
        bg = Started(self, [LATSCOPE, "timer", "-D", "60", "--db", db], preexec_fn=hangup_as_default)
        bg.measured()
        bg.proc.send_signal(signal.SIGHUP)
        stdout, stderr = bg.communicate()
        self.assertEqual(bg.proc.returncode, 0, stderr)
        p = run("show", "1", "--json", "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(parse(p.stdout)["stop_reason"], "signal SIGHUP")

    def test_sigint_stops_a_run_a_shell_script_started_in_the_background(self):
        # '&' in a script starts the command with SIGINT ignored; kill -INT must still end the run.
        out = self.path("r.json")
        bg = Started(self, [LATSCOPE, "timer", "-a", str(CPU), "-D", "60", "--no-store", "--json", out],
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
        bg.measured()
        bg.proc.send_signal(signal.SIGINT)
        stdout, stderr = bg.communicate()
        self.assertEqual(bg.proc.returncode, 0, stderr)
        self.assertEqual(load(out)["stop_reason"], "signal SIGINT")

    def test_a_run_under_nohup_is_not_stopped_by_sighup(self):
        # nohup leaves SIGHUP ignored: latscope keeps it so and measures to the end.
        # The SIGHUP comes once latscope measures (its first window printed), 0.9 s before its end.
        out = self.path("r.json")
        bg = Started(self, ["nohup", os.path.abspath(LATSCOPE), "timer", "-a", str(CPU), "-D", "1", "--no-store",
                              "--json", out], cwd=self.tmp)
        bg.measured()
        self.assertIsNone(bg.proc.poll(), "the run is still measuring")
        bg.proc.send_signal(signal.SIGHUP)
        stdout, stderr = bg.communicate()
        self.assertEqual(bg.proc.returncode, 0, stderr)
        doc = load(out)
        self.assertFalse(doc["interrupted"])
        self.assertEqual(doc["stop_reason"], "duration")

    def test_an_interval_the_machine_cannot_serve_is_said_with_what_to_try(self):
        """A relation a stall cannot turn: the warning needs more deadlines missed than served,
        150 ms of 300 at 1 ms, while at 1 us nearly all pass."""
        # 1 us is below any clock_nanosleep wakeup (a system call and a timer interrupt): most deadlines pass.
        out = self.path("r.json")
        p = run("timer", "-a", str(CPU), "-i", "1", "-D", "0.3", "-q", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        served, missed = doc["all"]["metrics"]["latency"]["count"], doc["all"]["missed"]
        self.assertGreater(missed, served, "the premise: more deadlines missed than served")
        self.assertIn("-i 1us is shorter than this machine can serve", p.stderr)
        self.assertRegex(p.stderr, r"try -i \d+us or longer")
        self.assertTrue(any("shorter than this machine can serve" in n for n in doc["notes"]))
        p = run("timer", "-a", str(CPU), "-D", "0.3", "-q", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("cannot serve", p.stderr, "a 1 ms interval is served")

    def test_quiet_output_starts_with_the_summary_and_keeps_the_stored_id(self):
        p = run("timer", "-a", str(CPU), "-l", "100", "-q", "--db", self.path("q.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertTrue(lines[0].startswith("latency (us) after"), lines[:2])
        self.assertEqual(lines[-1], "stored as run 1 in " + self.path("q.db"))

    def test_fail_above_exits_3_when_the_limit_is_exceeded(self):
        p = run("timer", "-a", str(CPU), "-l", "100", "-q", "--fail-above", "1ns")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("is above --fail-above 1ns", p.stderr)
        p = run("timer", "-a", str(CPU), "-l", "100", "-q", "--fail-above", "1h", "--fail-stat", "p99")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_fail_above_on_warm_max_says_when_it_falls_back_to_max(self):
        p = run("timer", "-a", str(CPU), "-l", "100", "-q", "--fail-above", "1ns", "--fail-stat", "warm_max")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("no window after the warm-up", p.stderr)

    def test_existing_json_file_is_replaced_whole(self):
        out = self.path("r.json")
        with open(out, "w") as f:
            f.write("old content that is longer than nothing " * 1000)
        p = run("timer", "-a", str(CPU), "-l", "100", "-q", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        check_consistent(self, load(out))


@needs(root=True, programs=("runuser",))
class NonRoot(TempDirCase):
    """What a user without privileges gets: a run at normal priority, told what was not applied."""

    def setUp(self):
        super().setUp()
        self.exe = self.path("latscope")
        shutil.copy(LATSCOPE, self.exe)
        os.chmod(self.exe, 0o755)

    def as_nobody(self, *args):
        return subprocess.run(["runuser", "-u", "nobody", "--", self.exe, *args],
                              capture_output=True, text=True, timeout=60)

    def test_non_root_runs_and_says_what_was_not_applied(self):
        out = self.path("r.json")
        p = self.as_nobody("timer", "-a", str(CPU), "-l", "300", "-q", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("not applied: SCHED_FIFO priority 95", p.stderr)
        self.assertIn("not applied: PM QoS", p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        self.assertFalse(doc["applied"]["rt_policy"])
        self.assertFalse(doc["applied"]["pm_qos"])
        self.assertTrue(any("not applied" in n for n in doc["notes"]))
        self.assertEqual(doc["all"]["metrics"]["latency"]["count"], 300)

    def test_a_default_store_that_cannot_be_made_stops_the_run_before_it_measures(self):
        # nobody's home (/nonexistent) cannot hold a store: said at once, not after the run
        out = self.path("r.json")
        p = self.as_nobody("timer", "-a", str(CPU), "-D", "1", "-q", "--json", out)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("the default store", p.stderr.splitlines()[0])
        self.assertIn("--no-store", p.stderr.splitlines()[0])
        self.assertFalse(os.path.exists(out), "nothing was measured")

    def test_non_root_header_says_the_scheduling_the_threads_got(self):
        p = self.as_nobody("timer", "-a", str(CPU), "-l", "100", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        header = p.stdout.splitlines()[0]
        self.assertIn("SCHED_OTHER (SCHED_FIFO priority 95 not applied)", header)
        self.assertNotIn("(nanosleep), SCHED_FIFO", header)
        # as root, what was asked is what the threads got
        p = run("timer", "-a", str(CPU), "-l", "100", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(", SCHED_FIFO priority 95 on cpu %d" % CPU, p.stdout.splitlines()[0])

    def with_memlock(self, limit, *args):
        return subprocess.run(["prlimit", f"--memlock={limit}:{limit}", "runuser", "-u", "nobody", "--",
                               self.exe, *args], capture_output=True, text=True, timeout=60)

    @needs(programs=("prlimit",))
    @unittest.skipIf(SANITIZED, SANITIZED_BUILD + ": a sanitizer's shadow memory does not fit any memory-lock limit")
    @unittest.skipIf(COVERAGE, COVERAGE_BUILD + " make the binary larger than the 8 MiB a run is held to")
    def test_non_root_memory_lock_fits_in_8_mib(self):
        p = self.with_memlock(8 << 20, "timer", "-l", "100", "-q", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("memory lock", p.stderr)

    @needs(programs=("prlimit",))
    @unittest.skipIf(SANITIZED, SANITIZED_BUILD + ": AddressSanitizer intercepts mlockall and makes it succeed "
                     "without locking")
    def test_too_small_memlock_rlimit_is_explained_not_a_crash(self):
        out = self.path("r.json")
        p = self.with_memlock(65536, "timer", "-a", str(CPU), "-l", "100", "-q", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("not applied: memory lock", p.stderr)
        self.assertIn("RLIMIT_MEMLOCK is 64 KiB", p.stderr)
        doc = load(out)
        self.assertFalse(doc["applied"]["memlock"])
        check_consistent(self, doc)

    def test_non_root_with_strict_refuses_to_run(self):
        p = self.as_nobody("timer", "-a", str(CPU), "-D", "1", "-q", "--no-store", "--strict")
        self.assertEqual(p.returncode, 1)
        self.assertIn("--strict", p.stderr)
        self.assertNotIn("latency (us)", p.stdout)


if __name__ == "__main__":
    main()
