"""SMIs beside every window (issue 35): where they are counted from, what a run says where they
are not, their way through the store, show, compare and export, cyclictest's --smi, and noise
--hwlat.  The lookup is pointed at fake trees with $LATSCOPE_SYSROOT; one of them names the msr
PMU's TSC event "smi", so that the PMU path counts something here, where no SMI counter exists."""
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.request

from harness import LATSCOPE, TempDirCase, load, main, online_cpus, run

CPUS = online_cpus()
CPULIST = "%d-%d" % (CPUS[0], CPUS[-1]) if len(CPUS) > 1 else str(CPUS[0])
PMU = "/sys/bus/event_source/devices/msr"
TRACING = "/sys/kernel/tracing"

# Lines as Documentation/trace/hwlat_detector.rst shows them.
HWLAT_LINES = (
    "           <...>-1729  [001] d...   678.473449: #1     inner/outer(us):   11/12    ts:1581527483.343962693 "
    "count:6\n"
    "           <...>-1729  [001] d...   863.938932: #10    inner/outer(us):    9/11    ts:1581527668.970010500 "
    "count:1 nmi-total:7 nmi-count:1\n")


def this_machines_source():
    """What this machine offers, read apart from latscope: the PMU's smi event, the MSR, or nothing."""
    if os.path.exists(os.path.join(PMU, "events", "smi")):
        return "msr_pmu"
    if os.path.exists("/dev/cpu/%d/msr" % CPUS[0]):
        return "msr"
    return None


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def tsc_as_smi(root):
    """A tree whose msr PMU has an "smi" event that is really its TSC event: counts that grow."""
    with open(os.path.join(PMU, "type")) as f:
        write(os.path.join(root, PMU.lstrip("/"), "type"), f.read())
    write(os.path.join(root, PMU.lstrip("/"), "events", "smi"), "event=0x00\n")
    return root


class Smi(TempDirCase):

    def timer(self, *args, sysroot=None, name="run.json"):
        env = dict(os.environ)
        if sysroot is not None:
            env["LATSCOPE_SYSROOT"] = sysroot
        p = run("timer", "-a", CPULIST, "-D", "1.2", "--window", "0.3", "--json", self.path(name), "--db",
                self.path("runs.db"), *args, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p, load(self.path(name))

    def tsc_as_smi(self):
        return tsc_as_smi(self.path("tsc-as-smi"))

    def test_a_timer_run_here_lists_smis_as_this_machine_offers_them(self):
        """Here (AMD guest: the msr PMU has only tsc, no msr module) that is "not available here"."""
        p, doc = self.timer()
        want = this_machines_source()
        self.assertIn("smi_source", doc)
        self.assertEqual(doc["smi_source"], want)
        windows = [w for c in doc["cpus"] for w in c["windows"]]
        self.assertTrue(windows)
        if want is None:
            self.assertTrue(any(n.startswith("SMIs: not available here (") for n in doc["notes"]), doc["notes"])
            self.assertFalse(any("smis" in w["context"] for w in windows), "no count where none was counted")
            self.assertFalse(any("smis" in c for c in doc["cpus"] + [doc["all"]]))
            self.assertIn("SMIs not available here", p.stdout)
            self.assertNotIn("SMIs", p.stderr, "the summary says it; the note is for the result's readers")
        else:
            for c in doc["cpus"]:
                self.assertEqual(c["smis"], sum(w["context"]["smis"] for w in c["windows"]))
            self.assertIn("SMIs %d (%s)" % (doc["cpus"][0]["smis"], want), p.stdout)

    def test_with_the_lookup_pointed_at_an_empty_tree_it_says_not_available_here(self):
        os.makedirs(self.path("empty"))
        p, doc = self.timer(sysroot=self.path("empty"))
        self.assertIsNone(doc["smi_source"])
        notes = [n for n in doc["notes"] if n.startswith("SMIs: not available here")]
        self.assertEqual(len(notes), 1, doc["notes"])
        self.assertIn("msr PMU: cannot read", notes[0])
        self.assertIn("MSR: cannot open", notes[0])
        self.assertIn("SMIs not available here", p.stdout)

    def test_the_pmu_path_counts_each_window_and_the_counts_go_through_store_show_compare_and_export(self):
        p, doc = self.timer(sysroot=self.tsc_as_smi())
        self.assertEqual(doc["smi_source"], "msr_pmu")
        for c in doc["cpus"]:
            counts = [w["context"]["smis"] for w in c["windows"]]
            self.assertTrue(all(n > 0 for n in counts), counts)   # the TSC ran in every window
            self.assertEqual(c["smis"], sum(counts))
        self.assertEqual(doc["all"]["smis"], sum(c["smis"] for c in doc["cpus"]))
        # the store: the JSON back as written, and the columns
        stored = self.stored(1)
        self.assertEqual(stored["smi_source"], "msr_pmu")
        self.assertEqual([c["smis"] for c in stored["cpus"]], [c["smis"] for c in doc["cpus"]])
        con = sqlite3.connect(self.path("runs.db"))
        self.assertEqual(con.execute("SELECT smi_source FROM runs WHERE id = 1").fetchone()[0], "msr_pmu")
        rows = dict(con.execute("SELECT cpu, smis FROM cpu_stats WHERE run_id = 1 AND metric = 'latency'"))
        con.close()
        self.assertEqual(rows["all"], doc["all"]["smis"])
        show = run("show", "1", "--db", self.path("runs.db"))
        self.assertIn("SMIs %d (msr_pmu)" % doc["cpus"][0]["smis"], show.stdout)
        # a run without a source beside it: compare shows - for it, never 0
        os.makedirs(self.path("empty"))
        self.timer(sysroot=self.path("empty"), name="none.json")
        cmp = run("compare", "1", "2", "--format", "csv", "--db", self.path("runs.db"))
        self.assertEqual(cmp.returncode, 0, cmp.stderr)
        lines = cmp.stdout.splitlines()
        col = lines[0].split(",").index("smis")
        self.assertEqual(lines[1].split(",")[col], str(doc["all"]["smis"]))
        self.assertEqual(lines[2].split(",")[col], "-")
        om = run("export", "1", "2", "--db", self.path("runs.db")).stdout
        self.assertIn('latscope_smis{run="1",', om)
        self.assertNotIn('latscope_smis{run="2",', om)
        # import: the counts read back through json_read
        exp = run("export", "1", "--format", "json", "--db", self.path("runs.db"))
        write(self.path("export.json"), json.dumps(json.loads(exp.stdout)[0]))
        imp = run("import", self.path("export.json"), "--db", self.path("other.db"))
        self.assertEqual(imp.returncode, 0, imp.stderr)
        back = self.stored(1, db="other.db")
        self.assertEqual(back["all"]["smis"], doc["all"]["smis"])

    def test_cyclictest_smi_here_is_refused_in_one_line_as_cyclictest_refuses_it(self):
        if this_machines_source():
            return self.cyclictest_layout(None)
        p = run("cyclictest", "--smi", "-q", "-l", "100", "-t1", "-a%d" % CPUS[-1], "--no-store")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn("option '--smi': SMIs are not available here", p.stderr)

    def cyclictest_layout(self, sysroot):
        env = dict(os.environ, LATSCOPE_SYSROOT=sysroot) if sysroot else None
        p = run("cyclictest", "--smi", "-q", "-D", "2", "-p90", "-t%d" % len(CPUS), "-a" + CPULIST, "--no-store",
                env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        t_lines = [l for l in p.stdout.splitlines() if l.startswith("T:")]
        self.assertEqual(len(t_lines), len(CPUS), p.stdout)
        # cyclictest 2.x: "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld" then " SMI:%8ld"
        shape = re.compile(r"^T:[ \d]{2}\d* \([ \d]{4}\d+\) P:[ \d]{2} I:\d+ C:[ \d]{6}\d+ Min:[ \d]{6}\d+ "
                           r"Act:[ \d]{4}\d+ Avg:[ \d]{4}\d+ Max:[ \d]{7}\d+ SMI:[ \d]{7}\d+$")
        for l in t_lines:
            self.assertRegex(l, shape)
        return t_lines

    def test_cyclictest_smi_prints_its_column_as_cyclictest_2_does(self):
        t_lines = self.cyclictest_layout(self.tsc_as_smi())
        self.assertTrue(all(int(l.rsplit("SMI:", 1)[1]) > 0 for l in t_lines), t_lines)

    def test_rtevals_command_line_with_smi_gives_its_histogram_and_the_smis_line(self):
        n = len(CPUS)
        env = dict(os.environ, LATSCOPE_SYSROOT=self.tsc_as_smi())
        p = run("cyclictest", "-i100", "-qmu", "-h 50", "-p95", "-t%d" % n, "-a" + CPULIST, "--smi", "-D", "2",
                "--no-store", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        rows = [l for l in lines if l[:1].isdigit()]
        self.assertEqual(len(rows), 50)
        self.assertTrue(all(len(r.split()) == 1 + n for r in rows))
        smis = [l for l in lines if l.startswith("# SMIs:")]
        self.assertEqual(len(smis), 1, p.stdout)
        self.assertGreater(lines.index(smis[0]), max(i for i, l in enumerate(lines) if l.startswith("# Thread ")))
        vals = smis[0].split(":")[1].split()
        self.assertEqual(len(vals), n)
        self.assertTrue(all(re.fullmatch(r"\d{5,}", v) for v in vals), vals)


class Monitor(TempDirCase):

    def metrics(self, sysroot):
        """/metrics of a monitor looking SMIs up under sysroot, once it has read a window's context."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ, LATSCOPE_SYSROOT=sysroot)
        proc = subprocess.Popen([LATSCOPE, "monitor", "--listen", "127.0.0.1:%d" % port, "--no-store"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        text, deadline = "", time.monotonic() + 30
        try:
            while time.monotonic() < deadline and "latscope_steal_seconds_total{" not in text:
                time.sleep(0.2)
                try:
                    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read().decode()
                except OSError:
                    pass
        finally:
            proc.send_signal(signal.SIGINT)
            proc.communicate(timeout=60)
        self.assertIn("latscope_steal_seconds_total{", text, "the monitor published its context")
        return text

    def test_the_monitor_exports_smis_per_cpu_only_where_a_source_counts_them(self):
        counted = self.metrics(tsc_as_smi(self.path("tsc-as-smi")))
        self.assertIn("# TYPE latscope_smi_total counter", counted)
        vals = [int(m) for m in re.findall(r'^latscope_smi_total\{[^}]*cpu="\d+"\} (\d+)$', counted, re.M)]
        self.assertTrue(vals and all(v > 0 for v in vals), counted)
        os.makedirs(self.path("empty"))
        self.assertNotIn("latscope_smi_total", self.metrics(self.path("empty")))


class Hwlat(TempDirCase):

    def test_noise_hwlat_where_the_kernel_lacks_the_tracer_is_refused_in_one_line(self):
        with open(os.path.join(TRACING, "available_tracers")) as f:
            offered = f.read().split()
        p = run("noise", "--hwlat", "-a", str(CPUS[-1]), "-D", "1", "--no-store", "--json", self.path("n.json"))
        if "hwlat" in offered:
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("samples", load(self.path("n.json"))["hwlat"])
            return
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertEqual(p.stderr, "latscope noise: option '--hwlat': the kernel offers no hwlat tracer "
                                   "(available_tracers: %s)\n" % " ".join(offered))
        self.assertFalse(os.path.exists(self.path("n.json")), "nothing was measured")

    def test_noise_hwlat_keeps_the_tracers_samples_and_puts_its_settings_back(self):
        """A fake tracefs: what latscope writes shows in its files, and the lines put into its trace
        while the run goes on come back in the result."""
        root = self.path("root")
        tr = os.path.join(root, "sys", "kernel", "tracing")
        for name, text in (("available_tracers", "hwlat blk nop\n"), ("current_tracer", "nop\n"),
                           ("tracing_cpumask", "3\n"), ("tracing_on", "1\n"), ("trace", "old\n")):
            write(os.path.join(tr, name), text)
        env = dict(os.environ, LATSCOPE_SYSROOT=root)
        proc = subprocess.Popen([LATSCOPE, "noise", "--hwlat", "-a", str(CPUS[-1]), "-D", "3", "--no-store",
                                 "--json", self.path("n.json")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=env)
        deadline = time.monotonic() + 30
        tracer = ""
        while time.monotonic() < deadline and proc.poll() is None:
            with open(os.path.join(tr, "current_tracer")) as f:
                tracer = f.read().strip()
            if tracer == "hwlat":
                break
            time.sleep(0.02)
        self.assertEqual(tracer, "hwlat")
        with open(os.path.join(tr, "tracing_cpumask")) as f:
            self.assertEqual(f.read().strip(), "%x" % (1 << CPUS[-1]))
        write(os.path.join(tr, "trace"), HWLAT_LINES)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0, err)
        doc = load(self.path("n.json"))
        hw = doc["hwlat"]
        self.assertEqual([s["inner_ns"] for s in hw["samples"]], [11000, 9000])
        self.assertEqual(hw["max_outer_ns"], 12000)
        self.assertEqual(hw["nmi_count"], 1)
        self.assertIn("hardware (hwlat tracer): 2 samples", out)
        for name, text in (("current_tracer", "nop"), ("tracing_cpumask", "3"), ("tracing_on", "1")):
            with open(os.path.join(tr, name)) as f:
                self.assertEqual(f.read().strip(), text, name)


if __name__ == "__main__":
    main()
