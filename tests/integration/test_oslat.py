"""latscope oslat: oslat's options and output, checked against oslat itself and the stored noise run."""
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import time
import unittest

from harness import LATSCOPE, TempDirCase, lacking, main, needs, online_cpus, run

CPUS = online_cpus()
CPU = CPUS[-1]
MAIN = CPUS[0]
REAL = "/usr/bin/oslat"
HAVE_OSLAT = os.path.exists(REAL) and os.path.realpath(REAL) != os.path.realpath(LATSCOPE)
NUM = re.compile(r"\d+")
RUNUSER = shutil.which("runuser") or "runuser"


def oslat_lacking(cpus=2):
    """Why the tests against oslat itself cannot run here, or None: lacking()'s reasons (root, the CPUs),
    then oslat of Debian's rt-tests at /usr/bin/oslat, which scripts/install-deps installs; an oslat there
    that is latscope's own link is not it (the tests would compare latscope with itself)."""
    why = lacking(root=True, cpus=cpus)
    if why or HAVE_OSLAT:
        return why
    if os.path.exists(REAL):
        return REAL + " is latscope's own link, not Debian's rt-tests (scripts/install-deps installs it)"
    return REAL + " is not installed (Debian rt-tests; scripts/install-deps installs it)"


def needs_oslat(cpus=2):
    """A decorator: the test is skipped, with oslat_lacking()'s reason, where that has one."""
    why = oslat_lacking(cpus)
    return unittest.skip(why) if why else (lambda f: f)


def started(argv, **kw):
    """A command started, its output piped: run beside another, then finished()."""
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def finished(proc, timeout=60):
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def cpu_seconds(pid):
    """The CPU time a process has used, all its threads (those that ended too)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parse_oslat(text):
    """A reader written from oslat's documented table: a label, a colon and a tab, one field per core
    (each after a space), then an optional unit.  Returns {label: [fields]} and the bucket rows in order."""
    rows, buckets = {}, []
    for line in text.splitlines():
        m = re.match(r"^ *([A-Za-z][A-Za-z -]*|\d{3,} \(us\)):\t((?: \S+)+?)(?: \((us|sec|Mhz)\))?"
                     r"(?: \(including overflows\))?$", line)
        if not m:
            continue
        label, fields = m.group(1), m.group(2).split()
        if label.endswith("(us)"):
            buckets.append((int(label.split()[0]), [int(x) for x in fields]))
        else:
            rows[label] = fields
    return rows, buckets


def cnf_maximum(text):
    """What cnf-tests take from oslat's output (standard output and error read together): the first row
    labelled Maximum, its whole numbers of microseconds, one per core, before the ' (us)' unit."""
    for line in text.splitlines():
        label, tab, fields = line.partition(":\t")
        if tab and label.strip() == "Maximum":
            if not fields.endswith(" (us)"):
                return None
            return [int(x) for x in fields[:-len(" (us)")].split(" ") if x != ""]
    return None


def shape(line):
    """A line with every number replaced by N: its fields without their values."""
    return NUM.sub("N", line)


def json_shape(v):
    """Keys and value types of a JSON document, the histogram's bins as one kind of key."""
    if isinstance(v, dict):
        return {("<bin>" if k.isdigit() else k): json_shape(x) for k, x in v.items()}
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return type(v).__name__


class OslatCompat(TempDirCase):
    def link(self):
        """A link named oslat to latscope, as the install makes (the name is what makes it oslat)."""
        path = self.path("oslat")
        if not os.path.exists(path):
            os.symlink(os.path.abspath(LATSCOPE), path)
        return path

    def oslat(self, *args, timeout=120, merged=False, env=None):
        """Through the oslat link, storing into the private store (cnf-tests' environment has no variable
        but this one)."""
        env = dict(env or {}, LATSCOPE_DB=self.path("runs.db"))
        return subprocess.run([self.link(), *args], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT if merged else subprocess.PIPE, text=True,
                              timeout=timeout, env=env, cwd=self.tmp)

    def last_stored(self):
        p = run("runs", "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        return self.stored(int(p.stdout.splitlines()[-1].split()[0]))

    @needs(root=True, cpus=2)
    def test_cnf_tests_command_line_gives_a_maximum_that_the_stored_noise_run_agrees_with(self):
        """Stalls: judges the printed figures against the stored run (relations no stall turns), and a
        duration held to 0.2 s, far above this host's stalls.  cnf-tests' line with its runtime at 1 s."""
        argv = ["--duration", "1", "--rtprio", "1", "--cpu-list", str(CPU), "--cpu-main-thread", str(MAIN)]
        p = self.oslat(*argv, merged=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        maxima = cnf_maximum(p.stdout)
        self.assertEqual(maxima and len(maxima), 1, p.stdout)
        rows, buckets = parse_oslat(p.stdout)
        self.assertEqual(rows["Core"], [str(CPU)])
        res = self.last_stored()
        self.assertEqual(res["probe"], "noise")
        self.assertEqual(res["params"]["policy"], "fifo")
        self.assertEqual(res["params"]["priority"], 1)
        self.assertEqual(res["params"]["cpus"], str(CPU))
        self.assertEqual(res["command_line"], ["latscope", "oslat", *argv], "the command that repeats the run")
        gap = res["cpus"][0]["metrics"]["gap"]
        self.assertGreater(gap["count"], 0)
        # oslat counts a gap of [k, k+1) us as k+1 us
        self.assertEqual(maxima[0], gap["max_ns"] // 1000 + 1)
        self.assertEqual(int(rows["Minimum"][0]), gap["min_ns"] // 1000 + 1)
        # every gap is in one bucket, the last holding the overflows
        self.assertEqual(len(buckets), 32)
        self.assertEqual([b[0] for b in buckets], list(range(1, 33)))
        self.assertEqual(sum(b[1][0] for b in buckets), gap["count"])
        lo, avg, hi = int(rows["Minimum"][0]), float(rows["Average"][0]), maxima[0]
        self.assertLessEqual(lo, avg)
        self.assertLessEqual(avg, hi)
        self.assertEqual(int(rows["Max-Min"][0]), hi - lo)
        self.assertAlmostEqual(float(rows["Duration"][0]), 1.0, delta=0.2)
        self.assertEqual(p.stdout.count("Maximum:"), 1, "one Maximum line, the first one cnf-tests reads")

    @needs(root=True, cpus=2, programs=("unshare",))
    def test_cnf_tests_empty_environment_still_stores_the_run_in_the_users_home(self):
        """Stalls: judges that the printed maximum is the stored one, a relation no stall turns."""
        # cnf-tests exec oslat with no environment at all: no HOME, no XDG_DATA_HOME, no LATSCOPE_DB.
        # The user's home (from the password database) is a private tmpfs here, so no real store is touched.
        home = pwd.getpwuid(os.geteuid()).pw_dir
        argv = ["--duration", "1", "--rtprio", "1", "--cpu-list", str(CPU), "--cpu-main-thread", str(MAIN)]
        script = ('mount -t tmpfs latscope-test "$1" || exit 99; shift; env -i "$@" > "$OUT" 2>&1; echo $? > "$RC"; '
                  '"$LAT" show 1 --json --db "$HOME_DIR/.local/share/latscope/runs.db" > "$SHOWN"')
        env = dict(os.environ, OUT=self.path("out"), RC=self.path("rc"), SHOWN=self.path("shown"), LAT=LATSCOPE,
                   HOME_DIR=home)
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", home,
                            self.link(), *argv], capture_output=True, text=True, timeout=60, env=env)
        self.assertNotEqual(p.returncode, 99, p.stderr)
        with open(self.path("out")) as f:
            out = f.read()
        with open(self.path("rc")) as f:
            self.assertEqual(f.read().strip(), "0", out)
        with open(self.path("shown")) as f:
            res = json.loads(f.read())
        self.assertEqual(cnf_maximum(out), [res["cpus"][0]["metrics"]["gap"]["max_ns"] // 1000 + 1])

    @needs(root=True, cpus=2)
    def test_a_run_prints_nothing_on_standard_error_and_verbose_says_where_it_is_stored(self):
        """Stalls: judges what is printed and stored, not a figure: no stall turns it.  The run that
        stores nothing measures on the other CPU beside the first (neither judges a figure)."""
        unstored = started([self.link(), "-D", "1", "-c", str(MAIN), "-q", "--no-store", "--verbose"],
                           env={"LATSCOPE_DB": self.path("runs.db")}, cwd=self.tmp)
        p = self.oslat("-D", "1", "-c", str(CPU), "-q")
        n = finished(unstored)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertIn("Maximum:", p.stdout)
        self.assertNotIn("Test starts", p.stdout, "-q leaves out the header and the stage lines")
        v = self.oslat("-D", "1", "-c", str(CPU), "-q", "--verbose", "--label", "k=v")
        self.assertEqual(v.returncode, 0, v.stderr)
        self.assertRegex(v.stderr, r"stored as run \d+ \(latscope show \d+\)")
        self.assertEqual(self.last_stored()["labels"], {"k": "v"})
        self.assertEqual(n.returncode, 0, n.stderr)
        self.assertNotIn("stored as", n.stderr)

    @needs_oslat()
    def test_the_output_has_oslats_lines_fields_and_widths(self):
        """Stalls: judges lines, labels and fields with every number as N, never a figure: no stall turns it.
        So oslat and latscope run at once on the same CPUs, sharing them; with -f (SCHED_FIFO) one after
        the other, as one real-time busy loop would starve the other."""
        for extra in ([], ["-b", "8"], ["-f", "1", "-s"], ["-q", "-B"]):
            with self.subTest(extra=extra):
                args = ["-D", "1", "-c", str(CPU), "-C", str(MAIN), *extra]
                if "-f" in extra:
                    theirs = subprocess.run([REAL, *args], capture_output=True, text=True, timeout=60)
                    ours = self.oslat(*args)
                else:
                    real = started([REAL, *args])
                    ours = self.oslat(*args)
                    theirs = finished(real)
                self.assertEqual(theirs.returncode, 0, theirs.stderr)
                self.assertEqual(ours.returncode, 0, ours.stderr)
                self.assertEqual(ours.stderr, theirs.stderr)
                a, b = theirs.stdout.splitlines(), ours.stdout.splitlines()
                self.assertEqual(len(a), len(b), ours.stdout)
                table = False
                for x, y in zip(a, b):
                    table = table or x.lstrip().startswith("Core:")
                    if not table and x.startswith("Global bias"):
                        self.assertEqual(shape(x), shape(y))
                    elif not table:
                        self.assertEqual(x, y, "a header line, word for word")
                        continue
                    self.assertEqual(x.split(":")[0], y.split(":")[0], "the same label, right-aligned to 12")
                    self.assertEqual(shape(x), shape(y), y)

    @needs(root=True, cpus=2)
    def test_zero_omit_and_bias_change_the_table_as_oslat_documents(self):
        """Stalls: judges rows against the bias and the stored count, relations no stall turns."""
        p = self.oslat("-D", "1", "-c", str(CPU), "-z", "-B", "-b", "64", "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.search(r"^Global bias set to (\d+) \(us\)$", p.stdout, re.M)
        self.assertTrue(m, p.stdout)
        bias = int(m.group(1))
        rows, buckets = parse_oslat(p.stdout)
        self.assertTrue(all(b[1][0] > 0 for b in buckets[:-1]), "-z leaves out the rows of zeros")
        self.assertEqual(buckets[-1][0], bias + 64, "the last row is printed whatever it holds")
        self.assertTrue(all(bias < b[0] <= bias + 64 for b in buckets), "bucket labels start after the bias")
        lines = p.stdout.splitlines()
        for i, line in enumerate(lines):
            if line == "    ...":
                self.assertRegex(lines[i + 1], r"^ +\d{3,} \(us\):\t")
        res = self.last_stored()
        self.assertEqual(sum(b[1][0] for b in buckets), res["cpus"][0]["metrics"]["gap"]["count"])

    @needs_oslat()
    def test_the_json_file_has_the_keys_oslat_writes(self):
        """Stalls: judges keys and their order, and our file against our table, relations no stall turns;
        so oslat and latscope run at once, sharing the CPU (both SCHED_OTHER)."""
        theirs, ours = self.path("theirs.json"), self.path("ours.json")
        real = started([REAL, "-D", "1", "-c", str(CPU), "-q", "--json", theirs])
        p = self.oslat("-D", "1", "-c", str(CPU), "-q", "--json", ours)
        t = finished(real)
        self.assertEqual(t.returncode, 0, t.stderr)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(theirs) as f:
            a = json.load(f)
        with open(ours) as f:
            b = json.load(f)
        # latscope adds the id the run is stored as, at the end (as its cyclictest does)
        self.assertIsInstance(b.pop("latscope_run_id"), int)
        self.assertEqual(json_shape(b), json_shape(a))
        self.assertEqual(list(b), list(a), "the keys in oslat's order")
        self.assertEqual(list(b["thread"]["0"]), list(a["thread"]["0"]))
        self.assertEqual(b["cmdline:"], "oslat -D 1 -c %d -q --json %s" % (CPU, ours))
        rows, buckets = parse_oslat(p.stdout)
        th = b["thread"]["0"]
        self.assertEqual(th["cpu"], CPU)
        self.assertEqual(th["max"], int(rows["Maximum"][0]))
        self.assertEqual(th["min"], int(rows["Minimum"][0]))
        self.assertEqual({int(k): v for k, v in th["histogram"].items()},
                         {label: c[0] for label, c in buckets if c[0]})

    def test_the_json_file_is_its_owners_only_and_never_the_store(self):
        out = self.path("o.json")
        p = self.oslat("-D", "1", "-c", str(CPU), "-q", "--json", out, "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(os.stat(out).st_mode & 0o777, 0o600)
        store = self.path("runs.db")
        p = self.oslat("-D", "1", "-c", str(CPU), "--json", store)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("the same file", p.stderr.splitlines()[0])
        self.assertEqual(p.stdout, "", "refused before anything is printed or measured")
        self.assertFalse(os.path.exists(store))

    @needs(root=True, cpus=2, programs=("runuser",))
    def test_nobody_cannot_have_sched_fifo_and_fails_as_oslat_does(self):
        link = self.path("oslat-nobody")
        exe = self.path("latscope-nobody")
        shutil.copy(LATSCOPE, exe)
        os.chmod(exe, 0o755)
        os.symlink(exe, self.path("oslat"))
        argv = ["--duration", "1", "--rtprio", "1", "--cpu-list", str(CPU), "--cpu-main-thread", str(MAIN)]
        env = {"LATSCOPE_DB": self.path("nobody.db"), "PATH": "/usr/bin:/bin"}
        ours = subprocess.run([RUNUSER, "-u", "nobody", "--", self.path("oslat"), *argv], capture_output=True,
                              text=True, timeout=60, env=env, cwd=self.tmp)
        self.assertEqual(ours.returncode, 1, ours.stdout + ours.stderr)
        self.assertNotIn("Maximum:", ours.stdout)
        self.assertEqual(len(ours.stderr.splitlines()), 1, ours.stderr)
        self.assertRegex(ours.stderr, r"^latscope oslat: option '--rtprio': SCHED_FIFO priority 1 not applied")
        self.assertTrue(ours.stdout.startswith("oslat V "), ours.stdout)
        if HAVE_OSLAT:
            theirs = subprocess.run([RUNUSER, "-u", "nobody", "--", REAL, *argv], capture_output=True, text=True,
                                    timeout=60, env=env, cwd=self.tmp)
            self.assertEqual(theirs.returncode, 1)
            self.assertNotIn("Maximum:", theirs.stdout)
        self.assertFalse(os.path.exists(link))

    @needs(root=True, cpus=2)
    def test_sigint_ends_the_run_and_prints_the_table(self):
        """Stalls: judges the table against the stored run and a duration under 30 s of a 60 s run, relations
        no stall turns; the signal comes once the test stage has used 0.1 s of CPU (polled), so the run
        stopped is never empty."""
        proc = subprocess.Popen([self.link(), "-D", "60", "-c", str(CPU)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env={"LATSCOPE_DB": self.path("runs.db")})
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Test starts"):
                break
        since, deadline = cpu_seconds(proc.pid), time.monotonic() + 30
        while cpu_seconds(proc.pid) < since + 0.1 and time.monotonic() < deadline:
            time.sleep(0.01)
        measured = cpu_seconds(proc.pid) >= since + 0.1
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        self.assertTrue(measured, "the test stage used 0.1 s of CPU within 30 s")
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(err, "")
        rows, buckets = parse_oslat("".join(lines) + out)
        self.assertIn("Maximum", rows)
        self.assertLess(float(rows["Duration"][0]), 30.0)
        res = self.last_stored()
        self.assertTrue(res["interrupted"])
        self.assertGreater(res["cpus"][0]["metrics"]["gap"]["count"], 0)
        self.assertEqual(sum(b[1][0] for b in buckets), res["cpus"][0]["metrics"]["gap"]["count"])

    def test_bad_options_give_one_line_and_exit_2(self):
        cases = [(["-b", "4"], "-b"), (["-b", "1025"], "-b"), (["-b", "x"], "-b"), (["-f", "0"], "-f"),
                 (["--rtprio", "100"], "--rtprio"), (["-D", "abc"], "-D"), (["-D", "0"], "-D"),
                 (["-D", "500ms"], "-D"), (["-c", "zz"], "-c"), (["-C", "-1"], "-C"), (["-C", "99999"], "-C"),
                 (["-w", "dance"], "-w"), (["-m", "4Q"], "-m"), (["--bogus"], "--bogus"), (["-X"], "-X"),
                 (["-D"], "-D"), (["--duration"], "--duration"), (["--json"], "--json"), (["extra"], "extra"),
                 (["-W", "500"], "-W"), (["-T", "10"], "-T"),
                 (["-w", "memmove"], "-w"), (["--label", "nokey"], "--label")]
        for args, name in cases:
            with self.subTest(args=args):
                p = self.oslat(*args)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 2, p.stderr)
                self.assertTrue(lines[0].startswith("latscope oslat: "), lines[0])
                self.assertIn("'%s'" % name, lines[0])
                self.assertEqual(lines[1], "Try 'latscope oslat --help'.")
                self.assertNotIn("Maximum:", p.stdout)
        self.assertFalse(os.path.exists(self.path("runs.db")), "nothing stored")

    def test_help_and_version_as_oslats_and_the_subcommand_is_the_same(self):
        h = self.oslat("--help")
        self.assertEqual(h.returncode, 0, h.stderr)
        for opt in ("--bucket-size", "--bias", "--cpu-list", "--cpu-main-thread", "--duration", "--json",
                    "--rtprio", "--workload-mem", "--quiet", "--single-preheat", "--trace-threshold",
                    "--version", "--workload", "--zero-omit", "--db", "--no-store", "--label", "--verbose"):
            self.assertIn(opt, h.stdout)
        v = self.oslat("-v")
        self.assertEqual(v.returncode, 0, v.stderr)
        self.assertEqual(v.stdout.splitlines()[0], "oslat V 2.40")
        s = run("oslat", "--help")
        self.assertEqual(s.returncode, 0, s.stderr)
        self.assertEqual(s.stdout, h.stdout)


if __name__ == "__main__":
    main()
