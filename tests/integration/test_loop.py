"""examples/myloop, the program of latscope/loop.h that the tests of `latscope attach` measure:
what they count on it to do (its ready line, its JSON line, its loop in /dev/shm and the name
gone after it, a crashed run's loop taken over by the next one, control_step a symbol of it but
not of its stripped copy), so that a failure there points at the program, not at attach."""
import json
import os
import signal
import stat
import struct
import subprocess

from harness import TempDirCase, kill_and_close, main, needs

MYLOOP = os.environ.get("MYLOOP", "build/examples/myloop")
MYLOOP_STRIPPED = os.environ.get("MYLOOP_STRIPPED", "build/examples/myloop-stripped")
# include/latscope/loop.h's layout: the header, and a slot's first fields
MAGIC = 0x00706F6F6C74616C
HEADER = struct.Struct("=QIiQIIIIQ16x")
SLOT_FIELDS = struct.Struct("=iIiIQ")
HEAD_AT = 64


def shm(name):
    return "/dev/shm/latscope-loop." + name


class MyLoop(TempDirCase):
    def setUp(self):
        super().setUp()
        self.name = "itest-%d-%s" % (os.getpid(), self.id().rsplit(".", 1)[1][5:30])
        self.addCleanup(lambda: os.path.exists(shm(self.name)) and os.unlink(shm(self.name)))

    def start(self, *args):
        p = subprocess.Popen([MYLOOP, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(kill_and_close, p)
        line = p.stdout.readline()
        self.assertEqual(line, "ready %d\n" % p.pid, p.stderr.read() if not line else "")
        return p

    def result(self, p, timeout=30):
        out, err = p.communicate(timeout=timeout)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(err, "")
        lines = out.splitlines()
        self.assertEqual(len(lines), 1, out)
        return json.loads(lines[0])

    def check_result(self, doc, threads):
        self.assertEqual(sorted(doc), ["cycles", "lateness_ns", "missed", "realtime_minus_monotonic_ns", "step_ns", "threads"])
        lat = doc["lateness_ns"]
        self.assertEqual(sorted(lat), ["max", "min", "p50", "p99"])
        self.assertTrue(0 <= lat["min"] <= lat["p50"] <= lat["p99"] <= lat["max"], lat)
        self.assertEqual(len(doc["threads"]), threads)
        self.assertEqual(sum(t["cycles"] for t in doc["threads"]), doc["cycles"])
        self.assertEqual(len({t["tid"] for t in doc["threads"]}), threads)

    def test_it_says_ready_then_prints_one_json_line_of_its_cycles(self):
        p = self.start("--cycles", "40", "--period", "500", "--threads", "2")
        doc = self.result(p)
        self.check_result(doc, 2)
        self.assertEqual(doc["cycles"], 80)
        self.assertEqual([t["cycles"] for t in doc["threads"]], [40, 40])
        self.assertGreaterEqual(min(t["tid"] for t in doc["threads"]), p.pid)

    def test_sigterm_and_sigint_end_it_with_its_json_line(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig.name):
                p = self.start("--period", "200")
                p.send_signal(sig)
                doc = self.result(p)
                self.check_result(doc, 1)
                self.assertGreater(doc["cycles"], 0)

    def test_its_loop_is_in_dev_shm_while_it_runs_and_gone_after(self):
        p = self.start("--loop", self.name, "--threads", "3", "--period", "2000", "--duration", "20")
        st = os.stat(shm(self.name))
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o600)
        with open(shm(self.name), "rb") as f:
            data = f.read()
        magic, version, pid, _, nslots, ring, slot_bytes, nused, _ = HEADER.unpack_from(data)
        self.assertEqual((magic, version, pid, nused), (MAGIC, 2, p.pid, 3))
        periods, heads = set(), []
        for i in range(nused):
            tid, state, cpu, _, period = SLOT_FIELDS.unpack_from(data, HEADER.size + i * slot_bytes)
            self.assertEqual(state, 1)   # open
            self.assertGreaterEqual(tid, p.pid)
            periods.add(period)
            heads.append(struct.unpack_from("=Q", data, HEADER.size + i * slot_bytes + HEAD_AT)[0])
        self.assertEqual(periods, {2_000_000})
        self.assertTrue(all(h >= 1 for h in heads), heads)   # each has woken once at least
        p.send_signal(signal.SIGTERM)
        self.check_result(self.result(p), 3)
        self.assertFalse(os.path.exists(shm(self.name)))

    def test_a_killed_run_leaves_its_loop_and_the_next_run_takes_it_over(self):
        p = self.start("--loop", self.name, "--period", "1000")
        p.kill()
        p.wait()
        self.assertTrue(os.path.exists(shm(self.name)))
        q = subprocess.run([MYLOOP, "--loop", self.name, "--cycles", "20"], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(q.returncode, 0, q.stderr)
        self.assertEqual(json.loads(q.stdout.splitlines()[1])["cycles"], 20)
        self.assertFalse(os.path.exists(shm(self.name)))

    def test_a_second_program_with_the_same_loop_name_is_refused(self):
        p = self.start("--loop", self.name, "--period", "1000")
        q = subprocess.run([MYLOOP, "--loop", self.name, "--cycles", "5"], capture_output=True, text=True,
                           timeout=30)
        self.assertEqual(q.returncode, 1)
        self.assertEqual(q.stdout, "")
        self.assertEqual(q.stderr, "myloop: cannot open loop '%s': another running program has a loop of that "
                                   "name\n" % self.name)
        p.send_signal(signal.SIGTERM)
        self.result(p)

    def test_bad_usage_is_refused_with_status_2(self):
        for args in (["--period", "0"], ["--period", "10x"], ["--cycles", "-1"], ["--loop", "a/b"],
                     ["--threads", "65"], ["--duration", "1", "--cycles", "3"], ["--fifo", "100"], ["extra"]):
            with self.subTest(args=args):
                q = subprocess.run([MYLOOP, *args], capture_output=True, text=True, timeout=30)
                self.assertEqual(q.returncode, 2, q.stderr)
                self.assertRegex(q.stderr, r"^myloop: .*\nusage: myloop ")
                self.assertEqual(q.stdout, "")

    @needs(programs=("nm",))
    def test_control_step_is_a_symbol_of_myloop_and_not_of_its_stripped_copy(self):
        syms = subprocess.run(["nm", MYLOOP], capture_output=True, text=True).stdout
        self.assertRegex(syms, r"(?m)^[0-9a-f]+ T control_step$")
        for args in (["nm", MYLOOP_STRIPPED], ["nm", "-D", MYLOOP_STRIPPED]):
            out = subprocess.run(args, capture_output=True, text=True)
            self.assertNotIn("control_step", out.stdout + out.stderr)
        # the same program otherwise
        q = subprocess.run([MYLOOP_STRIPPED, "--cycles", "3"], capture_output=True, text=True, timeout=30)
        self.assertEqual(q.returncode, 0, q.stderr)
        self.assertEqual(json.loads(q.stdout.splitlines()[1])["cycles"], 3)


if __name__ == "__main__":
    main()
