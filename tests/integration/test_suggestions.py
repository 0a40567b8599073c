"""Every command line latscope prints as a suggestion works as printed: each is read from real
output, its placeholders filled, and run (measuring commands briefly, on one CPU, into a scratch
store).  Once, `latscope oslat -T` told the user to type a list of actions --on-threshold did not
take."""
import json
import re
import shlex

from harness import test_cpu, TempDirCase, main, needs, online_cpus, run

CPUS = online_cpus()
CPU = test_cpu()
MEASURING = ("timer", "noise", "wake", "io", "clock")
COMMANDS = MEASURING + ("run", "runs", "show", "compare", "tune", "report", "import")
PLACEHOLDER = re.compile(r"[A-Z][A-Z_]*|\d+")


def suggestions(text):
    """The command lines in text ("... latscope CMD --opt VALUE ARG ..."), as argument lists: the
    command, then options each with the word after it, and placeholders or numbers; up to the first
    other word, or a word that ends in ), ;, . or a line's end."""
    found = []
    for m in re.finditer(r"\blatscope ([a-z]+)(?=[\s)]|$)", text):
        if m.group(1) not in COMMANDS:
            continue
        args, value = [m.group(1)], False
        for tok in text[m.end():].split("\n")[0].split():
            core = tok.rstrip(").;,:")
            if core.startswith("-"):
                args.append(core)
                value = True
            elif value or PLACEHOLDER.fullmatch(core):
                args.append(core)
                value = False
            else:
                break
            if core != tok:
                break
        found.append(args)
    return found


class Suggestions(TempDirCase):
    def run_suggested(self, args, fill=None, ok=(0,)):
        """Run a suggested command line with its placeholders filled from fill; a measuring one briefly,
        on one CPU, into the scratch store; the finished process."""
        fill = fill or {}
        if fill:
            args = [re.sub(r"\b(%s)\b" % "|".join(fill), lambda m: fill[m.group(1)], a) for a in args]
        extra = ["--db", self.path("runs.db")]
        if args[0] in MEASURING:
            extra += ["-D", "300ms", "-a", str(CPU), "-q"]
        p = run(*args, *extra)
        self.assertIn(p.returncode, ok, f"latscope {shlex.join(args)}: {p.stderr}")
        return p

    @needs(root=True, tracefs=True)
    def test_oslat_trace_threshold_suggests_a_noise_command_that_runs(self):
        p = run("oslat", "-T", "20")
        self.assertEqual(p.returncode, 2, p.stderr)
        found = suggestions(p.stderr)
        self.assertEqual([a[:1] for a in found], [["noise"]], p.stderr)
        self.assertIn("--on-threshold", found[0])
        # stopped by its trigger (3) or done before any sample was above it (0)
        q = self.run_suggested(found[0], {"US": "50"}, ok=(0, 3))
        doc = json.loads(run("show", "1", "--json", "--db", self.path("runs.db")).stdout)
        self.assertEqual(doc["on_threshold"]["actions"], ["stop", "trace"], q.stderr)

    def test_the_suites_closing_line_suggests_commands_that_find_its_runs(self):
        db = self.path("runs.db")
        p = run("run", "-D", "5", "-a", str(CPU), "-q", "--db", db, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        last = p.stdout.strip().splitlines()[-1]
        first = re.search(r"stored as runs? (\d+)", last).group(1)
        found = suggestions(last)
        self.assertEqual([a[0] for a in found], ["runs", "show"], last)
        listed = self.run_suggested(found[0])
        self.assertEqual(len(listed.stdout.strip().splitlines()) - 1, 3, listed.stdout)
        shown = self.run_suggested(found[1], {"ID": first})
        self.assertIn("timer", shown.stdout)

    def test_the_advice_of_sys_names_commands_that_run(self):
        """Every command a finding names (a fix, or where to look), run: tune with one short round."""
        p = run("sys", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        texts = [f[k] for f in json.loads(p.stdout)["findings"] for k in ("why", "fix")]
        found = [a for t in texts for a in suggestions(t)]
        self.assertTrue(found, "this machine's findings name no command: the test judges nothing")
        for args in found:
            with self.subTest(args=args):
                if args[0] == "tune":
                    self.run_suggested(args + ["-D", "1", "--rounds", "1", "-q", "-a", str(CPU)])
                else:
                    self.run_suggested(args)

    @needs(root=True)
    def test_the_rt_throttling_note_of_noise_suggests_options_that_avoid_it(self):
        p = run("noise", "-p", "1", "-D", "300ms", "-a", str(CPU), "-q", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        m = re.search(r"(--burst \S+ --rest \S+) avoids them", p.stderr)
        if not m:
            self.skipTest("this machine: RT throttling is off, so noise notes nothing")
        q = self.run_suggested(["noise", "-p", "1", *m.group(1).split()])
        self.assertNotIn("RT throttling", q.stderr)

    def test_the_tune_help_suggests_a_compare_that_runs(self):
        text = run("tune", "--help").stdout.replace("\n", " ")
        found = [a for a in suggestions(text) if a[0] == "compare" and len(a) > 1]
        self.assertEqual(len(found), 1, text)
        db = self.path("runs.db")
        for state in ("a", "b"):
            p = run("timer", "-a", str(CPU), "-l", "100", "-q", "--db", db, "--label", "tune=T",
                    "--label", "fix=f", "--label", "state=" + state)
            self.assertEqual(p.returncode, 0, p.stderr)
        self.run_suggested(found[0], {"START": "T"})

    def test_a_front_end_names_the_run_it_stored_by_a_command_that_shows_it(self):
        p = run("oslat", "-D", "1", "-c", str(CPU), "-q", "--verbose", "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        found = suggestions(p.stderr)
        self.assertEqual([a[0] for a in found], ["show"], p.stderr)
        self.assertIn("noise", self.run_suggested(found[0]).stdout)

    def test_every_help_a_command_points_to_exists(self):
        for cmd in ("run", "host", "cyclictest", "oslat", "tune"):
            text = run(cmd, "--help").stdout
            for args in suggestions(text):
                if args[1:] == ["--help"]:
                    with self.subTest(args=args):
                        self.assertEqual(run(*args).returncode, 0, args)


if __name__ == "__main__":
    main()
