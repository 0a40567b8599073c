"""The run store: every run kept, listed, shown, compared, exported, merged, and never damaged.

Its subject is what is stored, never how late a wakeup was: a run here is a few hundred samples
(-l), and no test depends on this host's stalls unless its docstring says how it judges them."""
import json
import os
import random
import signal
import sqlite3
import subprocess
import time

from harness import LATSCOPE, TempDirCase, check_consistent, fill_disk, load, main, needs, online_cpus, parse, run, test_cpu

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
CPU = test_cpu()


class StoreCase(TempDirCase):
    def setUp(self):
        super().setUp()
        self.db = self.path("runs.db")

    def lat(self, *args, timeout=120, env=None):
        return run(*args, "--db", self.db, timeout=timeout, env=env)

    def measure(self, *labels, duration=None, loops=100, extra=()):
        """A stored timer run; its id.  loops samples (at 1 ms, two windows of 50 ms), or a run of duration
        where the length is the subject (test_verdict's)."""
        args = ["timer", "-a", str(CPU), *(("-D", duration) if duration else ("-l", str(loops))), "-q",
                "--window", "200ms" if duration else "50ms"]
        for l in labels:
            args += ["--label", l]
        p = self.lat(*args, *extra)
        self.assertEqual(p.returncode, 0, p.stderr)
        ids = [int(r["id"]) for r in self.runs_json()]
        return max(ids)

    def set_user_version(self, version):
        """The store's version number set as another SQLite tool would."""
        con = sqlite3.connect(self.db)
        con.execute("PRAGMA user_version = %d" % version)
        con.commit()
        con.close()

    def runs_json(self):
        con = sqlite3.connect(self.db)
        try:
            return [{"id": r[0]} for r in con.execute("SELECT id FROM runs ORDER BY id")]
        finally:
            con.close()


class Keeping(StoreCase):
    def test_runs_are_stored_by_default_in_the_xdg_data_directory(self):
        env = dict(os.environ, XDG_DATA_HOME=self.path("xdg"))
        env.pop("LATSCOPE_DB", None)
        p = run("timer", "-a", str(CPU), "-l", "100", "--window", "50ms", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("stored as run 1 in " + self.path("xdg/latscope/runs.db"), p.stdout)
        p = run("runs", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"\n\s+1\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+timer\s")

    def test_latscope_db_chooses_the_store_and_no_store_skips_it(self):
        env = dict(os.environ, LATSCOPE_DB=self.db)
        p = run("timer", "-a", str(CPU), "-l", "20", "-q", "--no-store", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(self.db))
        p = run("timer", "-a", str(CPU), "-l", "20", "-q", env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(self.db))

    def test_show_json_of_a_stored_run_equals_the_runs_own_json(self):
        out = self.path("r.json")
        p = self.lat("timer", "-a", str(CPU), "-l", "400", "-q", "--window", "100ms", "--label", "config=x",
                     "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("show", "1", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        shown = parse(p.stdout)
        self.assertEqual(shown.pop("id"), 1)
        self.assertEqual(shown, load(out))

    def test_the_long_run_figures_of_the_leading_metric_are_columns_for_sql_users(self):
        """A relation no stall can turn: the columns equal the JSON's figures.  A 1 ns threshold, which
        every wakeup passes, makes the spike figures present whatever this host's stalls."""
        out = self.path("r.json")
        p = self.lat("timer", "-a", str(CPU), "-l", "200", "-q", "--threshold", "1ns", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        lr = load(out)["cpus"][0]["long_run"]
        con = sqlite3.connect(self.db)
        try:
            rows = con.execute("SELECT cpu, spikes, spikes_per_hour, mtbf_ns, worst_at_ns FROM cpu_stats "
                               "WHERE metric = 'latency'").fetchall()
        finally:
            con.close()
        mine = [r for r in rows if r[0] == str(CPU)]
        self.assertEqual(len(mine), 1)
        self.assertGreater(lr["spikes"], 0, "the threshold is low enough to be passed")
        self.assertIsNotNone(lr["mtbf_ns"])
        self.assertEqual(mine[0][1:], (lr["spikes"], lr["spikes_per_hour"], lr["mtbf_ns"], lr["worst_at_ns"]))

    def test_show_prints_the_summary_of_a_stored_run(self):
        self.measure("config=a")
        p = self.lat("show", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("run 1: timer", p.stdout)
        self.assertIn("labels: config=a", p.stdout)
        self.assertIn("p99.99", p.stdout)

    def test_runs_filters_by_probe_label_since_and_limit(self):
        for cfg in ("a", "b", "a"):
            self.measure("config=" + cfg)
        def ids(*args):
            p = self.lat("runs", *args)
            self.assertEqual(p.returncode, 0, p.stderr)
            return [int(l.split()[0]) for l in p.stdout.splitlines()[1:] if l.strip()[:1].isdigit()]
        self.assertEqual(ids(), [1, 2, 3])
        self.assertEqual(ids("--label", "config=a"), [1, 3])
        self.assertEqual(ids("--limit", "2"), [2, 3])
        self.assertEqual(ids("--probe", "timer", "--since", "1h"), [1, 2, 3])
        self.assertEqual(ids("--since", "2100-01-01"), [])
        p = self.lat("runs", "--since", "yesterday")
        self.assertEqual(p.returncode, 2)
        self.assertIn("'--since'", p.stderr)

    def test_runs_marks_a_partial_run_and_every_command_reads_it(self):
        self.measure("config=a")
        self.measure("config=b")
        # What a checkpoint stores (a run still measuring): its document says so, and so does its row.
        con = sqlite3.connect(self.db)
        con.execute("UPDATE runs SET partial = 1, result = json_set(result, '$.partial', json('true'), "
                    "'$.interrupted', json('true'), '$.stop_reason', 'checkpoint') WHERE id = 2")
        con.commit()
        con.close()
        p = self.lat("runs")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = {int(l.split()[0]): l for l in p.stdout.splitlines()[1:]}
        self.assertTrue(lines[2].endswith("(partial)"), lines[2])
        self.assertNotIn("partial", lines[1])
        p = self.lat("runs", "--partial")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([int(l.split()[0]) for l in p.stdout.splitlines()[1:]], [2])
        p = self.lat("show", "2", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIs(parse(p.stdout)["partial"], True)
        for args in (("show", "2"), ("compare", "1", "2"), ("report", "2", "-o", self.path("r.html")),
                     ("export", "2")):
            p = self.lat(*args)
            self.assertEqual(p.returncode, 0, p.stderr)

    def test_rm_removes_all_or_none(self):
        self.measure()
        self.measure()
        p = self.lat("rm", "1", "7")
        self.assertEqual(p.returncode, 1)
        self.assertIn("no run 7", p.stderr)
        self.assertEqual(len(self.runs_json()), 2)
        p = self.lat("rm", "1-2")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.runs_json(), [])

    def test_unknown_run_ids_are_errors_of_one_line_and_bad_ones_usage_errors(self):
        self.measure()
        for args in (["show", "9"], ["show", "9", "--json"], ["compare", "1", "9"], ["export", "9"],
                     ["merge", "1", "9"], ["report", "9", "-o", self.path("r.html")]):
            p = self.lat(*args)
            self.assertEqual(p.returncode, 1, args)
            self.assertIn("no run 9", p.stderr)
            self.assertEqual(len(p.stderr.splitlines()), 1, f"{args}: no hint: nothing was misused")
        p = self.lat("show", "abc")
        self.assertEqual(p.returncode, 2)
        self.assertIn("'abc' is not a run id", p.stderr)
        self.assertEqual(p.stderr.splitlines()[-1], "Try 'latscope show --help'.")

    @needs(root=True, programs=("runuser",))
    def test_nobody_without_a_home_has_no_runs_and_no_run_to_show(self):
        p = self.as_nobody("runs")
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "no runs\n", ""))
        p = self.as_nobody("show", "1")
        self.assertEqual((p.returncode, p.stdout), (1, ""), p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)

    def test_what_is_not_there_exits_1_without_a_hint_and_bad_options_2_with_one(self):
        """Issue 34, point 8: a run, store or file that is not there is no misuse of the command."""
        def status(*args):
            p = run(*args, timeout=30)
            hinted = p.stderr.splitlines()[-1:] == ["Try 'latscope %s --help'." % args[0]]
            return p.returncode, hinted, p
        never = self.path("never/runs.db")
        # a store not made yet holds no runs, as an empty one does
        code, hinted, p = status("runs", "--db", never)
        self.assertEqual((code, p.stdout, p.stderr), (0, "no runs\n", ""))
        code, hinted, p = status("runs", "--ids", "--db", never)
        self.assertEqual((code, p.stdout, p.stderr), (0, "", ""))
        self.assertFalse(os.path.exists(os.path.dirname(never)), "reading makes nothing")
        code, hinted, p = status("show", "1", "--db", never)
        self.assertEqual((code, hinted), (1, False), p.stderr)
        self.measure()
        self.measure()
        self.measure()
        self.assertEqual(self.lat("rm", "2").returncode, 0)
        for args in (["show", "999"], ["rm", "2", "3"], ["compare", "--label", "config=none"],
                     ["import", self.path("missing.json")]):
            code, hinted, p = status(*args, "--db", self.db)
            self.assertEqual((code, hinted), (1, False), f"{args}: {p.stderr}")
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertEqual([r["id"] for r in self.runs_json()], [1, 3], "rm removed all or none")
        for args in (["show", "1", "--frobnicate"], ["rm", "x"], ["runs", "--since", "yesterday"],
                     ["import", "--frobnicate", self.path("missing.json")]):
            code, hinted, p = status(*args, "--db", self.db)
            self.assertEqual((code, hinted), (2, True), f"{args}: {p.stderr}")


class Safety(StoreCase):
    def test_a_foreign_file_is_refused_and_left_untouched(self):
        with open(self.db, "wb") as f:
            f.write(b"this is somebody's notes file\n" * 100)
        before = open(self.db, "rb").read()
        p = self.lat("timer", "-a", str(CPU), "-l", "20", "-q")
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a latscope store", p.stderr)
        self.assertEqual(p.stderr.count("\n"), 2, "one line and the hint")
        self.assertEqual(open(self.db, "rb").read(), before)
        self.assertEqual(self.lat("runs").returncode, 2)
        self.assertEqual(open(self.db, "rb").read(), before)

    def test_another_programs_sqlite_database_is_refused_and_left_untouched(self):
        con = sqlite3.connect(self.db)
        con.execute("CREATE TABLE recipes (name TEXT)")
        con.commit()
        con.close()
        before = open(self.db, "rb").read()
        p = self.lat("runs")
        self.assertEqual(p.returncode, 2)
        self.assertIn("another program", p.stderr)
        p = self.lat("timer", "-a", str(CPU), "-l", "20", "-q")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(open(self.db, "rb").read(), before)
        self.assertFalse(os.path.exists(self.db + "-wal"))

    def test_a_damaged_store_is_reported_and_left_untouched(self):
        self.measure()
        self.measure()
        con = sqlite3.connect(self.db)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
        data = bytearray(open(self.db, "rb").read())
        for i in range(4096, len(data), 7):     # scribble over everything after the first page
            data[i] = (data[i] * 31 + 7) & 0xFF
        open(self.db, "wb").write(data)
        p = self.lat("runs")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("damaged", p.stderr)
        self.assertEqual(open(self.db, "rb").read(), bytes(data))

    def test_a_store_written_by_a_newer_latscope_is_refused(self):
        self.measure()
        self.set_user_version(99)
        p = self.lat("runs")
        self.assertEqual(p.returncode, 1)
        self.assertIn("newer latscope", p.stderr)

    def test_a_store_whose_version_number_was_reset_lists_its_runs_and_takes_new_ones(self):
        """A tool that sets user_version to 0 leaves a store that is neither new nor another program's:
        its tables say which version it is."""
        self.measure()
        self.measure()
        self.set_user_version(0)
        p = self.lat("runs")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"\n\s+2\s")
        out = self.path("more.json")
        p = run("timer", "-a", str(CPU), "-l", "20", "-q", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("import", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("stored as run 3", p.stdout)
        con = sqlite3.connect(self.db)
        self.assertEqual(con.execute("PRAGMA user_version").fetchone()[0], 6)
        con.close()

    def test_a_latscope_store_whose_tables_are_no_version_is_refused_in_one_line_naming_it(self):
        con = sqlite3.connect(self.db)
        con.execute("PRAGMA application_id = %d" % 0x4c617453)
        con.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY)")
        con.execute("CREATE TABLE windows (x)")
        con.commit()
        con.close()
        before = open(self.db, "rb").read()
        for args in (("runs",), ("rm", "1")):
            p = self.lat(*args)
            self.assertNotEqual(p.returncode, 0, p.stderr)
            self.assertIn(self.db, p.stderr)
            self.assertIn("no version's", p.stderr)
            self.assertNotIn("already exists", p.stderr)
        self.assertEqual(open(self.db, "rb").read(), before)

    def test_a_store_of_schema_version_1_is_migrated_and_keeps_its_runs(self):
        con = sqlite3.connect(self.db)
        with open(os.path.join(FIXTURES, "store-v1.sql")) as f:
            con.executescript(f.read())
        con.close()
        self.assertEqual(sqlite3.connect(self.db).execute("PRAGMA user_version").fetchone()[0], 1)
        p = self.lat("runs")
        self.assertEqual(p.returncode, 0, p.stderr)     # read-only: no migration needed to list
        self.measure()                                  # writing migrates
        con = sqlite3.connect(self.db)
        self.assertEqual(con.execute("PRAGMA user_version").fetchone()[0], 6)
        rows = con.execute("SELECT cpu, count FROM cpu_stats WHERE run_id = 1 ORDER BY cpu").fetchall()
        identity = con.execute("SELECT identity FROM runs WHERE id = 1").fetchone()[0]
        con.close()
        self.assertTrue(rows, "the old run's per-CPU figures were filled in from its JSON")
        self.assertRegex(identity, r"^run:[0-9a-f]{64}$", "and its identity")
        p = self.lat("show", "1", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        check_consistent(self, parse(p.stdout))

    def test_a_store_of_schema_version_3_is_migrated_and_every_run_reads_back_as_before(self):
        con = sqlite3.connect(self.db)
        with open(os.path.join(FIXTURES, "store-v3.sql")) as f:
            con.executescript(f.read())
        con.close()
        before = {}
        for i in (1, 2, 3):
            p = self.lat("show", str(i), "--json")      # read-only: no migration
            self.assertEqual(p.returncode, 0, p.stderr)
            before[i] = parse(p.stdout)
        self.measure()                                  # writing migrates
        con = sqlite3.connect(self.db)
        self.assertEqual(con.execute("PRAGMA user_version").fetchone()[0], 6)
        blocks = con.execute("SELECT run_id, block FROM windows WHERE run_id <= 3 ORDER BY run_id, block").fetchall()
        con.close()
        self.assertEqual(blocks, [(1, "0"), (1, "1"), (1, "all"), (1, "machine"), (2, "0"), (2, "all"),
                                  (3, "0"), (3, "1"), (3, "all")])
        for i in (1, 2, 3):
            p = self.lat("show", str(i), "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(parse(p.stdout), before[i])
        for args in (("show", "1"), ("compare", "1", "3"), ("report", "1", "-o", self.path("r.html")),
                     ("export", "3")):
            p = self.lat(*args)
            self.assertEqual(p.returncode, 0, p.stderr)

    def test_two_runs_ending_at_once_are_both_stored(self):
        # -D, not -l: the two runs end when their starts say, a few ms apart at most.
        procs = [subprocess.Popen([LATSCOPE, "timer", "-a", str(c), "-D", "300ms", "-q", "--db", self.db],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for c in (online_cpus()[0], CPU)]
        for p in procs:
            _, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, err)
        self.assertEqual(len(self.runs_json()), 2)

    def test_a_new_store_created_by_two_latscopes_at_once_is_never_taken_for_a_stranger(self):
        src = self.path("one.json")
        p = subprocess.run([LATSCOPE, "timer", "-a", str(CPU), "-l", "20", "-q", "--no-store", "--json", src],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        for i in range(40):
            db = self.path("race%d.db" % i)
            procs = [subprocess.Popen([LATSCOPE, "import", "--db", db, src], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True) for _ in range(2)]
            for q in procs:
                _, err = q.communicate(timeout=60)
                self.assertEqual(q.returncode, 0, f"attempt {i}: {err}")

    def test_kill_9_at_any_moment_never_damages_the_store(self):
        """No measurement: the kills land at random points of runs, the sleeps only spread them."""
        # Runs of 1-150 ms killed at random points from 0 to 200 ms: while the store is created, while
        # measuring, while the result is written (a few ms, whatever the run's length: the shorter the
        # runs, the more kills land there), or after the end.
        rnd = random.Random(7)
        complete = 0
        for i in range(40):
            proc = subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-D", "%dms" % rnd.randint(1, 150),
                                     "-q", "--db", self.db], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rnd.uniform(0.0, 0.2))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            complete += proc.returncode == 0
        self.measure()          # the store still takes a run: never a test of no run at all
        complete += 1
        con = sqlite3.connect(self.db)
        self.assertEqual(con.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        runs = con.execute("SELECT id FROM runs").fetchall()
        for (rid,) in runs:
            p = self.lat("show", str(rid), "--json")
            self.assertEqual(p.returncode, 0, p.stderr)
            check_consistent(self, parse(p.stdout))
            cpus = con.execute("SELECT count(*) FROM cpu_stats WHERE run_id = ?", (rid,)).fetchone()[0]
            self.assertEqual(cpus, 2, "a run is stored whole: its per-CPU rows too")
            blocks = con.execute("SELECT count(*) FROM windows WHERE run_id = ?", (rid,)).fetchone()[0]
            self.assertGreaterEqual(blocks, 2, "and its windows: the CPU's and all's")
        con.close()
        self.assertGreaterEqual(len(runs), complete, "every run that finished was stored")
        p = self.lat("runs")
        self.assertEqual(p.returncode, 0, p.stderr)

    @needs(root=True, programs=("runuser",))
    def test_a_store_the_user_cannot_write_can_be_listed_but_not_written(self):
        self.measure()
        os.chmod(self.db, 0o644)         # root's store, in a directory anyone may use

        def as_nobody(*args):
            return self.as_nobody(*args, "--db", self.db)
        p = as_nobody("runs")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"\n\s+1\s")
        before = open(self.db, "rb").read()
        p = as_nobody("rm", "1")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("read-only", p.stderr)
        self.assertEqual(open(self.db, "rb").read(), before)


@needs(root=True)
class FullDisk(StoreCase):
    def setUp(self):
        super().setUp()
        self.mnt = self.path("tiny")
        os.mkdir(self.mnt)
        m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", self.mnt], capture_output=True,
                           text=True)
        if m.returncode != 0:       # root without the right to mount, as in some containers
            self.skipTest("this machine cannot mount a tmpfs: " + (m.stderr.strip() or "mount failed"))
        self.db = os.path.join(self.mnt, "runs.db")

    def tearDown(self):
        subprocess.run(["umount", self.mnt])
        super().tearDown()

    def test_a_full_disk_is_a_clear_error_and_the_store_keeps_its_runs(self):
        self.measure()
        filler = fill_disk(self.mnt)
        p = self.lat("timer", "-a", str(CPU), "-l", "20", "-q")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("the disk is full", p.stderr)
        os.remove(filler)
        con = sqlite3.connect(self.db)
        self.assertEqual(con.execute("PRAGMA integrity_check").fetchone()[0], "ok")
        self.assertEqual(con.execute("SELECT count(*) FROM runs").fetchone()[0], 1)
        con.close()


class ImportExportMerge(StoreCase):
    def test_import_stores_a_result_and_skips_it_the_second_time(self):
        out = self.path("elsewhere.json")
        p = run("timer", "-a", str(CPU), "-l", "100", "-q", "--no-store", "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("import", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("stored as run 1", p.stdout)
        p = self.lat("import", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("already stored as run 1", p.stdout)
        shown = parse(self.lat("show", "1", "--json").stdout)
        shown.pop("id")
        self.assertEqual(shown, load(out))

    def test_import_of_bad_files_stores_nothing(self):
        good = self.path("good.json")
        run("timer", "-a", str(CPU), "-l", "100", "-q", "--no-store", "--json", good)
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            json.dump({"schema": "something.else"}, f)
        newer = self.path("newer.json")
        doc = load(good)
        doc["schema_version"] = 99
        with open(newer, "w") as f:
            json.dump(doc, f)
        broken = self.path("broken.json")
        doc = load(good)
        lat = doc["cpus"][0]["metrics"]["latency"]
        lat["histogram"]["buckets"][0][2] += 1
        broken_msg = "add up to %d, not the count %d" % (lat["count"] + 1, lat["count"])
        with open(broken, "w") as f:
            json.dump(doc, f)
        for path, needle, code in ((bad, "not a latscope result", 2), (newer, "newer", 2), (broken, broken_msg, 2),
                                   (self.path("missing.json"), "No such file", 1)):
            p = self.lat("import", good, path)
            self.assertEqual(p.returncode, code, path)
            self.assertIn(needle, p.stderr)
            self.assertFalse(os.path.exists(self.db) and self.runs_json(), "nothing was stored")

    def test_export_openmetrics_is_well_formed_and_counts_add_up(self):
        rid = self.measure("config=guest")
        out = self.path("latscope.prom")
        p = self.lat("export", str(rid), "--format", "openmetrics", "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        text = open(out).read()
        self.assertTrue(text.endswith("# EOF\n"))
        inf = [l for l in text.splitlines() if 'le="+Inf"' in l and 'cpu="all"' in l]
        count = [l for l in text.splitlines() if l.startswith("latscope_latency_seconds_count") and 'cpu="all"' in l]
        self.assertEqual(len(inf), 1)
        self.assertEqual(inf[0].split()[-1], count[0].split()[-1])
        self.assertIn('label_config="guest"', text)

    def test_merge_of_wake_runs_with_and_without_pingpong_says_their_metrics_differ(self):
        for extra in ((), ("--pingpong",)):
            p = self.lat("wake", "--cpus", "%d,%d" % (CPU, CPU), "-i", "200us", "-l", "100", "-q", *extra)
            self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("merge", "1", "2")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("latscope merge: runs 1 and 2 measure different metrics", p.stderr)
        self.assertNotIn("different probes", p.stderr, "both are wake runs")

    def test_merge_adds_runs_up_exactly(self):
        a = self.measure("config=m")
        b = self.measure("config=m")
        out = self.path("merged.json")
        p = self.lat("merge", str(a), str(b), "--json", out, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        merged = load(out)
        check_consistent(self, merged)
        ra = parse(self.lat("show", str(a), "--json").stdout)
        rb = parse(self.lat("show", str(b), "--json").stdout)
        m, la, lb = (d["all"]["metrics"]["latency"] for d in (merged, ra, rb))
        self.assertEqual(m["count"], la["count"] + lb["count"])
        self.assertEqual(m["max_ns"], max(la["max_ns"], lb["max_ns"]))
        self.assertEqual(m["min_ns"], min(la["min_ns"], lb["min_ns"]))
        self.assertEqual(merged["labels"], {"config": "m"})
        self.assertEqual(merged["params"]["merged_from"], [a, b])
        self.assertEqual(len(self.runs_json()), 3, "the merge is stored as a run of its own")


class Compare(StoreCase):
    def test_compare_by_labels_rebuilds_a_table_like_the_hand_made_ones(self):
        for cfg, dom, sched in (("0", "NA", "CFS"), ("1", "0", "Arinc653"), ("3", "0", "Credit"), ("3", "1", "Arinc653")):
            self.measure("config=" + cfg, "domain=" + dom, "sched=" + sched)
        self.measure("config=0", "domain=NA", "sched=CFS")   # a second run of a configuration
        p = self.lat("compare", "--label", "config=0", "--probe", "timer")
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("compare", "1-5", "--by", "config,domain,sched", "--columns", "min,max,mean,runs")
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertRegex(lines[0], r"^\+-+\+")
        self.assertRegex(lines[1], r"^\| config \| domain \| sched +\| min \(us\) \| max \(us\) \| mean \(us\) \| runs +\|$")
        body = [[c.strip() for c in l.strip("|").split("|")] for l in lines[3:7]]
        self.assertEqual([r[:3] for r in body], [["0", "NA", "CFS"], ["1", "0", "Arinc653"], ["3", "0", "Credit"],
                                                 ["3", "1", "Arinc653"]])
        self.assertEqual(body[0][6], "1,5", "runs of one configuration form one row")
        for r in body:
            lo, hi, mean = (float(x) for x in r[3:6])
            self.assertLessEqual(lo, mean)
            self.assertLessEqual(mean, hi)
        p = self.lat("compare", "1-5", "--by", "config", "--format", "markdown")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout.splitlines()[1], r"^\| -+ \| -+: \|")
        p = self.lat("compare", "1-5", "--by", "config", "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines()[0], "config,min (ns),mean (ns),p99 (ns),max (ns),warm_max (ns),missed")

    def test_baseline_shows_each_figures_change(self):
        a = self.measure("config=a")
        b = self.measure("config=b")
        p = self.lat("compare", str(a), str(b), "--baseline", str(a), "--columns", "mean,p99")
        self.assertEqual(p.returncode, 0, p.stderr)
        row_b = [l for l in p.stdout.splitlines() if l.startswith("| %d " % b)][0]
        self.assertRegex(row_b, r"\([+-]\d+%\)")

    def test_bad_compare_input_is_a_usage_error(self):
        self.measure()
        for args, needle in ((["compare"], "give run ids"), (["compare", "--label", "nope"], "not KEY=VALUE"),
                             (["compare", "1", "--fail-if", "p99>"], "'--fail-if'"),
                             (["compare", "1", "--fail-if", "p98>5us"], "unknown"),
                             (["compare", "1", "--columns", "bogus"], "'bogus'"),
                             (["compare", "1", "--by", ""], "'--by'"),
                             (["compare", "1", "--baseline", "7"], "not among")):
            p = self.lat(*args)
            self.assertEqual(p.returncode, 2, f"{args}: {p.stderr}")
            self.assertIn(needle, p.stderr, args)

    def test_regression_gate_exits_3_and_writes_junit(self):
        a = self.measure("config=a")
        b = self.measure("config=b")
        junit = self.path("gate.xml")
        p = self.lat("compare", str(a), str(b), "--fail-if", "max>1ns", "--fail-if", "missed>1000000",
                     "--junit", junit)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("FAIL", p.stderr)
        xml = open(junit).read()
        self.assertIn('failures="2"', xml)
        self.assertIn('tests="4"', xml)
        p = self.lat("compare", str(a), str(b), "--fail-if", "max>1h", "--fail-if", "p99>+100000%")
        self.assertEqual(p.returncode, 0, p.stderr)


if __name__ == "__main__":
    main()
