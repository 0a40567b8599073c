"""--checkpoint: a run killed at any moment leaves its last partial result, whole, in the --json file and the
store, readable by every command; the finished result replaces it."""
import os
import signal
import sqlite3
import subprocess
import time

from harness import LATSCOPE, TempDirCase, check_consistent, main, online_cpus, parse, run

CPU = online_cpus()[-1]
INTERVAL_NS = 1_000_000                 # the timer's default period, 1 ms
# The one slow scenario, the acceptance test of issue 15 (a run killed at 2 min 40 s, checkpoints every
# 30 s), runs at a tenth of its length by default: the same five checkpoints and the kill ten seconds
# (here one) after the fifth, the same checks.  LATSCOPE_CHECK_LONG=1 (./check --long, for bench/ or a
# nightly run) runs it at its full length, as issue 15 states it: 2 min 50 s.
LONG = os.environ.get("LATSCOPE_CHECK_LONG") == "1"
SCALE = 1.0 if LONG else 0.1


class Checkpoint(TempDirCase):
    def setUp(self):
        super().setUp()
        self.db = self.path("runs.db")
        self.json = self.path("run.json")

    def start(self, *args, store=True):
        """A timer run in the background, with the JSON file (and the store) of this test."""
        where = ["--db", self.db] if store else ["--no-store"]
        return subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-q", "--json", self.json, *where, *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def read_json(self):
        """The file at the user's path, which must be whole whenever it is there; None before the first write."""
        try:
            with open(self.json) as f:
                text = f.read()
        except FileNotFoundError:
            return None
        return parse(text, what=self.json)  # a half-written file fails here

    def wait_for(self, proc, ready, timeout):
        """Read the file until ready(doc) holds; every version seen must parse."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            doc = self.read_json()
            if doc is not None and ready(doc):
                return doc
            if proc.poll() is not None:
                self.fail("the run ended before: %s" % proc.communicate()[1])
            time.sleep(0.02)
        self.fail("not ready after %s s" % timeout)

    def kill(self, proc):
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, -signal.SIGKILL)
        return err

    def stored(self):
        """The one stored run's JSON, as show --json gives it."""
        p = run("runs", "--db", self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        con = sqlite3.connect(self.db)
        try:
            ids = [r[0] for r in con.execute("SELECT id FROM runs ORDER BY id")]
        finally:
            con.close()
        self.assertEqual(len(ids), 1, "one run, its checkpoints replaced in place: %s" % p.stdout)
        p = run("show", str(ids[0]), "--json", "--db", self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        return ids[0], parse(p.stdout)

    def no_temporary_files(self):
        left = [n for n in os.listdir(self.tmp) if n.startswith(".")]
        self.assertEqual(left, [], "nothing beside the file at the user's path")

    # The acceptance test of issue 15, point 6, at SCALE of its length (see SCALE).
    # NEEDS branch `store`: store_put replacing a stored partial run; without it only the first checkpoint
    # (30 s) is stored and the elapsed check below fails.
    def test_a_run_killed_after_two_minutes_forty_leaves_a_stored_partial_run_every_command_reads(self):
        """Stalls: a relation they cannot turn.  The checks are of elapsed time and of deadlines, samples
        plus missed ones, which a late wakeup does not lessen; the kill comes a third of a checkpoint
        period after the fifth checkpoint, far from either checkpoint even at a tenth of the length (1 s
        after, 2 s before the next), above this host's stalls of 3-30 ms."""
        proc = self.start("-D", "%gs" % (180 * SCALE), "--checkpoint", "%gs" % (30 * SCALE))
        try:
            started = time.monotonic()
            self.wait_for(proc, lambda d: d["elapsed_ns"] >= 150 * SCALE * 10**9, timeout=175 * SCALE + 5)
            # about 2 min 40 s in: ten seconds after the fifth checkpoint
            time.sleep(max(0.0, 160 * SCALE - (time.monotonic() - started)))
        finally:
            err = self.kill(proc)
        self.assertEqual(err, "", "every checkpoint was written and stored")

        rid, doc = self.stored()
        self.assertTrue(doc.get("partial"), "a stored partial run is marked as such")
        self.assertTrue(doc["interrupted"])
        self.assertEqual(doc["stop_reason"], "checkpoint")
        self.assertGreaterEqual(doc["elapsed_ns"], 120 * SCALE * 10**9)
        cpu = doc["cpus"][0]
        m = cpu["metrics"]["latency"]
        self.assertGreaterEqual(m["count"] + cpu["missed"], 120 * SCALE * 10**9 // INTERVAL_NS,
                                "at least two minutes of samples")
        check_consistent(self, doc)
        # the file at the user's path holds the same checkpoint, whole
        f = self.read_json()
        self.assertTrue(f["partial"])
        self.assertEqual(f["elapsed_ns"], doc["elapsed_ns"])
        self.assertEqual(f["all"]["metrics"]["latency"]["count"], doc["all"]["metrics"]["latency"]["count"])
        self.no_temporary_files()

        p = run("runs", "--db", self.db)
        self.assertIn("partial", p.stdout, "runs shows the run as partial")
        for args in (["show", str(rid)], ["compare", str(rid)], ["report", str(rid), "-o", self.path("r.html")],
                     ["export", str(rid)], ["export", str(rid), "--format", "json"],
                     ["export", str(rid), "--format", "gnuplot", "-o", self.path("h.gp")]):
            p = run(*args, "--db", self.db)
            self.assertEqual(p.returncode, 0, "%s: %s" % (args, p.stderr))
        # what is kept can be built on: a later run of the store goes in beside it
        p = run("timer", "-a", str(CPU), "-l", "100", "-q", "--db", self.db)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_the_json_file_is_whole_whenever_it_is_read_and_the_final_result_replaces_the_partial_one(self):
        """Stalls: a relation they cannot turn, but for the sample count: 4 s of 1 ms deadlines must give
        more than 3500 samples, which only half a second of stalls (those of this host: 3-30 ms) could
        turn."""
        proc = self.start("-D", "4s", "--checkpoint", "1s", "--window", "100ms", store=False)
        seen = set()
        while proc.poll() is None:
            doc = self.read_json()
            if doc is not None:
                seen.add((doc.get("partial", False), doc["elapsed_ns"]))
                if doc.get("partial"):
                    check_consistent(self, doc)
            time.sleep(0.01)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0, err)
        partials = sorted(e for p, e in seen if p)
        self.assertGreaterEqual(len(partials), 2, "a checkpoint every second, each replacing the last: %s" % seen)
        doc = self.read_json()
        self.assertNotIn("partial", doc)
        self.assertFalse(doc["interrupted"])
        self.assertEqual(doc["stop_reason"], "duration")
        self.assertGreater(doc["all"]["metrics"]["latency"]["count"], 3500)
        self.assertTrue(any("checkpoints written" in n for n in doc["notes"]), doc["notes"])
        self.no_temporary_files()

    def test_a_kill_just_after_a_checkpoint_leaves_that_checkpoint_whole_in_the_file_and_the_store(self):
        """Stalls: a relation they cannot turn (the file and the store are at most one checkpoint apart,
        whenever the kill comes)."""
        proc = self.start("-D", "60s", "--checkpoint", "1s", "--window", "100ms")
        try:
            # the third checkpoint's file: one write at a time, file then store, so the second one is stored
            # (a checkpoint the store must replace: branch `store`) and the third may be under way
            doc = self.wait_for(proc, lambda d: d.get("partial") and d["elapsed_ns"] >= 3 * 10**9, timeout=30)
        finally:
            self.kill(proc)
        f = self.read_json()
        self.assertTrue(f["partial"])
        self.assertGreaterEqual(f["elapsed_ns"], doc["elapsed_ns"])
        check_consistent(self, f)
        self.no_temporary_files()
        # NEEDS branch `store`: the later checkpoints replaced the first in the store
        _, stored = self.stored()
        self.assertTrue(stored["partial"])
        self.assertGreaterEqual(stored["elapsed_ns"], 2 * 10**9)
        self.assertIn(f["elapsed_ns"] - stored["elapsed_ns"], (0, 10**9), "the store is at most one checkpoint behind")

    def test_the_finished_run_replaces_its_stored_checkpoint_and_is_not_partial(self):
        """Stalls: a relation they cannot turn (what is stored, and the elapsed time of a run by duration)."""
        # NEEDS branch `store`: store_put replaces a stored partial run of the same identity.  2 s: one
        # checkpoint stored, at 1 s, before the finished run replaces it.
        p = run("timer", "-a", str(CPU), "-q", "--db", self.db, "-D", "2s", "--checkpoint", "1s", "--window", "100ms")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        _, doc = self.stored()
        self.assertNotIn("partial", doc)
        self.assertEqual(doc["stop_reason"], "duration")
        self.assertGreaterEqual(doc["elapsed_ns"], 2 * 10**9 - 10**8)
        p = run("runs", "--db", self.db)
        self.assertNotIn("partial", p.stdout)

    def test_without_checkpoint_a_short_run_writes_its_file_once_at_the_end(self):
        """Stalls: a relation they cannot turn (no partial file, ever, then the final one)."""
        proc = self.start("-D", "2s", "--window", "100ms", store=False)
        while proc.poll() is None:
            doc = self.read_json()
            self.assertNotIn("partial", doc or {}, "no checkpoint in a run of an hour or less by default")
            time.sleep(0.02)
        proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 0)
        self.assertNotIn("partial", self.read_json())


if __name__ == "__main__":
    main()
