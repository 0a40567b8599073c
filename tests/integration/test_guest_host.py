#!/usr/bin/env python3
"""Guest and host together (issue 28), with a real guest: the emulated guest of guest.py runs
`latscope timer --trace --host serial:...` while `latscope host` follows its QEMU over QMP and
lat-inject takes the host CPU of vCPU 1 at FIFO 50 for 30 ms every 500 ms.

The known answer is the injection's own log, on the host's clock: each guest spike that falls in
a burst must be explained by the host as vCPU 1 not running while lat-inject ran, for about the
30 ms injected; a spike outside every burst (this machine's hypervisor stalls it too) must not be
blamed on lat-inject.  The guest's view of a burst (its spike, carried into host time by the
clock line-up) and the log agree: the thread never runs before the burst's end less the line-up's
stated bound, and for at least half the bursts within the bound plus the emulated guest's own
time to wake its thread: a stall of this machine as the vCPU resumes delays the thread past that
(12 of 30 bursts in one run), a line-up off by a burst's length would delay them all."""
import json
import os
import re
import select
import subprocess
import sys
import unittest

import harness
from guest import SCRATCH, SERIAL_PORT, Guest, GuestUnavailable, lacking
from harness import LATSCOPE, TempDirCase, check_consistent, main, parse

WHY = lacking()
BURST_NS, PERIOD = 30 * 10**6, "500ms"
# After its vCPU runs again the emulated guest takes about this long at most to run its thread
# (up to 2 ms seen; a host stall there adds its own 3-5 ms, and those are allowed for below).
GUEST_WAKE_NS = 5 * 10**6


def read_line(proc, pattern, timeout=60):
    """The first line of proc's stdout matching pattern (the lines before it are passed over)."""
    rx = re.compile(pattern)
    while True:
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline() if ready else ""
        if not line:
            raise AssertionError("no line like %r; stderr: %s" % (pattern, proc.stderr.read() if proc.poll() is not None
                                                                  else "(running)"))
        if rx.search(line):
            return line.rstrip("\n")


@unittest.skipIf(WHY is not None, WHY or "")
@harness.needs(root=True)
class InjectedHostPreemption(TempDirCase):
    def test_guest_spikes_in_injected_host_preemption_are_explained_by_the_host_naming_the_hog(self):
        self.injected_preemption("tcg")

    def test_the_same_with_kvm_names_the_hog_and_sees_the_vcpus_exits(self):
        """On a host with KVM the guest runs with -accel kvm, and the agent records kvm_exit and
        kvm_entry besides.  Where /dev/kvm cannot run it this is skipped: a nested KVM guest of a
        stock kernel stops after real-mode setup on this machine, whose tests are the TCG one's and
        the recorded kvm event fixtures (tests/unit/test-trace-evconv.c)."""
        if not os.path.exists("/dev/kvm"):
            self.skipTest("this machine has no /dev/kvm: a KVM guest cannot run here")
        try:
            self.injected_preemption("kvm")
        except GuestUnavailable as e:
            self.skipTest(str(e))

    def injected_preemption(self, accel):
        if len(harness.online_cpus()) < 2:
            self.skipTest("needs 2 CPUs: the vCPU and the hog on one, QEMU's other threads and the agent on another")
        sock = self.path("serial.sock")
        with Guest(self.tmp, serial_socket=sock, accel=accel) as g:
            vcpus = g.vcpu_threads()
            for task in os.listdir("/proc/%d/task" % g.pid):
                os.sched_setaffinity(int(task), {0})
            os.sched_setaffinity(vcpus[1], {1})
            agent = subprocess.Popen([LATSCOPE, "host", "--vm", "qmp:" + g.qmp_socket, "--listen", "unix:" + sock],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=harness.hangup_as_default)
            self.addCleanup(harness.kill_and_close, agent)
            os.sched_setaffinity(agent.pid, {0})
            start = read_line(agent, r"^latscope host: VM pid")
            self.assertIn("by QMP query-cpus-fast: 0=%d 1=%d;" % (vcpus[0], vcpus[1]), start)
            rec = read_line(agent, r"^latscope host: recording every host CPU")
            if accel == "kvm":
                self.assertIn("with KVM's exits", rec)
            read_line(agent, r"^latscope host: client .* connected")      # QEMU's chardev, reconnecting each second
            log = self.path("bursts")
            hog = subprocess.Popen([harness.LAT_INJECT, "1", "50", "30ms", PERIOD, "16", log],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.addCleanup(harness.kill_and_close, hog)
            self.assertEqual(hog.stdout.readline(), "ready\n")
            p = g.run([os.path.abspath(LATSCOPE), "timer", "-a", "1", "-i", "1ms", "-D", "12", "--threshold", "20ms",
                       "--trace", "--host", "serial:/dev/virtio-ports/" + SERIAL_PORT, "--no-store", "-q",
                       "--json", SCRATCH + "/timer.json"], timeout=180)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertNotIn("--host", p.stderr)     # reached, and held to the end
            doc = parse(g.read(SCRATCH + "/timer.json").decode(), what="the guest's timer result")
        hog.communicate(timeout=60)
        self.assertEqual(hog.returncode, 0)
        with open(log) as f:
            bursts = [tuple(map(int, line.split())) for line in f]
        check_consistent(self, doc)
        host = doc["host"]
        self.assertEqual(host["vm"]["pid"], g.pid)
        self.assertEqual(host["found_by"], "qmp")
        self.assertIsNotNone(host["sync"], host)
        self.assertNotIn("lost", host)
        sys.stderr.write("clock line-up here (TCG guest, virtio-serial): %s\n" % json.dumps(host["sync"]))

        spikes = [s for c in doc["trace"]["cpus"] for s in c["spikes"] if s["latency_ns"] > 20 * 10**6]
        self.assertTrue(spikes, doc["trace"]["cpus"])
        for s in spikes:
            self.assertIn("host", s, s)
            self.assertTrue(s["host"]["line"].startswith("the host: "), s["host"])
        injected, clean = [], []
        for s in spikes:
            h = s["host"]
            lo, hi = h["host_from_ns"] - h["bound_ns"], h["host_to_ns"] + h["bound_ns"]
            hit = [b for b in bursts if b[0] < hi and b[1] > lo]
            (injected if hit else clean).append((s, hit[0] if hit else None))
        self.assertGreaterEqual(len(injected), 5, [s["host"] for s in spikes])
        named = "lat-inject (pid %d, FIFO 50)" % hog.pid
        right = soon = 0
        for s, (b0, b1) in injected:
            h = s["host"]
            ep = h.get("episode")
            if h["cause"] != "not_running" or not ep or named not in h["line"]:
                continue
            top = ep["ran"][0]
            # Against the burst as it was: a stall of this machine as lat-inject wakes shortens its spin.
            if top["comm"] == "lat-inject" and top["id"] == hog.pid and abs(top["ns"] - (b1 - b0)) <= BURST_NS // 10:
                right += 1
            # The guest's view of the burst's end and the hog's own log agree: its thread cannot have run
            # before its vCPU did (within the line-up's bound), and for most bursts ran soon after.
            self.assertGreaterEqual(h["host_to_ns"], b1 - h["bound_ns"], (h, b1))
            soon += h["host_to_ns"] <= b1 + h["bound_ns"] + GUEST_WAKE_NS
        sys.stderr.write("%d of %d spikes in a burst explained by the hog, e.g. %s; %d outside every burst\n"
                         % (right, len(injected), injected[0][0]["host"]["line"], len(clean)))
        self.assertGreaterEqual(right, len(injected) * 9 // 10 + (len(injected) * 9 % 10 > 0),
                                [s["host"]["line"] for s, _ in injected])
        # A stall of this machine as the vCPU resumes delays the guest's thread past the burst's end
        # (12 of 30 more than 2 ms late in one run): half of them, not every one, must be soon.
        self.assertGreaterEqual(soon * 2, right, [(s["host"]["host_to_ns"], b) for s, b in injected])
        for s, _ in clean:
            self.assertNotIn("lat-inject", s["host"]["line"], s["host"])
        if accel == "kvm":
            self.assertTrue(any(s["host"].get("episode", {}).get("kvm") for s, _ in injected),
                            "the agent saw the vCPU's kvm_exit and kvm_entry")
        self.assertEqual(host["causes"]["not_running"] + host["causes"]["none"] + host["causes"]["in_host"] +
                         host["causes"]["halted"] + host["causes"]["unsupported"], host["spikes_answered"])
        # Stored (imported here), the run shows and compares by its host causes.
        result = self.path("guest.json")
        with open(result, "w") as f:
            json.dump(doc, f)
        db = self.path("runs.db")
        p = harness.run("import", result, "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = harness.run("show", "1", "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(named, p.stdout)
        self.assertIn("spikes by host cause: not_running %d" % host["causes"]["not_running"], p.stdout)
        p = harness.run("compare", "1", "--db", db, "--format", "json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(parse(p.stdout, "compare")["rows"][0]["host_causes"], host["causes"])
        p = harness.run("compare", "1", "--db", db)
        self.assertRegex(p.stdout, r"\| not_running %d[,| ]" % host["causes"]["not_running"])
        page = self.path("report.html")
        p = harness.run("report", "1", "--db", db, "-o", page)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(page) as f:
            html = f.read()
        # The report marks and lists a CPU's first three spikes (as the text summary shows them):
        # each with the host's line.  Those may all be this machine's own stalls, not the hog's.
        shown = [s for c in doc["trace"]["cpus"] for s in c["spikes"][:3] if "host" in s]
        self.assertTrue(shown, doc["trace"]["cpus"])
        for s in shown:
            line = s["host"]["line"]
            for c, e in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"), ("'", "&#39;")):
                line = line.replace(c, e)
            self.assertIn(line, html, "the report shows the host's line beside each spike it lists")


if __name__ == "__main__":
    main()
