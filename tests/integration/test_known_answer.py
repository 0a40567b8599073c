"""Known answers: a delay the test injects itself must show up as predicted.

A SCHED_FIFO thread above the measuring one spins for BUSY every PERIOD on the
measured CPU.  A deadline inside a burst is served when the burst ends, so its
latency is above THRESHOLD when it falls in the first BUSY - THRESHOLD of the
burst: the expected share of samples above THRESHOLD is (BUSY - THRESHOLD) / PERIOD.
PERIOD is not a multiple of the 1 ms interval, so deadlines sweep every phase.

The bursts (0.7-3 ms) are not far above this host's own stalls (3-5 ms, up to
20-30 ms), so each test judges a relation a stall cannot turn, and says how: a
stall makes the one deadline it delays late and the others it covers missed, so
it adds samples above a threshold and missed deadlines and takes none of the
injected ones away (each test says where it could, and how many it would take).
What it adds is the machine's own share, measured without injection and allowed
for on top: only when the injected run passes its bound without it (the bound
with a baseline of 0 is the strictest), just after the injected run.

A machine too noisy for a known answer skips the test, never passes it: each
test is its own meson test (meson.build), which harness.main ends with 77,
meson's SKIP, and ./check lists it with its reason at the end.
"""
import re
import subprocess

from harness import LAT_INJECT, LATSCOPE, TempDirCase, check_consistent, load, main, needs, online_cpus

CPU = online_cpus()[-1]
BUSY_US, PERIOD_US, THRESHOLD_US = 700, 3700, 100
EXPECTED = (BUSY_US - THRESHOLD_US) / PERIOD_US          # 16.2 %
# The machine adds its own samples above the threshold (hypervisor preemption
# here); they are measured without injection and allowed for on top, when needed.
TOLERANCE = 0.03
# A busy vCPU is taken by its host more often than an idle one: under injection this guest's own
# share rose by up to 4 points over an idle baseline of 2 (0.1996 in a run's quietest windows,
# expected 0.1622), and two runs of the same injection, one after the other, have differed by
# 5.5 points.  Where the answer is read with the machine's noise in it, the bound allows that:
# what it is there to catch (a miscount: missed deadlines as samples, a window twice, a parse off
# by a factor) is far larger.
NOISY_TOLERANCE = 0.06
# The machine's noise comes in bursts: a run must be long enough to average over them.
# (Injected runs of 5 s with baselines of 3 s failed twice in a day; 10 s and 5 s held.)
INJECTED_S, BASELINE_S = 10, 5


def injected(duration_s, busy=f"{BUSY_US}us", period=f"{PERIOD_US}us"):
    return subprocess.Popen([LAT_INJECT, str(CPU), "90", busy, period, f"{duration_s}s"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_ready(proc):
    line = proc.stdout.readline()
    if line.strip() != "ready":
        raise AssertionError("injector failed: " + line + proc.stderr.read())


# The injector needs SCHED_FIFO.
@needs(root=True)
class KnownAnswer(TempDirCase):
    def measure(self, seconds, inject, threshold=f"{THRESHOLD_US}us", burst=(), window="1s"):
        """The CPU block of a timer run; inject: with the injector's bursts (busy, period: burst)."""
        out = self.path("r.json")
        args = [LATSCOPE, "timer", "-a", str(CPU), "-p", "80", "-i", "1ms", "-D", f"{seconds}s",
                "--threshold", threshold, "-q", "--json", out, "--window", window]
        inj = injected(seconds + 2, *burst) if inject else None
        if inj:
            wait_ready(inj)
        p = subprocess.run(args, capture_output=True, text=True, timeout=seconds + 60)
        if inj:
            inj.kill()
            inj.wait()
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        return doc["cpus"][0]

    def share(self, cpu):
        lat = cpu["metrics"]["latency"]
        return lat["above"] / lat["count"]

    def quiet_share(self):
        """The machine's own share above the threshold, without injection, just after the
        injected run (its noise can rise between runs: measured once 4 % before, 9 % after);
        a machine whose own share is a third of the answer skips the test."""
        share = self.share(self.measure(BASELINE_S, inject=False))
        if share >= EXPECTED / 3:
            self.skipTest("this machine is too noisy for a known answer: %.1f%% of samples above %dus without "
                          "injection, just after the injected run" % (100 * share, THRESHOLD_US))
        return share

    def assert_expected_share(self, measure_share):
        """The injected share, on top of the machine's own: a stall cannot lower it (the
        deadline it delays is above the threshold, those it covers are missed, not samples),
        so the lower bound holds on any machine; what stalls add is the machine's own
        share, measured (quiet_share) when the share passes the bound without it.  This
        guest's noise comes and goes within seconds (a run at 27 % over a baseline of 2.8 %
        measured just after it), so a share above the upper bound is measured once more,
        with its own baseline, and the second must hold: a wrong count fails both."""
        for attempt in range(2):
            share = measure_share()
            base = self.quiet_share() if share >= EXPECTED + TOLERANCE else 0.0
            msg = f"share above {THRESHOLD_US}us: got {share:.4f}, expected {EXPECTED:.4f} + baseline {base:.4f}"
            self.assertGreater(share, EXPECTED - TOLERANCE, msg)
            if share < EXPECTED + base + TOLERANCE or attempt == 1:
                break
        self.assertLess(share, EXPECTED + base + TOLERANCE, msg)
        return share

    def quiet_quarter(self, cpu):
        """The share above the threshold in the quietest quarter of the run's windows: the
        host's noise comes in bursts of seconds (a run at 27 % over a baseline of 4 % measured
        just after it), and leaves the windows between them as they are."""
        shares = sorted(w["latency"]["above"] / w["latency"]["count"] for w in cpu["windows"]
                        if w["latency"]["count"])
        self.assertGreaterEqual(len(shares), 16)
        return shares[len(shares) // 4]

    def test_injected_delay_gives_the_expected_share_above_threshold(self):
        """Two relations a stall cannot turn.  The whole run's share is at least the injected
        one: a stall adds samples above the threshold and takes none away.  The quietest
        quarter of its half-second windows holds the injected share and little else (at most
        NOISY_TOLERANCE over it): a count that added anything of its own (missed deadlines as
        samples, a window counted twice) would show in every window.  A machine whose own
        windows are noisy even in their quietest quarter (measured without injection when
        the injected one fails) skips the test; a stall only raises the max."""
        cpu = self.measure(INJECTED_S, inject=True, window="500ms")
        share, quiet = self.share(cpu), self.quiet_quarter(cpu)
        msg = f"share above {THRESHOLD_US}us: {share:.4f} in all, {quiet:.4f} in the quietest quarter of " \
              f"the windows; expected {EXPECTED:.4f}"
        self.assertGreater(share, EXPECTED - TOLERANCE, msg)
        if quiet >= EXPECTED + NOISY_TOLERANCE:
            own = self.quiet_quarter(self.measure(BASELINE_S * 2, inject=False, window="500ms"))
            if own >= TOLERANCE:
                self.skipTest("this machine is too noisy for a known answer: %.1f%% of samples above %dus "
                              "without injection in the quietest quarter of its windows" % (100 * own, THRESHOLD_US))
        self.assertLess(quiet, EXPECTED + NOISY_TOLERANCE, msg)
        # The injected latency reaches at least most of the burst.
        self.assertGreater(cpu["metrics"]["latency"]["max_ns"], 0.8 * BUSY_US * 1000)

    def test_injected_burst_longer_than_the_interval_is_counted_as_missed(self):
        """A relation a stall cannot turn: a stall only adds missed deadlines (one per ms it
        covers), so the lower bound holds on any machine, and the upper one leaves room for
        460 ms of stalls in the 2 s."""
        # 2.5 ms of spinning every 9.7 ms at a 1 ms interval: a burst holds two or three
        # deadlines; the first is served late, the others must be counted as missed, not
        # skipped.  9.7 ms sweeps ten phases evenly (in ten bursts), so 1.5 are missed per
        # burst on average; 2 s is 20 such sweeps.
        seconds = 2
        out = self.path("m.json")
        inj = subprocess.Popen([LAT_INJECT, str(CPU), "90", "2500us", "9700us", f"{seconds + 2}s"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_ready(inj)
        p = subprocess.run([LATSCOPE, "timer", "-a", str(CPU), "-p", "80", "-i", "1ms", "-D", f"{seconds}s", "-q",
                            "--co-correct", "--json", out], capture_output=True, text=True, timeout=60)
        inj.kill()
        inj.wait()
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        cpu = doc["cpus"][0]
        deadlines = seconds * 1000
        bursts = deadlines / 9.7
        self.assertGreater(cpu["missed"], 1.25 * bursts, "1 or 2 deadlines are missed per burst, 1.5 on average")
        self.assertLess(cpu["missed"], 3.5 * bursts + 50)
        # With --co-correct each missed deadline is recorded too: samples = all periods.
        lat = cpu["metrics"]["latency"]
        wakeups = deadlines - cpu["missed"]
        self.assertGreaterEqual(lat["count"], wakeups + 0.9 * cpu["missed"])

    def test_injected_bursts_give_the_expected_spike_rate_and_mtbf(self):
        """A relation a stall cannot turn: a stall adds spikes, the machine's own, allowed for
        (measured when the rate passes its bound without them); it can remove one only by
        bridging two bursts (38 ms), and 20 such in 10 s would fail."""
        # A 12 ms burst every 50 ms at a 1 ms interval: each burst makes one deadline
        # at least 11 ms late (the rest are missed, not late), so with an 8 ms threshold
        # each is one spike, 20 a second, one every 50 ms.  This guest's own stalls of
        # 1-5 ms come several a second (up to 20 a second seen above 1 ms): the burst and
        # the threshold stand above them, and the machine's rarer spikes above 8 ms are
        # measured without injection and allowed for on top.
        busy_us, period_ms, seconds, thr = 12000, 50, 10, "8ms"

        def run_timer(inject, secs):
            return self.measure(secs, inject, thr, (f"{busy_us}us", f"{period_ms}ms"))["long_run"]

        def per_second(lr):
            return lr["spikes"] / (lr["observed_ns"] / 1e9)

        def quiet_rate():
            r = per_second(run_timer(False, BASELINE_S))
            if r > 0.05 * expected:
                self.skipTest("this machine is too noisy for a known answer: %.1f spikes a second above %s "
                              "without injection, just after the injected run" % (r, thr))
            return r

        expected = 1000 / period_ms                                 # spikes a second
        got = run_timer(True, seconds)
        rate = per_second(got)
        mtbf_s = got["mtbf_ns"] / 1e9
        # The bounds with no baseline are the strictest: the machine's own rate is measured
        # (just after: its noise can rise between runs) only when one of them fails.
        base_rate = 0.0
        if rate >= 1.1 * expected or mtbf_s <= period_ms / 1000 / 1.1:
            base_rate = quiet_rate()
        msg = f"spikes a second: got {rate:.2f} ({got['spikes']}), expected {expected:.2f} + baseline {base_rate:.2f}"
        self.assertGreater(rate, 0.9 * expected, msg)
        self.assertLess(rate, 1.1 * expected + base_rate, msg)
        self.assertAlmostEqual(got["spikes_per_hour"], rate * 3600, delta=1e-6 * rate * 3600)
        self.assertAlmostEqual(got["spikes_per_10min"], rate * 600, delta=1e-6 * rate * 600)
        self.assertGreater(mtbf_s, period_ms / 1000 / (1.1 + base_rate / expected), msg)
        self.assertLess(mtbf_s, period_ms / 1000 / 0.9, msg)
        self.assertLess(got["mtbf_low_ns"], got["mtbf_ns"])
        self.assertGreater(got["mtbf_high_ns"], got["mtbf_ns"])

    def cyclictest_share(self, tool=("cyclictest",)):
        """The share above the threshold, read from a cyclictest -h histogram by a parser written for it."""
        inj = injected(INJECTED_S + 2)
        wait_ready(inj)
        p = subprocess.run([*tool, "-a", str(CPU), "-t1", "-p", "80", "-i", "1000", "-D", str(INJECTED_S), "-m", "-q",
                            "-h", "2000"], capture_output=True, text=True, timeout=70)
        inj.kill()
        inj.wait()
        self.assertEqual(p.returncode, 0, p.stderr)
        above = total = 0
        for line in p.stdout.splitlines():
            m = re.match(r"^(\d+)\s+(\d+)$", line)
            if m:
                us, n = int(m.group(1)), int(m.group(2))
                total += n
                # cyclictest bucket k holds latencies in [k, k+1) us
                if us >= THRESHOLD_US:
                    above += n
            m = re.match(r"^# Histogram Overflows: (\d+)", line)
            if m:
                above += int(m.group(1))
                total += int(m.group(1))
        self.assertGreater(total, 0.8 * INJECTED_S * 1000, p.stdout[-500:])
        return above / total

    @needs(programs=("cyclictest",))
    def test_injected_share_agrees_with_cyclictest_histogram(self):
        """A relation a stall cannot turn, mostly: both tools measure the same injected share,
        and the host's stalls add to both alike on average, within NOISY_TOLERANCE; a burst
        of them in one run is why a pair may be measured once more (below)."""
        # The two tools run one after the other, and on this noisy guest one run's
        # share can stray from the next one's: a pair that disagrees is measured
        # once more, and the second pair must agree.
        pairs = []
        for _ in range(2):
            ours = self.share(self.measure(INJECTED_S, inject=True))
            theirs = self.cyclictest_share()
            pairs.append(f"latscope {ours:.4f} vs cyclictest {theirs:.4f}")
            if abs(ours - theirs) < NOISY_TOLERANCE:
                break
        if abs(ours - theirs) >= NOISY_TOLERANCE:
            # Two pairs apart: a machine whose own share is as large as the tolerance cannot tell
            # (it skips, saying so, as quiet_share does); a quiet one fails.
            own = self.share(self.measure(BASELINE_S, inject=False))
            if own >= TOLERANCE:
                self.skipTest("this machine is too noisy for a known answer: %.1f%% of samples above %dus "
                              "without injection (%s)" % (100 * own, THRESHOLD_US, "; ".join(pairs)))
        self.assertLess(abs(ours - theirs), NOISY_TOLERANCE, "; ".join(pairs))

    def test_injected_share_reads_right_from_latscope_cyclictest_by_cyclictests_parser(self):
        """A relation a stall cannot turn, the machine's own share allowed for (assert_expected_share)."""
        self.assert_expected_share(lambda: self.cyclictest_share((LATSCOPE, "cyclictest", "--no-store")))


if __name__ == "__main__":
    main()
