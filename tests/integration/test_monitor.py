"""latscope monitor: periods stored as runs, /metrics scraped by the real Prometheus server,
rotation, --keep, SIGUSR1, the noise schedule, hostile clients, and what nobody gets.

The runs are as short as their subject allows: a window of 100 ms where the window is not the
subject (the counters on /metrics move at each window's end), and every wait polls for the state
it waits for (a line said, a period stored, a count on /metrics)."""
import http.client
import json
import os
import re
import shutil
import statistics
import signal
import socket
import sqlite3
import subprocess
import threading
import time
import urllib.parse
import urllib.request

from harness import LAT_INJECT, LATSCOPE, TempDirCase, kill_and_close, main, needs, run

SBIN_PATH = os.environ.get("PATH", os.defpath) + ":/usr/sbin:/sbin"      # where harness.lacking looks too
PROMETHEUS = shutil.which("prometheus", path=SBIN_PATH)
PROMTOOL = shutil.which("promtool", path=SBIN_PATH)
# The ladder of bounds /metrics uses (src/report/omtext.c), in nanoseconds.
LADDER_NS = [m * 10**(e + 9) for e in range(-6, 2) for m in (1, 2, 5)] + [100 * 10**9]
OPENMETRICS_ACCEPT = "application/openmetrics-text;version=1.0.0"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path="/metrics", headers=None, timeout=2.0):
    """(status, body text, seconds taken)."""
    start = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read().decode(), time.monotonic() - start
    finally:
        c.close()


def samples(text):
    """{series (name and labels as written): value} of an exposition."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def value(text, name):
    """The one sample of a family without per-CPU labels."""
    found = [v for k, v in samples(text).items() if k.split("{")[0] == name]
    assert len(found) == 1, (name, found)
    return found[0]


def probe_value(text, name, probe):
    """The one sample of a family without per-CPU labels, of one probe (a noise schedule serves two)."""
    found = [v for k, v in samples(text).items() if k.split("{")[0] == name and f'probe="{probe}"' in k]
    assert len(found) == 1, (name, probe, found)
    return found[0]


def ladder_slot(high_ns):
    """The index in LADDER_NS of the bucket /metrics counts a histogram bucket ending at high_ns in
    (om_ladder_slot: the first bound at or above it); len(LADDER_NS) for +Inf."""
    return next((i for i, b in enumerate(LADDER_NS) if b >= high_ns), len(LADDER_NS))


def prometheus_quantile(q, cumulative):
    """histogram_quantile(q, ...) as Prometheus computes it from a classic histogram (promql's
    bucketQuantile: linear within the bucket where the cumulative count reaches q of the total),
    from [(upper bound in seconds, cumulative count)] sorted by bound, +Inf last."""
    rank = q * cumulative[-1][1]
    b = next((i for i, (_, c) in enumerate(cumulative[:-1]) if c >= rank), len(cumulative) - 1)
    if b == len(cumulative) - 1:
        return cumulative[-2][0]
    if b == 0 and cumulative[0][0] <= 0:
        return cumulative[0][0]
    start, below = (cumulative[b - 1][0], cumulative[b - 1][1]) if b else (0.0, 0.0)
    return start + (cumulative[b][0] - start) * ((rank - below) / (cumulative[b][1] - below))


class Prometheus:
    """The real Prometheus server on a free port of its own, scraping a monitor every second."""

    def __init__(self, case, target_port):
        self.port = free_port()
        config = case.path("prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: latscope\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{target_port}']\n")
        self.log = case.path("prometheus.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([PROMETHEUS, f"--config.file={config}",
                                          f"--storage.tsdb.path={case.path('tsdb')}",
                                          f"--web.listen-address=127.0.0.1:{self.port}"],
                                         stdout=subprocess.DEVNULL, stderr=log)
        case.addCleanup(self.stop)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)

    def query(self, q, at=None):
        """The result of an instant query, evaluated at `at` (a time as Prometheus gave it) when given:
        queries at one time all see the same scrape."""
        args = {"query": q} if at is None else {"query": q, "time": at}
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode(args)
        with urllib.request.urlopen(url, timeout=5) as r:
            doc = json.load(r)
        if doc["status"] != "success":
            raise AssertionError(f"{q}: {doc}")
        return doc["data"]["result"]

    def what_it_holds(self, runs, docs):
        """What the test reads back once the monitor has stopped: every scrape of the timer probe's
        samples counter, as (time, value); and, at the first scrape during the noise run, the values
        every check of it needs, all at that one scrape."""
        held = {"at": None}
        series = self.query('latscope_samples_total{job="latscope",probe="timer"}[5m]')
        held["scrapes"] = [(float(t), float(v)) for t, v in series[0]["values"]] if series else []
        noise = [d for r, d in zip(runs, docs) if r["probe"] == "noise"]
        if not noise:
            return held
        start = noise[0]["start_realtime_ns"] / 1e9
        held["noise"] = (start, start + noise[0]["elapsed_ns"] / 1e9)
        during = [t for t, _ in held["scrapes"] if held["noise"][0] <= t <= held["noise"][1]]
        if not during:
            return held
        at = held["at"] = repr(during[0])
        held["up"] = float(self.query('up{job="latscope"}', at)[0]["value"][1])
        timer = '{job="latscope",probe="timer"}'
        p99 = f"histogram_quantile(0.99, sum by (le) (latscope_latency_seconds_bucket{timer}))"
        held["p99"] = float(self.query(p99, at)[0]["value"][1])
        held["buckets"] = {r["metric"]["le"]: float(r["value"][1])
                           for r in self.query(f"latscope_latency_seconds_bucket{timer}", at)}
        counted = self.query(f"latscope_samples_total{timer}", at)
        held["labels"] = counted[0]["metric"]
        held["samples_total"] = float(counted[0]["value"][1])
        return held


class Monitor:
    """latscope monitor on a free port, its stderr read for the address it serves."""

    def __init__(self, case, *args, db="runs.db", user=None):
        exe = [LATSCOPE] if user is None else ["runuser", "-u", user, "--", case.nobody_exe()]
        self.db = case.path(db)
        self.user = user
        self.proc = subprocess.Popen([*exe, "monitor", "--listen", "127.0.0.1:0", "--db", self.db, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=case.tmp,
                                     start_new_session=True)
        self.lines = []
        m = None
        for _ in range(10):             # what it says before it serves comes first
            line = self.proc.stderr.readline()
            self.lines.append(line)
            m = re.search(r"serving http://127\.0\.0\.1:(\d+)/metrics", line)
            if m or not line:
                break
        if not m:
            os.killpg(self.proc.pid, signal.SIGKILL)    # never left running (runuser's child too)
            out, err = self.proc.communicate(timeout=30)
            raise AssertionError(f"the monitor did not serve: {''.join(self.lines)}{err}")
        self.port = int(m.group(1))
        case.addCleanup(self._cleanup)
        self.err_reader = threading.Thread(target=self._read_err, daemon=True)
        self.err_reader.start()

    def _cleanup(self):
        """A test that failed before stopping it leaves nothing running."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)

    def _read_err(self):
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_for(self, pred, timeout=30.0):
        """Poll /metrics until pred(text) holds; the text."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            status, body, _ = get(self.port)
            if status == 200 and pred(body):
                return body
            time.sleep(0.1)
        raise AssertionError(f"/metrics never satisfied the condition: {body}")

    def pid(self):
        """The monitor's own process (under runuser, its child)."""
        if not self.user:
            return self.proc.pid
        with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
            return int(f.read().split()[0])

    def stop(self, sig=signal.SIGTERM, timeout=60):
        os.kill(self.pid(), sig)
        out, _ = self.proc.communicate(timeout=timeout)
        self.err_reader.join(timeout=5)
        return self.proc.returncode, out, "".join(self.lines)


class MonitorCase(TempDirCase):
    def nobody_exe(self):
        exe = self.path("latscope-nobody")
        if not os.path.exists(exe):
            shutil.copy(LATSCOPE, exe)
            os.chmod(exe, 0o755)
        return exe

    def stored_runs(self, db="runs.db"):
        """(id, probe) of every stored run, oldest first; none while the store is not made yet."""
        if not os.path.exists(self.path(db)):
            return []
        try:
            con = sqlite3.connect(f"file:{self.path(db)}?mode=ro", uri=True)
            try:
                return con.execute("SELECT id, probe FROM runs ORDER BY id").fetchall()
            finally:
                con.close()
        except sqlite3.OperationalError:
            return []           # the monitor is making the store's tables

    def wait_stored(self, mon, n, db="runs.db", timeout=40.0):
        """Poll the store until it holds n runs or more (the monitor still running)."""
        end = time.monotonic() + timeout
        while len(self.stored_runs(db)) < n and time.monotonic() < end and mon.proc.poll() is None:
            time.sleep(0.1)
        self.assertGreaterEqual(len(self.stored_runs(db)), n, "".join(mon.lines))

    def all_runs(self, db="runs.db"):
        """Every stored run as {"id", "probe", "labels"}, oldest first."""
        return [{"id": i, "probe": probe, "labels": self.stored(i, db)["labels"]} for i, probe in self.stored_runs(db)]

    def monitor_runs(self, db="runs.db"):
        return [r for r in self.all_runs(db) if "monitor" in r["labels"]]


# The module's one monitor run with a noise schedule (see noise_schedule_run).
_NOISE_SCHEDULE = {}


def noise_schedule_run(case):
    """The module's one monitor run with a noise schedule, shared by the two tests that judge it, made
    by the first that asks (a failure fails that test, and the next to ask makes the run again): a 10 s
    period of the timer probe, a 3 s noise run, and the next period under way when it is stopped;
    Prometheus, when it is installed, scrapes it every second.  While the noise run measures, the timer
    probe's counters on /metrics stand still at the period just stored (measured: they are the period's,
    exactly): what Prometheus scrapes then is that period."""
    if "run" not in _NOISE_SCHEDULE:
        mon = Monitor(case, "-a", "1", "--rotate", "1h", "--noise-every", "10s", "--noise-for", "3s",
                      "--label", "site=lab", "-q")
        prom = Prometheus(case, mon.port) if PROMETHEUS else None
        # the period and the noise run stored, then the next period's first window counted on /metrics:
        # the noise run is over, and every one of its windows was counted before it was stored
        case.wait_stored(mon, 2)
        first = case.stored(case.stored_runs()[0][0])["all"]["metrics"]["latency"]["count"]
        body = mon.wait_for(lambda t: probe_value(t, "latscope_samples_total", "timer") > first)
        rc, _, err = mon.stop()
        runs = case.all_runs()
        docs = [case.stored(r["id"]) for r in runs]
        held = None
        if prom:
            held = prom.what_it_holds(runs, docs)
            prom.stop()
            with open(prom.log) as f:
                held["log"] = f.read()[-3000:]      # its last words, for a failure's message
        _NOISE_SCHEDULE["run"] = {"rc": rc, "err": err, "runs": runs, "docs": docs, "body": body, "prometheus": held}
    return _NOISE_SCHEDULE["run"]


@needs(cpus=2)          # one measured, one for the server and the rest
class TestPrometheus(MonitorCase):
    @needs(programs=("prometheus",))
    def test_prometheus_scrapes_the_monitor_and_agrees_with_its_stored_period(self):
        """Stalls: relations they cannot turn, all exact.  Prometheus's scrapes while the noise run
        measures read the timer probe's counters standing still at the period just stored: they must
        be that period, bucket for bucket; Prometheus's p99 must be its interpolation of the scraped
        buckets, the stored p99 the value of its own histogram's rank, and the two in the same bucket
        of the ladder."""
        run = noise_schedule_run(self)
        self.assertEqual(run["rc"], 0, run["err"])
        held = run["prometheus"]
        self.assertEqual([r["probe"] for r in run["runs"]], ["timer", "noise", "timer"], run["runs"])
        lead = run["docs"][0]["all"]["metrics"]["latency"]
        total = lead["count"]
        self.assertGreater(total, 0)
        log = held["log"]
        # Prometheus scraped every second through the run: a counter that never goes back, of the
        # stored period at most before the noise run, and that period exactly while it measures
        scraped = held["scrapes"]
        self.assertGreaterEqual(len(scraped), 5, f"Prometheus scraped fewer than 5 times: {scraped}\n{log}")
        self.assertEqual([v for _, v in scraped], sorted(v for _, v in scraped))
        noise_start, noise_end = held["noise"]
        self.assertTrue(all(v <= total for t, v in scraped if t < noise_start), (scraped, total))
        during = [v for t, v in scraped if noise_start <= t <= noise_end]
        self.assertTrue(during, f"no scrape in the 3 s of the noise run: {scraped} {held['noise']}\n{log}")
        self.assertEqual(during, [total] * len(during))
        # the scrape worked (Prometheus negotiates OpenMetrics: its own parser read it), labels and all
        self.assertEqual(held["up"], 1.0)
        self.assertEqual(held["labels"]["label_site"], "lab")
        self.assertEqual(held["samples_total"], total)
        # each bucket: the stored histogram's count up to its bound, exactly
        stored_upto = {b: sum(c for lo, hi, c in lead["histogram"]["buckets"] if hi <= b) for b in LADDER_NS}
        buckets = {("+Inf" if le == "+Inf" else round(float(le) * 1e9)): v for le, v in held["buckets"].items()}
        self.assertEqual(buckets, dict(stored_upto, **{"+Inf": total}))
        # Prometheus's reading of them: its p99, interpolated in the bucket where they reach 0.99 of all
        cumulative = sorted((float(le), v) for le, v in held["buckets"].items())
        self.assertAlmostEqual(held["p99"], prometheus_quantile(0.99, cumulative), delta=1e-12 * held["p99"])
        # latscope's: the stored p99 is the value of the bucket of rank ceil(0.99 count) (its midpoint,
        # within min and max)
        rank, seen = -(-99 * total // 100), 0
        for lo, hi, c in lead["histogram"]["buckets"]:
            seen += c
            if seen >= rank:
                break
        self.assertEqual(lead["p99_ns"], min(max(lo + (hi - lo) // 2, lead["min_ns"]), lead["max_ns"]))
        # the two agree: Prometheus's p99 lies in the ladder's bucket that holds the stored p99's bucket
        # (the same rank: Prometheus's 0.99 * count, a double, is at most ceil(0.99 count) and above the
        # integer below it)
        k = ladder_slot(hi)
        lower, upper = (LADDER_NS[k - 1] if k else 0) / 1e9, LADDER_NS[k] / 1e9
        self.assertTrue(lower <= held["p99"] <= upper, (held["p99"], lead["p99_ns"], lower, upper))

    @needs(programs=("promtool",))
    def test_promtool_accepts_the_served_text_and_the_series_count_is_the_formula(self):
        """Stalls: nothing here depends on them (the text served, its series counted)."""
        for per_cpu in (False, True):
            with self.subTest(per_cpu_histograms=per_cpu):
                mon = Monitor(self, "-a", "1", "--window", "100ms", *(["--per-cpu-histograms"] if per_cpu else []),
                              "--no-store")
                body = mon.wait_for(lambda t: "latscope_window_max_seconds{" in t
                                    and "latscope_steal_seconds_total{" in t)
                p = subprocess.run([PROMTOOL, "check", "metrics"], input=body, capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                # one measured CPU: 36 + 5 C, or 8 + 33 C (latscope-monitor(1), "Series")
                self.assertEqual(len(samples(body)), 8 + 33 if per_cpu else 36 + 5, body)
                status, om, _ = get(mon.port, headers={"Accept": OPENMETRICS_ACCEPT})
                self.assertEqual(status, 200)
                self.assertTrue(om.endswith("# EOF\n"))
                self.assertIn("# TYPE latscope_samples counter\n", om)
                self.assertEqual(set(samples(om)) - {k for k in samples(om) if "_5m_" in k},
                                 set(samples(body)) - {k for k in samples(body) if "_5m_" in k})
                rc, _, err = mon.stop()
                self.assertEqual(rc, 0, err)

    def test_every_metric_family_served_is_listed_in_contrib_metrics(self):
        """Stalls: nothing here depends on them (the families served)."""
        listed = {}
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib", "metrics.txt")) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    name, kind, *needs = line.split()
                    if not needs:       # those that need an option are checked where it is given
                        listed[name] = kind
        mon = Monitor(self, "-a", "1", "--window", "100ms", "--no-store")
        body = mon.wait_for(lambda t: "latscope_window_max_seconds{" in t and "latscope_steal_seconds_total{" in t)
        mon.stop()
        served = dict(re.findall(r"^# TYPE (\S+) (\S+)$", body, re.M))
        self.assertEqual(served, listed)


@needs(cpus=2)          # one measured, one for the server and the rest
class TestPeriods(MonitorCase):
    def test_each_period_is_headed_by_the_command_typed(self):
        mon = Monitor(self, "-a", "1", "--rotate", "1s", "--window", "100ms")
        mon.wait_for(lambda t: value(t, "latscope_samples_total") > 0)
        rc, out, err = mon.stop()
        self.assertEqual(rc, 0, err)
        heads = [line for line in out.splitlines() if " on cpu " in line]
        self.assertTrue(heads, out)
        for line in heads:
            self.assertTrue(line.startswith("latscope monitor: interval "), line)

    def test_the_pages_suggested_commands_show_and_report_its_stored_periods(self):
        """The page at / names the last period's run and the monitor's report by commands: both run."""
        mon = Monitor(self, "-a", "1", "--rotate", "1s", "--window", "100ms", "-q")
        self.wait_stored(mon, 1)
        end = time.monotonic() + 30
        page = ""
        while "latscope show" not in page and time.monotonic() < end:
            status, page, _ = get(mon.port, "/")
            self.assertEqual(status, 200)
            time.sleep(0.1)
        cmds = re.findall(r"latscope (show \d+|report --monitor [A-Za-z0-9_.:-]+)", page)
        self.assertEqual([c.split()[0] for c in cmds], ["show", "report"], page)
        for cmd in cmds:
            extra = ["-o", self.path("r.html")] if cmd.startswith("report") else []
            p = run(*cmd.split(), "--db", mon.db, *extra)
            self.assertEqual(p.returncode, 0, f"latscope {cmd}: {p.stderr}")
        rc, _, err = mon.stop()
        self.assertEqual(rc, 0, err)

    def test_2_second_periods_stopped_in_the_fourth_are_three_stored_and_a_partial_one(self):
        """Stalls: relations they cannot turn (periods by duration, counters that never go back); the
        monitor is stopped in the fourth period by polling for its first window, with 1.8 s to spare.
        Nothing slow lies between seeing the third period stored and the stop: the periods' own
        counts are read after it (under ASan and three modules beside, reading them first took
        the fourth period's 2 s, and it ended by duration before the signal came)."""
        mon = Monitor(self, "-a", "1", "--rotate", "2s", "--window", "100ms", "-q")
        seen = []

        def count(text):
            seen.append(value(text, "latscope_samples_total"))
            return seen[-1]
        # three periods stored, then a window of the fourth counted (its samples add to the third's)
        end = time.monotonic() + 30
        while len(self.stored_runs()) < 3 and time.monotonic() < end:
            status, body, _ = get(mon.port)
            self.assertEqual(status, 200)
            count(body)
            time.sleep(0.1)
        # two windows counted after the third period is stored: the second is the fourth's even if
        # the third's last window were counted after its store (checked below against the stored
        # periods' counts)
        for _ in range(2):
            status, body, _ = get(mon.port)
            self.assertEqual(status, 200)
            before = count(body)
            mon.wait_for(lambda t, before=before: count(t) > before)
        rc, out, err = mon.stop()
        self.assertEqual(rc, 0, err)
        runs = self.monitor_runs()
        self.assertEqual(len(runs), 4, runs)
        docs = [self.stored(r["id"]) for r in runs]
        self.assertEqual(len({d["labels"]["monitor"] for d in docs}), 1)
        for d in docs[:3]:
            self.assertEqual(d["stop_reason"], "duration")
            self.assertAlmostEqual(d["elapsed_ns"] / 1e9, 2.0, delta=0.5)
        self.assertEqual(docs[3]["stop_reason"], "signal SIGTERM")
        # counters never go back, across the rotations too, and the total is what the periods hold
        self.assertEqual(seen, sorted(seen))
        self.assertGreater(seen[-1], seen[0])
        self.assertLessEqual(seen[-1], sum(d["all"]["metrics"]["latency"]["count"] for d in docs))
        self.assertGreater(seen[-1], sum(d["all"]["metrics"]["latency"]["count"] for d in docs[:3]))

    def test_keep_2_leaves_the_two_newest_monitor_runs_and_every_other_run(self):
        """Stalls: a relation they cannot turn (which runs are kept)."""
        p = run("timer", "-a", "1", "-l", "100", "-q", "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        mon = Monitor(self, "-a", "1", "--rotate", "1s", "--keep", "2")
        # the third period stored and one removed; the one SIGTERM ends makes another go
        end = time.monotonic() + 30
        while not any("--keep 2: removed" in line for line in mon.lines) and time.monotonic() < end:
            time.sleep(0.1)
        rc, out, err = mon.stop()
        self.assertEqual(rc, 0, err)
        self.assertIn("--keep 2: removed", err)
        runs = self.monitor_runs()
        self.assertEqual(len(runs), 2, runs)
        # the newest two: the last one is the period SIGTERM ended
        self.assertEqual(self.stored(runs[-1]["id"])["stop_reason"], "signal SIGTERM")
        others = [r for r in self.all_runs() if "monitor" not in r["labels"]]
        self.assertEqual(len(others), 1)

    def test_report_writes_the_monitors_report_after_each_period_and_serves_it(self):
        """Stalls: a relation they cannot turn (what the page holds); the first GET comes a whole
        period (2 s) before a period can be stored."""
        out = self.path("monitor.html")
        mon = Monitor(self, "-a", "1", "--rotate", "2s", "--report", out, "-q")
        status, body, _ = get(mon.port, "/report")
        self.assertEqual(status, 503)   # no period stored yet
        end = time.monotonic() + 30
        while time.monotonic() < end:
            status, body, _ = get(mon.port, "/report")
            if status == 200 and body.count("<tr") >= 3:    # the head and two periods
                break
            time.sleep(0.1)
        self.assertEqual(status, 200)
        page = get(mon.port, "/")[1]
        rc, _, err = mon.stop()
        self.assertEqual(rc, 0, err)
        self.assertIn('<a href="/report">', page)
        monitor = self.stored(self.monitor_runs()[0]["id"])["labels"]["monitor"]
        self.assertIn(f"monitor {monitor}", body)
        with open(out) as f:
            written = f.read()
        self.assertIn(f"monitor {monitor}", written)
        self.assertGreaterEqual(written.count("<tr"), body.count("<tr"))

    def test_sigusr1_stores_the_period_now_and_starts_the_next(self):
        """Stalls: a relation they cannot turn (which signal ended which period)."""
        mon = Monitor(self, "-a", "1", "--rotate", "1h", "--window", "100ms", "-q")
        mon.wait_for(lambda t: value(t, "latscope_samples_total") > 1000)
        mon.proc.send_signal(signal.SIGUSR1)
        self.wait_stored(mon, 1)                # SIGUSR1 stored the period
        self.assertEqual(len(self.monitor_runs()), 1, "SIGUSR1 stored the period")
        before = value(get(mon.port)[1], "latscope_samples_total")
        mon.wait_for(lambda t: value(t, "latscope_samples_total") > before + 1000)
        rc, out, err = mon.stop(signal.SIGINT)
        self.assertEqual(rc, 0, err)
        docs = [self.stored(r["id"]) for r in self.monitor_runs()]
        self.assertEqual([d["stop_reason"] for d in docs], ["signal SIGUSR1", "signal SIGINT"])
        self.assertLess(docs[0]["elapsed_ns"], 60e9)

    def test_the_noise_probe_runs_between_two_periods_on_its_schedule(self):
        """Stalls: relations they cannot turn (the order of the runs, their lengths within 1 s and 0.5 s,
        the noise run's gaps counted on /metrics as stored)."""
        run = noise_schedule_run(self)
        self.assertEqual(run["rc"], 0, run["err"])
        runs, docs, body = run["runs"], run["docs"], run["body"]
        self.assertEqual([r["probe"] for r in runs], ["timer", "noise", "timer"], runs)
        self.assertEqual(len({d["labels"]["monitor"] for d in docs}), 1)
        self.assertEqual([c["cpu"] for c in docs[1]["cpus"]], [1])
        self.assertAlmostEqual(docs[0]["elapsed_ns"] / 1e9, 10.0, delta=1.0)
        self.assertAlmostEqual(docs[1]["elapsed_ns"] / 1e9, 3.0, delta=0.5)
        # never at the same time: the noise run starts after the timer period ends
        t0 = docs[0]["start_realtime_ns"] + docs[0]["elapsed_ns"]
        self.assertGreaterEqual(docs[1]["start_realtime_ns"], t0)
        self.assertGreaterEqual(docs[2]["start_realtime_ns"], docs[1]["start_realtime_ns"] + docs[1]["elapsed_ns"])
        # /metrics counts the noise run's gaps as probe="noise": all of them, as stored
        noise = [v for k, v in samples(body).items() if k.startswith("latscope_samples_total{") and 'probe="noise"' in k]
        self.assertEqual(noise, [docs[1]["all"]["metrics"]["gap"]["count"]])


@needs(cpus=2)          # one measured, one for the server and the rest
class TestTraceSpikes(MonitorCase):
    @needs(root=True, tracefs=True)
    def test_an_injected_task_is_named_as_the_cause_of_the_spikes_and_counted_by_kind(self):
        """Stalls: an injected effect far above them, judged by relations: 20 ms bursts, explained above
        10 ms, above the stalls this guest's host gives it often (3-5 ms); its worst (10-30 ms) may take a
        window's max now and then, so most windows, not all, must name the injector."""
        # 20 ms of a FIFO 90 task every 500 ms on the measured CPU, above the monitor's FIFO 80, for
        # seven windows of 500 ms, a burst in each
        mon = Monitor(self, "-a", "1", "-p", "80", "--rotate", "1h", "--window", "500ms", "--trace-spikes", "10ms",
                      "-q")
        inject = subprocess.Popen([LAT_INJECT, "1", "90", "20ms", "500ms", "3500ms"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        inject.communicate(timeout=30)
        body = mon.wait_for(lambda t: 'kind="task"' in t)
        rc, out, err = mon.stop()
        self.assertEqual(rc, 0, err)
        self.assertNotIn("not traced", err)
        runs = self.monitor_runs()
        self.assertEqual(len(runs), 1)
        notes = self.stored(runs[0]["id"])["notes"]
        summary = [n for n in notes if n.startswith("--trace-spikes 10ms: ")]
        self.assertEqual(len(summary), 1, notes)
        explained = int(re.search(r": (\d+) windows? explained", summary[0]).group(1))
        self.assertGreaterEqual(explained, 4, summary)
        spikes = [n for n in notes if n.startswith("spike on cpu 1 at ")]
        self.assertTrue(spikes, notes)
        # most name the injector as the larger part of the sample, typically half a burst or more:
        # on this guest a hypervisor stall may shorten or lengthen a burst (the task spins until
        # the clock passes its end) or take a window's max, so a few may not
        def ms(text):
            m = re.match(r"([\d.]+)(us|ms)$", text)
            return float(m.group(1)) / (1000.0 if m.group(2) == "us" else 1.0)
        named = []
        for n in spikes:
            m = re.search(r": (\S+), task lat-inject \(pid \d+\) \((\S+) of it\)", n)
            if m:
                self.assertLessEqual(ms(m.group(2)), ms(m.group(1)), n)
                named.append(ms(m.group(2)))
        self.assertGreaterEqual(len(named), (len(spikes) + 1) // 2, spikes)
        self.assertGreaterEqual(statistics.median_low(named), 0.5 * 20, spikes)
        scraped = samples(body)
        task = [v for k, v in scraped.items() if k.startswith("latscope_spike_causes_total{") and 'kind="task"' in k]
        self.assertEqual(len(task), 1)
        self.assertGreaterEqual(task[0], 1)
        self.assertEqual(sorted(re.findall(r'kind="(\w+)"', "".join(k for k in scraped if "spike_causes" in k))),
                         ["irq", "no_event", "softirq", "task"])

    def test_with_host_each_explained_spike_is_answered_by_the_agent_naming_the_injector(self):
        """A known answer on this machine alone: the agent follows the monitor itself as the "VM",
        its measuring thread on CPU 1 as vCPU 1, while lat-inject takes CPU 1 at FIFO 90 for 20 ms
        every 500 ms.  The monitor is started before the agent: it says the host is out of reach and
        reaches it on a later try.  Stalls of this machine may take a window's max now and then, so
        most answers, not all, must name the injector."""
        sock = self.path("host.sock")
        mon = Monitor(self, "-a", "1", "-p", "80", "--rotate", "1h", "--window", "500ms", "--trace-spikes", "10ms",
                      "--host", "unix:" + sock, "-q")
        tid = None
        deadline = time.monotonic() + 30
        while tid is None and time.monotonic() < deadline:
            for t in os.listdir("/proc/%d/task" % mon.pid()):
                try:
                    if os.sched_getaffinity(int(t)) == {1} and os.sched_getscheduler(int(t)) == os.SCHED_FIFO:
                        tid = int(t)
                except OSError:
                    continue
            time.sleep(0.05)
        self.assertIsNotNone(tid, "the monitor's measuring thread on CPU 1")
        agent = subprocess.Popen([LATSCOPE, "host", "--vm", str(mon.pid()), "--vcpu", "1=%d" % tid, "--listen",
                                  "unix:" + sock], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(kill_and_close, agent)
        os.sched_setaffinity(agent.pid, {0})
        for line in agent.stdout:                # the monitor tries again every 5 s
            if re.match(r"latscope host: client .* connected", line):
                break
        inject = subprocess.Popen([LAT_INJECT, "1", "90", "20ms", "500ms", "5"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        inject.communicate(timeout=30)
        key = 'latscope_spike_host_causes_total{'
        body = mon.wait_for(lambda t: any(k.startswith(key) and 'cause="not_running"' in k and v >= 3
                                          for k, v in samples(t).items()), timeout=40)
        rc, out, err = mon.stop()
        self.assertEqual(rc, 0, err)
        self.assertIn("--host: ", err)
        self.assertIn("trying again every 5 s", err)
        self.assertEqual(sorted(re.findall(r'cause="(\w+)"', "".join(k for k in samples(body) if key in k))),
                         ["halted", "in_host", "none", "not_running", "unsupported"])
        notes = self.stored(self.monitor_runs()[0]["id"])["notes"]
        summary = [n for n in notes if n.startswith("--host: spikes by the host's cause: ")]
        self.assertEqual(len(summary), 1, notes)
        answers = [n for n in notes if re.match(r"spike on cpu 1 at \S+: the host: ", n)]
        self.assertTrue(answers, notes)
        named = [n for n in answers if "not running for" in n and
                 "host CPU 1 ran lat-inject (pid %d, FIFO 90)" % inject.pid in n]
        self.assertGreaterEqual(len(named), (len(answers) + 1) // 2, answers)

    @needs(root=True, programs=("runuser",))     # root, to run the monitor as nobody
    def test_without_root_the_monitor_says_it_cannot_trace_and_measures(self):
        """Stalls: a relation they cannot turn (what is said and served)."""
        mon = Monitor(self, "-a", "1", "--window", "100ms", "--trace-spikes", "1ms", "-q", user="nobody",
                      db="nobody.db")
        body = mon.wait_for(lambda t: value(t, "latscope_samples_total") > 0)
        rc, out, err = mon.stop()
        self.assertEqual(rc, 0, err)
        self.assertIn("--trace-spikes: not traced: ", err)
        self.assertNotIn("latscope_spike_causes_total", body)


@needs(cpus=2)          # one measured, one for the server and the rest
class TestHostile(MonitorCase):
    def test_hostile_clients_leave_metrics_served_and_the_measured_cpu_to_its_thread(self):
        """Stalls: the one time judged, a normal client served within 1 s past the hostile ones, is far
        above them (3-30 ms)."""
        mon = Monitor(self, "-a", "1", "--window", "100ms", "--no-store", "-q")
        mon.wait_for(lambda t: value(t, "latscope_samples_total") > 0)
        for path in ("/../etc/passwd", "/metrics%00", "/..%2f..%2fetc"):
            status, _, _ = get(mon.port, path=path)
            self.assertEqual(status, 404, path)
        idle = []
        try:
            for _ in range(1000):
                try:
                    idle.append(socket.create_connection(("127.0.0.1", mon.port), timeout=2))
                except OSError:
                    break           # refused past the connection limit: dropped, as it may
            big = socket.create_connection(("127.0.0.1", mon.port), timeout=5)
            try:
                big.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
            except OSError:
                pass
            big.close()
            trickle = socket.create_connection(("127.0.0.1", mon.port), timeout=5)
            trickle.sendall(b"GET /metr")
            # a normal client from another address is still served within 1 s
            c = http.client.HTTPConnection("127.0.0.1", mon.port, timeout=1.0, source_address=("127.0.0.2", 0))
            start = time.monotonic()
            c.request("GET", "/metrics")
            r = c.getresponse()
            self.assertEqual(r.status, 200)
            self.assertIn("latscope_samples_total", r.read().decode())
            self.assertLess(time.monotonic() - start, 1.0)
            c.close()
            # nothing but the measuring thread may run on the measured CPU
            on_cpu1 = []
            for tid in os.listdir(f"/proc/{mon.pid()}/task"):
                with open(f"/proc/{mon.pid()}/task/{tid}/status") as f:
                    allowed = re.search(r"^Cpus_allowed_list:\s*(\S+)", f.read(), re.M).group(1)
                if allowed == "1" or "1" in allowed.replace("-", ",").split(","):
                    on_cpu1.append((tid, allowed))
            self.assertEqual(len(on_cpu1), 1, on_cpu1)
            trickle.close()
        finally:
            for s in idle:
                s.close()
        rc, out, err = mon.stop()
        self.assertEqual(rc, 0, err)

    def test_a_burst_of_connections_while_the_server_is_stopped_leaves_the_kernel_room_for_a_scrape(self):
        """Stalls: none judged; the server is stopped, so the handshake is the kernel's alone (a listen
        queue of 128 refused the 129th SYN, and the scrape waited out a 1 s retransmit)."""
        mon = Monitor(self, "-a", "1", "--window", "100ms", "--no-store", "-q")
        mon.wait_for(lambda t: value(t, "latscope_samples_total") > 0)
        burst = []
        os.kill(mon.pid(), signal.SIGSTOP)
        try:
            for _ in range(300):
                burst.append(socket.create_connection(("127.0.0.1", mon.port), timeout=0.5))
            scrape = socket.create_connection(("127.0.0.1", mon.port), timeout=0.5,
                                              source_address=("127.0.0.2", 0))
        finally:
            os.kill(mon.pid(), signal.SIGCONT)
            for s in burst:
                s.close()
        scrape.settimeout(30)
        scrape.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        reply = b""
        while chunk := scrape.recv(65536):
            reply += chunk
        scrape.close()
        self.assertTrue(reply.startswith(b"HTTP/1.1 200"), reply[:80])
        self.assertIn(b"latscope_samples_total", reply)
        rc, out, err = mon.stop()
        self.assertEqual(rc, 0, err)


class TestUsage(MonitorCase):
    def test_bad_options_are_refused_naming_the_option(self):
        """Stalls: nothing is measured."""
        cases = [
            (["--listen", "localhost:9464"], "option '--listen'"),
            (["--keep", "0"], "option '--keep': 0 runs is out of range"),
            (["--keep", "soon"], "option '--keep': 'soon' is neither"),
            (["--label", "monitor=x"], "option '--label': monitor is the monitor's own label"),
            (["--noise-every", "1h"], "options '--noise-every' and '--noise-for' go together"),
            (["--noise-every", "20s", "--noise-for", "30s"], "option '--noise-for'"),
            (["--rotate", "0"], "option '--rotate'"),
            (["--report", "r.html", "--no-store"], "option '--report' needs a store"),
            (["--report", "/nonexistent/dir/r.html"], "option '--report': cannot write '/nonexistent/dir/r.html'"),
            (["--label", "rack-row=1", "--label", "rack_row=2"],
             "option '--label': 'rack-row' and 'rack_row' are both label_rack_row on /metrics"),
            (["--noise-every", "20s", "--noise-for", "2s", "--noise-cpus", "99"], "option '--noise-cpus': cpu 99"),
            (["--rotate", "5s", "--window", "10s"], "option '--rotate': a period is shorter than the window"),
            (["-D", "10s"], "unknown option '-D'"),
            (["extra"], "unexpected argument 'extra'"),
        ]
        for args, msg in cases:
            with self.subTest(args=args):
                p = run("monitor", "--db", self.path("runs.db"), *args, timeout=30)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(msg, p.stderr)
                self.assertIn("Try 'latscope monitor --help'", p.stderr)
                self.assertFalse(os.path.exists(self.path("runs.db")) and self.monitor_runs())

    def test_report_naming_the_store_is_refused(self):
        """Stalls: nothing is measured."""
        p = run("monitor", "--db", self.path("runs.db"), "--report", self.path("runs.db"), timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("'--report'", p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 2, p.stderr)     # the reason, then the hint

    @needs(cpus=2)      # one measured, one for the server and the rest
    def test_a_store_that_cannot_be_opened_for_a_later_period_is_a_runtime_error(self):
        """Stalls: a relation they cannot turn: each period opens the store as it starts, so whichever
        period starts after the directory is gone (the second or a later one) ends the monitor."""
        d = self.path("d")
        os.mkdir(d)
        mon = Monitor(self, "-a", "1", "--rotate", "1s", "-q", db="d/runs.db")
        self.wait_stored(mon, 1, db="d/runs.db")       # the first period is stored
        # Moved away in one step: the monitor may be writing beside its store this very
        # moment (a journal), which a removal file by file would race with.
        os.rename(d, d + ".gone")
        with open(d, "w") as f:
            f.write("x")            # the store's directory is now a file
        end = time.monotonic() + 30
        while mon.proc.poll() is None and time.monotonic() < end:
            time.sleep(0.1)
        rc, out, err = mon.stop() if mon.proc.poll() is None else (mon.proc.wait(), *mon.proc.communicate())
        mon.err_reader.join(timeout=5)
        err = "".join(mon.lines)
        self.assertEqual(rc, 1, err)
        self.assertIn("option '--db'", err)
        self.assertNotIn("Try 'latscope", err)

    def test_a_port_in_use_is_refused_with_the_address_and_the_reason(self):
        """Stalls: nothing is measured."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            port = s.getsockname()[1]
            p = run("monitor", "--listen", f"127.0.0.1:{port}", "--no-store", timeout=30)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"127.0.0.1:{port}", p.stderr)
        self.assertIn("in use", p.stderr)

    @needs(root=True, cpus=2, programs=("runuser",))     # root, to run the monitor as nobody
    def test_nobody_measures_at_normal_priority_says_so_and_serves_above_1024(self):
        """Stalls: a relation they cannot turn (what is said and stored)."""
        mon = Monitor(self, "-a", "1", "--rotate", "1h", "--window", "100ms", user="nobody", db="nobody.db")
        mon.wait_for(lambda t: value(t, "latscope_samples_total") > 0)
        rc, out, err = mon.stop()
        self.assertEqual(rc, 0, err)
        self.assertIn("not applied", out + err)
        self.assertEqual(len(self.all_runs("nobody.db")), 1)


if __name__ == "__main__":
    main()
