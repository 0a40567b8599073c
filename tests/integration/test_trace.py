#!/usr/bin/env python3
"""--trace: every timer sample split into its parts, spikes and noise events
explained by what held the CPU, and the tracefs instance always removed."""
import os
import shutil
import signal
import subprocess
import time
import unittest

from harness import (LAT_INJECT, LATSCOPE, TempDirCase, check_consistent, is_root, is_traceable, load, main,
                     online_cpus, run)

CPU = online_cpus()[-1]
INSTANCES = "/sys/kernel/tracing/instances"
TRACEABLE = is_traceable()


def ours(pid, pidns=None):
    """Whether latscope process pid (of pid namespace pidns, ours by default) has its instance."""
    ns = pidns if pidns is not None else os.stat("/proc/self/ns/pid").st_ino
    return os.path.exists(os.path.join(INSTANCES, "latscope-%d-%d" % (ns, pid)))


@unittest.skipUnless(TRACEABLE, "needs root and tracefs with timer events")
class TimerTrace(TempDirCase):
    def timer(self, seconds, *extra):
        out = self.path("t.json")
        p = run("timer", "-a", str(CPU), "-p", "80", "-D", str(seconds), "--trace", "-q", "--no-store", "--json",
                out, *extra, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        self.assertIn("trace", doc, doc["notes"])
        return p, doc

    def test_every_sample_is_split_into_parts_that_add_up(self):
        p, doc = self.timer(3)
        cpu = doc["trace"]["cpus"][0]
        count = doc["cpus"][0]["metrics"]["latency"]["count"]
        self.assertEqual(cpu["samples"], count)
        self.assertGreaterEqual(cpu["matched"], 0.99 * count, cpu)
        self.assertGreaterEqual(cpu["add_up"], 0.99 * cpu["matched"], cpu)
        parts = cpu["parts"]
        self.assertEqual(set(parts), {"irq delay", "timer handler", "wakeup to running", "return to user"})
        for name, part in parts.items():
            self.assertEqual(part["count"], cpu["matched"], name)
            self.assertEqual(sum(c for _, _, c in part["histogram"]), part["count"], name)
        # The parts' means add up to the latency's mean over the matched samples.
        mean = sum(part["mean_ns"] for part in parts.values())
        self.assertAlmostEqual(mean / doc["cpus"][0]["metrics"]["latency"]["mean_ns"], 1.0, delta=0.05)
        self.assertIn("where the time went", p.stdout)

    def test_an_injected_task_is_named_with_the_time_it_held_the_cpu(self):
        busy_us = 6000          # longer than the 2.5-3.7 ms stalls this guest's host gives it
        # A period that is not a whole number of 1 ms intervals: the deadlines sweep every
        # phase of the burst, so some fall at its start whenever the run begins.  (At 20 ms
        # the phase was fixed by how long latscope took to start, and a slow start, as under
        # ASan, could leave every deadline late in the burst.)
        inj = subprocess.Popen([LAT_INJECT, str(CPU), "90", "%dus" % busy_us, "20300us", "8s"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(inj.stdout.readline().strip(), "ready")
            _, doc = self.timer(4, "--trace-above", "300us")
        finally:
            inj.kill()
            inj.communicate()
        held = []
        for spike in doc["trace"]["cpus"][0]["spikes"]:
            for c in spike.get("after_expiry", {}).get("by", []):
                if c["kind"] == "task" and c.get("name") == "lat-inject":
                    held.append(c["ns"])
                    self.assertLess(c["prio"], 99 - 80, "a real-time task, above the measuring thread")
        self.assertTrue(held, doc["trace"]["cpus"][0]["spikes"])
        # A burst is held for at most its own length; the exception is a hypervisor
        # stall inside it, which the guest's trace cannot tell from the task running
        # (it failed once so, at 3.07 ms for a 2 ms burst), so most, not all.
        one_burst = [h for h in held if h <= busy_us * 1000 * 1.1]
        self.assertGreaterEqual(len(one_burst), 0.7 * len(held), f"held {held} for bursts of {busy_us} us")
        self.assertGreaterEqual(max(one_burst), busy_us * 1000 * 0.7, "the largest caught most of a burst")

    def interrupted(self, sig):
        p = subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-D", "60", "--trace", "-q", "--no-store"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 10
        while not ours(p.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertTrue(ours(p.pid), "the instance was made")
        time.sleep(0.5)
        p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("where the time went", out)
        self.assertFalse(ours(p.pid), "the instance is gone")

    def test_the_instance_is_gone_after_sigint(self):
        self.interrupted(signal.SIGINT)

    def test_the_instance_is_gone_after_sigterm(self):
        self.interrupted(signal.SIGTERM)

    def traced_run_started(self):
        p = subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-D", "60", "--trace", "-q", "--no-store"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while not ours(p.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        self.assertTrue(ours(p.pid), "the instance was made")
        return p

    def test_an_instance_of_a_run_killed_with_sigkill_is_removed_by_its_guard(self):
        p = self.traced_run_started()
        p.kill()
        p.communicate(timeout=30)
        deadline = time.monotonic() + 10
        while ours(p.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertFalse(ours(p.pid), "the guard removed the instance after the SIGKILL")

    def test_an_instance_left_by_a_killed_run_and_its_guard_is_removed_by_the_next(self):
        p = self.traced_run_started()
        with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
            children = [int(c) for c in f.read().split()]
        guards = [c for c in children if open("/proc/%d/cmdline" % c, "rb").read().split(b"\0")[0] ==
                  open("/proc/%d/cmdline" % p.pid, "rb").read().split(b"\0")[0]]
        self.assertEqual(len(guards), 1, children)
        os.kill(guards[0], signal.SIGKILL)
        p.kill()
        p.communicate(timeout=30)
        time.sleep(0.2)
        self.assertTrue(ours(p.pid), "with the guard killed too, the instance stays")
        self.timer(1)
        self.assertFalse(ours(p.pid), "the next traced run removed it")

    @unittest.skipUnless(shutil.which("unshare"), "needs unshare (util-linux)")
    def test_a_run_in_another_pid_namespace_leaves_a_live_runs_instance_alone(self):
        # A container sharing the host's tracefs sees the host run's pid as
        # nobody's; it must not take that for a killed run and remove its instance.
        p = subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-D", "60", "--trace", "-q", "--no-store"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 10
            while not ours(p.pid) and time.monotonic() < deadline:
                time.sleep(0.02)
            self.assertTrue(ours(p.pid), "the instance was made")
            c = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", os.path.abspath(LATSCOPE), "timer",
                                "-a", str(CPU), "-D", "0.5", "--trace", "-q", "--no-store"],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(c.returncode, 0, c.stderr)
            self.assertNotIn("not traced", c.stderr, "the run in the namespace traced too")
            self.assertTrue(ours(p.pid), "the live run's instance is still there")
        finally:
            p.send_signal(signal.SIGINT)
            p.communicate(timeout=60)
        self.assertFalse(ours(p.pid))

    def test_an_instance_of_the_older_name_form_left_by_a_dead_process_is_removed(self):
        dead = subprocess.Popen(["true"])
        dead.wait()
        legacy = os.path.join(INSTANCES, "latscope-%d" % dead.pid)
        os.mkdir(legacy)
        try:
            self.timer(0.5)
            self.assertFalse(os.path.exists(legacy))
        finally:
            if os.path.exists(legacy):
                os.rmdir(legacy)


@unittest.skipUnless(TRACEABLE, "needs root and tracefs with timer events")
class NoiseTrace(TempDirCase):
    def test_injected_gaps_are_explained_by_the_injecting_task(self):
        out = self.path("n.json")
        inj = subprocess.Popen([LAT_INJECT, str(CPU), "90", "300us", "10ms", "6s"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(inj.stdout.readline().strip(), "ready")
            p = run("noise", "-a", str(CPU), "-D", "3", "--trace", "-q", "--no-store", "--json", out, timeout=60)
        finally:
            inj.kill()
            inj.communicate()
        self.assertEqual(p.returncode, 0, p.stderr)
        cpu = load(out)["trace"]["cpus"][0]
        self.assertGreater(cpu["explained"], 0.9 * cpu["events"], cpu)
        task_ns = cpu["by_kind_ns"]["task"]
        self.assertGreater(task_ns, 0.5 * 300e3 * 300, "about 300 bursts of 300 us were tasks")
        # The causes sum every event, so ten larger gaps (hypervisor stalls) that fill the
        # list of spikes cannot hide a task behind hundreds of small ones.
        causes = cpu["causes"]["by"]
        inject = [c for c in causes if c.get("name") == "lat-inject"]
        self.assertEqual(len(inject), 1, causes)
        self.assertGreater(inject[0]["count"], 0.5 * 300, inject)
        self.assertGreater(inject[0]["ns"], 0.5 * 300e3 * 300, inject)
        self.assertLessEqual(inject[0]["ns"], task_ns)
        self.assertEqual([c["ns"] for c in causes], sorted((c["ns"] for c in causes), reverse=True))
        self.assertRegex(p.stdout, r"most time over all events: .+us in \d+ stretch")
        for spike in cpu["spikes"]:
            self.assertTrue(spike["occupied_by"]["by"], spike)


class WithoutTracing(TempDirCase):
    @unittest.skipUnless(is_root() and shutil.which("runuser"), "needs root to become nobody")
    def test_without_root_the_run_goes_on_and_says_why(self):
        out = self.path("r.json")
        p = self.as_nobody("timer", "-a", "0", "-D", "1", "--trace", "-q", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("not traced:", p.stderr)
        doc = load(out)
        self.assertNotIn("trace", doc)
        self.assertGreater(doc["cpus"][0]["metrics"]["latency"]["count"], 500)

    def test_trace_above_needs_trace(self):
        p = run("timer", "-D", "1", "--no-store", "--trace-above", "50us")
        self.assertEqual(p.returncode, 2)
        self.assertIn("'--trace-above' needs '--trace'", p.stderr)


if __name__ == "__main__":
    main()
