"""Shared helpers for the integration tests: run the built binary, read its JSON."""
import atexit
import hashlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

LATSCOPE = os.environ.get("LATSCOPE", "build/src/latscope")
LAT_INJECT = os.environ.get("LAT_INJECT", "build/tests/integration/lat-inject")
SANITIZED = bool(os.environ.get("LATSCOPE_SANITIZED"))
COVERAGE = bool(os.environ.get("LATSCOPE_COVERAGE"))

# Runs a test leaves without --db go to a store of the test process's own, never
# into the store of the user running the tests; so do runs a store could not take.
STORE_HOME = tempfile.mkdtemp(prefix="latscope-test-data-")
atexit.register(shutil.rmtree, STORE_HOME, True)
os.environ["XDG_DATA_HOME"] = STORE_HOME
os.environ["XDG_STATE_HOME"] = os.path.join(STORE_HOME, "state")
os.environ.pop("LATSCOPE_DB", None)


def run(*args, timeout=120, **kw):
    """Run latscope with args; returns CompletedProcess with text output."""
    return subprocess.run([LATSCOPE, *args], capture_output=True, text=True, timeout=timeout, **kw)


def is_traceable():
    """Root and a tracefs with instances and timer events, as --trace needs."""
    return is_root() and tracefs_ready()


# A test skips only for what this machine or this build cannot have, and its reason then
# begins with one of these.  ./check (tests/summary.py) counts any other skip as a failure:
# what a test needs and the machine can have (tracefs mounted, a Debian package installed),
# ./check and scripts/install-deps provide.
MACHINE_REASONS = ("this machine", "this build")
NOT_ROOT = "this machine: the tests do not run as root"
SANITIZED_BUILD = "this build: sanitized"
COVERAGE_BUILD = "this build: gcov's counters"
HAVE_BPF = os.environ.get("LATSCOPE_HAVE_BPF") == "1"


def tracefs_ready():
    """A tracefs with instances and timer events at /sys/kernel/tracing, as --trace needs."""
    return os.path.isdir("/sys/kernel/tracing/instances") and os.path.isdir("/sys/kernel/tracing/events/timer")


def lacking(root=False, cpus=1, tracefs=False, bpf=None, programs=()):
    """Why a test that needs these cannot run here, or None.  What the machine cannot have
    comes first (MACHINE_REASONS); then what ./check and scripts/install-deps provide.
    bpf=True needs the BPF backend, bpf=False a build without it."""
    if root and not is_root():
        return NOT_ROOT
    have = len(online_cpus())
    if cpus > have:
        return "this machine has %d online CPU%s; the test needs %d" % (have, "" if have == 1 else "s", cpus)
    if bpf is True and not HAVE_BPF:
        return "this build has no BPF backend (-Dbpf=disabled, or no libbpf, bpftool or clang)"
    if bpf is False and HAVE_BPF:
        return "this build has the BPF backend: its own tests run instead"
    if tracefs and not tracefs_ready():
        return "tracefs is not mounted at /sys/kernel/tracing (./check mounts it; as root: mount -t tracefs nodev " \
               "/sys/kernel/tracing)"
    for prog in programs:
        if not shutil.which(prog, path=os.environ.get("PATH", os.defpath) + ":/usr/sbin:/sbin"):
            return "%s is not installed (scripts/install-deps installs it)" % prog
    return None


def needs(**what):
    """A decorator for a test or a class: skipped, with the reason lacking() gives, when the
    machine lacks what it needs (the arguments of lacking())."""
    why = lacking(**what)
    return unittest.skip(why) if why else (lambda x: x)


def hangup_as_default():
    """A preexec_fn: SIGHUP at its default, as in a user's shell, even when the suite itself runs
    under nohup.  latscope rightly keeps an ignored SIGHUP ignored (README, "Signals"), so a test
    that ends a run with SIGHUP must start it so."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def online_cpus():
    with open("/sys/devices/system/cpu/online") as f:
        text = f.read().strip()
    cpus = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.extend(range(int(lo), int(hi or lo) + 1))
    return cpus


def test_cpu():
    """The CPU a timing module measures and injects on: the last online one, or the one
    $LATSCOPE_TEST_CPU names.  ./check runs the timing modules in two lanes beside each other,
    each on a CPU of its own (tests/integration/meson.build, "lanes"); a test that measures
    the other CPU as well judges only what the other lane's bursts there cannot turn."""
    cpus = online_cpus()
    given = os.environ.get("LATSCOPE_TEST_CPU")
    if given is None:
        return cpus[-1]
    if not given.isdigit() or int(given) not in cpus:
        raise SystemExit("LATSCOPE_TEST_CPU=%s: not an online CPU (online: %s)" % (given, cpus))
    return int(given)


def is_root():
    return os.geteuid() == 0


def fill_disk(directory):
    """Fill the file system of directory with one file; its path, to remove."""
    filler = os.path.join(directory, "fill")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "doc",
                           "result.schema.json")
_validators = {}
_valid_texts = set()


def _inline(node, defs):
    """node with every "#/$defs/X" (and "#") reference replaced by what it names (none recurses): the same
    schema, validated about three times faster by python3-jsonschema, which resolves each reference anew."""
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _inline(v, defs) for k, v in node.items() if k != "$ref"}
    if "$ref" not in node:
        return out
    ref = node["$ref"]
    target = _inline(defs["#"] if ref == "#" else defs[ref.removeprefix("#/$defs/")], defs)
    return dict(out, allOf=out.get("allOf", []) + [target]) if out else target


def schema_validator(part=None):
    """The validator of doc/result.schema.json, or of its $defs/<part>. scripts/install-deps installs
    python3-jsonschema: without it every JSON check fails rather than passing unchecked."""
    if part not in _validators:
        try:
            import jsonschema
        except ImportError as e:
            raise RuntimeError("python3-jsonschema is missing (scripts/install-deps installs it): "
                               "latscope's JSON cannot be checked against " + SCHEMA_PATH) from e
        with open(SCHEMA_PATH) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        root = {"$ref": "#/$defs/" + part} if part else {k: v for k, v in schema.items() if k != "$defs"}
        defs = dict(schema["$defs"], **{"#": {k: v for k, v in schema.items() if k != "$defs"}})
        _validators[part] = jsonschema.Draft202012Validator(_inline(root, defs))
    return _validators[part]


# python3-jsonschema takes some 20 us a JSON value: a list longer than this (the windows of the import
# tests' synthetic files of 60,000, their 4096 CPUs) is checked on its first and last LONG_LIST / 2 items.
# Every item of a list is checked by the same subschema, and no list the schema bounds is near as long.
LONG_LIST = 400


def _thinned(node):
    if isinstance(node, dict):
        return {k: _thinned(v) for k, v in node.items()}
    if isinstance(node, list):
        if len(node) > LONG_LIST:
            node = node[:LONG_LIST // 2] + node[-(LONG_LIST // 2):]
        return [_thinned(v) for v in node]
    return node


def schema_errors(doc, part=None):
    """Where doc breaks the schema, one line each; empty when it validates."""
    v = schema_validator(part)
    doc = _thinned(doc)
    if v.is_valid(doc):
        return []
    return ["%s: %s" % ("/".join(str(k) for k in e.absolute_path) or "(top)", e.message[:300])
            for e in sorted(v.iter_errors(doc), key=lambda e: [str(k) for k in e.absolute_path])]


def checked(doc, part=None, what="document"):
    """doc, after checking it against doc/result.schema.json (AssertionError naming every breach)."""
    errors = schema_errors(doc, part)
    if errors:
        raise AssertionError("%s does not validate against doc/result.schema.json:\n  %s"
                             % (what, "\n  ".join(errors[:20])))
    return doc


def parse(text, part=None, what="latscope's output"):
    """latscope's JSON output (a result unless part names another $defs entry), checked; a text
    already checked (a file polled while a run writes it) is not checked again."""
    doc = json.loads(text)
    key = (part, hashlib.sha256(text.encode()).digest())
    if key not in _valid_texts:
        checked(doc, part, what)
        _valid_texts.add(key)
    return doc


def load(path, part=None):
    """A JSON file latscope wrote (a result unless part names another $defs entry), checked."""
    with open(path) as f:
        return parse(f.read(), part, path)


def read_terminal(fd, until=None, timeout=30):
    """What a terminal's master fd gives: until the text until came, or all of it, to the end
    (or what came in timeout seconds)."""
    got, deadline = b"", time.monotonic() + timeout
    while until is None or until.encode() not in got:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:                 # EIO: every slave end is closed
            break
        if not chunk:
            break
        got += chunk
    return got.decode(errors="replace")


class TempDirCase(unittest.TestCase):
    """A test case with a private temporary directory in self.tmp."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="latscope-test-")
        os.chmod(self.tmp, 0o777)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def stored(self, run_id, db="runs.db"):
        """A stored run's JSON, from the store db in the private directory."""
        p = run("show", str(run_id), "--json", "--db", self.path(db))
        self.assertEqual(p.returncode, 0, p.stderr)
        return parse(p.stdout, what="show --json")

    def as_nobody(self, *args, timeout=60):
        """Run latscope as nobody: a copy in the private directory, which nobody
        can reach when the build tree is not."""
        exe = self.path("latscope-nobody")
        if not os.path.exists(exe):
            shutil.copy(LATSCOPE, exe)
            os.chmod(exe, 0o755)
        env = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_HOME", "XDG_STATE_HOME")}  # nobody's own
        return subprocess.run(["runuser", "-u", "nobody", "--", exe, *args], capture_output=True, text=True,
                              timeout=timeout, cwd=self.tmp, env=env)


# meson's exit status for a test that did not run: shown as SKIP, never as OK.
SKIP_STATUS = 77
# The line ./check gathers from every test's output to list what was skipped and why.
SKIP_MARK = "latscope-skip: "
# The line with the module's counts, passed, failed and skipped, for ./check's closing line.
# A live window line (README): "    0.10s cpu1   n 99      mean ...".
WINDOW_LINE = re.compile(r"^ *\d+\.\d+s cpu\d+ +n (\d+) ")


class Started:
    """latscope started in the background with --live and 100 ms windows, its output read as
    it comes.  measured() returns once a first window was printed: the run then measures
    (a signal before that could come while it starts up, which no sleep can tell)."""

    def __init__(self, tc, args, **kw):
        self.proc = subprocess.Popen([*args, "--live", "--window", "100ms"], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, **kw)
        tc.addCleanup(self.close)
        self.out, self.err = [], []
        self.readers = [threading.Thread(target=self.read, args=(f, into), daemon=True)
                        for f, into in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for t in self.readers:
            t.start()

    @staticmethod
    def read(f, into):
        for line in f:
            into.append(line)

    def measured(self, timeout=30):
        """The samples of the windows printed so far, once one was."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            seen = sum(int(m.group(1)) for m in map(WINDOW_LINE.match, list(self.out)) if m)
            if seen:
                return seen
            time.sleep(0.01)
        raise AssertionError("no window was measured: %s%s" % ("".join(self.out), "".join(self.err)))

    def communicate(self, timeout=20):
        self.proc.wait(timeout)
        for t in self.readers:
            t.join(timeout)
        return "".join(self.out), "".join(self.err)

    def close(self):
        kill_and_close(self.proc)


def kill_and_close(proc):
    """A background process ended, if it still runs, and its output pipes closed."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()


COUNT_MARK = "latscope-count: "


def test_names(module):
    """The module's tests as unittest names them ("Class.test_x"), for meson.build."""
    names = []
    pending = [unittest.defaultTestLoader.loadTestsFromModule(module)]
    while pending:
        for t in pending.pop():
            if isinstance(t, unittest.TestSuite):
                pending.append(t)
            else:
                names.append(t.id().split(".", 1)[1])
    return sorted(names)


class _Result(unittest.TextTestResult):
    """Counts the tests that passed: a test whose subtests were all skipped did not."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.passed = 0

    def addSuccess(self, test):
        self.passed += 1
        super().addSuccess(test)

    def addSubTest(self, test, subtest, err):
        self.passed += err is None
        super().addSubTest(test, subtest, err)


def main():
    """Run the module's tests (or those named on the command line) and exit
    1 when one failed or erred, whatever else was skipped; SKIP_STATUS when
    every test that was to run was skipped; else 0.  Each skip is printed as
    a SKIP_MARK line with its reason, for ./check's summary."""
    args = sys.argv[1:]
    if args == ["--list"]:
        print("\n".join(test_names(sys.modules["__main__"])))
        sys.exit(0)
    runner = unittest.TextTestRunner(resultclass=_Result, verbosity=2)
    result = unittest.main(argv=[sys.argv[0], *args], testRunner=runner, exit=False).result
    sys.stderr.flush()
    for test, reason in result.skipped:
        name = test.id().removeprefix("__main__.")
        print(f"{SKIP_MARK}{name}: {' '.join(reason.split())}", flush=True)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print(f"{COUNT_MARK}{result.passed} {failed} {len(result.skipped)}", flush=True)
    if not result.wasSuccessful():
        sys.exit(1)
    if result.testsRun == 0 and not result.skipped:
        print("no test ran", file=sys.stderr)
        sys.exit(1)
    sys.exit(SKIP_STATUS if result.passed == 0 and not result.expectedFailures else 0)


def check_consistent(tc, doc):
    """Assert the invariants every result must hold (doc/result-schema.md)."""
    checked(doc, what="the result")
    tc.assertEqual(doc["schema"], "latscope.result")
    tc.assertEqual(doc["schema_version"], 1)
    metrics = doc["metrics"]
    tc.assertGreaterEqual(len(metrics), 1)
    blocks = doc["cpus"] + [doc["all"]]
    for block in blocks:
        for name in metrics:
            m = block["metrics"][name]
            h = m["histogram"]
            counts = [c for _, _, c in h["buckets"]]
            tc.assertEqual(sum(counts), m["count"], f"cpu {block['cpu']}: histogram adds up to count")
            tc.assertEqual(h["count"], m["count"])
            for lo, hi, c in h["buckets"]:
                tc.assertLessEqual(lo, hi)
                tc.assertGreater(c, 0, "only non-empty buckets are listed")
            lows = [lo for lo, _, _ in h["buckets"]]
            tc.assertEqual(lows, sorted(lows))
            if m["count"]:
                tc.assertLessEqual(h["buckets"][0][0], m["min_ns"])
                tc.assertLessEqual(m["max_ns"], h["buckets"][-1][1])
                order = [m["min_ns"], m["p50_ns"], m["p90_ns"], m["p99_ns"], m["p99_9_ns"], m["p99_99_ns"], m["max_ns"]]
                tc.assertEqual(order, sorted(order), f"cpu {block['cpu']}: min <= p50 <= ... <= max")
                tc.assertLessEqual(m["min_ns"], m["mean_ns"])
                tc.assertLessEqual(m["mean_ns"], m["max_ns"])
                if m["warm_max_ns"] is not None:
                    tc.assertLessEqual(m["warm_max_ns"], m["max_ns"])
            wins = block["windows"]
            for w in wins:
                wh = w[name]["histogram"]
                tc.assertEqual(sum(c for _, _, c in wh["buckets"]), w[name]["count"], "window histogram adds up")
                tc.assertEqual(wh["count"], w[name]["count"])
            tc.assertEqual(sum(w[name]["count"] for w in wins), m["count"], "windows add up to count")
            tc.assertEqual(sum(w[name]["above"] for w in wins), m["above"], "windows add up to above")
            if wins:
                tc.assertEqual(max(w[name]["max_ns"] for w in wins if w[name]["count"]), m["max_ns"])
        tc.assertEqual(sum(w["missed"] for w in block["windows"]), block["missed"], "windows add up to missed")
        starts = [w["start_ns"] for w in block["windows"]]
        tc.assertEqual(starts, sorted(starts))
        for w in block["windows"]:
            tc.assertLessEqual(w["start_ns"], w["end_ns"])
        # Folded windows (result-schema.md, "Long runs"): in order, none covering the next.
        for a, b in zip(block["windows"], block["windows"][1:]):
            tc.assertLessEqual(a["index"] + a.get("span", 1), b["index"], "a window's span ends before the next")
        lr = block.get("long_run")
        if lr is not None:
            tc.assertEqual(sum(w["spikes"] for w in block["windows"]), lr["spikes"], "windows add up to spikes")
            lead = block["metrics"][metrics[0]]
            tc.assertLessEqual(lr["spikes"], lead["above"], "a spike is one or more samples above")
            bands = [v for v in lr["max_per_band"]["max_ns"] if v is not None]
            if bands:
                tc.assertEqual(max(bands), lead["max_ns"], "the largest band is the max")
    for name in metrics:
        tc.assertEqual(sum(c["metrics"][name]["count"] for c in doc["cpus"]), doc["all"]["metrics"][name]["count"])
        tc.assertEqual(max(c["metrics"][name]["max_ns"] for c in doc["cpus"]), doc["all"]["metrics"][name]["max_ns"])
    tc.assertEqual(sum(c["missed"] for c in doc["cpus"]), doc["all"]["missed"])
    if "throughput" in doc:
        # result-schema.md, "throughput and cpu_per_op_ns": derived from the counts, to 12 digits.
        tp = doc["throughput"]
        reads = doc["all"]["metrics"][metrics[0]]["count"]
        if tp["ops_per_sec"] is not None:
            tc.assertAlmostEqual(tp["ops_per_sec"] * doc["elapsed_ns"] / 1e9, reads, delta=1e-9 * reads)
        if tp["bytes_per_sec"] is not None:
            tc.assertAlmostEqual(tp["bytes_per_sec"], tp["ops_per_sec"] * tp["bytes_per_op"],
                                 delta=1e-9 * tp["bytes_per_sec"])
        if "cpu_per_op_ns" in doc:
            for kind, total in doc["machine"]["cpu_ns"].items():
                tc.assertAlmostEqual(doc["cpu_per_op_ns"][kind] * reads, total, delta=1e-9 * total + 1e-6)
    if "machine" in doc:
        m = doc["machine"]
        for key in ("irqs", "softirqs", "context_switches", "self_user_ns", "self_system_ns"):
            tc.assertEqual(sum(w[key] for w in m["windows"]), m[key], "machine windows add up: " + key)
        for kind, total in m["cpu_ns"].items():
            tc.assertEqual(sum(w["cpu_ns"][kind] for w in m["windows"]), total, "machine cpu_ns adds up: " + kind)
