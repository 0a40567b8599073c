"""Every man page renders without a warning, and each command line of its EXAMPLES, as a user would
copy it from the rendered page, runs against a scratch store (with short durations)."""
import os
import re
import shlex
import signal
import socket
import subprocess
import time

from harness import LATSCOPE, TempDirCase, is_root, main, online_cpus, tracefs_ready, HAVE_BPF

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "doc")
PAGES = sorted(f for f in os.listdir(DOC) if f.endswith(".1"))
MYLOOP = os.path.abspath(os.environ.get("MYLOOP", "build/examples/myloop"))
CPUS = online_cpus()

# The first words of a command line in EXAMPLES; other lines there are prose or a config file.
COMMANDS = ("latscope", "curl", "kill", "oslat", "cyclictest", "PATH=")

# Examples that are not run, and why: each either needs what this machine cannot have or is
# not a whole command line.  A page's example that is neither run nor named here fails.
NOT_RUN = {
    "PATH=/usr/local/libexec/latscope:$PATH rteval ...":
        "not a whole command line: '...' stands for rteval's own arguments",
    "latscope host --vm qmp:/var/lib/libvirt/qemu/domain-1-guest/monitor.sock":
        "this machine runs no VM for the host agent to serve",
    "latscope host --vm guest --listen unix:/run/latscope/guest.sock":
        "this machine runs no VM for the host agent to serve",
    "latscope host --vm 4242 --listen 0.0.0.0:9465 --allow 10.0.0.0/8 --secret /etc/latscope/secret":
        "this machine runs no VM for the host agent to serve",
    "kill -USR1 $(systemctl show -P MainPID latscope-monitor)   # store the current period now":
        "this machine runs no latscope-monitor service under systemd",
    "latscope tune -a 1 --only irq-affinity,timer-migration --apply":
        "what it keeps stays until the reboot, and undoing interrupt affinity would write /proc/irq by "
        "hand: test_tune runs --apply on one sysctl fix and puts it back with the printed lines",
}


def render(page, width=200):
    """The page as man shows it, plain text, wide enough that no example wraps."""
    env = dict(os.environ, MANWIDTH=str(width), MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8")
    p = subprocess.run(["man", "-l", os.path.join(DOC, page)], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    return re.sub(".\b", "", p.stdout), p.stderr


def examples(text):
    """The command lines of the rendered EXAMPLES section, in order."""
    out, inside = [], False
    for line in text.splitlines():
        if line[:1].strip():                  # a section heading
            inside = line.strip() in ("EXAMPLES", "EXAMPLE")
            continue
        if inside and line.strip().startswith(COMMANDS):
            out.append(line.strip())
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpus_in(line):
    """The CPUs an example names with -a, --cpus, --cpu-list or -aN."""
    want = set()
    for m in re.finditer(r"(?:-a ?|--cpus |--cpu-list )([0-9][0-9,-]*)", line):
        for part in m.group(1).split(","):
            a, _, b = part.partition("-")
            want.update(range(int(a), int(b or a) + 1))
    return want


def shorten(line, scratch):
    """The example with what makes it long or machine-wide made small: durations, sizes,
    loop counts, rounds, files outside the scratch directory, ports."""
    line = re.sub(r"(-D ?|--duration )(\d+(\.\d+)?)([a-z]*)", lambda m: m.group(1) + (
        "1" if m.group(4) == "" else "1s"), line)
    line = re.sub(r"--size \S+", "--size 4M", line)
    line = re.sub(r"-l 100000\b", "-l 2000", line)
    line = re.sub(r"--rounds \d+", "--rounds 1", line)
    line = line.replace("/var/tmp/", scratch + "/").replace("/tmp/tuned", scratch + "/tuned")
    return line


class ManPages(TempDirCase):
    def test_every_page_renders_without_a_warning(self):
        for page in PAGES:
            with self.subTest(page=page):
                p = subprocess.run(["groff", "-ww", "-z", "-man", "-Tutf8", os.path.join(DOC, page)],
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(p.stderr, "", "groff warns")
                text, err = render(page)
                self.assertEqual(err.strip(), "", "man warns")
                self.assertNotIn("\f", text)

    def test_quotes_in_examples_survive_rendering(self):
        text, _ = render("latscope-sys.1")
        self.assertIn("""jq '.findings[] | select(.severity == "problem")'""", examples(text)[2])

    def test_the_main_page_has_an_entry_for_each_command_and_names_every_page(self):
        text, _ = render("latscope.1")
        entries = re.findall(r"^ {7}(\w+)\s", text, re.M)
        self.assertIn("oslat", entries, "oslat has a paragraph of its own, not the end of rtla's")
        self.assertIn("labelled monitor=ID;", re.sub(r"\s+", " ", text))
        see_also = re.sub(r"\s+", " ", text.split("SEE ALSO")[-1])
        for page in PAGES:
            if page != "latscope.1":
                self.assertIn(page[:-2] + "(1)", see_also)

    def test_a_report_example_label_is_one_latscope_run_writes(self):
        text, _ = render("latscope-report.1")
        suite = [e for e in examples(text) if "suite=" in e]
        self.assertEqual(len(suite), 1)
        self.assertRegex(suite[0], r"suite=\d{8}T\d{6}Z ")


class ManPageExamples(TempDirCase):
    """Each example runs in a directory of its own page with a store of its own; runs that an
    example names (compare 7 8, report 12 13 14, a label) are stored before it."""

    def setUp(self):
        super().setUp()
        self.bin = self.path("bin")
        os.makedirs(self.bin)
        for name in ("latscope", "oslat", "cyclictest"):
            os.symlink(os.path.abspath(LATSCOPE), os.path.join(self.bin, name))
        self.env = dict(os.environ, PATH=self.bin + ":" + os.environ.get("PATH", os.defpath),
                        LATSCOPE_DB=self.path("runs.db"))

    def sh(self, line, timeout=120, **kw):
        return subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=self.tmp, env=self.env,
                              timeout=timeout, **kw)

    def store(self, *args):
        p = self.sh("latscope " + " ".join(shlex.quote(a) for a in args) + " -l 50 -q")
        self.assertEqual(p.returncode, 0, p.stderr)

    def count(self):
        p = self.sh("latscope runs --ids")
        return len(p.stdout.split())

    def needs_runs(self, line, probe):
        """Runs up to the highest id the example names, and two that its labels select."""
        words = shlex.split(line.split("#")[0])[2:]
        ids = []
        for w in words[:next((i for i, w in enumerate(words) if w.startswith("-")), len(words))]:
            ids += [int(x) for x in w.split("-") if x.isdigit()]
        while ids and self.count() < max(ids):
            self.store(probe, "-a", str(CPUS[0]))
        by = words[words.index("--by") + 1].split(",") if "--by" in words else []
        for i, w in enumerate(words):
            if w == "--label":
                for j in range(2):          # two groups, one run each
                    extra = [a for key in by for a in ("--label", "%s=%d" % (key, j))]
                    self.store(probe, "-a", str(CPUS[0]), "--label", words[i + 1], *extra)

    def reason_not_to_run(self, line):
        if line in NOT_RUN:
            return NOT_RUN[line]
        missing = cpus_in(line) - set(CPUS)
        if missing:
            return "this machine has no CPU %s" % ",".join(map(str, sorted(missing)))
        root = re.search(r"(-p ?\d+|--policy deadline|--rtprio|--trace|--pid|-m |^latscope tune )", line)
        if (root or "cyclictest" in line) and not is_root():
            return "this machine: the tests do not run as root"
        if "--trace" in line and not (tracefs_ready() and HAVE_BPF):
            return "this machine or build cannot trace uprobes (tracefs, BPF)"
        return None

    def run_page(self, page, probe):
        text, _ = render(page)
        lines = examples(text)
        self.assertTrue(lines, "%s has examples" % page)
        for line in lines:
            with self.subTest(page=page, example=line):
                why = self.reason_not_to_run(line)
                if why:
                    if not why.startswith(("this machine", "this build")):
                        continue            # not a whole command, or changes the machine: NOT_RUN says so
                    self.skipTest(why)
                self.run_example(line, probe)

    def run_example(self, line, probe):
        cmd = shorten(line, self.tmp)
        if line.startswith("latscope compare") or line.startswith("latscope report"):
            self.needs_runs(line, probe)
        if "--monitor latest" in line:
            self.store(probe, "-a", str(CPUS[0]), "--label", "monitor=2026-12-01T18:40:05Z")
        if "/srv/copies/rt-box" in line:
            cmd = cmd.replace("/srv/copies/rt-box", "/")        # this machine as its own copy
        for shell, value in getattr(self, "same_as", {}).items():
            cmd = cmd.replace(shell, value)
        p = self.sh(cmd, timeout=180)
        # exit 3: a gate in the example (--fail-above, --fail-if) that this host's stalls decided
        self.assertIn(p.returncode, (0, 3) if "--fail" in line else (0,), "%s\n%s" % (cmd, p.stderr))
        if "|" in line:
            self.assertTrue(p.stdout.strip() or "select(" in line, "the pipe's end printed nothing")

    def test_timer_examples(self):
        self.run_page("latscope-timer.1", "timer")

    def test_noise_examples(self):
        self.run_page("latscope-noise.1", "noise")

    def test_wake_examples(self):
        self.run_page("latscope-wake.1", "wake")

    def test_clock_examples(self):
        self.run_page("latscope-clock.1", "clock")

    def test_io_examples(self):
        self.run_page("latscope-io.1", "timer")

    def test_sys_examples(self):
        self.run_page("latscope-sys.1", "timer")

    def test_compare_examples(self):
        self.run_page("latscope-compare.1", "timer")

    def test_report_examples(self):
        self.run_page("latscope-report.1", "timer")

    def test_tune_examples(self):
        self.run_page("latscope-tune.1", "timer")

    def test_cyclictest_examples(self):
        self.run_page("latscope-cyclictest.1", "timer")

    def test_oslat_examples(self):
        self.run_page("latscope-oslat.1", "noise")

    def test_host_examples(self):
        self.run_page("latscope-host.1", "timer")

    def test_attach_examples_against_a_running_myloop(self):
        loop = subprocess.Popen([MYLOOP, "--loop", "myloop", "--duration", "120"], stdout=subprocess.PIPE, text=True)
        try:
            self.assertTrue(loop.stdout.readline().startswith("ready"))
            # the program this test started: beside other modules, pidof may name another one too
            self.same_as = {"$(pidof myloop)": str(loop.pid)}
            self.run_page("latscope-attach.1", "timer")
        finally:
            loop.send_signal(signal.SIGTERM)
            loop.communicate(timeout=30)

    def test_monitor_examples_against_a_monitor_started_by_the_first(self):
        text, _ = render("latscope-monitor.1")
        lines = examples(text)
        self.assertTrue(lines[0].startswith("latscope monitor"))
        for line in lines[1:]:
            if line in NOT_RUN:
                continue
            with self.subTest(example=line):
                self.assertTrue(line.startswith("curl"), line)
        # the CPUs of the example that this machine has: the curl example needs a monitor, of any CPUs
        have = sorted(cpus_in(lines[0]) & set(CPUS))
        self.assertTrue(have, "the monitor example names a CPU this machine has")
        port = free_port()
        cmd = re.sub(r"-a \S+", "-a " + ",".join(map(str, have)), shorten(lines[0], self.tmp))
        cmd = cmd.replace("0.0.0.0:9464", "127.0.0.1:%d" % port)
        mon = subprocess.Popen(["bash", "-c", "exec " + cmd], cwd=self.tmp, env=self.env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        try:
            for line in lines[1:]:
                if line in NOT_RUN:
                    continue
                deadline = time.monotonic() + 30
                while True:
                    p = self.sh(line.replace(":9464", ":%d" % port))
                    if p.returncode == 0 and p.stdout.strip() or time.monotonic() > deadline:
                        break
                    self.assertIsNone(mon.poll(), mon.stderr.read() if mon.poll() is not None else "")
                    time.sleep(0.5)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("latscope_samples_total", p.stdout)
        finally:
            mon.send_signal(signal.SIGTERM)
            mon.communicate(timeout=60)

    def test_every_page_with_examples_is_run_by_a_test_here(self):
        tested = {m[len("test_"):].split("_")[0] for m in dir(self) if m.startswith("test_")}
        for page in PAGES:
            text, _ = render(page)
            if examples(text):
                self.assertIn(page[len("latscope-"):-2], tested, page)


if __name__ == "__main__":
    main()
