"""compare: units that fit the probe, one block per probe, gates that agree with the verdict.

The verdicts judged here are of runs made from values the test chose (Gates); the measured runs are
short and only their shape is read (units, probes, ids), never a figure a stall of this host could turn."""
import json
import os
import random
import re
import shlex
import shutil
import tempfile
import unittest

import synth
from harness import TempDirCase, load, main, online_cpus, parse, run

CPU = online_cpus()[-1]


class CompareCase(TempDirCase):
    def setUp(self):
        super().setUp()
        self.db = self.path("runs.db")

    def lat(self, *args, timeout=120):
        return run(*args, "--db", self.db, timeout=timeout)

    def stored(self, *args, code=0):
        """A timer run on CPU, stored: args its options beside -a and -q."""
        p = self.lat("timer", "-a", str(CPU), "-q", *args)
        self.assertEqual(p.returncode, code, p.stderr)

    def frame(self):
        """A real result, a frame for synth.result: its figures are replaced."""
        p = run("timer", "-a", str(CPU), "-D", "200ms", "--window", "100ms", "-q", "--no-store", "--json",
                self.path("t.json"))
        self.assertEqual(p.returncode, 0, p.stderr)
        return load(self.path("t.json"))


class Gates(CompareCase):
    """Known answers: runs the test makes from values it chose."""

    def setUp(self):
        super().setUp()
        template = self.frame()
        rng = random.Random(7)

        def windows(scale, halves):
            # twenty windows of 200 wakeups around 10 us, the second half of them `halves` times slower
            return [[int(rng.randint(9000, 11000) * scale * (1 if k < 10 else halves)) for _ in range(200)]
                    for k in range(20)]
        runs = [windows(1.0, 2), windows(1.3, 2), windows(6.0, 1)]
        files = []
        for i, w in enumerate(runs):
            files.append(self.path("r%d.json" % i))
            with open(files[-1], "w") as f:
                json.dump(synth.result(template, w, 1764580000000000000 + i * 10**11), f)
        p = self.lat("import", *files)
        self.assertEqual(p.returncode, 0, p.stderr)

    def gates(self, *exprs):
        junit = self.path("gate.xml")
        args = ["compare", "1", "2", "3", "--junit", junit]
        for e in exprs:
            args += ["--fail-if", e]
        p = self.lat(*args)
        with open(junit) as f:
            xml = f.read()
        failed = {m for m in re.findall(r'<testcase classname="(run \d)" name="[^"]*">\s*<failure', xml)}
        return p, failed

    def test_a_relative_gate_fails_only_when_the_verdict_calls_the_change_real(self):
        # run 2 is 30 % above run 1, but both runs drift by 100 % within themselves: no verdict; run 3 is 6x
        p, failed = self.gates("p99>+10%")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertRegex(p.stdout, r"run 2 vs run 1 at p99: no significant difference \(\+30\.\d%")
        self.assertRegex(p.stdout, r"run 3 is slower than run 1 at p99")
        self.assertEqual(failed, {"run 3"}, "the gate agrees with the verdicts above it")
        self.assertNotIn("FAIL run 2", p.stderr)

    def test_a_gate_ending_in_a_bang_compares_the_figures_raw(self):
        p, failed = self.gates("p99>+10%!")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(failed, {"run 2", "run 3"})

    def test_a_relative_gate_on_the_max_is_raw_and_an_absolute_one_is_too(self):
        p, failed = self.gates("max>+10%")
        self.assertEqual(failed, {"run 2", "run 3"}, "the max has no verdict: compared raw")
        p, failed = self.gates("max>50")          # a bare number is microseconds
        self.assertEqual(failed, {"run 3"})


class Tails(CompareCase):
    """Known answers: two runs the test makes of exponential latencies (independent windows, so
    their tail fits are reliable), the second with four times the first's scale, the third as the
    first (other draws): 50 windows of a
    second with 300 samples each.  The level exceeded once an hour is about 1 us + scale x
    ln(1.08e6 samples an hour): 140 us and 557 us."""

    def setUp(self):
        super().setUp()
        template = self.frame()
        rng = random.Random(11)
        files = []
        for i, scale in enumerate((10000, 40000, 10000)):
            windows = [[1000 + int(rng.expovariate(1 / scale)) for _ in range(300)] for _ in range(50)]
            files.append(self.path("e%d.json" % i))
            with open(files[-1], "w") as f:
                json.dump(synth.result(template, windows, 1764580000000000000 + i * 10**12), f)
        p = self.lat("import", *files)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_compare_judges_the_once_an_hour_and_once_a_day_levels_from_the_fits(self):
        p = self.lat("compare", "1", "2", "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = parse(p.stdout, "compare", "compare --format json")
        hour = [r["tail"]["level_1h_ns"] for r in doc["rows"]]
        self.assertTrue(all(r["tail"]["reliable"] for r in doc["rows"]), doc["rows"])
        self.assertTrue(hour[0]["lo"] < 140000 < hour[0]["hi"], hour[0])
        self.assertTrue(hour[1]["lo"] < 557000 < hour[1]["hi"], hour[1])
        tails = {v["statistic"]: v for v in doc["verdicts"] if v["statistic"].startswith("level_")}
        self.assertEqual({k: v["verdict"] for k, v in tails.items()}, {"level_1h": "higher", "level_1day": "higher"})
        self.assertTrue(tails["level_1h"]["ci95_low"] < 557 / 140 < tails["level_1h"]["ci95_high"], tails)
        p = self.lat("compare", "1", "2")
        self.assertRegex(p.stdout, r"\nrun 2 is higher than run 1 once an hour: [0-9.]+us \([0-9.]+us\.\.[0-9.]+us\) "
                                   r"against [0-9.]+us \([0-9.]+us\.\.[0-9.]+us\) \(x[0-9.]+, 95% CI x[0-9.]+\.\.x[0-9.]+\)\n")
        # a repeat: no difference
        p = self.lat("compare", "1", "3", "--format", "json")
        same = [v for v in parse(p.stdout, "compare")["verdicts"] if v["statistic"] == "level_1h"]
        self.assertEqual(same[0]["verdict"], "no significant difference")

    def test_show_tail_gives_the_rate_above_a_latency_from_the_fit(self):
        # above 100 us at a scale of 10 us: e^-9.9 of 1.08e6 samples an hour, about 54 an hour
        p = self.lat("show", "1", "--tail", "--above", "100us")
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.search(r"\n  above 100us: ([0-9.]+)/h \(([0-9.]+)/h\.\.([0-9.]+)/h\), from the fit\n", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        est, lo, hi = map(float, m.groups())
        self.assertTrue(lo < 54 < hi, m.group(0))
        self.assertIn("\n  quantiles of the exceedances, fitted against measured: 50% ", p.stdout)
        self.assertRegex(p.stdout, r"\n  once per 1h    [0-9.]+us \(")
        # the summary's line: the hour's and the day's levels with their intervals, and the verdict,
        # which for 50 s reaches ten times as far and calls the hour and the day extrapolations
        p = self.lat("show", "1")
        self.assertRegex(p.stdout, r"\ntail \(latency exceeded once per period of this workload, 95% interval; "
                                   r"doc/tail-method.md\):\n  cpu\d+ +once an hour [0-9.]+us \([0-9.]+us\.\.[0-9.]+us\), "
                                   r"once a day [0-9.]+us \([0-9.]+us\.\.[0-9.]+us\); reliable to once per "
                                   r"8\.333m \(10x the run\); longer periods extrapolated\n")
        p = self.lat("show", "1", "--above", "100us")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.splitlines()[0], "latscope show: option '--above' needs '--tail'")


    def test_report_draws_the_tail_measured_against_the_fit(self):
        out = self.path("r.html")
        p = self.lat("report", "1", "2", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            html = f.read()
        fig = html[html.index('<svg id="tail-timer"'):]
        fig = fig[:fig.index("</figure>")]
        # each run: its measured points from the fit's threshold up, and the fit with its band (three lines)
        self.assertEqual(fig.count('stroke-dasharray="4 3"'), 4, fig[:2000])
        self.assertGreater(fig.count("<circle"), 20)
        self.assertIn("run 1 timer: ", fig)
        self.assertIn("run 2 timer: ", fig)
        self.assertIn("once-a-day level, dashed its 95 % band", html)
        self.assertIn("run 2 is higher than run 1 once an hour: ", html)


class Units(CompareCase):
    def test_noise_runs_are_compared_in_nanoseconds(self):
        for _ in range(2):
            p = self.lat("noise", "-a", str(CPU), "-D", "200ms", "-q")
            self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("compare", "1", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        header = p.stdout.splitlines()[1]
        self.assertIn("min (ns)", header)
        self.assertNotIn("(us)", p.stdout)
        row = p.stdout.splitlines()[3].split("|")
        self.assertRegex(row[2].strip(), r"^[1-9]\d*$", "a gap of tens of ns is not 0.0")


class SeveralProbes(CompareCase):
    """One suite of the shortest length (run -D 5s) for both tests, which only read it."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="latscope-test-suite-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        cls.suite_db = os.path.join(cls.dir, "runs.db")
        cls.suite = run("run", "-D", "5s", "-q", "--db", cls.suite_db, timeout=90)

    def setUp(self):
        super().setUp()
        self.db = self.suite_db
        self.assertEqual(self.suite.returncode, 0, self.suite.stderr)

    def test_a_suite_selection_gives_a_table_and_verdicts_per_probe(self):
        suite = re.search(r"--label suite=(\S+?);", self.suite.stdout).group(1)
        p = self.lat("compare", "--label", "suite=" + suite)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(re.findall(r"^(\w+), \w+ \((us|ns)\):$", p.stdout, re.M),
                         [("timer", "us"), ("noise", "ns"), ("wake", "us")])
        p = self.lat("compare", "--label", "suite=" + suite, "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([g["probe"] for g in parse(p.stdout, "compare", "compare --format json")["probes"]], ["timer", "noise", "wake"])

    def test_probe_picks_the_runs_of_one_probe_among_the_ids(self):
        p = self.lat("compare", "1-3", "--probe", "noise")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("min (ns)", p.stdout)
        self.assertNotIn("timer", p.stdout)
        p = self.lat("compare", "1", "--probe", "noise")
        self.assertEqual(p.returncode, 2)
        self.assertIn("none of the runs given is of probe 'noise'", p.stderr)


class Merged(CompareCase):
    def test_merge_prints_the_id_it_is_stored_as_and_runs_lists_it_newest(self):
        for _ in range(2):
            p = self.lat("timer", "-a", str(CPU), "-l", "50", "-q")
            self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("merge", "1", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("run 3: timer, started "), p.stdout[:80])
        self.assertNotIn("run 0", p.stdout)
        self.assertEqual(p.stdout.splitlines()[-1], "stored as run 3 in " + self.db)
        # the merge starts when its first member did, yet it is the newest run stored
        p = self.lat("runs", "--limit", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout.splitlines()[1], r"^\s+3\s")
        p = self.lat("runs")
        self.assertEqual([int(l.split()[0]) for l in p.stdout.splitlines()[1:]], [1, 2, 3])

    def test_a_merge_of_a_stopped_run_names_the_run_and_its_reason(self):
        self.stored("-l", "100000", "--trigger", "1ns", "--on-threshold", "stop", code=3)
        self.stored("-l", "50")
        p = self.lat("merge", "1", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("(merged)", p.stdout, "a merge is no reason to stop")
        self.assertIn("stopped early (in one of the merged runs; the notes say which)", p.stdout)
        self.assertIn("note: run 1 stopped early (threshold)", p.stdout)
        self.assertNotIn("run 2 stopped", p.stdout)

    def test_runs_shows_a_merges_host_whole(self):
        self.stored("-l", "50")
        self.stored("-l", "50")
        p = self.lat("merge", "1", "2")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("show", "3", "--json")
        host = parse(p.stdout)["system"]["hostname"]
        self.assertTrue(host.startswith("merged: 2 runs of "), host)
        p = self.lat("runs")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertIn(" " + host + " ", lines[3])
        # the columns stay lined up: each row's count ends where the header's does
        end = lines[0].index("count") + len("count")
        for line in lines[1:]:
            self.assertEqual(line[:end].split()[-1].isdigit(), True, line)

    def test_show_prints_the_command_line_as_a_shell_reads_it_back(self):
        args = ["--label", "note=it's a b", "--on-threshold", "exec /usr/local/bin/grab-state", "--action-interval",
                "10m"]
        self.stored("-l", "50", "--trigger", "1s", *args)
        p = self.lat("show", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        line = [l for l in p.stdout.splitlines() if l.startswith("command: ")][0]
        words = shlex.split(line[len("command: "):])
        self.assertTrue(any(words[i:i + len(args)] == args for i in range(len(words))), line)

    def test_a_merge_not_stored_says_so_instead_of_an_id(self):
        for _ in range(2):
            p = self.lat("timer", "-a", str(CPU), "-l", "50", "-q")
            self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("merge", "1", "2", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("not stored: timer, started "), p.stdout[:80])


class Outputs(CompareCase):
    def test_an_unwritable_junit_path_is_refused_before_anything_is_printed(self):
        for _ in range(2):
            p = self.lat("timer", "-a", str(CPU), "-l", "50", "-q")
            self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("compare", "1", "2", "--junit", self.path("no/such/dir/g.xml"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stdout, "", "nothing was read or printed")
        self.assertIn("option '--junit'", p.stderr.splitlines()[0])


if __name__ == "__main__":
    main()
