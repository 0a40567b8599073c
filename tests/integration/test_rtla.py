"""latscope rtla: rtla timerlat's command lines (rteval's among them) and output layout."""
import os
import re
import signal
import subprocess
import time

from harness import test_cpu, LAT_INJECT, LATSCOPE, hangup_as_default, TempDirCase, main, needs, online_cpus, run

CPUS = online_cpus()
CPU = test_cpu()
TOP_HEADING_USER = ("CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max |"
                    "      cur       min       avg       max")
RTLA = os.path.join(os.path.dirname(os.path.abspath(LATSCOPE)), "rtla")
CPU_LIST = ",".join(str(c) for c in CPUS)
# A run stopped by a signal ends within a second here; a lost signal never ends it.
ENDS_WITHIN = 20


def blocked_signals(pid):
    """The signals pid's main thread blocks (/proc's SigBlk), or None once it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigBlk:"):
                    return int(line.split()[1], 16)
    except OSError:
        return None
    return 0


def bits(*sigs):
    """The signals as /proc's masks show them: signal n is bit n - 1."""
    return sum(1 << (s - 1) for s in sigs)


def rt_wakeups(pid):
    """The voluntary context switches of each real-time thread of pid: the measuring
    threads (SCHED_FIFO; the main thread and the trace's reader are SCHED_OTHER).
    Each of their timer waits is one; before the start gate opens they have a few."""
    counts = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return counts
    for tid in tids:
        base = "/proc/%d/task/%s/" % (pid, tid)
        try:
            with open(base + "stat") as f:
                policy = int(f.read().rsplit(")", 1)[1].split()[38])     # field 41
            if policy == 0:
                continue
            with open(base + "status") as f:
                counts += [int(line.split()[1]) for line in f if line.startswith("voluntary_ctxt_switches:")]
        except (OSError, ValueError, IndexError):
            continue                    # a thread that just ended
    return counts


def wait_measuring(tc, p, ncpus, wakeups=50, every=0.01):
    """Returns once each of the run's ncpus measuring threads has woken `wakeups` times from
    its timer: the run measures, and has samples to print.  rtla hist prints nothing before
    its end, so the threads are what tells; a signal before that could come while it starts
    up, which no sleep can tell."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if p.poll() is not None:
            tc.fail("the run ended (exit %s) before measuring: %s" % (p.returncode, p.communicate()[1]))
        counts = rt_wakeups(p.pid)
        if len(counts) >= ncpus and min(counts) >= wakeups:
            return
        time.sleep(every)
    tc.fail("the run's %d measuring threads did not wake %d times in 60 s: %s" % (ncpus, wakeups, counts))


def ended(tc, p, sig):
    """The output of p, which sig was sent to: it must end within ENDS_WITHIN s."""
    try:
        return p.communicate(timeout=ENDS_WITHIN)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        tc.fail("%s did not end the run within %d s: the signal was lost (stderr: %r)"
                % (sig.name, ENDS_WITHIN, err[-500:]))


def parse_rtla_hist(text):
    """A reader of rtla timerlat hist's output as its documentation shows it: the
    '#' header, the Index line naming a column per context and CPU, bucket rows,
    'over:' and the count/min/avg/max rows (and rtla's ALL: block, read apart)."""
    head, columns, rows, summary, rest = [], None, {}, {}, []
    lines = iter(text.splitlines())
    for line in lines:
        if line.startswith("#"):
            head.append(line)
            continue
        if line.startswith("Index"):
            columns = line.split()[1:]
            continue
        if columns is None:
            rest.append(line)
            continue
        fields = line.split()
        if not fields:
            continue
        if fields[0] == "ALL:":
            rest.extend(list(lines))
            break
        key = fields[0]
        if key.endswith(":"):
            summary[key[:-1]] = [None if v == "-" else int(v) for v in fields[1:]]
        elif re.match(r"^\d+$", key):
            rows[int(key)] = [int(v) for v in fields[1:]]
        else:
            rest.append(line)
    return head, columns, rows, summary, rest


def rteval_stop_report(text):
    """What rteval's timerlat module takes from the lines after 'rtla timerlat hit stop
    tracing' (the fields it reads by position): {cpu: {name: value}}."""
    report, cpu, stopped = {}, None, False
    for line in text.splitlines():
        if line.startswith("rtla timerlat hit stop tracing"):
            stopped = True
            continue
        fields = line.split()
        if not stopped or not fields:
            continue
        if fields[0] == "##" and fields[1] == "CPU":
            cpu = int(fields[2])
            report[cpu] = {}
            continue
        name = line.strip().split(":")[0].replace(" ", "_")
        if line.strip().startswith(("IRQ interference", "Softirq interference")):
            name = line.strip().split("\t")[0].strip().replace(" ", "_")
        if name == "Thread_latency":
            report[cpu][name] = (float(fields[-3]), fields[-1].strip("()%"))
        elif name in ("Timerlat_IRQ_duration", "IRQ_handler_delay", "Blocking_thread", "IRQ_interference",
                      "Softirq_interference"):
            report[cpu][name] = (float(fields[-4]), float(fields[-2].strip("(")))
        elif name in ("IRQ_latency", "Previous_IRQ_interference"):
            report[cpu][name] = float(fields[-2])
        elif cpu is not None and len(fields) >= 3 and fields[-1] == "us":
            report[cpu].setdefault("listed", []).append((" ".join(fields[:-2]), float(fields[-2])))
    return report


class RtlaCase(TempDirCase):
    def start(self, argv, **kw):
        """rtla started in the background, its output piped; killed at the test's end if a
        failure left it running (a run without -d never ends by itself)."""
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)

        def reap():
            if p.poll() is None:
                p.kill()
            p.communicate()
        self.addCleanup(reap)
        return p

    def checked_hist(self, out, cpus, user=True, traced=True):
        head, columns, rows, summary, _ = parse_rtla_hist(out)
        self.assertEqual(head[0], "# RTLA timerlat histogram", out)
        self.assertEqual(head[1], "# Time unit is microseconds (us)", out)
        self.assertRegex(head[2], r"^# Duration: +\d+ \d\d:\d\d:\d\d$")
        # IRQ and Thr are there untraced too, empty: rteval reads the columns by position
        kinds = ["IRQ", "Thr"] + (["Usr"] if user else [])
        self.assertEqual(columns, ["%s-%03d" % (k, c) for c in cpus for k in kinds], out)
        if not traced and "count" in summary:
            self.assertEqual([summary["count"][i] for i, c in enumerate(columns) if not c.startswith("Usr")],
                             [0] * 2 * len(cpus), "nothing measured in IRQ and Thr")
        self.assertTrue(rows, out)
        for index, values in rows.items():
            self.assertEqual(len(values), len(columns), index)
            self.assertGreater(sum(values), 0, "a zero row printed without --with-zeros")
        self.assertEqual(len(summary["over"]), len(columns))
        return columns, rows, summary

    def col(self, columns, name):
        return columns.index(name)


@needs(root=True, tracefs=True)
class Traced(RtlaCase):
    def test_rtevals_command_line_through_the_rtla_link_stopped_by_sigint_prints_the_histogram(self):
        """Judges no latency: the layout rteval reads, and that SIGINT ends the run (sent once
        every CPU's thread measures, so each has samples to print)."""
        argv = [RTLA, "timerlat", "hist", "-p100", "-P", "f:95", "-u", "-c" + CPU_LIST, "-E3500", "--no-summary",
                "--no-aa", "--dma-latency=0"]
        p = self.start(argv, cwd=self.tmp)
        wait_measuring(self, p, len(CPUS))
        p.send_signal(signal.SIGINT)
        out, err = ended(self, p, signal.SIGINT)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(err, "", "rtla prints nothing on stderr here")
        columns, rows, summary = self.checked_hist(out, CPUS)
        self.assertNotIn("count", summary, "--no-summary")
        self.assertNotIn("ALL:", out)
        # rteval reads each row as index, then IRQ, Thr and Usr of each CPU in -c order
        for values in rows.values():
            self.assertEqual(len(values), 3 * len(CPUS))
        self.assertEqual(os.listdir(self.tmp), [], "rtla writes no file unless asked")

    def test_the_command_lines_of_rtlas_examples_and_other_clients_run(self):
        """Judges no latency: -a 40 may stop the run on a stall of this host or not, and both
        exits (0, 3) are checked for what each prints."""
        lines = [
            # rtla-timerlat-hist(1)'s example, on this machine's CPUs and for 1 s instead of 10 m
            (["timerlat", "hist", "-d", "1s", "-c", CPU_LIST, "-P", "d:100us:1ms", "-p", "1ms", "--no-aa"],
             (CPUS, True, False)),      # untraced under SCHED_DEADLINE: Usr, without -u too
            # rtla-timerlat-top(1)'s example, ended by -d
            (["timerlat", "-a", "40", "-c", str(CPU), "-q", "-d", "1s"], None),
            # a benchmark's kernel-thread line (--warm-up leaves its first second out of the warm max only)
            (["timerlat", "hist", "-k", "-P", "f:95", "-p", "1000", "--warm-up", "1", "--no-aa", "-d", "1",
              "-c", str(CPU), "--deepest-idle-state", "-1"], ([CPU], False, True)),
        ]
        for args, hist in lines:
            with self.subTest(args=args):
                p = subprocess.run([RTLA, *args, "--no-store"], capture_output=True, text=True, timeout=120,
                                   cwd=self.tmp)
                self.assertIn(p.returncode, (0, 3), p.stderr)
                self.assertTrue("# RTLA timerlat histogram" in p.stdout or "Timer Latency" in p.stdout, p.stdout)
                for line in p.stderr.splitlines():
                    self.assertRegex(line, r"^latscope rtla: tracing is unavailable \(SCHED_DEADLINE")
                if hist:
                    cpus, user, traced = hist
                    _, _, summary = self.checked_hist(p.stdout, cpus, user=user, traced=traced)
                    counted = summary["count"][0::3] if traced else summary["count"][2::3]
                    self.assertTrue(counted and all(n > 0 for n in counted), summary)   # IRQ, or Usr untraced
                if p.returncode == 3:
                    self.assertIn("rtla timerlat hit stop tracing", p.stdout)
                    self.assertTrue(os.path.exists(self.path("timerlat_trace.txt")), "-a saves the trace")

    def test_sigterm_and_sighup_end_the_run_and_print_the_histogram(self):
        """Judges no latency: each signal, sent once the thread measures, ends the run, which
        prints what it measured.  SIGHUP at its default, as a user's shell has it: under nohup
        (SIGHUP ignored) it rightly does not end the run, which once hung this test for 120 s."""
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with self.subTest(sig=sig.name):
                p = self.start([RTLA, "timerlat", "hist", "-c", str(CPU), "-u", "--no-store"],
                               preexec_fn=hangup_as_default)
                wait_measuring(self, p, 1)
                p.send_signal(sig)
                out, err = ended(self, p, sig)
                self.assertEqual(p.returncode, 0, err)
                self.assertEqual(err, "")
                columns, rows, summary = self.checked_hist(out, [CPU])
                self.assertEqual(len(summary["count"]), 3, sig)
                self.assertTrue(all(n > 0 for n in summary["count"]), summary)

    def test_a_stop_signal_during_start_up_ends_the_run_at_once_and_keeps_it(self):
        """Judges no latency.  INT, TERM and HUP, each sent at two moments of the start-up: as
        soon as the stop signals are blocked (what stands in for their handlers: latscope takes
        them synchronously from there on), and once the measuring thread exists, while the
        trace is set up (the BPF collector loaded, or the tracefs instance made).  Either way
        the run must end promptly, exit 0 and keep the run stopped by that signal: a signal
        lost in the start-up leaves a run without -d going forever.  The run may hold no
        sample yet; rtla then lists no column for the CPU, as rtla does for a CPU without
        samples."""
        stops = bits(signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        moments = {
            "stop signals blocked": lambda pid: (blocked_signals(pid) or 0) & stops == stops,
            "measuring thread set up": lambda pid: len(rt_wakeups(pid)) > 0,
        }
        run_id = 0
        for moment, reached in moments.items():
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
                with self.subTest(moment=moment, sig=sig.name):
                    db = self.path("runs.db")
                    p = self.start([RTLA, "timerlat", "hist", "-c", str(CPU), "-u", "--db", db],
                                   preexec_fn=hangup_as_default)
                    end = time.monotonic() + 30
                    while not reached(p.pid) and p.poll() is None and time.monotonic() < end:
                        pass                    # the moment lasts milliseconds: no sleep between looks
                    if p.poll() is not None:
                        self.fail("the run ended (exit %s) before the moment: %r" % (p.returncode, p.communicate()))
                    self.assertTrue(reached(p.pid), "%s: not reached in 30 s" % moment)
                    p.send_signal(sig)
                    out, err = ended(self, p, sig)
                    self.assertEqual(p.returncode, 0, err)
                    self.assertEqual(err, "")
                    head, columns, _, _, _ = parse_rtla_hist(out)
                    self.assertEqual(head[0], "# RTLA timerlat histogram", out)
                    self.assertIn(columns, ([], ["%s-%03d" % (k, CPU) for k in ("IRQ", "Thr", "Usr")]), out)
                    run_id += 1
                    doc = self.stored(run_id)
                    self.assertTrue(doc["interrupted"])
                    self.assertEqual(doc["stop_reason"], "signal " + sig.name)

    @needs(bpf=True)
    def test_without_a_duration_the_bpf_collector_splits_every_sample_to_the_end(self):
        """Judges no latency: counts only (every sample of a run longer than the collector's
        ring holds is split)."""
        # rteval's way: no -d, stopped by SIGINT; the collector is read while it runs, so no ring
        # sized from a duration can overflow and IRQ counts what Usr counts.  Its ring holds a
        # quarter second: the run goes on for some 22,000 wakeups at 100 us, over 2 s.
        db = self.path("runs.db")
        p = self.start([RTLA, "timerlat", "hist", "-p100", "-P", "f:95", "-u", "-c", str(CPU), "-E3500",
                        "--no-summary", "--no-aa", "--dma-latency=0", "--db", db])
        wait_measuring(self, p, 1, wakeups=22000, every=0.05)
        p.send_signal(signal.SIGINT)
        out, err = ended(self, p, signal.SIGINT)
        self.assertEqual(p.returncode, 0, err)
        trace = self.stored(1)["trace"]
        self.assertEqual(trace["backend"], "bpf")
        self.assertEqual(trace["events_lost"], 0)
        cpu = trace["cpus"][0]
        self.assertGreater(cpu["samples"], 20000)
        self.assertGreaterEqual(cpu["matched"], 0.99 * cpu["samples"], cpu)
        self.assertEqual(cpu["stages"]["irq"]["count"], cpu["matched"])

    def test_a_trace_ring_too_small_for_the_run_is_said_and_irq_counts_only_what_it_kept(self):
        """Judges no latency: a ring of 64 KiB holds some 0.26 s of this run's events, four
        times less than the run makes in 1 s."""
        db = self.path("runs.db")
        # 64 KiB a CPU holds well under a second of 1 ms wakeups: the ring overflows.
        # RTLA_NO_BPF=1: rtla's switch to its tracefs collection, the one with that ring.
        p = subprocess.run([RTLA, "timerlat", "hist", "-c", str(CPU), "-p", "1000", "-P", "f:95", "-u", "-d", "1s",
                            "--trace-buffer-size=64", "--verbose", "--db", db],
                           capture_output=True, text=True, timeout=120, env={**os.environ, "RTLA_NO_BPF": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.stored(1)
        trace = doc["trace"]
        self.assertEqual(trace["backend"], "tracefs")
        self.assertEqual(trace["buffer_kb"], 64)
        self.assertGreater(trace["events_lost"], 0)
        notes = [n for n in doc["notes"] if "ring buffer (64 KiB a CPU) overflowed" in n]
        self.assertEqual(len(notes), 1, doc["notes"])
        self.assertIn(notes[0], p.stderr, "--verbose prints the stored notes")
        cpu = trace["cpus"][0]
        self.assertLess(cpu["matched"], cpu["samples"])
        columns, _, summary = self.checked_hist(p.stdout, [CPU])
        irq, usr = columns.index("IRQ-%03d" % CPU), columns.index("Usr-%03d" % CPU)
        self.assertEqual(summary["count"][usr], cpu["samples"])
        self.assertLess(summary["count"][irq], summary["count"][usr], "IRQ counts only the samples the ring kept")

    def test_the_counts_add_up_and_thread_is_at_least_irq_and_user_at_least_thread(self):
        """Relations a stall cannot turn: each sample's thread latency includes its IRQ latency
        and its user latency its thread latency, so their min, max and mean keep that order."""
        db = self.path("runs.db")
        p = subprocess.run([RTLA, "timerlat", "hist", "-c", CPU_LIST, "-p", "500", "-P", "f:95", "-u", "-d", "1s",
                            "--db", db], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        columns, rows, summary = self.checked_hist(p.stdout, CPUS)
        for i, name in enumerate(columns):
            in_rows = sum(values[i] for values in rows.values()) + summary["over"][i]
            self.assertEqual(in_rows, summary["count"][i], name)
            self.assertGreater(summary["count"][i], 0, name)
        for c in CPUS:
            irq, thr, usr = (self.col(columns, "%s-%03d" % (k, c)) for k in ("IRQ", "Thr", "Usr"))
            self.assertGreaterEqual(summary["min"][thr], summary["min"][irq])
            self.assertGreaterEqual(summary["max"][thr], summary["max"][irq])
            self.assertGreaterEqual(summary["avg"][thr], summary["avg"][irq])
            self.assertGreaterEqual(summary["max"][usr], summary["max"][thr])
            self.assertGreaterEqual(summary["count"][usr], summary["count"][thr])
        self.assertIn("\nALL:  ", p.stdout)
        # stored as a latscope timer run, with the stages the columns came from
        doc = self.stored(1)
        self.assertEqual(doc["probe"], "timer")
        for tc in doc["trace"]["cpus"]:
            stages = tc["stages"]
            self.assertEqual(set(stages), {"irq", "thread", "user"})
            for name, st in stages.items():
                self.assertEqual(st["count"], tc["matched"], name)
                lin = st["linear"]
                self.assertEqual(sum(n for _, n in lin["bins"]) + lin["over"], st["count"], name)
            col = self.col(columns, "IRQ-%03d" % tc["cpu"])
            self.assertEqual(summary["count"][col], stages["irq"]["count"])

    def test_thread_stop_with_an_injected_task_prints_the_analysis_naming_it(self):
        """Injected: a real-time busy burst of 30 ms on the measured CPU, above a stop threshold
        (-T) of 20 ms, which both stand far above this host's common stalls (3-5 ms)."""
        trace_file = self.path("tl.txt")
        stop_us = 20000
        # Retried at most twice: a stall of this host above -T (they reach 10-30 ms, rarely) can
        # come before the first burst and stop the run on a sample lat-inject did not cause;
        # the measurement varies then, not the code.
        for attempt in range(3):
            inj = subprocess.Popen([LAT_INJECT, str(CPU), "90", "30ms", "80300us", "10s"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                self.assertEqual(inj.stdout.readline().strip(), "ready")
                p = subprocess.run([RTLA, "timerlat", "hist", "-c", str(CPU), "-P", "f:80", "-u", "-T", str(stop_us),
                                    "-t=" + trace_file, "-d", "8s", "--no-store"],
                                   capture_output=True, text=True, timeout=120)
            finally:
                inj.kill()
                inj.communicate()
            if "lat-inject:" in p.stdout:
                break
        self.assertEqual(p.returncode, 3, p.stderr)
        out = p.stdout
        self.assertIn("\nrtla timerlat hit stop tracing\n", out)
        self.assertIn("## CPU %d hit stop tracing, analyzing it ##" % CPU, out)
        block = out[out.index("## CPU"):]
        for name in ("IRQ handler delay:", "IRQ latency:", "Timerlat IRQ duration:", "Blocking thread:",
                     "Thread latency:"):
            self.assertIn(name, block)
        blocking = block[block.index("Blocking thread:"):].splitlines()
        self.assertRegex(blocking[1], r"^\s+lat-inject:\d+\s+[\d.]+ us$", block)
        self.assertRegex(block, r"Thread latency:\s+[\d.]+ us \(100%\)")
        self.assertIn("  Saving trace to %s\n" % trace_file, out)
        # read as rteval reads it
        rep = rteval_stop_report(out)[CPU]
        self.assertEqual(rep["Thread_latency"][1], "100")
        self.assertGreater(rep["Thread_latency"][0], stop_us * 0.5)
        for name in ("IRQ_handler_delay", "Timerlat_IRQ_duration", "Blocking_thread"):
            self.assertLessEqual(rep[name][1], 100.0, name)
        self.assertIn("IRQ_latency", rep)
        self.assertTrue(any(who.startswith("lat-inject:") for who, _ in rep["listed"]), rep)
        with open(trace_file) as f:
            self.assertIn("where the time went", f.read())
        # the histogram comes first, as rtla prints it
        self.assertLess(out.index("# RTLA timerlat histogram"), out.index("rtla timerlat hit stop tracing"))

    def test_top_quiet_prints_only_the_final_table(self):
        """Judges no latency: the layout."""
        p = subprocess.run([RTLA, "timerlat", "top", "-q", "-c", str(CPU), "-u", "-d", "1s", "--no-store"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("\033c", p.stdout)
        self.assertEqual(p.stdout.count("Timer Latency"), 4, p.stdout)   # the title and three headings
        self.assertRegex(p.stdout, r"\n *%d #\d+ +\|" % CPU)
        self.assertRegex(p.stdout, r"\nALL #\d+ +e\d+ \|")
        lines = p.stdout.splitlines()
        self.assertEqual(lines[2], TOP_HEADING_USER)

    def test_top_redraws_its_screen_every_second_and_ends_with_the_traced_columns(self):
        """Judges no latency: the screens of a 2 s run, one redrawn at 1 s and the last."""
        p = subprocess.run([RTLA, "timerlat", "top", "-c", CPU_LIST, "-u", "-d", "2s", "--no-store"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        screens = p.stdout.split("\033c")
        self.assertEqual(screens[0], "", "every screen is cleared first")
        screens = screens[1:]
        self.assertGreaterEqual(len(screens), 2, p.stdout)
        value = r" +(?:\d+|-)"
        row = re.compile(r"^ *(\d+) #\d+ +\|(?:%s){4} \|(?:%s){4} \|(?:%s){4}$" % (value, value, value))
        for screen in screens:
            lines = screen.splitlines()
            self.assertEqual(lines[2], TOP_HEADING_USER, screen)
            cpus = [int(m.group(1)) for m in map(row.match, lines[3:]) if m]
            self.assertEqual(cpus, CPUS, screen)
            self.assertRegex(lines[-1], r"^ALL #\d+ +e\d+ \|(?: +(?:\d+|-)){3} \|(?: +(?:\d+|-)){3} \|"
                                        r"(?: +(?:\d+|-)){3}$")
        # while measuring only Usr is known; the last screen has the trace's IRQ and Thr
        last = screens[-1].splitlines()[3]
        self.assertRegex(last, r"^ *\d+ #\d+ +\| +- +\d+ +\d+ +\d+ \|")

    def test_a_deadline_priority_runs_under_sched_deadline_and_says_only_usr_is_measured(self):
        """Judges no latency: the policy, the note and the layout."""
        db = self.path("runs.db")
        p = subprocess.run([RTLA, "timerlat", "hist", "-c", str(CPU), "-P", "d:100us:1ms", "-u", "-d", "1s",
                            "--db", db], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        err = p.stderr.splitlines()
        self.assertEqual(len(err), 1, p.stderr)
        self.assertRegex(err[0], r"^latscope rtla: tracing is unavailable \(SCHED_DEADLINE")
        self.checked_hist(p.stdout, [CPU], traced=False)
        params = self.stored(1)["params"]
        self.assertEqual(params["policy"], "deadline")
        self.assertEqual(params["runtime_ns"], 100000)
        self.assertEqual(params["period_ns"], 1000000)


@needs(root=True, programs=("runuser",))
class Untraced(RtlaCase):
    def test_without_root_tracing_is_unavailable_and_usr_is_still_printed(self):
        """Judges no latency: the note, and that Usr counts what its rows hold."""
        p = self.as_nobody("rtla", "timerlat", "hist", "-c", str(CPU), "-u", "-d", "1s", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        err = p.stderr.splitlines()
        self.assertEqual(len(err), 1, p.stderr)
        self.assertRegex(err[0], r"^latscope rtla: tracing is unavailable")
        columns, rows, summary = self.checked_hist(p.stdout, [CPU], traced=False)
        usr = columns.index("Usr-%03d" % CPU)
        self.assertEqual(sum(v[usr] for v in rows.values()) + summary["over"][usr], summary["count"][usr])
        self.assertGreater(summary["count"][usr], 0)


class Usage(TempDirCase):
    def test_bad_options_give_one_line_errors_and_exit_2(self):
        cases = [
            (["timerlat", "hist", "-p", "abc"], "-p"),
            (["timerlat", "hist", "-p", "123abc"], "-p"),
            (["timerlat", "hist", "-E", "5"], "-E"),
            (["timerlat", "hist", "-b", "0"], "-b"),
            (["timerlat", "hist", "-P", "x:1"], "-P"),
            (["timerlat", "hist", "-P", "f:100"], "-P"),
            (["timerlat", "hist", "-c", "0-"], "-c"),
            (["timerlat", "hist", "-d", "10x"], "-d"),
            (["timerlat", "hist", "--dma-latency", "20000"], "--dma-latency"),
            (["timerlat", "hist", "--deepest-idle-state", "-2"], "--deepest-idle-state"),
            (["timerlat", "hist", "--bogus"], "--bogus"),
            (["timerlat", "hist", "--no-irq", "--no-thread"], "--no-irq"),
            (["timerlat", "hist", "-u", "-k"], "-k"),
            (["timerlat", "top", "-E", "100"], "-E"),
            (["timerlat", "bogus"], "bogus"),
            (["osnoise"], "osnoise"),
            ([], "timerlat"),
        ]
        for args, name in cases:
            with self.subTest(args=args):
                p = run("rtla", *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 2, p.stderr)
                self.assertTrue(lines[0].startswith("latscope rtla: "), lines[0])
                self.assertIn(name, lines[0])
                self.assertEqual(lines[1], "Try 'latscope rtla --help'.")
                self.assertEqual(p.stdout, "")

    def test_help_names_every_option_rtevals_command_line_uses(self):
        p = run("rtla", "timerlat", "hist", "--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        for opt in ("--period", "--priority", "--user-threads", "--cpus", "--entries", "--no-summary", "--no-aa",
                    "--dma-latency", "--thread", "--trace"):
            self.assertIn(opt, p.stdout)


if __name__ == "__main__":
    main()
