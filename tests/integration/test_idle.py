"""--deepest-idle-state: what a run records, on this machine (no cpuidle driver) and on one with idle states.

The disabling and restoring itself is tested against fake sysfs trees in
tests/unit/test-sys-cpuidle.c: latscope has no way (and must have none) to
point a root process's writes at another tree."""
import glob
import os
import signal
import subprocess
import time
import unittest

from harness import LATSCOPE, TempDirCase, check_consistent, load, main, needs, run

CPUIDLE = "/sys/devices/system/cpu/cpu0/cpuidle"
STATE_DIR = "/run/latscope"


def has_idle_states():
    return bool(glob.glob(CPUIDLE + "/state*"))


def disable_values(cpu=0):
    return {os.path.basename(d): open(d + "/disable").read().strip()
            for d in sorted(glob.glob(f"/sys/devices/system/cpu/cpu{cpu}/cpuidle/state*"))}


class WithoutIdleStates(TempDirCase):
    @unittest.skipIf(has_idle_states(), "this machine has idle states: WithIdleStates tests them")
    def test_a_run_measures_and_says_there_is_nothing_to_limit(self):
        """Judges no latency: a count of -l samples and what the run recorded."""
        out = self.path("r.json")
        p = run("timer", "-a", "0", "-l", "200", "-i", "1ms", "--deepest-idle-state", "0", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--deepest-idle-state 0: nothing to limit: no cpuidle driver", p.stdout + p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        self.assertEqual(doc["cpus"][0]["metrics"]["latency"]["count"], 200)
        self.assertEqual(doc["params"]["deepest_idle_state"], 0)
        self.assertEqual(doc["applied"]["idle_states"], "nothing to limit: no cpuidle driver")

    def test_a_run_without_the_option_records_no_limit(self):
        out = self.path("r.json")
        p = run("timer", "-a", "0", "-l", "50", "-i", "1ms", "-q", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        self.assertIsNone(doc["params"]["deepest_idle_state"])
        self.assertNotIn("idle_states", doc["applied"])


class BadValues(unittest.TestCase):
    def test_a_bad_deepest_idle_state_is_a_one_line_usage_error(self):
        for cmd in ("timer", "noise", "wake"):
            for value, why in (("10", "is out of range (0 to 9)"), ("-1", "is not a whole number"),
                               ("2x", "is not a whole number"), ("", "is not a whole number")):
                with self.subTest(cmd=cmd, value=value):
                    p = run(cmd, "--deepest-idle-state", value)
                    self.assertEqual(p.returncode, 2, p.stderr)
                    self.assertEqual(p.stdout, "")
                    lines = p.stderr.splitlines()
                    self.assertEqual(lines, [f"latscope {cmd}: option '--deepest-idle-state': '{value}' {why}",
                                             f"Try 'latscope {cmd} --help'."])


class WithIdleStates(TempDirCase):
    """Only where a cpuidle driver is: not on the project's guest."""

    @needs(root=True)
    @unittest.skipUnless(has_idle_states(), "this machine has no cpuidle driver (no %s/state*)" % CPUIDLE)
    def test_a_run_killed_with_sigkill_has_its_states_restored_by_the_next_run(self):
        before = disable_values()
        proc = subprocess.Popen([LATSCOPE, "timer", "-a", "0", "-D", "60", "-q", "--no-store",
                                 "--deepest-idle-state", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            state_file = glob.glob(f"{STATE_DIR}/cpuidle-*-{proc.pid}")
            for _ in range(100):
                if state_file:
                    break
                time.sleep(0.05)        # waiting for latscope to start, not a measurement
                state_file = glob.glob(f"{STATE_DIR}/cpuidle-*-{proc.pid}")
            self.assertTrue(state_file, "no state file appeared")
            held = disable_values()
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        self.assertTrue(all(v == "1" for k, v in held.items() if k != "state0"), held)
        p = run("timer", "-a", "0", "-l", "10", "-q", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"latscope pid {proc.pid}, killed, left disabled", p.stdout + p.stderr)
        self.assertEqual(disable_values(), before)
        self.assertFalse(os.path.exists(state_file[0]))


if __name__ == "__main__":
    main()
