"""latscope cyclictest: cyclictest's options and output, checked against cyclictest itself."""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import unittest

from harness import test_cpu, LATSCOPE, TempDirCase, checked, lacking, main, needs, online_cpus, run

CPU = test_cpu()
HAVE_CYCLICTEST = shutil.which("cyclictest") is not None and os.path.realpath(shutil.which("cyclictest")) != \
    os.path.realpath(LATSCOPE)
NUM = re.compile(r"\d+")


def cyclictest_lacking(cpus=1):
    """Why the tests against cyclictest itself cannot run here, or None: lacking()'s reasons (root for its
    -m and -p, the CPUs), then cyclictest of Debian's rt-tests, which scripts/install-deps installs; a
    cyclictest on PATH that is latscope's own link is not it (the tests would compare latscope with itself)."""
    why = lacking(root=True, cpus=cpus)
    if why or HAVE_CYCLICTEST:
        return why
    if shutil.which("cyclictest"):
        return "cyclictest on PATH is latscope's own link, not Debian's rt-tests (scripts/install-deps installs it)"
    return "cyclictest is not installed (Debian rt-tests; scripts/install-deps installs it)"


def needs_cyclictest(cpus=1):
    """A decorator: the test is skipped, with cyclictest_lacking()'s reason, where that has one."""
    why = cyclictest_lacking(cpus)
    return unittest.skip(why) if why else (lambda f: f)


def wait_until_measured(proc, threads, wakeups=100, timeout=30):
    """True once proc has `threads` measuring threads (its tasks but the main one, which sleeps in
    sigtimedwait between ticks) that have each slept and woken `wakeups` times (voluntary context switches:
    one a timer wakeup), so the run has samples on every CPU, on a fast host or a slow one; False when
    proc ended or timeout passed first.  What a stop signal must find, polled instead of a fixed sleep."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        woken = 0
        try:
            for tid in os.listdir("/proc/%d/task" % proc.pid):
                if int(tid) == proc.pid:
                    continue
                with open("/proc/%d/task/%s/status" % (proc.pid, tid)) as f:
                    n = re.search(r"^voluntary_ctxt_switches:\s*(\d+)$", f.read(), re.M)
                if n and int(n.group(1)) >= wakeups:
                    woken += 1
        except OSError:
            pass            # a task that ended between the listing and the read
        if woken >= threads:
            return True
        time.sleep(0.01)
    return False


def parse_cyclictest_histogram(text):
    """A reader written for cyclictest's -h output, as rteval and the OSADL scripts read it."""
    bins, summary, outliers = {}, {}, {}
    for line in text.splitlines():
        if not line or line == "# Histogram":
            continue
        m = re.match(r"^# Thread (\d+):(.*)$", line)
        if m:
            outliers[int(m.group(1))] = m.group(2)
            continue
        m = re.match(r"^# ([A-Za-z ]+):((?: \d+)*)$", line)
        if m:
            summary[m.group(1)] = [int(x) for x in m.group(2).split()]
            continue
        if line.startswith("#"):
            continue
        fields = re.split(r"[ \t]", line)
        bins[int(fields[0])] = [int(x) for x in fields[1:]]
    return bins, summary, outliers


def shape(line):
    """A line with every number replaced by its width: the layout without the values."""
    return NUM.sub(lambda m: "<%d>" % len(m.group(0)), line)


def loose_shape(line):
    """The layout where a number's width depends on its value (space-padded or unpadded fields)."""
    return re.sub(r" *\d+", " N", line)


T_LINE = re.compile(r"^T:\s*(\d+) \(\s*(\d+)\) P:\s*(\d+) I:(\d+) C:\s*(\d+) Min:\s*(\d+) Act:\s*(\d+) "
                    r"Avg:\s*(\d+) Max:\s*(\d+)$")


def json_shape(v):
    """Keys and value types of a JSON document, with the histogram's bins as one kind of key."""
    if isinstance(v, dict):
        return {("<bin>" if k.isdigit() and len(v) and all(x.isdigit() for x in v) else k): json_shape(x)
                for k, x in v.items()}
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return type(v).__name__


def cyclictest(*args, timeout=120):
    return subprocess.run(["cyclictest", *args], capture_output=True, text=True, timeout=timeout)


class CyclictestCompat(TempDirCase):
    def latscope(self, *args, timeout=120):
        return run("cyclictest", *args, "--db", self.path("runs.db"), timeout=timeout)

    def last_id(self):
        p = run("runs", "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        return int(p.stdout.splitlines()[-1].split()[0])

    @needs_cyclictest()
    def test_the_histogram_output_has_cyclictests_lines_and_fields(self):
        """Stalls: judges the layout (each number's width where cyclictest pads it), a relation no stall turns.
        A count of loops (-l), not -D: the lines are the same whatever the length of the run."""
        args = ["-m", "-p95", "-t1", "-a%d" % CPU, "-i500", "-l1000", "-q", "-h", "200"]
        theirs = cyclictest(*args)
        ours = self.latscope(*args)
        self.assertEqual(theirs.returncode, 0, theirs.stderr)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        a, b = theirs.stdout.splitlines(), ours.stdout.splitlines()
        self.assertEqual(len(a), len(b), "as many lines as cyclictest")
        for x, y in zip(a, b):
            if x.startswith("# Thread"):
                # the overflow list holds as many cycle numbers as there were overflows
                self.assertEqual(re.sub(r"( <5>)*( # <\d+> others)?$", "", shape(x)),
                                 re.sub(r"( <5>)*( # <\d+> others)?$", "", shape(y)), y)
                self.assertRegex(y, r"^# Thread \d+:( \d{5,})*( # \d{5,} others)?$")
            elif x.startswith("# "):
                self.assertEqual(loose_shape(x), loose_shape(y), y)
            else:
                self.assertEqual(shape(x), shape(y), "a histogram line: zero-padded bin and count")

    @needs_cyclictest()
    def test_the_t_lines_have_cyclictests_fields_and_widths(self):
        """Stalls: judges the fields, widths where both pad, I:, C: and P:, relations no stall turns."""
        cpus = online_cpus()[:2]
        args = ["-m", "-p90", "-t%d" % len(cpus), "-a", ",".join(map(str, cpus)), "-i1000", "-l300", "-q"]
        theirs, ours = cyclictest(*args), self.latscope(*args)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        a = [l for l in theirs.stdout.splitlines() if l.startswith("T:")]
        b = [l for l in ours.stdout.splitlines() if l.startswith("T:")]
        self.assertEqual(len(a), len(cpus))
        self.assertEqual(len(b), len(cpus))
        for x, y in zip(a, b):
            self.assertRegex(y, T_LINE)
            self.assertEqual(loose_shape(x), loose_shape(y))
            # fields padded to the same width as long as the values fit it
            for field in ("T:", "P:", "C:", "Min:", "Act:", "Avg:", "Max:"):
                fx = re.search(re.escape(field) + r"( *\d+)", x).group(1)
                fy = re.search(re.escape(field) + r"( *\d+)", y).group(1)
                if len(fx.strip()) < len(fx) and len(fy.strip()) < len(fy):
                    self.assertEqual(len(fx), len(fy), field)
            m = T_LINE.match(y)
            self.assertEqual(m.group(4), T_LINE.match(x).group(4), "I: as cyclictest's, 500 us more per thread")
            self.assertEqual(int(m.group(5)), 300, "C: counts the loops")
            self.assertEqual(int(m.group(3)), 90)

    @needs_cyclictest(cpus=2)
    def test_the_distance_spreads_the_threads_periods_as_cyclictests_does(self):
        """Stalls: judges the periods set (I:) and the stored distance, which no stall turns."""
        for args in (["-t2", "-d", "200"], ["-t2", "-d", "200", "-h", "20"], ["-t2"]):
            theirs = cyclictest("-p90", "-l200", "-q", *args)
            ours = self.latscope("-p90", "-l200", "-q", *args)
            self.assertEqual(ours.returncode, 0, ours.stderr)
            if "-h" in args:
                # no T: lines with -h: the stored run says what the threads waited
                self.assertEqual(self.stored(self.last_id())["params"]["distance_ns"], 0)
                self.assertIn("distance is ignored", ours.stderr)
                continue
            a = [T_LINE.match(l).group(4) for l in theirs.stdout.splitlines() if l.startswith("T:")]
            b = [T_LINE.match(l).group(4) for l in ours.stdout.splitlines() if l.startswith("T:")]
            self.assertEqual(a, b, args)

    @needs(cpus=2)
    def test_aligned_offsets_each_threads_deadlines_by_its_usec_as_cyclictests_a_does(self):
        """Exact: a recorded wakeup's time less its latency is its deadline, which no stall moves (a stall
        makes wakeups late or missed).  -A alone changes nothing: latscope starts the threads together."""
        cpus = "-a%d,%d" % tuple(online_cpus()[:2])
        # (arguments, the offset, thread 1's period, where its deadlines lie in it)
        for args, offset, period, phase in ((["-A", "250"], 250000, 1500000, 250000),     # -d 500 by default
                                            (["--aligned=2000", "-h", "10"], 2000000, 1000000, 0),  # -h: -d 0
                                            (["-mA", "1100", "-d", "0"], 1100000, 1000000, 100000),
                                            (["-A", "0"], 0, 1500000, 0), (["-A"], 0, 1500000, 0)):
            with self.subTest(args=args):
                p = self.latscope("-t2", cpus, "-l200", "-q", *args)
                self.assertEqual(p.returncode, 0, p.stderr)
                doc = self.stored(self.last_id())
                self.assertEqual(doc["params"].get("aligned_offset_ns", 0), offset)
                for c, (iv, want) in zip(doc["cpus"], ((1000000, 0), (period, phase))):
                    self.assertEqual({(at - v) % iv for at, v in c["largest"]}, {want}, "cpu %d" % c["cpu"])
                if HAVE_CYCLICTEST:
                    self.assertEqual(cyclictest("-t2", cpus, "-l20", "-q", *args).returncode, 0, "cyclictest takes it")

    @needs_cyclictest()
    def test_the_all_threads_column_of_h_upper_has_cyclictests_layout(self):
        """Stalls: judges the layout and that the last column sums the others, relations no stall turns."""
        args = ["-m", "-p90", "-S", "-i1000", "-l300", "-q", "-H", "30"]
        theirs, ours = cyclictest(*args), self.latscope(*args)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        a, b = theirs.stdout.splitlines(), ours.stdout.splitlines()
        self.assertEqual(len(a), len(b))
        for x, y in zip(a, b):
            if not x.startswith("# Thread"):
                self.assertEqual(loose_shape(x) if x.startswith("# ") else shape(x),
                                 loose_shape(y) if y.startswith("# ") else shape(y), y)
        bins, summary, _ = parse_cyclictest_histogram(ours.stdout)
        n = len(online_cpus())
        if n > 1:
            self.assertTrue(all(len(v) == n + 1 and v[-1] == sum(v[:-1]) for v in bins.values()),
                            "the last column sums the threads")
            self.assertEqual(summary["Total"][-1], sum(summary["Total"][:-1]))

    @needs_cyclictest()
    def test_a_real_time_policy_without_a_priority_gets_cyclictests_default(self):
        """Stalls: judges the priority chosen and shown, which no stall turns."""
        for args in (["-S", "--policy=fifo"], ["-t", "--policy=rr"], ["--policy=fifo"]):
            theirs = cyclictest(*args, "-l20", "-q")
            ours = self.latscope(*args, "-l20", "-q")
            self.assertEqual(ours.returncode, 0, ours.stderr)
            want = re.search(r"defaulting realtime priority to (\d+)", theirs.stderr + theirs.stdout).group(1)
            self.assertIn("defaulting realtime priority to " + want, ours.stderr, args)
            self.assertEqual({T_LINE.match(l).group(3) for l in ours.stdout.splitlines() if l.startswith("T:")},
                             {want}, args)

    @needs_cyclictest()
    def test_the_json_file_has_cyclictests_layout(self):
        """Stalls: judges the keys, their order and types, and counts that add up, relations no stall turns."""
        args = ["-m", "-p90", "-t1", "-a%d" % CPU, "-i1000", "-l500", "-q", "-h", "400"]
        theirs = cyclictest(*args, "--json=" + self.path("theirs.json"))
        ours = self.latscope(*args, "--json=" + self.path("ours.json"))
        self.assertEqual(theirs.returncode, 0, theirs.stderr)
        self.assertEqual(ours.returncode, 0, ours.stderr)
        with open(self.path("theirs.json")) as f:
            a = json.load(f)
        with open(self.path("ours.json")) as f:
            b = json.load(f)
        checked(b, "cyclictest", "latscope cyclictest --json")
        extra = set(b) - set(a)
        self.assertEqual(extra, {"latscope_run_id"}, "one key more, latscope's run id")
        del b["latscope_run_id"]
        self.assertEqual(list(a), list(b), "the same keys in the same order")
        self.assertEqual(json_shape(a), json_shape(b))
        t = b["thread"]["0"]
        self.assertEqual(t["cycles"], 500)
        self.assertEqual(sum(t["histogram"].values()) + self.overflows(ours.stdout), 500)
        self.assertEqual(t["cpu"], CPU)
        self.assertEqual(b["cmdline:"], "cyclictest " + " ".join(args + ["--json=" + self.path("ours.json"),
                                                                          "--db", self.path("runs.db")]),
                         "the command line as typed")

    def overflows(self, text):
        _, summary, _ = parse_cyclictest_histogram(text)
        return summary["Histogram Overflows"][0]

    def agrees_exactly_with_the_stored_run(self, buckets):
        # buckets us is a bucket boundary of latscope's histogram: both counts of values at or above it are exact.
        # A count of loops (-l), not -D: the agreement is the subject, not the length (the -D path with -h is
        # ClientCommandLines' cnf-tests line).
        p = self.latscope("-p90", "-t1", "-a%d" % CPU, "-i500", "-l2000", "-q", "-h", str(buckets))
        self.assertEqual(p.returncode, 0, p.stderr)
        bins, summary, outliers = parse_cyclictest_histogram(p.stdout)
        self.assertEqual(sorted(bins), list(range(buckets)))
        doc = self.stored(self.last_id())
        self.assertEqual(doc["probe"], "timer")
        lat = doc["cpus"][0]["metrics"]["latency"]
        self.assertEqual(lat["count"], 2000, "-l counts the wakeups")
        total, over = summary["Total"][0], summary["Histogram Overflows"][0]
        self.assertEqual(total + over, lat["count"], "every wakeup is in a bin or an overflow")
        stored_over = sum(c for lo, _, c in lat["histogram"]["buckets"] if lo >= buckets * 1000)
        self.assertEqual(over, stored_over, "overflows: the stored values at or above the last bin")
        self.assertEqual(summary["Min Latencies"][0], lat["min_ns"] // 1000)
        self.assertEqual(summary["Max Latencies"][0], lat["max_ns"] // 1000)
        listed, _, rest = outliers[0].partition(" # ")
        self.assertEqual(len(listed.split()), min(over, buckets), "cyclictest lists as many overflows as bins")
        others = int(rest.split()[0]) if rest else 0
        self.assertEqual(len(listed.split()) + others, over, "the listed and the 'others' add up")
        return over

    def test_the_histogram_agrees_exactly_with_the_stored_run(self):
        """Stalls: judges that the printed histogram and the stored run agree, a relation no stall turns."""
        self.agrees_exactly_with_the_stored_run(128)

    def test_overflows_beyond_the_listed_ones_are_counted_as_others(self):
        """Stalls: judges that listed and others add up to the overflows, a relation no stall turns; that
        there are more than one rests on a floor (a wakeup takes at least 1 us), which a stall only raises."""
        # A timer wakeup takes at least 1 us on any machine, so nearly all of 2000 overflow a 1-bin histogram.
        self.assertGreater(self.agrees_exactly_with_the_stored_run(1), 1)

    def test_nanoseconds_show_the_stored_extremes_exactly(self):
        """Stalls: judges that the T: line and the stored run agree, a relation no stall turns."""
        p = self.latscope("-p90", "-a%d" % CPU, "-l300", "-q", "-N")
        self.assertEqual(p.returncode, 0, p.stderr)
        m = T_LINE.match(p.stdout.splitlines()[-1])
        self.assertIsNotNone(m, p.stdout)
        lat = self.stored(self.last_id())["cpus"][0]["metrics"]["latency"]
        self.assertEqual(int(m.group(6)), lat["min_ns"])
        self.assertEqual(int(m.group(9)), lat["max_ns"])
        self.assertEqual(int(m.group(5)), lat["count"])

    def test_a_link_named_cyclictest_is_cyclictest(self):
        link = self.path("cyclictest")
        os.symlink(os.path.abspath(LATSCOPE), link)
        p = subprocess.run([link, "-l50", "-i200", "-q", "--db", self.path("runs.db")], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout.splitlines()[-1], T_LINE)
        self.assertEqual(int(T_LINE.match(p.stdout.splitlines()[-1]).group(5)), 50)

    def test_the_live_display_redraws_and_ends_with_the_final_figures(self):
        """Stalls: judges the redraws of a 0.6 s run, ticked every 250 ms (a quarter of the 1 s window) and
        once more at the end: at least two, unless the host stalls for over 300 ms, far above its stalls."""
        p = self.latscope("-p90", "-a%d" % CPU, "-i500", "-l1200")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("\033[3A", p.stdout, "cursor up over the policy, blank and T: lines")
        self.assertGreaterEqual(p.stdout.count("\033[3A"), 2, "redrawn while measuring, and at the end")
        last = p.stdout.split("\033[3A")[-1].splitlines()
        self.assertRegex(last[0], r"^policy: fifo: loadavg: ")
        self.assertEqual(last[1], "")
        self.assertEqual(int(T_LINE.match(last[2]).group(5)), 1200)

    def test_sigterm_ends_the_run_with_its_summary_and_the_run_stored(self):
        """Stalls: judges that the printed and stored counts agree, a relation no stall turns; the signal
        comes once the measuring thread has woken 100 times (polled), so the run is never empty."""
        proc = subprocess.Popen([LATSCOPE, "cyclictest", "-a%d" % CPU, "-q", "-h", "50", "--db", self.path("runs.db")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        measured = wait_until_measured(proc, 1)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        self.assertTrue(measured, "the measuring thread woke 100 times before the run ended: " + err)
        self.assertEqual(proc.returncode, 0, err)
        bins, summary, _ = parse_cyclictest_histogram(out)
        self.assertEqual(len(bins), 50)
        count = self.stored(self.last_id())["cpus"][0]["metrics"]["latency"]["count"]
        self.assertGreater(count, 0)
        self.assertEqual(summary["Total"][0] + summary["Histogram Overflows"][0], count)

    def test_unsupported_options_are_refused_by_name(self):
        for args, named in ((["-b", "x"], "'-b'"), (["--spike=10"], "'--spike'"), (["-z"], "'-z'"),
                            (["--policy=batch"], "'--policy'"), (["-t", "999"], "999 threads"),
                            (["-D", "5x"], "'-D'"), (["-D1", "-l5"], "'-l'"), (["--histfile=x"], "'--histfile'"),
                            (["-p", "100"], "'-p'"), (["stray"], "'stray'")):
            p = self.latscope(*args)
            self.assertEqual(p.returncode, 2, args)
            self.assertEqual(p.stdout, "")
            self.assertIn(named, p.stderr.splitlines()[0])
            self.assertTrue(p.stderr.startswith("latscope cyclictest: "), p.stderr)

    def test_refused_options_say_why_in_one_line(self):
        for args, named, why in ((["-v"], "'-v'", "no per-sample output"), (["-x"], "'-x'", "clock_nanosleep only"),
                                 (["-R"], "'-R'", "'latscope clock'"),
                                 (["--latency=5"], "'--latency'", "at 0 us only"), (["-c", "3"], "'-c'", "not a clock"),
                                 (["--secaligned"], "'--secaligned'", "not on a full second of the clock"),
                                 (["--aligned=x"], "'-A'", "'x' is not a whole number")):
            p = self.latscope("-l10", *args)
            self.assertEqual(p.returncode, 2, args)
            first = p.stderr.splitlines()[0]
            self.assertIn(named, first)
            self.assertIn(why, first)

    def test_an_unwritable_json_file_is_refused_before_measuring(self):
        p = self.latscope("-l10", "--json=" + self.path("no/such/dir/x.json"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("'--json'", p.stderr)
        self.assertFalse(os.path.exists(self.path("runs.db")), "nothing was measured or stored")

    def test_a_user_without_privileges_gets_the_histogram_and_notes(self):
        """Stalls: judges counts that add up and the notes, relations no stall turns."""
        p = self.as_nobody("cyclictest", "-p95", "-l200", "-q", "-h", "20", "--no-store", "--latscope-verbose")
        self.assertEqual(p.returncode, 0, p.stderr)
        bins, summary, _ = parse_cyclictest_histogram(p.stdout)
        self.assertEqual(summary["Total"][0] + summary["Histogram Overflows"][0], 200)
        self.assertIn("SCHED_FIFO", p.stderr, "says what it could not apply")

    def test_without_privileges_p_is_the_priority_applied_and_messages_name_cyclictest(self):
        p = self.as_nobody("cyclictest", "-p95", "-t1", "-l200", "-q", "--no-store", "--latscope-verbose")
        self.assertEqual(p.returncode, 0, p.stderr)
        t = [l for l in p.stdout.splitlines() if l.startswith("T:")]
        self.assertEqual(len(t), 1, p.stdout)
        self.assertRegex(t[0], r" P: 0 ", "P: says the threads ran at normal priority")
        for line in p.stderr.splitlines():
            self.assertFalse(line.startswith("latscope timer:"), line)
        self.assertIn("latscope cyclictest: not applied: SCHED_FIFO priority 95", p.stderr)



def rteval_read(text, ncpus):
    """rteval's reading of cyclictest's output (its documented rules): '#' lines give
    '# Break value:' and '# Max Latencies:' (one per CPU, in -a's order); every other
    line that starts with a number is a histogram row with one count per CPU."""
    rows, maxes, brk = {}, None, None
    for line in text.splitlines():
        if line.startswith("#"):
            if line.startswith("# Break value: "):
                brk = int(line.split(":")[1])
            elif line.startswith("# Max Latencies: "):
                maxes = [int(x) for x in line.split(":")[1].split()]
            continue
        vals = line.split()
        if not vals:
            continue
        index = int(vals[0])        # rteval skips what is not a number; latscope prints nothing such
        rows[index] = [int(v) for v in vals[1:1 + ncpus]]
        assert len(rows[index]) == ncpus, line
    return rows, maxes, brk


class ClientCommandLines(TempDirCase):
    """The real clients' command lines, as their source builds them, against the cyclictest link."""

    def setUp(self):
        super().setUp()
        self.link = self.path("cyclictest")
        os.symlink(os.path.abspath(LATSCOPE), self.link)
        self.env = dict(os.environ, LATSCOPE_DB=self.path("runs.db"))
        self.cpus = online_cpus()
        self.cpulist = "%d-%d" % (self.cpus[0], self.cpus[-1]) if len(self.cpus) > 1 else str(self.cpus[0])

    def client(self, *args, timeout=120):
        return subprocess.run([self.link, *args], capture_output=True, text=True, timeout=timeout, env=self.env)

    def stopped_by_sigint(self, threads, *args):
        """Run as rteval does: stdout to a file, stderr to /dev/null, SIGINT at the end, here once each
        of its `threads` measuring threads has woken 100 times (rteval's measurement time is its user's; what
        is checked does not depend on it, only on every thread having samples)."""
        with open(self.path("out.txt"), "w+") as out:
            proc = subprocess.Popen([self.link, *args], stdout=out, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL, env=self.env)
            measured = wait_until_measured(proc, threads)
            proc.send_signal(signal.SIGINT)
            self.assertEqual(proc.wait(timeout=60), 0)
            self.assertTrue(measured, "every measuring thread woke 100 times before the run ended")
            out.seek(0)
            return out.read()

    def stored_runs(self):
        p = run("runs", "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        return [int(l.split()[0]) for l in p.stdout.splitlines()[1:]]

    def test_rtevals_command_line_stopped_by_sigint_gives_its_histogram(self):
        """Stalls: judges rows, columns and maxima against the stored run, relations no stall turns."""
        n = len(self.cpus)
        text = self.stopped_by_sigint(n, "-i100", "-qmu", "-h 3500", "-p95", "-t%d" % n, "-a" + self.cpulist)
        rows, maxes, brk = rteval_read(text, n)
        self.assertEqual(sorted(rows), list(range(3500)), "one row per 1 us bucket up to -h")
        self.assertEqual(len(maxes), n)
        self.assertIsNone(brk)
        doc = self.stored(self.stored_runs()[-1])
        self.assertEqual([c["cpu"] for c in doc["cpus"]], self.cpus, "columns in -a's order")
        for i, c in enumerate(doc["cpus"]):
            lat = c["metrics"]["latency"]
            in_rows = sum(r[i] for r in rows.values())
            self.assertGreater(lat["count"], 0)
            self.assertLessEqual(in_rows, lat["count"], "overflows are not in the rows")
            self.assertEqual(maxes[i], lat["max_ns"] // 1000)

    def test_rtevals_empty_interval_argument_is_ignored_as_cyclictest_ignores_it(self):
        """Stalls: judges the rows and the interval stored, which no stall turns."""
        text = self.stopped_by_sigint(1, "", "-qmu", "-h 100", "-p95", "-t1", "-a%d" % CPU)
        rows, maxes, _ = rteval_read(text, 1)
        self.assertEqual(len(rows), 100)
        doc = self.stored(self.stored_runs()[-1])
        self.assertEqual(doc["params"]["interval_ns"], 1000000, "cyclictest's default interval")

    def test_rteval_with_breaktrace_stops_at_the_first_value_above_it(self):
        """Stalls: the break at 1 us rests on a floor (every wakeup takes more than 1 us), which a stall only
        raises; the rest are relations between the printed break and the stored run."""
        # every wakeup takes more than 1 us, so the first sample breaks
        p = self.client("-i100", "-qmu", "-h 3500", "-p95", "-t1", "-a%d" % CPU, "-b1", "--tracemark",
                        "--default-system", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        rows, maxes, brk = rteval_read(p.stdout, 1)
        self.assertIsNotNone(brk, p.stdout)
        self.assertGreater(brk, 1)
        self.assertLessEqual(brk, maxes[0])
        tids = re.search(r"^# Thread Ids: (.*)$", p.stdout, re.M).group(1).split()
        thread = re.search(r"^# Break thread: (\d+)$", p.stdout, re.M).group(1)
        self.assertIn(thread, [t.lstrip("0") for t in tids])
        doc = self.stored(self.stored_runs()[-1])
        self.assertEqual(doc["stop_reason"], "threshold")
        self.assertFalse(doc["applied"]["pm_qos"], "--default-system holds no PM QoS")
        self.assertEqual(doc["on_threshold"]["first"]["latency_ns"] // 1000, brk)

    def test_breaktrace_above_every_sample_lets_the_run_end_on_its_own(self):
        """Stalls: the break at 10 s stands far above any stall of this host (30 ms at worst)."""
        p = self.client("-qm", "-p95", "-t1", "-a%d" % CPU, "-l200", "-b10000000", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"(?m)^# Thread Ids: \d+$")
        self.assertNotIn("# Break", p.stdout)

    @needs(root=True)
    def test_tracemark_marks_the_kernels_trace_and_stops_it(self):
        """Stalls: as the rteval break test: a break at 1 us, below every wakeup; the mark holds its value.
        Mounts tracefs itself where it is not mounted (and unmounts it after)."""
        tracing = "/sys/kernel/tracing"
        mounted = os.path.exists(tracing + "/trace_marker")
        if not mounted:
            subprocess.run(["mount", "-t", "tracefs", "nodev", tracing], check=True)
        with open(tracing + "/tracing_on") as f:
            before = f.read().strip()
        mark = re.compile(r"hit latency threshold \((\d+) > 1\)")
        try:
            # the kernel's trace is everyone's: read what is there, clear nothing
            with open(tracing + "/trace") as f:
                marks_before = len(mark.findall(f.read()))
            with open(tracing + "/tracing_on", "w") as f:
                f.write("1")
            p = self.client("-qm", "-h 100", "-p95", "-t1", "-a%d" % CPU, "-b1", "--tracemark", timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            brk = rteval_read(p.stdout, 1)[2]
            with open(tracing + "/tracing_on") as f:
                self.assertEqual(f.read().strip(), "0", "the trace stopped at the break")
            with open(tracing + "/trace") as f:
                marks = mark.findall(f.read())
            self.assertEqual(len(marks), marks_before + 1, "one mark more")
            self.assertEqual(int(marks[-1]), brk, "the break value, marked")
        finally:
            with open(tracing + "/tracing_on", "w") as f:
                f.write(before)
            if not mounted:
                subprocess.run(["umount", tracing], check=False)

    def test_linaros_json_command_line_with_all_cpus_parses_by_its_rules(self):
        """Stalls: judges the keys and min <= avg <= max, relations no stall turns.  -D 2s is Linaro's own."""
        out = self.path("cyclictest.json")
        p = self.client("-q", "-p", "98", "-i", "1000", "-t", str(len(self.cpus)), "-a", "all", "-D", "2s", "-m",
                        "--json=" + out)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            doc = json.load(f)
        # Linaro's parser: num_threads, thread["0".."N-1"] with min, avg and max; return_code 0 is a pass
        self.assertEqual(int(doc["num_threads"]), len(self.cpus))
        for i in range(len(self.cpus)):
            t = doc["thread"][str(i)]
            self.assertLessEqual(t["min"], t["avg"])
            self.assertLessEqual(t["avg"], t["max"])
            self.assertEqual(t["cpu"], self.cpus[i])
        self.assertEqual(int(doc["return_code"]), 0)

    def test_osadls_plot_recipe_gives_its_histogram_columns(self):
        """Stalls: judges the columns, and a maximum above 0 us (a floor a stall only raises)."""
        p = self.client("-l5000", "-m", "-Sp90", "-i200", "-h400", "-q", timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        # the recipe: rows without '#' and blank lines, tabs for spaces, one column per core
        rows = [l.replace(" ", "\t").split("\t") for l in p.stdout.splitlines() if l and not l.startswith("#")]
        self.assertEqual(len(rows), 400)
        for r in rows:
            self.assertEqual(len(r), 1 + len(self.cpus))
            [int(x) for x in r]
        # its maximum: the largest number of the Max Latencies line, leading zeros stripped
        line = [l for l in p.stdout.splitlines() if "Max Latencies" in l]
        self.assertEqual(len(line), 1)
        self.assertGreater(max(int(x) for x in line[0].split(":")[1].split()), 0)

    def test_cnf_tests_command_line_prints_its_max_latencies_and_nothing_else_on_stderr(self):
        """Stalls: judges the fields and an empty stderr, which no stall turns.  -D 2s is cnf-tests' own."""
        p = self.client("-D", "2s", "-p", "1", "-t", str(len(self.cpus)), "-a", self.cpulist, "-h", "30", "-i",
                        "1000", "--quiet")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "", "cnf-tests reads stdout and stderr as one")
        # its rule: the text after '# Max Latencies:', split on single spaces, every non-empty field a number
        m = re.search(r"# Max Latencies:\t*\s*(.*)\s*\t*", p.stdout)
        fields = [f for f in m.group(1).split(" ") if f != ""]
        self.assertEqual(len(fields), len(self.cpus))
        [int(f) for f in fields]

    def test_a_value_after_a_flag_cluster_and_a_separate_t_0_are_read_as_cyclictest_reads_them(self):
        p = self.client("-qa", str(CPU), "-l5")        # "-qa 1": -q, then -a with the next word
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([c["cpu"] for c in self.stored(self.stored_runs()[-1])["cpus"]], [CPU])
        p = self.client("-q", "-t", "0", "-l5")        # cyclictest leaves the 0: one thread a CPU
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([c["cpu"] for c in self.stored(self.stored_runs()[-1])["cpus"]], self.cpus)

    def test_latscopes_own_notes_reach_stderr_only_when_asked(self):
        # CLOCK_REALTIME (-c 1) makes latscope note that a clock step shows as latency; cyclictest says nothing
        quiet = self.client("-c", "1", "-l100", "-q", "-a%d" % CPU)
        self.assertEqual(quiet.returncode, 0, quiet.stderr)
        self.assertEqual(quiet.stderr, "")
        loud = self.client("-c", "1", "-l100", "-q", "-a%d" % CPU, "--latscope-verbose")
        self.assertEqual(loud.returncode, 0, loud.stderr)
        self.assertIn("--clock realtime", loud.stderr)
        self.assertIn("stored as run ", loud.stderr)
        self.assertEqual(self.stored(self.stored_runs()[-1])["params"]["clock"], "realtime")


if __name__ == "__main__":
    main()
