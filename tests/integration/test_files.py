"""The files latscope writes and the store it keeps, on a machine where it runs as root beside other users:
no symbolic link followed, private modes, no run lost, no temporary file left, one identity per merge.

No test here judges a latency: a run is 20 wakeups (-l 20) unless it must still be measuring while the
test acts on it, and the docstring of each test that waits on time says how it stands above this host's stalls."""
import fcntl
import glob
import os
import shlex
import shutil
import signal
import sqlite3
import stat
import subprocess
import tempfile
import time

from harness import LATSCOPE, TempDirCase, fill_disk, is_root, load, main, needs, online_cpus, parse, run

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
CPU = online_cpus()[-1]
NOBODY = 65534


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


# What a test that runs latscope as nobody needs (TempDirCase.as_nobody).
AS_NOBODY = dict(root=True, programs=("runuser",))


def mount_tmpfs(mnt, size):
    """Mount a tmpfs of size at mnt; why not, or None."""
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", mnt], capture_output=True, text=True)
    if m.returncode != 0:       # root without the right to mount, as in some containers
        return "this machine cannot mount a tmpfs: " + (m.stderr.strip() or "mount failed")
    return None


class FilesCase(TempDirCase):
    def setUp(self):
        super().setUp()
        self.db = self.path("runs.db")
        self.state = self.path("state")
        self.env = dict(os.environ, XDG_STATE_HOME=self.state)

    def lat(self, *args, db=None, env=None, cwd=None, timeout=120):
        return run(*args, "--db", db or self.db, env=env or self.env, cwd=cwd, timeout=timeout)

    def quick(self, *extra, db=None, env=None, cwd=None):
        """A run of 20 wakeups: enough to be a result, quick to make."""
        return self.lat("timer", "-a", str(CPU), "-l", "20", "-q", *extra, db=db, env=env, cwd=cwd)

    def stored_runs(self, db=None):
        con = sqlite3.connect(db or self.db)
        try:
            return [r[0] for r in con.execute("SELECT id FROM runs ORDER BY id")]
        finally:
            con.close()

    def unstored(self):
        return sorted(glob.glob(os.path.join(self.state, "latscope", "unstored", "*.json")))

    def mount_tmpfs(self, name, size="400k"):
        mnt = self.path(name)
        os.mkdir(mnt)
        why = mount_tmpfs(mnt, size)
        if why:
            self.skipTest(why)
        self.addCleanup(subprocess.run, ["umount", mnt])
        return mnt

    def run_then_fill(self, mnt, *args, env=None, cwd=None):
        """A run of 500 ms on a store in mnt, whose disk fills once the store is open: filling 400 kB takes
        milliseconds, far less than the run, whatever this host's stalls (tens of ms at worst)."""
        proc = subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-D", "500ms", "--db", os.path.join(mnt, "runs.db"),
                                 *args], env=env or self.env, cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        proc.stdout.readline()          # the header: the store is open, the run begins
        filler = fill_disk(mnt)
        out, err = proc.communicate(timeout=60)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), filler

    def assert_kept_and_importable(self, p, before, db=None):
        """The run the store did not take is in one new file, which imports cleanly."""
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("latscope import", p.stderr)
        self.assertNotIn("not an error", p.stderr)
        files = [f for f in self.unstored() if f not in before]
        self.assertEqual(len(files), 1, p.stderr)
        kept = files[0]
        self.assertIn(kept, p.stderr, "says where the run is")
        # the command it suggests imports that file into the store the run named, word for word
        line = next(ln for ln in p.stderr.splitlines() if "store it later with: " in ln)
        args = list(p.args)
        store = ["--db", args[args.index("--db") + 1]] if "--db" in args else []
        self.assertEqual(shlex.split(line.split("store it later with: ", 1)[1]), ["latscope", "import", *store, kept],
                         line)
        self.assertEqual(mode(kept), 0o600)
        self.assertEqual(mode(os.path.dirname(kept)), 0o700)
        return kept

    def import_and_show(self, kept, db=None):
        p = self.lat("import", kept, db=db)
        self.assertEqual(p.returncode, 0, p.stderr)
        rid = int(p.stdout.split()[-1])
        p = self.lat("show", str(rid), "--json", db=db)
        self.assertEqual(p.returncode, 0, p.stderr)
        shown = parse(p.stdout)
        shown.pop("id")
        self.assertEqual(shown, load(kept))
        return rid

    def make_two_runs(self):
        for _ in range(2):
            p = self.quick()
            self.assertEqual(p.returncode, 0, p.stderr)

    def outputs(self):
        """Every command that writes a result file, and the file it writes."""
        o = self.path
        return [(("timer", "-a", str(CPU), "-l", "20", "-q", "--no-store", "--json", o("timer.json")), o("timer.json")),
                (("cyclictest", "-l20", "-q", "-h", "10", "--histfile=" + o("hist.txt"), "--json=" + o("cyc.json"),
                  "--no-store"), o("hist.txt")),
                (("cyclictest", "-l20", "-q", "--json=" + o("cyc.json"), "--no-store"), o("cyc.json")),
                (("merge", "1", "2", "-q", "--no-store", "--json", o("merged.json")), o("merged.json")),
                (("report", "1", "2", "-o", o("report.html")), o("report.html")),
                (("export", "1", "-o", o("metrics.prom")), o("metrics.prom")),
                (("compare", "1", "2", "--junit", o("junit.xml")), o("junit.xml"))]


class StorePath(FilesCase):
    def test_a_db_path_in_a_missing_directory_is_refused_at_once_and_nothing_is_made(self):
        """Issue 34, point 11: a path the user typed gets no directory, as --json's does not.  A relation:
        refused before measuring, the 30 s run (and run's minute) would have taken far above the 10 s allowed."""
        missing = self.path("missing/deeper")
        result = self.path("r.json")
        self.assertEqual(self.quick("--no-store", "--json", result).returncode, 0)
        for args in (("timer", "-a", str(CPU), "-D", "30", "-q"), ("run",), ("import", result)):
            started = time.monotonic()
            p = self.lat(*args, db=os.path.join(missing, "x.db"))
            self.assertLess(time.monotonic() - started, 10, args)
            self.assertEqual(p.returncode, 2, f"{args}: {p.stderr}")
            lines = p.stderr.splitlines()
            self.assertIn("No such file or directory", lines[0])
            self.assertEqual(len(lines), 2, p.stderr)
            self.assertRegex(lines[1], r"^Try 'latscope \w+ --help'\.$", "then the hint")
            self.assertEqual(p.stdout, "", "nothing was measured")
        p = run("timer", "-a", str(CPU), "-l", "20", "-q", env=dict(self.env, LATSCOPE_DB=missing + "/x.db"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertFalse(os.path.exists(self.path("missing")))

    def test_the_default_store_is_made_below_the_home_and_never_makes_the_home(self):
        env = {k: v for k, v in self.env.items() if k not in ("XDG_DATA_HOME", "LATSCOPE_DB")}
        home = self.path("home")
        os.mkdir(home, 0o755)
        p = run("timer", "-a", str(CPU), "-l", "20", "-q", env=dict(env, HOME=home))
        self.assertEqual(p.returncode, 0, p.stderr)
        for d in (".local", ".local/share", ".local/share/latscope"):
            self.assertEqual(mode(os.path.join(home, d)), 0o700, d)
        self.assertEqual(mode(home), 0o755, "the home is left as it was")
        self.assertEqual(self.stored_runs(os.path.join(home, ".local/share/latscope/runs.db")), [1])
        # a home that is not there (nobody's /nonexistent, even for root) is not made
        gone = self.path("gone")
        p = run("timer", "-a", str(CPU), "-D", "30", "-q", env=dict(env, HOME=gone))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("the default store", p.stderr.splitlines()[0])
        self.assertFalse(os.path.exists(gone))
        # $XDG_DATA_HOME itself is made, but not the directory above it
        p = run("timer", "-a", str(CPU), "-l", "20", "-q",
                env=dict(env, HOME=home, XDG_DATA_HOME=self.path("above/xdg")))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertFalse(os.path.exists(self.path("above")))

    def test_a_db_path_that_is_a_symbolic_link_is_refused_and_its_target_is_not_created(self):
        link, target = self.path("link.db"), self.path("target.db")
        os.symlink(target, link)
        result = self.path("r.json")
        self.assertEqual(self.quick("--no-store", "--json", result).returncode, 0)
        for args in (("timer", "-a", str(CPU), "-l", "20", "-q"), ("runs",), ("import", result)):
            p = self.lat(*args, db=link)
            self.assertEqual(p.returncode, 2, f"{args}: {p.stderr}")
            self.assertIn("symbolic link", p.stderr)
            self.assertEqual(p.stdout, "", "refused before measuring")
        p = run("runs", env=dict(self.env, LATSCOPE_DB=link))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("symbolic link", p.stderr)
        self.assertFalse(os.path.exists(target))

    def test_a_symbolic_link_to_an_existing_store_is_refused_too(self):
        self.assertEqual(self.quick().returncode, 0)
        link = self.path("link.db")
        os.symlink(self.db, link)
        before = open(self.db, "rb").read()
        for args in (("runs",), ("show", "1"), ("rm", "1")):
            p = self.lat(*args, db=link)
            self.assertEqual(p.returncode, 2, f"{args}: {p.stderr}")
            self.assertIn("symbolic link", p.stderr)
        self.assertEqual(open(self.db, "rb").read(), before)

    def test_the_default_store_is_not_followed_through_a_symbolic_link(self):
        xdg = self.path("xdg")
        os.makedirs(os.path.join(xdg, "latscope"))
        target = self.path("elsewhere.db")
        os.symlink(target, os.path.join(xdg, "latscope", "runs.db"))
        env = dict(self.env, XDG_DATA_HOME=xdg)
        p = run("timer", "-a", str(CPU), "-l", "20", "-q", env=env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("the default store", p.stderr)
        self.assertIn("symbolic link", p.stderr)
        self.assertIn("--no-store", p.stderr)
        self.assertNotIn("latency", p.stdout, "nothing was measured")
        self.assertFalse(os.path.exists(target))

    def test_a_directory_above_the_store_may_be_a_symbolic_link(self):
        real = self.path("real")
        os.mkdir(real)
        os.symlink(real, self.path("via"))
        p = self.quick(db=self.path("via/runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.isfile(os.path.join(real, "runs.db")))
        self.assertEqual(self.lat("runs", db=self.path("via/runs.db")).returncode, 0)

    def test_a_new_store_is_private_in_private_directories(self):
        xdg = self.path("xdg")
        env = dict(self.env, XDG_DATA_HOME=xdg)
        p = run("timer", "-a", str(CPU), "-l", "20", "-q", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(mode(os.path.join(xdg, "latscope", "runs.db")), 0o600)
        self.assertEqual(mode(os.path.join(xdg, "latscope")), 0o700)
        self.assertEqual(mode(xdg), 0o700)
        # SQLite gives its write-ahead log and shared memory the store's mode.
        con = sqlite3.connect(os.path.join(xdg, "latscope", "runs.db"))
        con.execute("SELECT count(*) FROM runs").fetchone()
        self.assertEqual(mode(os.path.join(xdg, "latscope", "runs.db-wal")), 0o600)
        con.close()

    @needs(**AS_NOBODY)
    def test_a_store_the_user_cannot_write_is_refused_before_measuring(self):
        """A relation: refused before measuring, the command ends long before the 30 s run would have
        (a stall of this host, tens of ms, comes nowhere near the 10 s allowed)."""
        self.assertEqual(self.quick().returncode, 0)
        os.chmod(self.db, 0o644)
        started = time.monotonic()
        p = self.as_nobody("timer", "-a", str(CPU), "-D", "30", "-q", "--db", self.db)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("read-only", p.stderr)
        self.assertNotIn("not an error", p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertLess(time.monotonic() - started, 10, "refused before measuring")


@needs(**AS_NOBODY)
class ForeignStore(FilesCase):
    """A store another user made, or one others may write, is theirs to read and change: latscope
    writes into it only when told to (--db-trust), and reads it whoever owns it."""

    def result(self):
        out = self.path("r.json")
        if not os.path.exists(out):
            self.assertEqual(self.quick("--no-store", "--json", out).returncode, 0)
            os.chmod(out, 0o644)
        return out

    def assert_refused(self, p, why):
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(why, p.stderr)
        self.assertIn("--db-trust", p.stderr)
        self.assertEqual(len(p.stderr.rstrip("\n").split("\n")), 2, "one line, then the hint to --help")
        self.assertEqual(p.stdout, "", "refused before measuring")

    def test_an_empty_store_nobody_planted_is_refused_and_left_as_it_was_unless_trusted(self):
        d = self.path("x")
        os.mkdir(d)
        os.chmod(d, 0o777)
        pre = os.path.join(d, "pre.db")
        with open(pre, "w"):
            pass
        os.chown(pre, NOBODY, NOBODY)
        os.chmod(pre, 0o666)
        for args in (("import", self.result()), ("timer", "-a", str(CPU), "-l", "20", "-q"),
                     ("merge", "1", "2"), ("rm", "1")):
            with self.subTest(args=args):
                self.assert_refused(self.lat(*args, db=pre), "belongs to another user")
                self.assertEqual(os.path.getsize(pre), 0)
                self.assertEqual(sorted(os.listdir(d)), ["pre.db"], "no -wal or -shm made")
        p = self.lat("import", self.result(), "--db-trust", db=pre)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.stored_runs(pre), [1])

    def test_a_store_of_another_users_is_read_by_every_command_but_never_written_untold(self):
        for _ in range(2):
            self.assertEqual(self.quick().returncode, 0)
        os.chown(self.db, NOBODY, NOBODY)
        before = open(self.db, "rb").read()
        for args in (("runs",), ("show", "1"), ("compare", "1", "2"), ("export", "1"),
                     ("report", "1", "-o", self.path("r.html"))):
            p = self.lat(*args)
            self.assertEqual(p.returncode, 0, f"{args}: {p.stderr}")
        for args in (("rm", "1"), ("import", self.result()), ("timer", "-a", str(CPU), "-l", "20", "-q")):
            self.assert_refused(self.lat(*args), "belongs to another user (uid %d; this is uid 0)" % NOBODY)
        self.assertEqual(open(self.db, "rb").read(), before)
        self.assertEqual(self.stored_runs(), [1, 2])
        # Its owner writes it as ever.
        p = self.as_nobody("rm", "1", "--db", self.db)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.stored_runs(), [2])

    def test_a_store_others_may_write_is_refused_to_its_owner_and_to_them(self):
        self.assertEqual(self.quick().returncode, 0)
        os.chmod(self.db, 0o666)
        self.assert_refused(self.lat("import", self.result()), "other users may write it (mode 0666)")
        p = self.as_nobody("rm", "1", "--db", self.db)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("belongs to another user", p.stderr)
        self.assertEqual(self.stored_runs(), [1])
        os.chmod(self.db, 0o600)
        self.assertEqual(self.lat("import", self.result()).returncode, 0)

    def test_a_write_ahead_log_another_user_planted_beside_the_store_is_refused(self):
        self.assertEqual(self.quick().returncode, 0)
        wal = self.db + "-wal"
        with open(wal, "w"):
            pass
        os.chown(wal, NOBODY, NOBODY)
        p = self.lat("rm", "1")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("runs.db-wal': it belongs to another user", p.stderr)
        self.assertEqual(self.stored_runs(), [1])


class ResultFiles(FilesCase):
    def test_new_result_files_are_readable_only_by_their_owner(self):
        self.make_two_runs()
        for args, out in self.outputs():
            p = self.lat(*args)
            self.assertEqual(p.returncode, 0, f"{args}: {p.stderr}")
            self.assertEqual(mode(out), 0o600, args)

    @needs(root=True)
    def test_a_replaced_result_file_keeps_its_mode_and_owner(self):
        self.make_two_runs()
        for args, out in self.outputs():
            with open(out, "w") as f:
                f.write("old\n")
            os.chmod(out, 0o644)
            os.chown(out, NOBODY, NOBODY)
            p = self.lat(*args)
            self.assertEqual(p.returncode, 0, f"{args}: {p.stderr}")
            st = os.lstat(out)
            self.assertNotEqual(open(out).read(), "old\n", args)
            self.assertEqual(stat.S_IMODE(st.st_mode), 0o644, args)
            self.assertEqual((st.st_uid, st.st_gid), (NOBODY, NOBODY), args)

    def test_a_umask_that_asks_for_less_is_obeyed(self):
        p = subprocess.run(["sh", "-c", 'umask 0277; exec "$0" "$@"', LATSCOPE, "timer", "-a", str(CPU), "-l",
                            "20", "-q", "--no-store", "--json", self.path("r.json")], capture_output=True, text=True,
                           env=self.env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(mode(self.path("r.json")), 0o400)

    def test_a_result_file_that_is_a_symbolic_link_is_replaced_and_its_target_left_alone(self):
        victim = self.path("victim")
        with open(victim, "w") as f:
            f.write("keep me\n")
        os.chmod(victim, 0o666)
        out = self.path("r.json")
        os.symlink(victim, out)
        p = self.quick("--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(open(victim).read(), "keep me\n")
        self.assertTrue(stat.S_ISREG(os.lstat(out).st_mode))
        self.assertEqual(mode(out), 0o600, "the link's target lends no mode")
        load(out)


class DeviceOutputs(FilesCase):
    """Only a regular file is replaced: a device, a FIFO, a link to one or standard output is written in
    place, as a shell's redirection would.  The devices are copies made with mknod in the private directory,
    and /dev/stdout is stood for by a link to /proc/self/fd/1 there: a failing test leaves the machine as it was."""

    def node(self, name, like, directory=None):
        """A character device like the one at like (/dev/null, /dev/full), readable and writable by all."""
        path = os.path.join(directory or self.tmp, name)
        os.mknod(path, stat.S_IFCHR | 0o666, os.stat(like).st_rdev)
        os.chmod(path, 0o666)
        return path

    def assert_char_device(self, path, what):
        self.assertTrue(stat.S_ISCHR(os.lstat(path).st_mode), f"{what}: {path} is no longer a device")

    @needs(root=True)
    def test_every_output_writes_through_a_device_and_leaves_it_a_device(self):
        self.make_two_runs()
        null = self.node("null", "/dev/null")
        link = self.path("null-link")
        os.symlink(null, link)
        for target in (null, link):
            for args, out in self.outputs():
                args = [a.replace(out, target) for a in args]
                p = self.lat(*args)
                self.assertEqual(p.returncode, 0, f"{args}: {p.stderr}")
                self.assert_char_device(null, args)
            self.assertTrue(os.path.islink(link), "the link is followed, not replaced")

    @needs(root=True)
    def test_a_full_device_fails_the_command_with_one_line_naming_it(self):
        self.make_two_runs()
        full = self.node("full", "/dev/full")
        for args in (("export", "1", "-o", full),
                     ("timer", "-a", str(CPU), "-l", "20", "-q", "--no-store", "--json", full)):
            p = self.lat(*args)
            self.assertEqual(p.returncode, 1, f"{args}: {p.stderr}")
            said = [l for l in p.stderr.splitlines() if "cannot write" in l]
            self.assertEqual(said, [f"latscope {args[0]}: cannot write '{full}': No space left on device"], p.stderr)
            self.assert_char_device(full, args)

    def test_a_fifo_gets_the_output_and_stays_a_fifo(self):
        self.make_two_runs()
        fifo = self.path("fifo")
        os.mkfifo(fifo, 0o600)
        for args, check in ((("export", "1", "-o", fifo), lambda text: self.assertIn("# TYPE latscope_", text)),
                            (("timer", "-a", str(CPU), "-l", "20", "-q", "--no-store", "--json", fifo), parse)):
            reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE, text=True)
            try:
                p = self.lat(*args, timeout=60)
                self.assertEqual(p.returncode, 0, f"{args}: {p.stderr}")
                self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode), f"{args}: the FIFO was replaced")
                text, _ = reader.communicate(timeout=10)
                check(text)
            finally:
                if reader.poll() is None:   # a FIFO replaced under it: its reader waits for no writer
                    reader.kill()
                    reader.wait()

    def test_a_dash_or_a_link_to_standard_output_writes_to_standard_output(self):
        self.make_two_runs()
        link = self.path("stdout")
        os.symlink("/proc/self/fd/1", link)
        for target in ("-", link):
            p = self.lat("export", "1", "-o", target, cwd=self.tmp)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("# TYPE latscope_", p.stdout, target)
            self.assertFalse(os.path.exists(self.path("-")), "'-' is standard output, not a file")
            self.assertTrue(os.path.islink(link), "the link is followed, not replaced")
        out = self.path("out.prom")
        with open(out, "w") as f:       # standard output a file: written through it, the link kept
            p = subprocess.run([LATSCOPE, "export", "1", "-o", link, "--db", self.db], stdout=f,
                               stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("# TYPE latscope_", open(out).read())
        self.assertTrue(os.path.islink(link))

    def test_a_directory_as_an_output_is_refused_with_one_line(self):
        self.make_two_runs()
        p = self.lat("export", "1", "-o", self.tmp)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("Is a directory", p.stderr.splitlines()[0])

    @needs(**AS_NOBODY)
    def test_nobody_writes_through_a_device_in_a_directory_only_root_may_write(self):
        """nobody may write /dev/null but not create in /dev: a device is written, not replaced."""
        d = self.path("dev")
        os.mkdir(d, 0o755)
        null = self.node("null", "/dev/null", d)
        p = self.as_nobody("timer", "-a", str(CPU), "-l", "20", "-q", "--no-store", "--json", null)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_char_device(null, "as nobody")


class Locked(FilesCase):
    """A run and a merge that meet a store another writer keeps locked.  Each waits out the store's busy
    timeout (BUSY_TIMEOUT_MS in src/store/store.c, 10 s) before it keeps what it could not store: the two
    wait side by side, once for both tests, each on a store and a state directory of its own."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="latscope-test-locked-")
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        cls.waited = {}
        commands = {"run": (1, ["timer", "-a", str(CPU), "-l", "20", "-q"]), "merge": (2, ["merge", "1", "2", "-q"])}
        procs, locks = {}, []
        try:
            for name, (runs, args) in commands.items():
                db, state = os.path.join(cls.dir, name + ".db"), os.path.join(cls.dir, name + "-state")
                env = dict(os.environ, XDG_STATE_HOME=state)
                for _ in range(runs):
                    p = run("timer", "-a", str(CPU), "-l", "20", "-q", "--db", db, env=env)
                    assert p.returncode == 0, p.stderr
                con = sqlite3.connect(db, isolation_level=None)
                con.execute("BEGIN EXCLUSIVE")
                locks.append(con)
                procs[name] = (db, state, subprocess.Popen([LATSCOPE, *args, "--db", db], env=env, text=True,
                                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE))
            for name, (db, state, proc) in procs.items():
                out, err = proc.communicate(timeout=60)
                cls.waited[name] = (db, state, subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
        finally:
            for con in locks:
                con.close()
            for _, _, proc in procs.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()

    def waited_for(self, name):
        """The command's result, its store, and self.state its state directory."""
        db, self.state, p = self.waited[name]
        self.env = dict(self.env, XDG_STATE_HOME=self.state)
        return p, db

    def test_a_run_the_locked_store_cannot_take_is_kept_and_imports_later(self):
        p, db = self.waited_for("run")
        self.assertIn("stayed locked", p.stderr)
        kept = self.assert_kept_and_importable(p, [])
        self.assertTrue(os.path.basename(kept).endswith("-timer.json"), kept)
        self.assertEqual(self.import_and_show(kept, db=db), 2)
        p = self.lat("import", kept, db=db)
        self.assertIn("already stored as run 2", p.stdout)

    def test_a_merge_the_locked_store_cannot_take_is_kept_and_imports_later(self):
        p, db = self.waited_for("merge")
        self.assertIn("stayed locked", p.stderr)
        kept = self.assert_kept_and_importable(p, [])
        self.assertEqual(self.import_and_show(kept, db=db), 3)


class Unstored(FilesCase):

    @needs(root=True)
    def test_a_run_is_kept_when_the_store_becomes_unwritable_while_measuring(self):
        mnt = self.mount_tmpfs("tiny")
        db = os.path.join(mnt, "runs.db")
        self.assertEqual(self.quick(db=db).returncode, 0)
        p, filler = self.run_then_fill(mnt)
        self.assertIn("the disk is full", p.stderr)
        kept = self.assert_kept_and_importable(p, [])
        os.remove(filler)
        self.assertEqual(self.import_and_show(kept, db=db), 2)

    @needs(root=True)
    def test_without_a_state_directory_the_run_goes_beside_the_json_file_then_into_the_current_one(self):
        mnt = self.mount_tmpfs("tiny")
        db = os.path.join(mnt, "runs.db")
        self.assertEqual(self.quick(db=db).returncode, 0)
        with open(self.path("afile"), "w") as f:
            f.write("a file where a directory would be\n")
        env = dict(self.env, XDG_STATE_HOME=self.path("afile/state"))
        out_dir, cwd = self.path("out"), self.path("cwd")
        os.mkdir(out_dir)
        os.mkdir(cwd)
        p, filler = self.run_then_fill(mnt, "--json", os.path.join(out_dir, "r.json"), env=env, cwd=cwd)
        self.assertEqual(p.returncode, 1, p.stderr)
        beside = glob.glob(os.path.join(out_dir, "latscope-unstored-*-timer.json"))
        self.assertEqual(len(beside), 1, p.stderr)
        self.assertIn(beside[0], p.stderr)
        self.assertEqual(mode(beside[0]), 0o600)
        os.remove(filler)
        p, filler = self.run_then_fill(mnt, env=env, cwd=cwd)
        self.assertEqual(p.returncode, 1, p.stderr)
        here = glob.glob(os.path.join(cwd, "latscope-unstored-*-timer.json"))
        self.assertEqual(len(here), 1, p.stderr)
        os.remove(filler)
        for kept in beside + here:
            self.import_and_show(kept, db=db)
        self.assertEqual(len(self.stored_runs(db)), 3)

    @needs(root=True)
    def test_when_no_place_can_take_the_run_every_reason_is_given(self):
        mnt = self.mount_tmpfs("tiny")
        db = os.path.join(mnt, "runs.db")
        self.assertEqual(self.quick(db=db).returncode, 0)
        ro = self.mount_tmpfs("ro", size="64k")
        subprocess.run(["mount", "-o", "remount,ro", ro], check=True)
        with open(self.path("afile"), "w") as f:
            f.write("x\n")
        env = dict(self.env, XDG_STATE_HOME=self.path("afile/state"))
        p, _ = self.run_then_fill(mnt, env=env, cwd=ro)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("the run is lost", p.stderr)
        self.assertIn("Not a directory", p.stderr)
        self.assertIn("Read-only file system", p.stderr)
        self.assertEqual(os.listdir(ro), [])


class TempFiles(FilesCase):
    def test_kill_9_during_a_run_leaves_nothing_beside_the_json_file(self):
        out_dir = self.path("out")
        os.mkdir(out_dir)
        proc = subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-D", "30", "--no-store", "--json",
                                 os.path.join(out_dir, "r.json")], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=self.env)
        proc.stdout.readline()          # the header: the output is open
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        self.assertEqual(os.listdir(out_dir), [])

    def test_stale_temporary_files_of_dead_writers_are_removed_by_the_next_write(self):
        out = self.path("r.json")
        old = time.time() - 3600

        def make(name, age=old, owner=None):
            path = self.path(name)
            with open(path, "w") as f:
                f.write("partial")
            os.utime(path, (age, age))
            if owner is not None:
                os.chown(path, owner, owner)
            return path

        dead_pid = 4194303      # above any pid this test can meet (pid_max's upper limit is 2^22)
        stale = [make(".r.json.tmp-%d" % dead_pid), make(".r.json.latscope-a1b2c3d4e5f6")]
        kept = [make(".r.json.tmp-%d" % os.getpid()),                     # its writer is alive
                make(".r.json.latscope-fresh0fresh0", age=time.time()),   # just made: its writer may lock it now
                make(".other.json.latscope-a1b2c3d4e5f6"),                # another target's
                make("r.json.latscope-a1b2c3d4e5f6")]                     # not our pattern
        locked = make(".r.json.latscope-locked0locke")
        holder = open(locked)
        fcntl.flock(holder, fcntl.LOCK_EX)                                # a writer still at work
        self.addCleanup(holder.close)
        kept.append(locked)
        if is_root():
            kept.append(make(".r.json.latscope-nobody0nobod", owner=NOBODY))
        p = self.quick("--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        for f in stale:
            self.assertFalse(os.path.exists(f), f)
        for f in kept:
            self.assertTrue(os.path.exists(f), f)

    def assert_same_file_refused(self, args, cwd=None):
        p = self.lat(*args, cwd=cwd)
        self.assertEqual(p.returncode, 2, f"{args}: {p.stderr}")
        self.assertIn("the same file", p.stderr.splitlines()[0], args)
        self.assertEqual(len(p.stderr.strip().splitlines()), 2, "the error and the hint")
        self.assertEqual(p.stdout, "")
        return p

    def test_two_outputs_naming_one_file_are_a_usage_error_before_measuring(self):
        x = self.path("x")
        self.assert_same_file_refused(("cyclictest", "-l20", "-h", "10", "--histfile=" + x, "--json=" + x))
        self.assertFalse(os.path.exists(x))
        os.mkdir(self.path("d"))
        os.symlink(self.path("d"), self.path("via"))
        self.assert_same_file_refused(("cyclictest", "-l20", "-h", "10", "--histfile=" + self.path("d/y"),
                                       "--json=" + self.path("via/./y")))
        p = run("timer", "-a", str(CPU), "-l", "20", "-q", "--json", x, "--db", x, env=self.env)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("the same file", p.stderr)
        self.assertFalse(os.path.exists(x))
        self.assert_same_file_refused(("cyclictest", "-l20", "--json=runs.db"), cwd=self.tmp)   # --db, relative

    def test_no_output_may_replace_the_store_it_reads(self):
        for _ in range(2):
            self.assertEqual(self.quick().returncode, 0)
        before = open(self.db, "rb").read()
        link = self.path("hard.db")
        os.link(self.db, link)
        for args in (("merge", "1", "2", "--json", self.db), ("merge", "1", "2", "--no-store", "--json", link),
                     ("report", "1", "-o", self.db), ("export", "1", "-o", self.db),
                     ("compare", "1", "2", "--junit", link), ("timer", "-l", "20", "--json", self.db)):
            self.assert_same_file_refused(args)
        self.assertEqual(open(self.db, "rb").read(), before)
        self.assertEqual(self.stored_runs(), [1, 2])


class Identity(FilesCase):
    def three_runs(self):
        for c in "abc":
            p = self.quick("--label", "config=" + c)
            self.assertEqual(p.returncode, 0, p.stderr)

    def merge(self, *ids, extra=()):
        p = self.lat("merge", *[str(i) for i in ids], *extra)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip().splitlines()[-1]

    def test_two_merges_sharing_their_earliest_run_are_both_stored(self):
        self.three_runs()
        self.assertTrue(self.merge(1, 2).startswith("stored as run 4"))
        self.assertTrue(self.merge(1, 3).startswith("stored as run 5"))
        self.assertEqual(self.stored_runs(), [1, 2, 3, 4, 5])

    def test_the_same_merge_twice_is_already_stored_in_any_order(self):
        self.three_runs()
        self.assertTrue(self.merge(1, 2).startswith("stored as run 4"))
        self.assertIn("already stored as run 4", self.merge(1, 2))
        self.assertIn("already stored as run 4", self.merge(2, 1))
        p = self.lat("merge", "1", "2", "-q")
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""), "quiet, and no error")
        self.assertEqual(self.stored_runs(), [1, 2, 3, 4])

    def test_merges_of_merges_are_told_apart_by_their_members(self):
        self.three_runs()
        self.assertTrue(self.merge(1, 2).startswith("stored as run 4"))      # a+b
        self.assertTrue(self.merge(1, 3).startswith("stored as run 5"))      # a+c
        self.assertTrue(self.merge(4, 3).startswith("stored as run 6"))      # (a+b)+c
        self.assertTrue(self.merge(5, 2).startswith("stored as run 7"))      # (a+c)+b: the same runs, merged otherwise
        self.assertIn("already stored as run 6", self.merge(3, 4))

    def test_a_merged_result_keeps_its_identity_in_another_store(self):
        self.three_runs()
        ab, ac = self.path("ab.json"), self.path("ac.json")
        self.merge(1, 2, extra=("--json", ab))
        self.merge(1, 3, extra=("--json", ac))
        doc = load(ab)
        members = doc["params"]["merged_members"]
        self.assertEqual(len(members), 2)
        for m in members:
            self.assertRegex(m, r"^run:[0-9a-f]{64}$")
        other = self.path("other.db")
        p = self.lat("import", ab, ac, db=other)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.count("stored as run"), 2)
        p = self.lat("import", ab, db=other)
        self.assertIn("already stored as run 1", p.stdout)
        # Merging the same runs in the other store is the same merge.
        for i in (1, 2):
            shown = self.path("run%d.json" % i)
            with open(shown, "w") as f:
                f.write(self.lat("show", str(i), "--json").stdout)
        third = self.path("third.db")
        self.assertEqual(self.lat("import", self.path("run1.json"), self.path("run2.json"), ab, db=third).returncode, 0)
        p = self.lat("merge", "1", "2", "-q", db=third)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.stored_runs(third), [1, 2, 3], "the merge was already there, imported")

    def test_a_store_of_schema_version_2_is_migrated_and_keeps_its_runs(self):
        con = sqlite3.connect(self.db)
        with open(os.path.join(FIXTURES, "store-v2.sql")) as f:
            con.executescript(f.read())
        con.close()
        p = self.lat("runs")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len([l for l in p.stdout.splitlines()[1:] if l.strip()]), 3)
        unmigrated = self.path("m.json")                # read only: the identities are worked out
        p = self.lat("merge", "1", "3", "-q", "--no-store", "--json", unmigrated)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("merge", "1", "2", "-q")           # writing migrates; the new merge has its new identity
        self.assertEqual(p.returncode, 0, p.stderr)
        con = sqlite3.connect(self.db)
        self.assertEqual(con.execute("PRAGMA user_version").fetchone()[0], 6)
        ids = [r[0] for r in con.execute("SELECT identity FROM runs ORDER BY id")]
        con.close()
        self.assertEqual(load(unmigrated)["params"]["merged_members"], [ids[0], ids[2]],
                         "as the migration filled them in")
        self.assertEqual(len(ids), 4)
        self.assertEqual(len(set(ids)), 4, ids)
        self.assertTrue(all(ids), ids)
        self.assertIn("already stored as run 4", self.merge(2, 1))
        self.assertTrue(self.merge(1, 4).startswith("stored as run 5"))
        for rid in (1, 2, 3):
            self.assertEqual(self.lat("show", str(rid)).returncode, 0)


    def test_stored_results_that_list_the_same_members_all_survive_the_migration(self):
        con = sqlite3.connect(self.db)
        with open(os.path.join(FIXTURES, "store-v2.sql")) as f:
            con.executescript(f.read())
        member = "run:" + "0" * 64
        con.execute("UPDATE runs SET result = json_set(result, '$.params.merged_members', json_array(?))"
                    " WHERE id = 3", (member,))
        con.execute("INSERT INTO runs SELECT 4, stored_ns, start_time, start_ns + 1, host, probe, interrupted, count,"
                    " min_ns, mean_ns, p50_ns, p99_ns, max_ns, warm_max_ns, missed, result FROM runs WHERE id = 3")
        con.commit()
        con.close()
        self.assertEqual(self.quick().returncode, 0)    # writing migrates
        con = sqlite3.connect(self.db)
        ids = dict(con.execute("SELECT id, identity FROM runs"))
        con.close()
        self.assertEqual(len(ids), 5)
        self.assertEqual(len(set(ids.values())), 5, ids)
        self.assertTrue(ids[3].startswith("merge:"))
        self.assertTrue(ids[4].startswith("run:"), "the second keeps its host, probe and start")


class Since(FilesCase):
    def test_dates_past_the_last_storable_time_or_before_1970_are_usage_errors(self):
        self.assertEqual(self.quick().returncode, 0)
        for when in ("2300-01-01", "2262-04-12", "9999-12-31T23:59:59", "1969-12-31"):
            p = self.lat("runs", "--since", when)
            self.assertEqual(p.returncode, 2, f"{when}: {p.stdout}")
            self.assertIn("'--since'", p.stderr)
            self.assertIn(when, p.stderr)
            self.assertEqual(p.stdout, "")
        p = self.lat("runs", "--since", "2262-04-11")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotRegex(p.stdout, r"\n\s+1\s")
        p = self.lat("runs", "--since", "1970-01-01")
        self.assertRegex(p.stdout, r"\n\s+1\s")


class ReadOnly(FilesCase):
    def reads(self, runner, db):
        """Every command that only reads, as runner runs it."""
        out = os.path.join(self.tmp, "out")
        for args in (("runs",), ("show", "1"), ("show", "2", "--json"), ("compare", "1", "2"),
                     ("report", "1", "2", "-o", out + ".html"), ("export", "1", "2"),
                     ("export", "1", "--format", "json")):
            p = runner(*args, "--db", db)
            self.assertEqual(p.returncode, 0, f"{args}: {p.stderr}")
            self.assertNotIn("not an error", p.stderr)
            self.assertTrue(p.stdout, args)

    def make_store(self, directory):
        db = os.path.join(directory, "runs.db")
        for _ in range(2):
            p = self.quick(db=db)
            self.assertEqual(p.returncode, 0, p.stderr)
        return db

    def root_only_store(self):
        """A store anyone may read, in a directory only its owner may write."""
        d = self.path("rootonly")
        os.mkdir(d)
        db = self.make_store(d)
        os.chmod(d, 0o755)
        os.chmod(db, 0o644)
        return d, db

    @needs(**AS_NOBODY)
    def test_a_store_in_a_directory_nobody_can_write_is_read_by_nobody(self):
        d, db = self.root_only_store()
        self.reads(self.as_nobody, db)
        self.assertEqual(sorted(os.listdir(d)), ["runs.db"])
        p = self.as_nobody("rm", "1", "--db", db)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("read-only", p.stderr)
        self.assertNotIn("not an error", p.stderr)

    @needs(**AS_NOBODY)
    def test_a_store_with_a_write_ahead_log_in_use_is_read_by_nobody(self):
        _, db = self.root_only_store()
        con = sqlite3.connect(db)                        # a writer that has the log open
        con.execute("SELECT count(*) FROM runs").fetchone()
        self.addCleanup(con.close)
        self.assertTrue(os.path.exists(db + "-wal"))
        self.reads(self.as_nobody, db)

    @needs(**AS_NOBODY)
    def test_a_store_on_a_full_disk_is_read_and_nothing_is_left_beside_it(self):
        mnt = self.mount_tmpfs("full", size="1m")
        db = self.make_store(mnt)
        fill_disk(mnt)
        before = sorted(os.listdir(mnt))
        self.reads(lambda *a: run(*a, env=self.env), db)
        self.assertEqual(sorted(os.listdir(mnt)), before, "no -shm left")
        # Its owner's own store, read by its owner, who may write beside it.
        os.chown(mnt, NOBODY, NOBODY)
        os.chown(db, NOBODY, NOBODY)
        self.reads(self.as_nobody, db)
        self.assertEqual(sorted(os.listdir(mnt)), before)
        p = self.as_nobody("rm", "1", "--db", db)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("the disk is full", p.stderr)

    @needs(root=True)
    def test_a_store_on_a_read_only_mount_is_read(self):
        mnt = self.mount_tmpfs("ro", size="4m")
        db = self.make_store(mnt)
        subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
        self.reads(lambda *a: run(*a, env=self.env), db)
        p = self.quick(db=db)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("read-only", p.stderr)
        self.assertEqual(p.stdout, "", "refused before measuring")


if __name__ == "__main__":
    main()
