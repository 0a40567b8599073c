"""The README's output examples are what the built binary prints: same lines, same fields, same units."""
import os
import re

from harness import test_cpu, TempDirCase, main, needs, online_cpus, run

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
CPU = test_cpu()
NUMBER = re.compile(r"\d+(\.\d+)?")


def blocks():
    """The README's fenced blocks that are not commands: (first line, lines)."""
    with open(README) as f:
        text = f.read()
    out = []
    for m in re.finditer(r"^( *)```(\w*)\n(.*?)^\1```", text, re.S | re.M):
        if m.group(2) == "":
            lines = [l[len(m.group(1)):] for l in m.group(3).splitlines()]
            out.append(lines)
    return out


def block(starting):
    found = [b for b in blocks() if b and b[0].lstrip().startswith(starting)]
    assert len(found) == 1, f"one README block starts with {starting!r}"
    return found[0]


def shape(line):
    """The line's words with every number made '#': what a script relies on."""
    return [NUMBER.sub("#", w) for w in line.split()]


def under_the_table(lines):
    """The lines between the table's "threshold" line and "latscope's own cost"."""
    start = [i for i, l in enumerate(lines) if l.startswith("threshold ")][0]
    end = [i for i, l in enumerate(lines) if l.startswith("latscope's own cost")][0]
    return lines[start + 1:end]


def kind(line):
    """What a line under the table is: its first words, a CPU's name and figures left out."""
    words = re.sub(r"\bcpu\d+\b", "cpuN", line).split()
    if line.startswith(" ") and words[1:2] in (["largest:"], ["beside"]):
        return " ".join(words[:2])
    if line.startswith(" "):
        return "cpuN, a line of the tail or of the events left unexplained"
    return " ".join(words[:2])


class ReadmeExamples(TempDirCase):
    """The shape of what is printed, never its figures: no test here depends on this host's
    stalls, and the runs are as short as their output allows."""

    def assert_lines_have_their_shape_in(self, example, output, what):
        """Every example line has a line of the same shape in the output."""
        shapes = [shape(l) for l in output.splitlines()]
        for line in example:
            want = shape(line)
            # "-" stands for a figure a run did not have (a warm max of no window after the warm-up)
            ok = any(len(s) == len(want) and all(a == b or {a, b} <= {"#", "-"} or
                                                 (a == "-" and b.startswith("#")) or (b == "-" and a.startswith("#"))
                                                 for a, b in zip(s, want)) for s in shapes)
            self.assertTrue(ok, f"{what}: the README's line\n  {line}\nhas no line of its shape in\n{output}")

    def test_the_live_line_is_printed_as_the_readme_shows_it(self):
        example = [l for l in blocks() if any(" cpu1 " in x and " global " in x for x in l)]
        self.assertEqual(len(example), 1)
        p = run("timer", "-a", str(CPU), "-D", "0.6", "--window", "200ms", "--live", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        live = "\n".join(l.replace("cpu%d " % CPU, "cpu1 ") for l in p.stdout.splitlines() if " global " in l)
        self.assertTrue(live)
        self.assert_lines_have_their_shape_in(example[0], live, "live line")

    def test_the_summary_table_is_printed_as_the_readme_shows_it(self):
        example = block("latency (us) after")
        p = run("timer", "-D", "1.2", "--no-store")    # over a second: "after 1.199s", as the README's
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(example[1].split(), p.stdout.splitlines()[[l.startswith("cpu ") for l in
                                                                    p.stdout.splitlines()].index(True)].split())
        rows = [l for l in example if l[:1].isdigit() or l.startswith("all")]
        # the lines under the table hold units and counts that vary with the host: their kinds are tested below
        rest = [l for l in example if l not in rows and l not in under_the_table(example)]
        out = p.stdout.replace("cpu%d " % online_cpus()[0], "cpu0 ")
        self.assert_lines_have_their_shape_in(rest, out, "summary")
        for row in rows:
            kind = "all" if row.startswith("all") else "#"
            mine = "\n".join(l for l in out.splitlines() if (l.startswith("all") if kind == "all" else l[:1].isdigit()))
            if kind == "all" and len(online_cpus()) == 1:
                continue                # one CPU: no merged row
            self.assert_lines_have_their_shape_in([row], mine, "summary row")

    def test_every_kind_of_line_under_the_summary_table_is_in_the_readme(self):
        """Spikes, tail, largest samples, what happened beside them: each kind the README's block shows."""
        example = block("latency (us) after")
        p = run("timer", "-D", "1.2", "--threshold", "20us", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        printed = {kind(l) for l in under_the_table(p.stdout.splitlines())}
        shown = {kind(l) for l in under_the_table(example)}
        for k in ("spikes (runs", "tail (latency", "cpuN largest:", "cpuN beside"):
            self.assertIn(k, printed, p.stdout)
        self.assertEqual(printed - shown, set(), "kinds of lines the README's block leaves out")
        self.assertEqual(shown - printed - {"max per"}, set(), "kinds the README shows and a run does not print")

    def test_the_suite_table_is_printed_as_the_readme_shows_it(self):
        example = block("probe ")
        p = run("run", "-D", "5s", "-q", "--db", self.path("s.db"), timeout=90)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(example[0].split(), p.stdout.splitlines()[0].split())
        self.assert_lines_have_their_shape_in(example[1:], p.stdout, "suite table")

    def test_the_compare_table_is_printed_as_the_readme_shows_it(self):
        example = block("+--------+")
        db = self.path("c.db")
        for labels in (("config=0", "domain=NA", "sched=CFS"), ("config=3", "domain=1", "sched=Arinc653")):
            args = ["timer", "-a", str(CPU), "-l", "200", "-q", "--db", db]
            for l in labels:
                args += ["--label", l]
            p = run(*args)
            self.assertEqual(p.returncode, 0, p.stderr)
        p = run("compare", "1", "2", "--by", "config,domain,sched", "--columns", "min,max,mean", "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        table = p.stdout.splitlines()[:len(example)]
        self.assertEqual([l.count("+") for l in table], [l.count("+") for l in example], p.stdout)
        self.assertEqual(table[1].split(), example[1].split(), "the header")
        self.assert_lines_have_their_shape_in(example, "\n".join(table), "compare table")

    def test_the_claim_that_across_cpus_is_slower_says_where_it_does_not_hold(self):
        """test_wake's known answer is skipped where idle CPUs poll: the README's claim says so too."""
        with open(README) as f:
            paragraphs = re.split(r"\n\s*\n", f.read())
        claim = [re.sub(r"\s+", " ", p) for p in paragraphs if "across CPUs is the slower case" in re.sub(r"\s+", " ", p)]
        self.assertEqual(len(claim), 1)
        self.assertIn("Not where idle CPUs poll", claim[0])
        self.assertIn("haltpoll", claim[0])

    def test_the_error_message_is_printed_as_the_readme_quotes_it(self):
        with open(README) as f:
            text = f.read()
        quoted = re.search(r"`(latscope timer: option '-i': '123abc' [^`]*)`", text.replace("\n", " "))
        self.assertIsNotNone(quoted)
        p = run("timer", "-i", "123abc")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.splitlines()[0], re.sub(r"\s+", " ", quoted.group(1)))
        self.assertEqual(p.stderr.splitlines()[1], "Try 'latscope timer --help'.", "the hint the README names")
        self.assertEqual(len(p.stderr.splitlines()), 2)

    @needs(root=True, tracefs=True)
    def test_the_trace_breakdown_is_printed_as_the_readme_shows_it(self):
        example = block("where the time went")
        head = [l for l in example if "spike" not in l and "after the expiry" not in l and "steal in" not in l
                and "nothing able" not in l]
        p = run("timer", "-a", str(CPU), "-D", "1", "--trace", "-q", "--no-store")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout.replace("cpu%d " % CPU, "cpu1 ")
        self.assert_lines_have_their_shape_in(head, out, "trace breakdown")


class ReadmeOutputHasNoTrailingSpaces(TempDirCase):
    def test_tables_and_lines_end_without_spaces(self):
        db = self.path("t.db")
        outputs = []
        for args in (("timer", "-a", str(CPU), "-l", "300", "--window", "100ms", "--live", "--db", db),
                     ("timer", "-a", str(CPU), "-l", "200", "-q", "--db", db),
                     ("runs", "--db", db), ("show", "1", "--db", db), ("compare", "1", "2", "--db", db),
                     ("compare", "1", "2", "--format", "markdown", "--db", db), ("sys",)):
            p = run(*args)
            self.assertEqual(p.returncode, 0, (args, p.stderr))
            for line in p.stdout.splitlines():
                self.assertEqual(line, line.rstrip(), f"{args}: trailing space in {line!r}")


if __name__ == "__main__":
    main()
