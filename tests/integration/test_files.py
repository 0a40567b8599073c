"""The files latscope writes and the store it keeps, on a machine where it runs as root beside other users:
no symbolic link followed, private modes, no run lost, no temporary file left, one identity per merge."""
import fcntl
import glob
import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import time
import unittest

from harness import LATSCOPE, TempDirCase, is_root, load, main, online_cpus, run

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures")
CPU = online_cpus()[-1]
NOBODY = 65534


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def can_become_nobody():
    return is_root() and shutil.which("runuser") is not None


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


if __name__ == "__main__":
    main()
