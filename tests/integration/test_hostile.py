"""Text from an imported run reaches the terminal as harmless text: no escape sequence acts, no line is forged."""
import json
import os
import pty
import re
import subprocess
import tty
import unittest

from harness import LATSCOPE, TempDirCase, load, main, online_cpus, read_terminal, run

CPU = online_cpus()[-1]
ESC = "\x1b]0;owned\x07\x1b[2J"
FORGED = "\n    99  2026-01-01 00:00:00  timer  forged"
# What a terminal acts on: C0 controls but newline, DEL, and C1 controls (U+0080-U+009F).
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")
# The same but tab, which lays out a document and acts on no terminal.
RAW_IN_DOCUMENT = re.compile("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f\u202a-\u202e\u2066-\u2069]")


def on_terminal(*args):
    """latscope with its standard output on a terminal (a pty, raw: no CR added): the exit status, what
    the terminal got, and the standard error."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    proc = subprocess.Popen([LATSCOPE, *args], stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    got = read_terminal(master, timeout=60)
    err = proc.stderr.read()
    proc.wait(timeout=60)
    os.close(master)
    return proc.returncode, got, err.decode("utf-8", "replace")


class HostileText(TempDirCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="latscope-hostile-")
        cls.base = os.path.join(cls.dir, "base.json")
        p = run("timer", "-a", str(CPU), "-l", "400", "-q", "--window", "100ms", "--no-store", "--json", cls.base)
        assert p.returncode == 0, p.stderr

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, True)

    def hostile(self, name, edit):
        doc = load(self.base)
        edit(doc)
        path = self.path(name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def lat(self, *args):
        return run(*args, "--db", self.path("runs.db"))

    def assert_harmless(self, p, lines_at_most=None):
        for stream, text in (("stdout", p.stdout), ("stderr", p.stderr)):
            m = RAW_CONTROL.search(text)
            self.assertIsNone(m, f"{stream} holds a raw control character {m and repr(m.group())}: {text!r}")
        self.assertNotIn("\n    99  2026-01-01", p.stdout, "no line is forged")

    def import_all(self):
        def system(doc):
            for key in ("hostname", "kernel_release", "kernel_version", "preempt", "clocksource", "cpu_model",
                        "hypervisor"):
                doc["system"][key] = "x" + ESC + FORGED
        def notes(doc):
            doc["notes"] = ["note" + ESC + FORGED, "\u009b31mred\u202eevil"]
            doc["command_line"] = ["latscope", "timer" + ESC, "--label" + FORGED]
            doc["stop_reason"] = "x\x1b[31m"
        a = self.hostile("a.json", system)
        b = self.hostile("b.json", notes)
        p = self.lat("import", a, b)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def test_runs_shows_hostile_host_names_escaped(self):
        self.import_all()
        p = self.lat("runs")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assert_harmless(p)
        self.assertIn("\\x1b", p.stdout)
        self.assertEqual(len(p.stdout.splitlines()), 3, "a header and one line per run")

    def test_show_prints_hostile_system_notes_and_command_line_escaped(self):
        self.import_all()
        for rid in ("1", "2"):
            p = self.lat("show", rid)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assert_harmless(p)
        p = self.lat("show", "2")
        self.assertIn("note: note\\x1b]0;owned\\x07", p.stdout)
        self.assertIn("\\u009b31mred\\u202eevil", p.stdout)
        self.assertIn("command: latscope 'timer\\x1b", p.stdout)     # one argument, quoted as a shell would

    def test_compare_tables_in_every_format_are_harmless(self):
        self.import_all()
        for fmt in ("text", "markdown", "csv"):
            with self.subTest(fmt=fmt):
                p = self.lat("compare", "1", "2", "--format", fmt)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assert_harmless(p)

    def test_an_import_refusal_quotes_the_file_escaped(self):
        def bad_label(doc):
            doc["labels"]["k" + ESC] = "v"
        def bad_irq(doc):
            doc["cpus"][0]["interrupts"] = {"x" * 60 + ESC: 1}
        for name, edit in (("label.json", bad_label), ("irq.json", bad_irq)):
            p = self.lat("import", self.hostile(name, edit))
            self.assertNotEqual(p.returncode, 0)
            self.assert_harmless(p)
            self.assertEqual(len(p.stderr.splitlines()), 2, p.stderr)     # the reason, then the hint

    def test_every_export_format_and_show_json_reach_a_terminal_escaped(self):
        self.import_all()
        cases = [("export", "1", "--format", fmt) for fmt in ("openmetrics", "json", "gnuplot")]
        cases += [("export", "2", "--format", fmt) for fmt in ("openmetrics", "json", "gnuplot")]
        cases += [("show", rid, "--json") for rid in ("1", "2")]
        for args in cases:
            with self.subTest(args=args):
                rc, text, err = on_terminal(*args, "--db", self.path("runs.db"))
                self.assertEqual(rc, 0, err)
                m = RAW_IN_DOCUMENT.search(text)
                self.assertIsNone(m, f"the terminal got a raw {m and repr(m.group())}")
                if args[0] == "show" or "json" in args:
                    json.loads(text)        # escaped, and still JSON
        rc, text, _ = on_terminal("show", "2", "--json", "--db", self.path("runs.db"))
        self.assertIn("\\u202eevil", text)
        self.assertEqual(json.loads(text)["notes"][1], "\u009b31mred\u202eevil", "the same text, escaped")
        rc, text, _ = on_terminal("export", "1", "--db", self.path("runs.db"))
        self.assertIn('host="x\\x1b]0;owned', text)

    def test_files_and_pipes_get_each_formats_own_text(self):
        """OpenMetrics escapes only backslash, quote and newline in a label value; JSON every C0 control
        as \\u00NN (jansson), the rest of Unicode as it is.  A terminal is the reader that needs more."""
        self.import_all()
        p = self.lat("export", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('host="x\x1b]0;owned\x07\x1b[2J\\n', p.stdout)
        for args in (("export", "2", "--format", "json"), ("show", "2", "--json")):
            p = self.lat(*args)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIsNone(re.search("[\x00-\x09\x0b-\x1f]", p.stdout), "JSON escapes every C0 control")
            self.assertIn("\\u001b]0;owned", p.stdout.lower())
            self.assertIn("\u202eevil", p.stdout)

    def test_markdown_keeps_a_pipe_in_a_label_inside_its_cell(self):
        def label(doc):
            doc["labels"]["cfg"] = "a|b"
        def later(doc):
            label(doc)
            doc["start_realtime_ns"] += 10**9
        p = self.lat("import", self.hostile("a.json", label), self.hostile("b.json", later))
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.lat("compare", "1", "2", "--format", "markdown", "--columns", "cfg,max")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [l for l in p.stdout.splitlines() if l.startswith("|")]
        self.assertEqual(len(rows), 4, p.stdout)      # header, rule, two runs
        cells = [len(re.findall(r"(?<!\\)\|", l)) for l in rows]
        self.assertEqual(cells, [cells[0]] * 4, p.stdout)
        self.assertIn("a\\|b", p.stdout)


if __name__ == "__main__":
    main()
