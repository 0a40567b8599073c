"""--on-threshold (stop, exec, signal), --trigger, --action-interval and --on-end:
a known delay from lat-inject sets them off; what they did is in the stored result."""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time

from harness import test_cpu, LAT_INJECT, LATSCOPE, TempDirCase, check_consistent, load, main, needs, online_cpus, run

CPU = test_cpu()
# Twice a second a 6 ms burst: every one makes a sample late by 5 ms or more (the next deadline comes
# within 1 ms of its start), far above a 2 ms trigger.  The host's own stalls (3-5 ms often) may pass
# the trigger too: the tests that use these judge what only comes sooner or more often for them.
BURSTS = ("6ms", "500ms")
TRIGGER = "2ms"
# For the one test whose first sample above the trigger must be the injector's: a trigger above the
# host's worst stalls (10-30 ms) and bursts far above it.
TRACE_BURSTS = ("50ms", "500ms")
TRACE_TRIGGER = "35ms"


class ActionCase(TempDirCase):
    def inject(self, duration="10s", bursts=BURSTS):
        inj = subprocess.Popen([LAT_INJECT, str(CPU), "90", *bursts, duration], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        self.addCleanup(inj.wait)
        self.addCleanup(inj.kill)
        self.assertEqual(inj.stdout.readline().strip(), "ready")
        return inj

    def timer(self, *args, duration="4s", under=()):
        return subprocess.run([*under, LATSCOPE, "timer", "-a", str(CPU), "-p", "80", "-D", duration, "-q", "--db",
                               self.path("runs.db"), *args], capture_output=True, text=True, timeout=60)

    def stored_id(self, p):
        m = re.search(r"stored as run (\d+)", p.stdout)
        self.assertIsNotNone(m, p.stdout + p.stderr)
        return int(m.group(1))

    def script(self, name, body):
        path = self.path(name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)
        return path


@needs(root=True)     # the injected delay needs SCHED_FIFO
class OnThreshold(ActionCase):
    def test_a_sample_above_the_trigger_stops_the_run_with_status_3(self):
        """Stalls: an injected effect far above the trigger (6 ms bursts, 2 ms), judged by relations a
        stall cannot turn: a stall above the trigger only stops the run sooner."""
        self.inject()
        p = self.timer("--trigger", TRIGGER, "--on-threshold", "stop", duration="8s")
        self.assertEqual(p.returncode, 3, p.stderr)
        doc = self.stored(self.stored_id(p))
        check_consistent(self, doc)
        self.assertTrue(doc["interrupted"])
        self.assertEqual(doc["stop_reason"], "threshold")
        ot = doc["on_threshold"]
        self.assertTrue(ot["stopped"])
        self.assertEqual(ot["trigger_ns"], 2_000_000)
        self.assertEqual(ot["first"]["cpu"], CPU)
        self.assertGreater(ot["first"]["latency_ns"], 2_000_000)
        # the timer's deadline, then the wakeup that was that late
        self.assertEqual(ot["first"]["at_ns"] - ot["first"]["deadline_ns"], ot["first"]["latency_ns"])
        self.assertEqual([d["action"] for d in ot["done"]], ["stop"])
        # a burst comes every 500 ms: the run ends long before its 8 s
        self.assertLess(doc["elapsed_ns"], 4_000_000_000)
        self.assertGreaterEqual(doc["elapsed_ns"], ot["first"]["at_ns"])

    @needs(cpus=2)      # one measured, one for the main thread and the commands
    def test_exec_runs_once_per_action_interval_off_the_measured_cpu_at_normal_policy(self):
        """Stalls: an injected effect far above the trigger, judged by relations a stall cannot turn: a
        stall above the trigger is one more sample held back by the interval."""
        out = self.path("env.txt")
        cmd = self.script("record", f"""{{ echo "run_id=<$LATSCOPE_RUN_ID>"; echo "cpu=$LATSCOPE_CPU"
echo "latency=$LATSCOPE_LATENCY_NS"; grep Cpus_allowed_list /proc/self/status; chrt -p $$; echo end; }} >> {out}
""")
        self.inject()
        # six bursts in 3 s, each above the trigger; an interval longer than the run allows one exec
        # latscope itself at a real-time priority: the command must still get SCHED_OTHER
        p = self.timer("--trigger", TRIGGER, "--on-threshold", f"exec {cmd}", "--action-interval", "1h",
                       under=("chrt", "-f", "1"), duration="3s")
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            text = f.read()
        self.assertEqual(text.count("end\n"), 1, text)
        self.assertIn("run_id=<>\n", text)         # the store numbers the run only when it keeps it
        self.assertIn(f"cpu={CPU}\n", text)
        self.assertGreater(int(re.search(r"latency=(\d+)", text).group(1)), 2_000_000)
        self.assertIn("SCHED_OTHER", text)
        allowed = re.search(r"Cpus_allowed_list:\s*(\S+)", text).group(1)
        cpus = set()
        for part in allowed.split(","):
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
        self.assertTrue(cpus, text)
        self.assertNotIn(CPU, cpus, text)
        ot = self.stored(self.stored_id(p))["on_threshold"]
        execs = [d for d in ot["done"] if d["action"] == "exec"]
        self.assertEqual(len(execs), 1, ot)
        self.assertEqual(execs[0]["exit_status"], 0, ot)
        self.assertEqual(execs[0]["command"], cmd)
        self.assertGreaterEqual(ot["skipped"], 2, ot)   # the later bursts, held back
        self.assertFalse(ot["stopped"])

    def test_commands_past_the_64_kept_are_still_reaped(self):
        """Stalls: a relation they cannot turn (commands start and are reaped on the same ticks: a late
        tick starts none either)."""
        # every sample is above a 1 ns trigger: an exec every 20 ms tick, far past the 64 the result keeps
        p = subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-D", "4s", "-q", "--no-store", "--json",
                              self.path("r.json"), "--trigger", "1ns", "--on-threshold", "exec true",
                              "--action-interval", "1ms"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        counted = []        # the zombies of the run, every tenth of a second while it runs
        try:
            while p.poll() is None:
                zombies = 0
                for pid in os.listdir("/proc"):
                    try:
                        with open(f"/proc/{pid}/stat") as f:
                            fields = f.read().rpartition(")")[2].split()
                    except (OSError, ValueError):
                        continue
                    if fields and fields[0] == "Z" and int(fields[1]) == p.pid:
                        zombies += 1
                if p.poll() is None:        # counted while the run still ran: not one made after it ended
                    counted.append(zombies)
                time.sleep(0.1)
        finally:
            out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        ot = load(self.path("r.json"))["on_threshold"]
        self.assertEqual(len(ot["done"]), 64, ot["not_kept"])
        self.assertGreater(ot["not_kept"], 64, "the test made more commands than are kept")
        # one exited since the last tick's reaping, perhaps two: never the ones not kept, at any moment
        self.assertGreaterEqual(len(counted), 10, "the run was looked at while it ran")
        self.assertLessEqual(max(counted), 3, counted)

    def test_signal_reaches_a_process_the_test_owns(self):
        """Stalls: an injected effect far above the trigger; a stall above it only sends the signal
        sooner."""
        waiter = subprocess.Popen([sys.executable, "-c",
                                   "import signal\n"
                                   "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])\n"
                                   "print('ready', flush=True)\n"
                                   "signal.sigwait([signal.SIGUSR1])\n"
                                   "print('got SIGUSR1', flush=True)\n"],
                                  stdout=subprocess.PIPE, text=True)
        self.addCleanup(waiter.wait)
        self.addCleanup(waiter.kill)
        self.assertEqual(waiter.stdout.readline().strip(), "ready")
        self.inject()
        p = self.timer("--trigger", TRIGGER, "--on-threshold", f"signal {waiter.pid}:USR1", "--on-threshold", "stop",
                       duration="8s")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(waiter.stdout.readline().strip(), "got SIGUSR1")
        ot = self.stored(self.stored_id(p))["on_threshold"]
        sent = [d for d in ot["done"] if d["action"] == "signal"]
        self.assertEqual(len(sent), 1, ot)
        self.assertEqual((sent[0]["pid"], sent[0]["signal"]), (waiter.pid, signal.SIGUSR1))
        self.assertNotIn("error", sent[0])


@needs(root=True, tracefs=True)
class Trace(ActionCase):
    def test_trace_explains_the_triggering_sample_while_the_run_goes_on(self):
        """Stalls: an injected effect far above them.  The trigger (35 ms) is above this guest's worst
        stalls (10-30 ms), which the kernel's events rightly call "no event", and the bursts (50 ms)
        far above it: the first sample above the trigger is the injector's."""
        inj = self.inject(bursts=TRACE_BURSTS)
        p = self.timer("--trigger", TRACE_TRIGGER, "--on-threshold", "trace", "--action-interval", "1h",
                       duration="2s")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.stored(self.stored_id(p))
        ot = doc["on_threshold"]
        self.assertFalse(ot["stopped"])
        self.assertEqual(doc["stop_reason"], "duration")
        traced = [d for d in ot["done"] if d["action"] == "trace"]
        self.assertEqual(len(traced), 1, ot)
        self.assertNotIn("error", traced[0], ot)
        cause = traced[0]["cause"]
        # the burst that made this very sample late, named by the kernel's events
        self.assertEqual((cause["kind"], cause["name"]), ("task", f"task lat-inject (pid {inj.pid})"), cause)
        self.assertLessEqual(cause["share_ns"], cause["latency_ns"])
        # the first sample above the trigger is the one explained, by its deadline
        self.assertEqual(traced[0]["latency_ns"], ot["first"]["latency_ns"])
        self.assertEqual(cause["deadline_ns"], ot["first"]["deadline_ns"])
        self.assertTrue(any("--on-threshold trace: the sample of" in n for n in doc["notes"]), doc["notes"])

    def test_trace_of_a_probe_the_ring_cannot_explain_says_why_in_the_result(self):
        """Stalls: a relation they cannot turn (what the result says)."""
        p = run("wake", "-D", "300ms", "-q", "--no-store", "--json", self.path("w.json"), "--on-threshold", "trace",
                timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(self.path("w.json"))
        self.assertTrue(any(n.startswith("--on-threshold trace: not traced: the spike ring explains wakeups of timers")
                            for n in doc["notes"]), doc["notes"])

    @needs(root=True)   # deadline threads need root
    def test_trace_of_deadline_threads_says_why_not_and_sets_up_no_ring(self):
        """Stalls: a relation they cannot turn (what the result says)."""
        out = self.path("d.json")
        p = run("timer", "-a", str(CPU), "--policy", "deadline", "-D", "300ms", "-q", "--no-store", "--json", out,
                "--trigger", "1ns", "--on-threshold", "trace", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        self.assertTrue(any(n.startswith("--on-threshold trace: not traced: deadline threads wait on no timer")
                            for n in doc["notes"]), doc["notes"])
        self.assertFalse(any("mounted" in n for n in doc["notes"]), doc["notes"])


class OnEnd(ActionCase):
    def test_on_end_exec_runs_after_the_result_is_in_the_store(self):
        """Stalls: a relation they cannot turn (what the command found)."""
        out = self.path("shown.json")
        db = self.path("runs.db")
        cmd = self.script("show", f"{shlex.quote(LATSCOPE)} show \"$LATSCOPE_RUN_ID\" --json --db {db} > {out}\n")
        p = run("timer", "-a", str(CPU), "-D", "300ms", "-q", "--db", db, "--on-end", f"exec {cmd}", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        run_id = self.stored_id(p)
        doc = load(out)
        # the command found this very run in the store, by the id it was given
        self.assertEqual(doc, self.stored(run_id))
        self.assertIn(f"exec {cmd}", json.dumps(doc["command_line"]))

    def test_a_command_gets_sigpipe_as_the_default_so_a_pipeline_ends_quietly(self):
        """Stalls: a relation they cannot turn (the command's signal mask)."""
        # latscope ignores SIGPIPE for itself; a shell cannot undo an ignored signal, so a
        # command that inherited it would see EPIPE and complain instead of ending
        out = self.path("sigpipe")
        cmd = f"grep SigIgn /proc/self/status > {out}; yes | head -1 >/dev/null"
        p = run("timer", "-a", str(CPU), "-D", "200ms", "-q", "--no-store", "--on-end", f"exec {cmd}", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("Broken pipe", p.stderr)
        with open(out) as f:
            ignored = int(f.read().split()[1], 16)
        self.assertEqual(ignored & (1 << (signal.SIGPIPE - 1)), 0, "SIGPIPE is not ignored in the command")

    def test_on_end_tells_a_command_that_failed(self):
        """Stalls: a relation they cannot turn (what is said)."""
        p = run("timer", "-a", str(CPU), "-D", "200ms", "-q", "--no-store", "--on-end", "exec exit 7", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("latscope timer: option '--on-end': 'exit 7' exited with status 7", p.stderr)


class BadInput(ActionCase):
    def test_bad_actions_are_refused_in_one_line_naming_the_option(self):
        """Stalls: nothing is measured."""
        cases = [
            (["--on-threshold", "explode"], "option '--on-threshold': 'explode' is not an action"),
            (["--on-threshold", "signal 1:NOPE"], "option '--on-threshold': 'signal 1:NOPE': 'NOPE' is not a signal"),
            (["--on-threshold", "signal 0:USR1"], "option '--on-threshold': 'signal 0:USR1': '0' is not a process id"),
            (["--on-threshold", "signal USR1"], "option '--on-threshold': 'signal USR1': signal needs PID:SIG"),
            (["--on-threshold", "exec"], "option '--on-threshold': 'exec': exec needs a command"),
            (["--on-threshold", "stop now"], "option '--on-threshold': 'stop now': stop takes nothing after it"),
            (["--on-threshold", "trace", "--trace"], "option '--on-threshold': 'trace' cannot be used with '--trace'"),
            (["--on-end", "stop"], "option '--on-end': 'stop' cannot be done after the run"),
            (["--on-end", "exec  "], "option '--on-end': 'exec  ': exec needs a command"),
            (["--trigger", "0", "--on-threshold", "stop"], "option '--trigger': '0'"),
            (["--trigger", "2ms"], "option '--trigger' needs '--on-threshold'"),
            (["--action-interval", "0", "--on-threshold", "stop"], "option '--action-interval': '0'"),
            (["--action-interval", "2s"], "option '--action-interval' needs '--on-threshold'"),
        ]
        for args, said in cases:
            with self.subTest(args=args):
                p = run("timer", "-D", "1s", "--no-store", *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 2, p.stderr)
                self.assertTrue(lines[0].startswith("latscope timer: " + said), p.stderr)
                self.assertEqual(lines[1], "Try 'latscope timer --help'.")
                self.assertEqual(p.stdout, "")


if __name__ == "__main__":
    main()
