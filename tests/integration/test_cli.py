"""The command line: help, and one clear line with exit status 2 for every bad input."""
import json
import os
import re
import subprocess
import time
import unittest

from harness import LATSCOPE, TempDirCase, main, online_cpus, run


class CommandLine(TempDirCase):
    def assert_usage_error(self, args, *needles):
        """A usage error ends at once; the 5 s allowed stand far above any stall of this host (tens of ms),
        and far below what a measurement would take (the default -D is until Ctrl-C)."""
        started = time.monotonic()
        p = run(*args, timeout=30)
        self.assertEqual(p.returncode, 2, f"{args}: {p.stderr}")
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 2, f"{args}: expected the error and a hint, got {p.stderr!r}")
        self.assertTrue(lines[0].startswith("latscope"), lines[0])
        for needle in needles:
            self.assertIn(needle, lines[0], f"{args}")
        self.assertEqual(p.stdout, "", "nothing is measured or printed on a usage error")
        self.assertLess(time.monotonic() - started, 5, "usage errors are caught before measuring")
        return lines[0]

    def test_version_prints_the_version(self):
        p = run("--version")
        self.assertEqual(p.returncode, 0)
        m = re.match(r"^latscope (\d+\.\d+\.\d+)(?: \((\S+)\))?\n$", p.stdout)
        self.assertIsNotNone(m, p.stdout)
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        if os.path.exists(os.path.join(root, ".git")):
            # from git: the commit it was built from, as git describe names it ("0.2.0-14-g666b0e5")
            head = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
            self.assertIsNotNone(m.group(2), p.stdout)
            short = re.search(r"(?:^|-g)([0-9a-f]{7,})(?:-dirty)?$", m.group(2))
            self.assertIsNotNone(short, p.stdout)
            self.assertTrue(head.startswith(short.group(1)), (p.stdout, head))

    def test_no_command_is_a_usage_error(self):
        p = run()
        self.assertEqual(p.returncode, 2)
        self.assertIn("Usage", p.stderr)

    def test_unknown_command_is_named(self):
        p = run("frobnicate")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown command 'frobnicate'", p.stderr)
        self.assertEqual(p.stderr.splitlines(), ["latscope: unknown command 'frobnicate'", "Try 'latscope --help'."])

    def test_a_mistyped_command_names_the_nearest_one(self):
        p = run("tiemr")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown command 'tiemr'; did you mean 'timer'?", p.stderr)

    def test_timer_help_lists_every_option_and_the_exit_codes(self):
        p = run("timer", "--help")
        self.assertEqual(p.returncode, 0)
        for opt in ("--cpus", "--priority", "--policy", "--interval", "--duration", "--loops", "--mode",
                    "--threshold", "--window", "--warmup", "--fail-above", "--fail-stat", "--json", "--label",
                    "--quiet", "--live", "--no-pm-qos", "--strict", "--co-correct", "--help"):
            self.assertIn(opt, p.stdout)
        self.assertIn("3 --fail-above exceeded", p.stdout)

    def test_runs_help_wraps_its_text_where_the_line_is_full(self):
        """No line of the text ends while the next line's first word would have fit on it."""
        p = run("runs", "--help")
        self.assertEqual(p.returncode, 0)
        about = p.stdout.split("\n\n")[1].splitlines()
        width = max(len(l) for l in about)
        for line, after in zip(about, about[1:]):
            self.assertGreater(len(line) + 1 + len(after.split()[0]), width, "wrapped early: %r" % line)

    def test_help_and_man_pages_name_the_same_options(self):
        import re
        doc = os.path.join(os.path.dirname(__file__), "..", "..", "doc")
        def page(name):
            with open(os.path.join(doc, name)) as f:
                return f.read().replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")
        general = page("latscope.1")
        for cmd in ("run", "timer", "noise", "wake", "io", "runs", "show", "compare", "report", "export", "import",
                    "merge", "rm", "sys", "cyclictest", "rtla", "oslat", "monitor", "host", "completion"):
            own = os.path.exists(os.path.join(doc, "latscope-%s.1" % cmd))
            text = page("latscope-%s.1" % cmd) if own else general
            p = run(cmd, "--help")
            self.assertEqual(p.returncode, 0, cmd)
            for opt in set(re.findall(r"--[a-z][a-z-]+", p.stdout)):
                self.assertIn(opt, text, f"{cmd}: {opt} is in --help but not in its man page")
            if own:
                for opt in set(re.findall(r"--[a-z][a-z-]+", text)):
                    self.assertIn(opt, p.stdout, f"{cmd}: {opt} is in its man page but not in --help")

    def to_a_closed_pipe(self, *args):
        """latscope args with its standard output's reader gone before it writes, whatever the scheduling."""
        r, w = os.pipe()
        os.close(r)
        try:
            return subprocess.run([LATSCOPE, *args], stdout=w, stderr=subprocess.PIPE, text=True, timeout=60)
        finally:
            os.close(w)

    def test_a_reader_that_leaves_early_ends_every_command_quietly_with_its_own_status(self):
        """Issue 34, point 9: a closed pipe is the reader's choice (as git takes a pager that quits)."""
        db = self.path("runs.db")
        p = run("timer", "-l", "3000", "-i", "100us", "-q", "--db", db)   # output larger than a stdio buffer
        self.assertEqual(p.returncode, 0, p.stderr)
        cpu = str(online_cpus()[-1])
        for args in (["sys"], ["sys", "--json"], ["--help"], ["timer", "--help"], ["runs", "--db", db],
                     ["runs", "--ids", "--db", db], ["show", "1", "--db", db], ["show", "1", "--json", "--db", db],
                     ["show", "1", "--tail", "--db", db], ["compare", "1", "1", "--db", db],
                     ["compare", "1", "1", "--format", "json", "--db", db], ["report", "1", "-o", "-", "--db", db],
                     ["export", "1", "--db", db], ["export", "1", "--format", "json", "--db", db],
                     ["export", "1", "--format", "gnuplot", "--db", db], ["completion", "bash"],
                     ["cyclictest", "-l", "100", "-t", "1", "-a", cpu, "-q", "--db", db],
                     ["cyclictest", "-l", "100", "-t", "1", "-a", cpu, "-h", "50", "--db", db]):
            q = self.to_a_closed_pipe(*args)
            self.assertEqual((q.returncode, q.stderr), (0, ""), args)
        # `latscope sys | head -1`, as the issue has it: the shell sees 0 from both
        for cmd in ("sys", "export 1 --db '%s'" % db):
            q = subprocess.run(["bash", "-c", "set -o pipefail; '%s' %s | head -1 >/dev/null" % (LATSCOPE, cmd)],
                               stderr=subprocess.PIPE, text=True, timeout=60)
            self.assertEqual((q.returncode, q.stderr), (0, ""), cmd)
        # what failed for another reason keeps its status, and says why
        q = self.to_a_closed_pipe("show", "9", "--db", db)
        self.assertEqual(q.returncode, 1, q.stderr)
        self.assertIn("no run 9", q.stderr)

    def test_a_measuring_run_whose_reader_left_still_stores_its_result(self):
        db = self.path("runs.db")
        q = self.to_a_closed_pipe("timer", "-a", str(online_cpus()[-1]), "-l", "100", "--live", "--db", db)
        self.assertEqual((q.returncode, q.stderr), (0, ""))
        p = run("runs", "--ids", "--db", db)
        self.assertEqual((p.returncode, p.stdout), (0, "1\n"), p.stderr)

    def test_a_full_disk_on_standard_output_is_reported(self):
        db = self.path("runs.db")
        p = run("timer", "-l", "3000", "-i", "100us", "-q", "--db", db)   # output larger than a stdio buffer
        self.assertEqual(p.returncode, 0, p.stderr)
        for fmt in ("openmetrics", "gnuplot"):
            with open("/dev/full", "w") as full:
                q = subprocess.run([LATSCOPE, "export", "1", "--format", fmt, "--db", db], stdout=full,
                                   stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(q.returncode, 1, fmt)
            self.assertEqual(len(q.stderr.splitlines()), 1, q.stderr)
            self.assertIn("cannot write", q.stderr)

    def test_unknown_options_are_named(self):
        self.assert_usage_error(["timer", "--frobnicate"], "unknown option '--frobnicate'")
        self.assert_usage_error(["timer", "-Z"], "unknown option '-Z'")

    def test_junk_and_negative_durations_are_rejected(self):
        self.assert_usage_error(["timer", "-i", "123abc"], "'-i'", "'123abc' is not a duration")
        self.assert_usage_error(["timer", "--interval=abc"], "'--interval'", "not a duration")
        self.assert_usage_error(["timer", "-D", "-5"], "'-D'", "cannot be negative")
        self.assert_usage_error(["timer", "--duration", "10x"], "'--duration'", "not a duration")
        self.assert_usage_error(["timer", "--threshold", "1.5ns"], "'--threshold'")

    def test_zero_and_too_small_intervals_are_rejected(self):
        self.assert_usage_error(["timer", "-i", "0"], "'-i'", "below")
        self.assert_usage_error(["timer", "-i", "500ns"], "'-i'", "below the minimum of 1us")

    def test_cpus_offline_or_out_of_range_are_rejected(self):
        top = max(online_cpus())
        self.assert_usage_error(["timer", "-a", str(top + 1)], "option '-a': cpu %d is not online" % (top + 1))
        self.assert_usage_error(["timer", "--cpus", str(top + 1)], "option '--cpus': cpu %d is not online" % (top + 1))
        self.assert_usage_error(["timer", "-a", "99999"], "'-a'", "above")
        self.assert_usage_error(["timer", "--cpus", "1-"], "not a CPU list")

    def test_priorities_out_of_range_for_the_policy_are_rejected(self):
        self.assert_usage_error(["timer", "-p", "100"], "'-p'", "out of range")
        self.assert_usage_error(["timer", "-p", "0"], "option '-p'", "out of range for --policy fifo")
        self.assert_usage_error(["timer", "--priority", "0"], "option '--priority'", "out of range for --policy fifo")
        self.assert_usage_error(["timer", "--policy", "other", "-p", "5"], "only 0")
        self.assert_usage_error(["timer", "--policy", "batch"], "not one of fifo, rr, other, deadline")
        self.assert_usage_error(["timer", "--policy", "deadline", "-p", "5"], "option '-p'", "has no priority")

    def test_io_counts_reads_by_one_name_and_names_only_the_options_given(self):
        data = self.path("data")
        with open(data, "wb") as f:
            f.write(b"\0" * 65536)
        line = self.assert_usage_error(["io", data, "--buffered", "-n", "1000", "-D", "1"])
        self.assertTrue(line.endswith("options '-n' and '-D' exclude each other"), line)
        self.assert_usage_error(["io", data, "--buffered", "-l", "1000"], "unknown option '-l'")
        self.assert_usage_error(["io", data, "--buffered", "--loops", "1000"], "unknown option '--loops'")
        help_text = run("io", "--help").stdout
        self.assertIn("-n, --count N", help_text)
        self.assertNotIn("--loops", help_text)

    def test_policy_offers_deadline_only_to_the_command_that_takes_it(self):
        for cmd in ("noise", "wake", "io", "clock", "attach"):
            with self.subTest(cmd=cmd):
                self.assertRegex(run(cmd, "--help").stdout, r"--policy fifo\|rr\|other\s")
                self.assert_usage_error([cmd, "--policy", "deadline"], "option '--policy'",
                                        "'deadline' is not one of fifo, rr, other")
        self.assertRegex(run("timer", "--help").stdout, r"--policy fifo\|rr\|other\|deadline\s")

    def test_the_suite_names_itself_and_the_option_as_typed(self):
        top = max(online_cpus())
        p = run("run", "-a", str(top + 1), "--no-store", timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 2, p.stderr)
        self.assertTrue(lines[0].startswith("latscope run: option '-a': cpu %d is not online" % (top + 1)), lines[0])
        self.assertEqual(lines[1], "Try 'latscope run --help'.")
        p = run("run", "--cpus", str(top + 1), "--no-store", timeout=30)
        self.assertTrue(p.stderr.startswith("latscope run: option '--cpus': cpu"), p.stderr)

    def test_on_threshold_takes_a_list_of_actions_exec_last(self):
        self.assert_usage_error(["timer", "--on-threshold", "stop,,trace"], "option '--on-threshold'",
                                "an empty action")
        self.assert_usage_error(["timer", "--on-threshold", "stop,frob"], "option '--on-threshold'",
                                "'frob' is not an action")
        self.assert_usage_error(["timer", "--on-end", "signal 1:USR1,stop"], "option '--on-end'",
                                "'stop' cannot be done after the run")
        out = self.path("r.json")
        p = run("timer", "-a", str(max(online_cpus())), "-l", "20", "--no-store", "-q", "--json", out,
                "--trigger", "1h", "--on-threshold", "stop, signal %d:CONT,exec echo a,b" % os.getpid())
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            actions = json.load(f)["on_threshold"]["actions"]
        self.assertEqual(actions, ["stop", "signal %d:CONT" % os.getpid(), "exec echo a,b"])

    def test_unwritable_json_path_is_caught_before_measuring(self):
        self.assert_usage_error(["timer", "--json", "/nonexistent-dir/r.json"], "'--json'", "No such file")
        self.assert_usage_error(["timer", "--json", self.tmp], "'--json'", "Is a directory")

    def test_conflicting_and_incomplete_options_are_rejected(self):
        self.assert_usage_error(["timer", "-D", "1", "-l", "10"], "options '-D' and '-l' exclude each other")
        self.assert_usage_error(["timer", "--duration", "1", "--loops", "10"],
                                "options '--duration' and '--loops' exclude each other")
        self.assert_usage_error(["timer", "--fail-stat", "p99"], "needs '--fail-above'")
        self.assert_usage_error(["timer", "--window", "1ms"], "'--window'", "below the minimum")
        self.assert_usage_error(["timer", "-i", "2s", "--window", "1s"], "shorter than the interval")
        self.assert_usage_error(["timer", "stray"], "unexpected argument 'stray'")
        self.assert_usage_error(["timer", "-i"], "needs a value")
        self.assert_usage_error(["timer", "--quiet=yes"], "takes no value")

    def test_timer_slack_and_clock_are_checked_and_monitor_takes_the_slack(self):
        self.assert_usage_error(["timer", "--timer-slack", "0"], "'--timer-slack'", "'0' is below the minimum of 1ns")
        self.assert_usage_error(["timer", "--timer-slack", "2s"], "'--timer-slack'", "above the maximum of 1s")
        self.assert_usage_error(["timer", "--clock", "gps"], "'--clock'",
                                "is not one of monotonic, realtime, tai, boottime")
        self.assert_usage_error(["timer", "--clock", "tai", "--mode", "timerfd"], "'--clock'",
                                "'tai' cannot drive --mode timerfd")
        self.assert_usage_error(["monitor", "--timer-slack", "0", "--listen", "none", "--no-store"],
                                "'--timer-slack'", "below the minimum of 1ns")
        for cmd in ("timer", "monitor"):
            p = run(cmd, "--help")
            self.assertIn("--timer-slack", p.stdout, cmd)
        self.assertIn("--clock", run("timer", "--help").stdout)

    def test_bad_labels_are_rejected(self):
        self.assert_usage_error(["timer", "--label", "novalue"], "not KEY=VALUE")
        self.assert_usage_error(["timer", "--label", "a=1", "--label", "a=2"], "given twice")

    def test_a_long_value_is_shortened_in_the_middle_and_the_reason_kept(self):
        """A message quotes a long value by its two ends and its length, so its reason and closing quote
        still fit: once, 600 characters of --label cut it after the value."""
        cases = [(["timer", "--label", "k=" + "y" * 600], "'k=yyy", "' (602 bytes) is too long"),
                 (["timer", "-i", "9" * 600], "'999", "' (600 bytes) is above the maximum"),
                 (["timer", "--json", self.path("d/" * 300 + "r.json")], "/d/d/", ": No such file or directory")]
        for args, start, end in cases:
            with self.subTest(args=args[:2]):
                line = self.assert_usage_error(args, start, "\u2026", end)
                self.assertLess(len(line), 400, line)

    def test_no_json_file_is_left_behind_by_a_usage_error(self):
        target = self.path("r.json")
        self.assert_usage_error(["timer", "--json", target, "-i", "0"], "'-i'")
        self.assertEqual(os.listdir(self.tmp), [])



class UsageErrors(TempDirCase):
    def test_every_usage_error_is_one_line_then_the_hint(self):
        db = self.path("r.db")
        p = run("timer", "-a", "0", "-l", "50", "-q", "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        cases = [
            ("timer", "-i", "123abc"),
            ("timer", "--treshold", "5"),
            ("timer", "--load", "console:dev=/nonexistent"),
            ("timer", "--json", self.path("no/dir/x.json")),
            ("compare", "1", "--baseline", "7", "--db", db),
            ("compare", "1", "--junit", self.path("no/dir/g.xml"), "--db", db),
            ("runs", "--since", "2300-01-01", "--db", db),
            ("frobnicate",),
        ]
        for args in cases:
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 2, p.stderr)
                self.assertTrue(lines[0].startswith("latscope"), lines[0])
                self.assertRegex(lines[1], r"^Try 'latscope( \w+)? --help'\.$")

    def test_a_run_or_store_that_is_not_there_is_one_line_without_a_hint(self):
        """Issue 34, point 8: nothing was misused, so status 1 and no hint to --help."""
        db = self.path("r.db")
        p = run("timer", "-a", "0", "-l", "50", "-q", "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        cases = [
            ("show", "99", "--db", db),
            ("show", "1", "--db", self.path("missing.db")),
            ("rm", "99", "--db", db),
            ("compare", "--label", "x=none", "--db", db),
            ("export", "99", "--db", db),
            ("report", "99", "-o", self.path("r.html"), "--db", db),
            ("merge", "99", "--db", db),
            ("import", self.path("missing.json"), "--db", db),
        ]
        for args in cases:
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual((p.returncode, p.stdout), (1, ""), p.stderr)
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 1, p.stderr)
                self.assertTrue(lines[0].startswith("latscope %s: " % args[0]), lines[0])

if __name__ == "__main__":
    main()
