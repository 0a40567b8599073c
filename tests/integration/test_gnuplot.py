"""latscope export --format gnuplot: the histograms and a script that draws them.

The runs are short (-l) and only their histograms' shape is read: no figure a stall of this host could turn."""
import json
import os
import re
import subprocess

from harness import TempDirCase, main, needs, online_cpus, run

CPUS = online_cpus()[:2]
# a timer run stopped by SIGINT before its first sample, as stored
EMPTY_RUN = os.path.join(os.path.dirname(__file__), "..", "fixtures", "empty-timer-run.json")


def data_blocks(script):
    """Every $name << EOD ... EOD block as a list of (low, high, count)."""
    blocks = {}
    for name, body in re.findall(r"^(\$\w+) << EOD\n(.*?)^EOD$", script, re.S | re.M):
        rows = []
        for line in body.splitlines():
            lo, hi, n = line.split()
            rows.append((float(lo), float(hi), int(n)))
        blocks[name] = rows
    return blocks


class GnuplotExport(TempDirCase):
    def measure(self, *extra):
        p = run("timer", "-a", ",".join(map(str, CPUS)), "-l", "400", "-i500", "-q", "--db", self.path("runs.db"),
                *extra)
        self.assertEqual(p.returncode, 0, p.stderr)

    def export(self, *ids):
        p = run("export", *map(str, ids), "--format", "gnuplot", "-o", self.path("h.gp"), "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path("h.gp")) as f:
            return f.read()

    def test_one_run_gives_one_block_per_cpu_holding_every_sample(self):
        self.measure()
        script = self.export(1)
        blocks = data_blocks(script)
        doc = self.stored(1)
        self.assertEqual(sorted(blocks), sorted("$run1_cpu%d" % c["cpu"] for c in doc["cpus"]))
        for c in doc["cpus"]:
            rows = blocks["$run1_cpu%d" % c["cpu"]]
            lat = c["metrics"]["latency"]
            self.assertEqual(sum(n for _, _, n in rows), lat["count"], "every sample is in a bucket")
            self.assertTrue(all(lo < hi for lo, hi, _ in rows))
            self.assertLessEqual(rows[0][0] * 1000, lat["min_ns"])
            self.assertGreaterEqual(rows[-1][1] * 1000, lat["max_ns"], "the largest value is not cut off")
        self.assertIn("title 'cpu %d'" % CPUS[0], script)

    def test_several_runs_give_one_merged_block_each_with_their_labels(self):
        self.measure("--label", "config=a")
        self.measure("--label", "config=b")
        script = self.export(1, 2)
        blocks = data_blocks(script)
        self.assertEqual(sorted(blocks), ["$run1_all", "$run2_all"])
        for i in (1, 2):
            self.assertEqual(sum(n for _, _, n in blocks["$run%d_all" % i]),
                             self.stored(i)["all"]["metrics"]["latency"]["count"])
        self.assertIn("title 'run 1 config=a'", script)
        self.assertIn("title 'run 2 config=b'", script)

    @needs(programs=("gnuplot",))
    def test_gnuplot_draws_the_script_into_an_svg_with_its_legend(self):
        self.measure("--label", "config=a")
        self.measure("--label", "config=b")
        self.export(1, 2)
        out = self.path("plot.svg")
        p = subprocess.run(["gnuplot", "-e", 'outfile="%s"' % out, self.path("h.gp")], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "", "gnuplot warns of nothing")
        with open(out) as f:
            svg = f.read()
        self.assertIn("<svg", svg)
        for text in ("run 1 config=a", "run 2 config=b", "latency (us, log scale)", "samples per bucket"):
            self.assertIn(text, svg)
        self.assertGreater(svg.count("<path"), 10, "the boxes are drawn")

    @needs(programs=("gnuplot",))
    def test_text_from_an_imported_run_cannot_make_gnuplot_run_a_command(self):
        self.measure()
        doc = self.stored(1)
        doc.pop("id", None)
        marker = self.path("pwned")
        doc["labels"] = {"note": "it's `touch %s` and $(touch %s)" % (marker, marker)}
        doc["system"]["hostname"] = 'vm\nsystem("touch %s")' % marker
        with open(self.path("hostile.json"), "w") as f:
            json.dump(doc, f)
        p = run("import", self.path("hostile.json"), "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        # two runs: a curve per run, the imported run's labels in its legend
        p = run("export", "1", "2", "--format", "gnuplot", "-o", self.path("h.gp"), "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(self.path("h.gp")) as f:
            self.assertIn("touch", f.read())
        p = subprocess.run(["gnuplot", "-e", 'outfile="%s"' % self.path("p.svg"), self.path("h.gp")],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(marker), "nothing in a run's text is run by gnuplot")

    @needs(programs=("gnuplot",))
    def test_a_run_without_a_sample_is_said_and_the_script_still_draws(self):
        p = run("import", EMPTY_RUN, "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        script = self.export(1)
        self.assertEqual(data_blocks(script), {}, "no block for no sample")
        self.assertIn("run 1 has no sample", script)
        out = self.path("empty.svg")
        p = subprocess.run(["gnuplot", "-e", 'outfile="%s"' % out, self.path("h.gp")], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            self.assertIn("no samples in these runs", f.read())
        self.measure()
        blocks = data_blocks(self.export(1, 2))
        self.assertEqual(list(blocks), ["$run2_all"], "the run with samples is drawn, the empty one left out")

    def test_figures_of_a_run_without_a_sample_are_dashes_not_zeros(self):
        p = run("import", EMPTY_RUN, "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run("runs", "--db", self.path("runs.db"))
        row = p.stdout.splitlines()[1].split()
        self.assertEqual(row[5:9], ["0", "-", "-", "-"], p.stdout)
        p = run("compare", "1", "--db", self.path("runs.db"))
        self.assertRegex(p.stdout, r"\| 1 +\| +- +\| +- +\|", p.stdout)

    def test_a_noise_run_is_drawn_in_nanoseconds(self):
        p = run("noise", "-a", str(CPUS[-1]), "-D", "200ms", "-q", "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        script = self.export(1)
        self.assertIn("gap (ns, log scale)", script)
        self.assertIn("bucket low and high (ns)", script)
        rows = [r for b in data_blocks(script).values() for r in b]
        self.assertTrue(rows)
        # the loop's own period is tens of ns: as ns it is at least 1, as us it would be below 1
        self.assertGreaterEqual(min(lo for lo, _, _ in rows), 1.0)

    def test_a_timer_run_and_a_noise_run_are_refused_together(self):
        self.measure()
        p = run("noise", "-a", str(CPUS[-1]), "-D", "200ms", "-q", "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run("export", "1", "2", "--format", "gnuplot", "-o", self.path("h.gp"), "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("runs 1 and 2 measure different things (timer latency, noise gap): draw them apart",
                      p.stderr)
        self.assertFalse(os.path.exists(self.path("h.gp")), "nothing written")

    def test_an_unknown_run_is_an_error_and_writes_nothing(self):
        self.measure()
        p = run("export", "7", "--format", "gnuplot", "-o", self.path("h.gp"), "--db", self.path("runs.db"))
        # a run that is not there is no bad usage: status 1, one line, no hint
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("7", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, "one line: " + p.stderr)
        self.assertFalse(os.path.exists(self.path("h.gp")))


if __name__ == "__main__":
    main()
