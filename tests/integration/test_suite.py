#!/usr/bin/env python3
"""latscope run: the suite of timer, noise and wake, stored under one label."""
import os
import pty
import re
import signal
import subprocess
import time

from harness import LATSCOPE, TempDirCase, is_root, lacking, main, read_terminal, run, test_cpu


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

    def test_quiet_suite_on_a_pipe_prints_nothing_but_results_and_without_root_what_root_would_add(self):
        # One run for both (once two tests' identical runs, the one as nobody): the shortest suite
        # (--quick is above), as a user without privileges: nobody, when the tests run as root.
        args = ("run", "-D", "5s", "--no-store", "-q")
        if is_root():
            why = lacking(programs=("runuser",))
            if why:
                self.skipTest(why)
            p = self.as_nobody(*args, timeout=90)
        else:
            p = run(*args, timeout=90)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("1/3", p.stderr)
        self.assertIn("probe", p.stdout.splitlines()[0])
        self.assertIsNone(suite_label(p.stdout), "nothing was stored, so no runs are named")
        self.assertIn("not applied (as root", p.stdout)
        self.assertIn("SCHED_FIFO", p.stdout)

    def test_interrupt_ends_the_suite_and_keeps_what_was_measured(self):
        """A relation a stall cannot turn: it ends within 5 s of the signal, where the two phases
        left would take 14 s."""
        db = self.path("i.db")
        master, slave = pty.openpty()
        try:
            # The progress line on a terminal: after the timer's first window, 9 of its 10 s are left.
            p = subprocess.Popen([LATSCOPE, "run", "-D", "24s", "--db", db], stdout=subprocess.PIPE, stderr=slave,
                                 text=True)
            os.close(slave)
            progress = read_terminal(master, until=", 9 s left")
            if not re.search(r"1/3 timer[^\r]*, 9 s left", progress):
                p.kill()
                self.fail("the timer phase never measured: %r %s" % (progress, p.communicate()[0]))
            t0 = time.monotonic()
            p.send_signal(signal.SIGINT)
            out, _ = p.communicate(timeout=30)
            self.assertLess(time.monotonic() - t0, 5, "the noise and wake phases did not run")
            err = progress + read_terminal(master)
        finally:
            os.close(master)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(out.splitlines()[1].split()[0], "timer", out)
        self.assertIn("(stopped early)", out.splitlines()[1], "the table says the timer row was cut short")
        for probe in ("noise", "wake"):
            self.assertRegex(out, r"\n%s +.*\(not run: the suite was stopped before it\)" % probe)
        self.assertIn("the suite was cut short (signal SIGINT) during timer; never ran: noise, wake", out)
        listed = run("runs", "--db", db)
        self.assertEqual(len(listed.stdout.splitlines()) - 1, 1, listed.stdout)

    def test_a_failing_load_command_is_said_on_the_terminal_as_timer_says_it(self):
        """Judges no latency: a load command that exits at once, said per probe, as timer says it."""
        cpu = str(test_cpu())
        t = run("timer", "-a", cpu, "-D", "300ms", "-q", "--no-store", "--load-cmd", "exit 3")
        self.assertEqual(t.returncode, 0, t.stderr)
        said = re.search(r"^latscope timer: (the load command ended after .* with exit status 3: .*)$", t.stderr, re.M)
        self.assertTrue(said, t.stderr)
        p = run("run", "-D", "5", "-a", cpu, "-q", "--no-store", "--load-cmd", "exit 3", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        for probe in ("timer", "noise", "wake"):
            self.assertRegex(p.stderr, r"(?m)^latscope run: %s: the load command ended after .* with exit status 3: "
                             % probe)
        self.assertNotIn("latscope timer:", p.stderr, "every message names the command typed")

    def test_bad_options_are_named(self):
        for args, needle in ((["--quick", "-D", "20s"], "'--quick' and '-D'"),
                             (["--quick", "--duration", "20s"], "'--quick' and '--duration'"),
                             (["-D", "1s"], "'-D'"),
                             (["-a", "9999"], "9999"),
                             (["--load", "frob"], "'--load'")):
            p = run("run", "--no-store", *args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(needle, p.stderr)
            self.assertIn(needle, p.stderr.splitlines()[0], "the first line names the option")


if __name__ == "__main__":
    main()
