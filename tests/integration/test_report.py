"""latscope report: stored runs as one self-contained HTML page, checked in a real browser.

The subject is the page, never a latency: the runs are short (-l, or half a second where the probe has
no count), and no test judges a figure a stall of this host could turn."""
import datetime
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import unittest

import png
from harness import LATSCOPE, TempDirCase, lacking, main, needs, online_cpus, parse, run

CPU = online_cpus()[-1]
# What --trace needs; the noise run is traced when it can be, and the test of its causes needs it.
TRACE = dict(root=True, tracefs=True)
TRACEABLE = lacking(**TRACE) is None
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# A skip ./check counts as a failure: scripts/install-deps installs chromium.
NO_BROWSER = None if CHROMIUM else lacking(programs=("chromium",))
# A line of a run's live output (src/report/text.c, text_window): one CPU's finished window.
WINDOW_LINE = re.compile(r"^\s*\d+\.\d+s cpu\d+ +n \d+ ")
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#332288", "#999933", "#882255",
           "#44AA99", "#000000", "#AA4499"]


def rgb(hexcolour):
    return tuple(int(hexcolour[i:i + 2], 16) for i in (1, 3, 5))


def chromium(html, *args, shot=None, height=2000):
    """Render html; returns (dom, console lines).  The console lines are what the page logged."""
    profile = tempfile.mkdtemp(prefix="latscope-chromium-")
    try:
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
               "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0", "--window-size=1280,%d" % height]
        if shot:
            cmd.append("--screenshot=" + shot)
        else:
            cmd.append("--dump-dom")
        p = subprocess.run(cmd + list(args) + ["file://" + html], capture_output=True, text=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    console = [l for l in p.stderr.splitlines() if ":CONSOLE" in l or "Uncaught" in l]
    return p.stdout, console


STORED = {}


def setUpModule():
    """Runs of every probe, measured once for every test (the tests only read them): five windows each,
    for the figures over time."""
    STORED["dir"] = tempfile.mkdtemp(prefix="latscope-report-")
    STORED["db"] = os.path.join(STORED["dir"], "runs.db")
    img = os.path.join(STORED["dir"], "io.img")
    common = ["--db", STORED["db"], "-q", "--window", "100ms"]
    steps = [["timer", "-a", str(CPU), "-l", "500", "--label", "config=a"],
             ["timer", "-a", str(CPU), "-l", "500", "--label", "config=b"],
             ["noise", "-a", str(CPU), "-D", "500ms"] + (["--trace"] if TRACEABLE else []),
             ["wake", "-l", "500"],
             ["io", "--make", img, "--size", "16M"],
             ["io", img, "-D", "500ms"]]
    for args in steps:
        p = run(*args, *([] if "--make" in args else common))
        if p.returncode != 0:
            raise RuntimeError("%s: %s" % (args, p.stderr))


def tearDownModule():
    shutil.rmtree(STORED["dir"], ignore_errors=True)


class ReportCase(TempDirCase):
    @property
    def db(self):
        return STORED["db"]

    def report(self, *args, db=None):
        return run("report", *args, "--db", db or self.db)

    def make(self, *ids):
        out = self.path("report.html")
        p = self.report(*ids, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("wrote " + out, p.stdout)
        with open(out) as f:
            return out, f.read()


class SelfContained(ReportCase):
    def test_a_report_of_every_probe_is_one_html_file_that_loads_nothing(self):
        _, html = self.make("1-5")
        self.assertTrue(html.startswith("<!DOCTYPE html>"))
        for needle in ("http:", "https:", "<link", "<script", "src=", "url(", "@import", "<img", "<iframe"):
            self.assertNotIn(needle, html, "the page must load nothing")
        for fig in ("hist-timer-all", "ladder-timer", "windows-timer", "hist-noise-all", "noise-noise",
                    "noise-count-noise", "hist-wake-all", "io-throughput-io", "io-cpu-io"):
            self.assertIn('<svg id="%s"' % fig, html)
        self.assertIn("comparison, as latscope compare sees it", html)
        self.assertRegex(html, r"run 2 (is slower than|is faster than|vs) run 1 at p99")
        for part in ("parameters", "findings", "system fingerprint", "load:"):
            self.assertIn(part, html)

    @needs(**TRACE)
    def test_a_traced_noise_run_shows_what_took_the_most_time(self):
        _, html = self.make("3")
        doc = parse(run("show", "3", "--json", "--db", self.db).stdout)
        first = doc["trace"]["cpus"][0]["causes"]["by"][0]
        self.assertRegex(html, r"<li>run 3 cpu %d, most time over all events \(--trace\): %s" % (CPU, first["kind"]))

    def test_the_comparison_gives_compares_own_verdicts(self):
        _, html = self.make("1", "2")
        p = run("compare", "1", "2", "--db", self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        for line in p.stdout.splitlines():
            if line.startswith("run 2 "):
                self.assertIn(line.replace("&", "&amp;").replace("'", "&#39;"), html)

    def test_label_and_probe_filters_choose_the_runs(self):
        _, html = self.make("--label", "config=b")
        self.assertIn("run 2 timer config=b", html)
        self.assertNotIn("run 1 timer", html)
        _, html = self.make("--probe", "noise")
        self.assertIn('<svg id="noise-noise"', html)
        self.assertNotIn('<svg id="hist-timer-all"', html)

    def imported_report(self, path):
        """The report of one run imported from path into a store of its own."""
        db = self.path(os.path.basename(path) + ".db")
        p = run("import", path, "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = self.path("imported.html")
        p = run("report", "1", "-o", out, "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return f.read()

    def test_text_from_an_imported_run_is_shown_as_text_never_as_markup(self):
        p = run("show", "1", "--json", "--db", self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = parse(p.stdout)
        doc.pop("id", None)
        # (a probe name is one of latscope's, or import refuses the file)
        doc["interrupted"] = True
        doc["stop_reason"] = "<img src=x onerror=alert(2)>"
        doc["labels"] = {"note": "<script>alert(3)</script>", "config": 'x"><script>alert(1)</script>'}
        doc["system"]["hostname"] = "<b onmouseover=alert(4)>vm</b>"
        with open(self.path("hostile.json"), "w") as f:
            json.dump(doc, f)
        html = self.imported_report(self.path("hostile.json"))
        self.assertNotRegex(html, r"<(script|img)[\s>]|<b\s", "no tag from the run's text")
        self.assertNotRegex(html, r"<[a-z]+[^<>]*\son[a-z]+=", "no event handler attribute anywhere")
        self.assertIn("&lt;img src=x onerror=alert(2)&gt;", html, "the text is there, escaped")

    def test_the_max_labels_of_runs_ending_at_one_point_do_not_overlap(self):
        """Two runs with the same max at the same count: their "max" labels would sit on each other ("mamax")."""
        p = run("show", "1", "--json", "--db", self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = parse(p.stdout)
        doc.pop("id", None)
        db = self.path("twins.db")
        start = doc["start_realtime_ns"]
        for k, twin in enumerate(("a", "b", "c")):
            # another start: another run to the store (its identity is host, probe and start)
            doc["start_realtime_ns"] = start + k * 10**9
            doc["start_time"] = datetime.datetime.fromtimestamp(doc["start_realtime_ns"] // 10**6 / 1e3,
                                                                datetime.timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
            doc["labels"] = dict(doc.get("labels") or {}, twin=twin)
            with open(self.path("twin.json"), "w") as f:
                json.dump(doc, f)
            p = run("import", self.path("twin.json"), "--db", db)
            self.assertEqual(p.returncode, 0, p.stderr)
        out = self.path("twins.html")
        p = run("report", "1", "2", "3", "-o", out, "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            html = f.read()
        ladder = re.search(r'<svg id="ladder-%s".*?</svg>' % doc["probe"], html, re.S).group(0)
        marks = [(float(x), float(y)) for x, y in
                 re.findall(r'<text class="mark" x="([0-9.]+)" y="([0-9.]+)"[^>]*>max</text>', ladder)]
        self.assertGreaterEqual(len(marks), 1)
        self.assertLessEqual(len(marks), 3)
        self.assertEqual(len(re.findall(r"<circle", ladder)), 3, "each run's max is still marked")
        for i, a in enumerate(marks):
            for b in marks[i + 1:]:
                self.assertGreaterEqual(abs(a[1] - b[1]), 11, "two max labels drawn on each other: %s" % marks)

    def test_a_run_without_a_sample_is_said_not_drawn_as_zero(self):
        html = self.imported_report(os.path.join(os.path.dirname(__file__), "..", "fixtures", "empty-timer-run.json"))
        self.assertIn("run 1 has no sample (stopped before the first one)", html)
        self.assertNotIn("0.0 us", html, "no figure of no sample reads as zero latency")

    def test_dash_writes_the_page_to_standard_output(self):
        p = self.report("3", "-o", "-")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("<!DOCTYPE html>"))
        self.assertTrue(p.stdout.rstrip().endswith("</html>"))


class BadInput(ReportCase):
    def one_line_error(self, p, code, *needles):
        self.assertEqual(p.returncode, code, p.stderr)
        line = p.stderr.splitlines()[0]
        self.assertTrue(line.startswith("latscope report: "), line)
        for n in needles:
            self.assertIn(n, line)
        self.assertEqual(p.stdout, "")

    def test_an_unknown_run_is_named(self):
        p = self.report("99", "-o", self.path("r.html"))
        self.one_line_error(p, 1, "99")
        self.assertEqual(p.stderr.splitlines()[1:], [], "no hint: nothing was misused")
        self.assertFalse(os.path.exists(self.path("r.html")), "no page is left behind")

    def test_a_filter_no_run_matches_is_an_error(self):
        p = self.report("--label", "config=nope", "-o", self.path("r.html"))
        self.one_line_error(p, 1, "no stored run matches")
        self.assertEqual(p.stderr.splitlines()[1:], [], "no hint: nothing was misused")

    def test_an_unwritable_output_is_refused_before_any_work(self):
        p = self.report("1", "-o", "/nonexistent-dir/r.html")
        self.one_line_error(p, 2, "'--output'", "/nonexistent-dir/r.html", "No such file")
        p = self.report("1", "-o", self.tmp)
        self.one_line_error(p, 2, "'--output'", "Is a directory")

    def test_ids_and_filters_together_or_neither_are_usage_errors(self):
        self.one_line_error(self.report("1", "--label", "config=a"), 2, "not both")
        self.one_line_error(self.report(), 2, "give run ids")


MON_A = "2026-12-01T18:40:05Z"
MON_B = "2026-11-30T09:00:00Z"


def cells(row):
    return [re.sub(r"<[^>]*>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


class Monitor(ReportCase):
    """Runs as `latscope monitor` stores them: one per period, labelled monitor=<its start time>."""

    @classmethod
    def setUpClass(cls):
        cls.mdir = tempfile.mkdtemp(prefix="latscope-report-monitor-")
        cls.mdb = os.path.join(cls.mdir, "runs.db")
        # A's periods, B's, then a run of no monitor stored last: latest is B, whose id is older.
        for labels in (["monitor=" + MON_A, "site=x"], ["monitor=" + MON_B], ["monitor=" + MON_A, "site=x"],
                       ["monitor=" + MON_A, "site=x"], ["monitor=" + MON_B], ["config=plain"]):
            args = ["timer", "-a", str(CPU), "-l", "100", "-q", "--window", "50ms", "--db", cls.mdb]
            for l in labels:
                args += ["--label", l]
            p = run(*args)
            if p.returncode != 0:
                raise RuntimeError("%s: %s" % (args, p.stderr))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.mdir, ignore_errors=True)

    def page(self, *args):
        out = self.path("monitor.html")
        p = run("report", *args, "-o", out, "--db", self.mdb)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            return p, f.read()

    def rows(self, html):
        m = re.search(r'<table class="periods">(.*?)</table>', html, re.S)
        self.assertIsNotNone(m, "the page has the table of periods")
        return [cells(r) for r in re.findall(r"<tr>(.*?)</tr>", m.group(1), re.S) if "<td" in r]

    def stored(self, run_id):
        p = run("show", str(run_id), "--json", "--db", self.mdb)
        self.assertEqual(p.returncode, 0, p.stderr)
        return parse(p.stdout)

    def test_the_page_of_a_monitor_lists_its_runs_oldest_first_and_no_other(self):
        p, html = self.page("--monitor", MON_A)
        self.assertIn("3 periods", p.stdout)
        self.assertEqual([r[0] for r in self.rows(html)], ["1", "3", "4"])
        self.assertIn("monitor " + MON_A, html)
        self.assertIn("site=x", html, "the monitor's own labels are shown")
        self.assertNotIn("config=plain", html)
        _, html = self.page("--monitor", MON_B)
        self.assertEqual([r[0] for r in self.rows(html)], ["2", "5"])

    def test_the_table_gives_each_periods_stored_figures(self):
        _, html = self.page("--monitor", MON_A)
        rows = self.rows(html)
        self.assertEqual(len(rows), 3)
        for r in rows:
            doc = self.stored(r[0])
            m = doc["all"]["metrics"]["latency"]
            self.assertEqual(r[3], str(m["count"]))
            self.assertEqual(round(float(r[4]) * 1000), m["p99_ns"])
            self.assertEqual(round(float(r[5]) * 1000), m["p99_9_ns"])
            self.assertEqual(round(float(r[6]) * 1000), m["max_ns"], "the max of run %s" % r[0])
            self.assertEqual(r[7], str(doc["all"]["long_run"]["spikes"]))
            self.assertEqual(r[8], str(doc["all"]["missed"]))

    def test_the_figure_draws_max_and_p999_per_period_over_clock_time_with_the_threshold(self):
        _, html = self.page("--monitor", MON_A)
        m = re.search(r'<svg id="monitor-periods"[^>]*>(.*?)</svg>', html, re.S)
        self.assertIsNotNone(m, "the long-run figure is on the page")
        body = m.group(1)
        self.assertIn("start of the period (UTC", body)
        self.assertGreaterEqual(body.count("<polyline"), 3, "max, p99.9 and the threshold are drawn")
        self.assertEqual(body.count("<circle"), 3, "a point at each period's max")
        self.assertIn("threshold 100 us", html)

    def test_monitor_latest_is_the_monitor_whose_newest_run_was_stored_last(self):
        p, html = self.page("--monitor", "latest")
        self.assertIn("monitor " + MON_B, html)
        self.assertEqual([r[0] for r in self.rows(html)], ["2", "5"])

    def one_line_usage_error(self, p, *needles):
        self.assertEqual(p.returncode, 2, p.stderr)
        lines = p.stderr.splitlines()
        self.assertTrue(lines[0].startswith("latscope report: "), lines[0])
        for n in needles:
            self.assertIn(n, lines[0])
        self.assertEqual(lines[1:], ["Try 'latscope report --help'."])
        self.assertEqual(p.stdout, "")

    def test_a_monitor_with_run_ids_or_filters_is_a_usage_error(self):
        for extra in (["1"], ["--label", "site=x"], ["--probe", "timer"]):
            p = run("report", "--monitor", MON_A, *extra, "-o", self.path("r.html"), "--db", self.mdb)
            self.one_line_usage_error(p, "option '--monitor'", "not with run ids or --label/--probe")
            self.assertFalse(os.path.exists(self.path("r.html")))

    def test_a_monitor_no_run_is_labelled_with_is_an_error_of_one_line(self):
        p = run("report", "--monitor", "2026-01-01T00:00:00Z", "-o", self.path("r.html"), "--db", self.mdb)
        self.assertEqual((p.returncode, p.stdout), (1, ""), p.stderr)
        self.assertEqual(p.stderr, "latscope report: option '--monitor': no stored run has label "
                         "monitor=2026-01-01T00:00:00Z\n")
        p = run("report", "--monitor", "latest", "-o", self.path("r.html"), "--db", self.db)
        self.assertEqual((p.returncode, p.stdout), (1, ""), p.stderr)
        self.assertEqual(p.stderr, "latscope report: option '--monitor': no stored run has a label monitor=\n")


@unittest.skipIf(NO_BROWSER, NO_BROWSER)
class InTheBrowser(ReportCase):
    FIGURES = ("hist-timer-all", "hist-timer-cpu%d" % CPU, "ladder-timer", "windows-timer", "hist-noise-all",
               "ladder-noise", "windows-noise", "noise-noise", "noise-count-noise", "hist-wake-all", "ladder-wake",
               "windows-wake", "hist-io-all", "windows-io", "io-throughput-io", "io-cpu-io")

    def test_a_report_of_runs_of_every_probe_renders_without_errors_and_shows_its_plots(self):
        out, _ = self.make("1-5")
        dom, console = chromium(out)
        self.assertEqual(console, [], "the page logged to the console")
        self.assertIn("</html>", dom)
        for fig in self.FIGURES:
            if fig == "hist-timer-cpu%d" % CPU:
                continue    # per-CPU histograms only when the runs measured more than one CPU
            m = re.search(r'<svg id="%s"[^>]*>(.*?)</svg>' % re.escape(fig), dom, re.S)
            self.assertIsNotNone(m, "figure %s is in the rendered page" % fig)
            body = m.group(1)
            self.assertRegex(body, r'<(polyline|circle|rect x)', "figure %s draws data" % fig)
            self.assertRegex(body, r'class="axis"[^>]*>[^<]*\((us|ns|ms|s|MB/s|operations/s)[,)]|class="axis"[^>]*>percentile'
                             r'|class="axis"[^>]*>events|class="axis"[^>]*>run', "figure %s has labelled axes" % fig)
        shot = self.path("shot.png")
        _, console = chromium(out, shot=shot, height=1600)
        self.assertEqual(console, [])
        width, height, rows = png.read(shot)
        self.assertEqual((width, height), (1280, 1600))
        seen = png.colours(rows)
        for colour in PALETTE[:2]:
            self.assertIn(rgb(colour), seen, "the screenshot shows the lines of run colour %s" % colour)
        self.assertGreater(len(seen), 50, "the screenshot is not blank")

    def test_the_console_check_catches_a_page_that_logs_an_error(self):
        out, html = self.make("3")
        bad = self.path("bad.html")
        with open(bad, "w") as f:
            f.write(html.replace("</body>", "<script>no_such_function();</script></body>"))
        _, console = chromium(bad)
        self.assertTrue(any("Uncaught" in l for l in console), "a broken script is seen: %r" % console)

    def test_ten_runs_get_ten_colours_and_one_run_works_alone(self):
        db = self.path("ten.db")
        for i in range(10):
            p = run("timer", "-a", str(CPU), "-l", "50", "-q", "--window", "50ms", "--label", "n=%d" % i, "--db", db)
            self.assertEqual(p.returncode, 0, p.stderr)
        out = self.path("ten.html")
        p = self.report("1-10", "-o", out, db=db)
        self.assertEqual(p.returncode, 0, p.stderr)
        dom, console = chromium(out)
        self.assertEqual(console, [])
        for i in range(10):
            self.assertIn("run %d timer n=%d" % (i + 1, i), dom)
        m = re.search(r'<svg id="hist-timer-all".*?</svg>', dom, re.S)
        colours = set(re.findall(r'stroke="(#[0-9A-F]{6})"', m.group(0)))
        self.assertEqual(colours, set(PALETTE[:10]), "every run in its own colour")
        p = self.report("4", "-o", self.path("one.html"), db=db)
        self.assertEqual(p.returncode, 0, p.stderr)
        dom, console = chromium(self.path("one.html"))
        self.assertEqual(console, [])
        self.assertIn('<svg id="ladder-timer"', dom)
        self.assertIn("nothing to compare it with", dom)

    def test_a_monitors_page_renders_without_errors(self):
        db = self.path("mon.db")
        for _ in range(2):
            p = run("timer", "-a", str(CPU), "-l", "100", "-q", "--window", "50ms", "--label", "monitor=" + MON_A,
                    "--db", db)
            self.assertEqual(p.returncode, 0, p.stderr)
        out = self.path("mon.html")
        p = self.report("--monitor", MON_A, "-o", out, db=db)
        self.assertEqual(p.returncode, 0, p.stderr)
        dom, console = chromium(out)
        self.assertEqual(console, [])
        self.assertRegex(dom, re.compile(r'<svg id="monitor-periods"[^>]*>.*<polyline', re.S), "the figure draws data")

    def test_a_run_stopped_early_is_marked_on_its_plots(self):
        db = self.path("stop.db")
        proc = subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-D", "30", "--live", "--window", "100ms",
                                 "--db", db], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        windows = 0
        try:
            for line in proc.stdout:        # stopped once it has three windows to draw, not after a sleep
                windows += bool(WINDOW_LINE.match(line))
                if windows == 3:
                    break
        finally:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=30)
        self.assertEqual(windows, 3, "the run printed its windows")
        self.assertEqual(proc.returncode, 0)
        out = self.path("stop.html")
        p = self.report("1", "-o", out, db=db)
        self.assertEqual(p.returncode, 0, p.stderr)
        dom, console = chromium(out)
        self.assertEqual(console, [])
        self.assertRegex(dom, r'class="note"[^>]*>run 1 stopped early at [0-9.]+ s \(signal SIGINT\)')
        self.assertIn("This run was stopped early", dom)


if __name__ == "__main__":
    main()
