#!/usr/bin/env python3
"""Each probe and each front end once, briefly, with its output checked: the sanitizer pass's
view of the measuring paths, whose own modules (timing and known answers) run in the gcc pass
only.  Nothing here judges a latency: every assertion is a count, a key or a relation
(harness.check_consistent) that a host's stall cannot turn."""
import os
import unittest

from harness import LATSCOPE, TempDirCase, check_consistent, load, main, needs, online_cpus, run

CPU = online_cpus()[-1]
FRONT = os.path.dirname(os.path.abspath(LATSCOPE))


class Probes(TempDirCase):
    def measured(self, probe, *args):
        """A probe's result, run with args and checked against the schema and its invariants."""
        out = self.path(probe + ".json")
        p = run(probe, *args, "-q", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        check_consistent(self, doc)
        self.assertEqual(doc["probe"], probe)
        return doc

    def counted(self, doc, metric=None):
        m = doc["all"]["metrics"][metric or doc["metrics"][0]]
        self.assertGreater(m["count"], 0, doc["probe"])
        return m["count"]

    def test_the_timer_probe_counts_the_samples_it_was_asked_for(self):
        doc = self.measured("timer", "-a", str(CPU), "-l", "200", "-i", "1ms")
        self.assertEqual(self.counted(doc), 200)      # -l counts samples; a missed deadline is none

    def test_the_noise_probe_measures_and_its_histogram_adds_up(self):
        self.counted(self.measured("noise", "-a", str(CPU), "-D", "300ms"))

    def test_the_wake_probe_counts_the_samples_it_was_asked_for(self):
        self.counted(self.measured("wake", "-l", "200"))

    def test_the_io_probe_counts_the_reads_it_was_asked_for(self):
        data = self.path("data")
        p = run("io", "--make", data, "--size", "1M")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.measured("io", data, "-n", "300", "-a", str(CPU))
        self.assertEqual(self.counted(doc), 300)

    def test_the_clock_probe_measures_every_cpu_it_was_given(self):
        doc = self.measured("clock", "-a", str(CPU), "-l", "2000")
        self.assertEqual([c["cpu"] for c in doc["cpus"]], [CPU])
        self.counted(doc)

    @needs(root=True, tracefs=True)
    def test_a_traced_timer_run_splits_its_samples(self):
        doc = self.measured("timer", "-a", str(CPU), "-l", "300", "-i", "1ms", "--trace")
        samples = self.counted(doc)
        traced = doc["trace"]["cpus"][0]
        self.assertEqual(traced["cpu"], CPU)
        self.assertEqual(traced["samples"], samples)
        self.assertGreater(traced["matched"], 0, traced)
        self.assertEqual(traced["matched"] + traced["unmatched"] + traced["samples_not_logged"], samples, traced)


class FrontEnds(TempDirCase):
    """The three foreign front ends parse their tool's options and write its output."""

    def front(self, name, *args):
        p = run(name, *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_cyclictest_prints_its_histogram_and_the_max_line(self):
        out = self.front("cyclictest", "-t1", "-a%d" % CPU, "-i1000", "-l200", "-q", "-h", "50", "-m", "--no-store")
        self.assertIn("# Histogram", out)
        self.assertIn("# Max Latencies:", out)

    def test_rtla_timerlat_hist_prints_its_summary(self):
        out = self.front("rtla", "timerlat", "hist", "-c", str(CPU), "-d", "1s", "-u", "--no-store")
        self.assertIn("count:", out)

    def test_oslat_prints_its_table(self):
        out = self.front("oslat", "-D", "1", "-c", str(CPU), "-q", "--no-store")
        self.assertIn("Maximum:", out)


if __name__ == "__main__":
    main()
