#!/usr/bin/env python3
"""latscope run: the suite of timer, noise and wake, stored under one label."""
import os
import pty
import re
import shutil
import signal
import subprocess
import time
import unittest

from harness import LATSCOPE, TempDirCase, is_root, main, run


def suite_label(stdout):
    m = re.search(r"with the label (suite=\d{8}T\d{6}Z)", stdout)
    return m.group(1) if m else None


class Suite(TempDirCase):
    def test_quick_suite_stores_three_runs_under_one_label_and_shows_progress_on_a_terminal(self):
        db = self.path("s.db")
        master, slave = pty.openpty()
        try:
            p = subprocess.Popen([LATSCOPE, "run", "--quick", "--db", db, "--label", "host=test"],
                                 stdout=subprocess.PIPE, stderr=slave, text=True)
            os.close(slave)
            out, _ = p.communicate(timeout=90)
            err = b""
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                err += chunk
        finally:
            os.close(master)
        self.assertEqual(p.returncode, 0, err)
        err = err.decode(errors="replace")
        for step in ("1/3 timer", "2/3 OS and hypervisor noise", "3/3 thread wakeup"):
            self.assertIn(step, err)
        self.assertNotIn("\033", out, "the table on a pipe carries no terminal codes")
        rows = [line.split()[0] for line in out.splitlines()[1:4]]
        self.assertEqual(rows, ["timer", "noise", "wake"], out)
        label = suite_label(out)
        self.assertIsNotNone(label, out)
        listed = run("runs", "--db", db, "--label", label, "--label", "host=test")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        probes = [line.split()[3] for line in listed.stdout.splitlines()[1:]]
        self.assertEqual(sorted(probes), ["noise", "timer", "wake"], listed.stdout)
        shown = run("show", "--db", db, "--json", "1")
        self.assertIn('"findings"', shown.stdout, "every stored result holds the findings of sys")

    def test_quiet_suite_on_a_pipe_prints_nothing_but_results(self):
        p = run("run", "-D", "5s", "--no-store", "-q", timeout=90)     # the shortest suite; --quick is above
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("1/3", p.stderr)
        self.assertIn("probe", p.stdout.splitlines()[0])
        self.assertIsNone(suite_label(p.stdout), "nothing was stored, so no runs are named")

    def test_interrupt_ends_the_suite_and_keeps_what_was_measured(self):
        db = self.path("i.db")
        p = subprocess.Popen([LATSCOPE, "run", "-D", "24s", "--db", db, "-q"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(3)                   # inside the timer phase (10 s of 24)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        self.assertLess(time.monotonic() - t0, 5, "the noise and wake phases did not run")
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(out.splitlines()[1].split()[0], "timer", out)
        self.assertIn("(stopped early)", out.splitlines()[1], "the table says the timer row was cut short")
        for probe in ("noise", "wake"):
            self.assertRegex(out, r"\n%s +.*\(not run: the suite was stopped before it\)" % probe)
        self.assertIn("the suite was cut short (signal SIGINT) during timer; never ran: noise, wake", out)
        listed = run("runs", "--db", db)
        self.assertEqual(len(listed.stdout.splitlines()) - 1, 1, listed.stdout)

    def test_bad_options_are_named(self):
        for args, needle in ((["--quick", "-D", "20s"], "'--quick' and '--duration'"),
                             (["-D", "1s"], "'-D'"),
                             (["-a", "9999"], "9999"),
                             (["--load", "frob"], "'--load'")):
            p = run("run", "--no-store", *args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(needle, p.stderr)
            self.assertIn(needle, p.stderr.splitlines()[0], "the first line names the option")

    @unittest.skipUnless(is_root() and shutil.which("runuser"), "needs root to become nobody")
    def test_non_root_suite_runs_and_says_what_root_would_add(self):
        p = self.as_nobody("run", "-D", "5s", "--no-store", "-q", timeout=90)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("not applied (as root", p.stdout)
        self.assertIn("SCHED_FIFO", p.stdout)


if __name__ == "__main__":
    main()
