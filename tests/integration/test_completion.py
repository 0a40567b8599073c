"""Shell completion: `latscope completion bash`, driven through bash-completion as bash drives it.

Each case sources bash-completion, has it load the script latscope writes as it loads an installed
one (by the command's name, from its completions directory), sets COMP_WORDS, COMP_CWORD, COMP_LINE
and COMP_POINT as bash sets them on TAB, calls the function the script registers for latscope and
reads COMPREPLY.  The store cases make two short timer runs (SCHED_OTHER, 50 samples):
what they measured is never read."""
import os
import re
import shlex
import sqlite3
import subprocess
import unittest

from harness import LATSCOPE, TempDirCase, main, online_cpus, run

BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"

# An option line of a --help: its option column holds options, each maybe with its value one space
# after it ("-a, --cpus CPUS", "--policy=NAME", "-t, --trace[=FILE]", "-q  --quiet", "--no-irq,
# --no-thread"), and ends at two spaces before what the option does.  Prose that names an option
# ("--trigger US --on-threshold stop,trace), -W/--bucket-width") has words that are neither.
TOKEN = re.compile(r"(\s*)(\S+)")
OPTION_WORD = re.compile(r"^(-[A-Za-z0-9]|--[A-Za-z0-9][\w-]*)([=\[]\S*)?[,.]?$")
VALUE_WORD = re.compile(r"^[^-()][^()]*$")


def option_line(line):
    """The long options an option line names; None for another line."""
    if not line.lstrip().startswith("-"):
        return None
    found, last = set(), None       # last: "letter" (a bare -x), "option", "value"
    for gap, word in TOKEN.findall(line.strip()):
        if len(gap) >= 2 and last != "letter":
            break                   # what the option does
        o = OPTION_WORD.match(word)
        if o:
            last = "letter" if word == o.group(1) and len(word) == 2 else "option"
            if o.group(1).startswith("--"):
                found.add(o.group(1))
        elif last in ("letter", "option") and len(gap) == 1 and VALUE_WORD.match(word):
            last = "value"
        else:
            return None
    return found


def help_long_options(text):
    """The long options the option lines of a --help name."""
    names = set()
    for line in text.splitlines():
        names |= option_line(line) or set()
    return names


class Completion(TempDirCase):
    def setUp(self):
        super().setUp()
        if not os.path.exists(BASH_COMPLETION):
            self.fail(f"{BASH_COMPLETION} is missing: the package bash-completion (scripts/install-deps installs it)")
        p = run("completion", "bash")
        self.assertEqual(p.returncode, 0, p.stderr)
        # where bash-completion looks first, named as the build installs it
        self.user_dir = self.path("bash-completion")
        os.makedirs(os.path.join(self.user_dir, "completions"))
        with open(os.path.join(self.user_dir, "completions", "latscope"), "w") as f:
            f.write(p.stdout)

    def complete(self, *words, line=None, env=None):
        """What bash offers for the last word (words[0] is latscope, as typed: its full path here).
        line: the command line, when bash splits it into more words than spaces do ("--opt=v")."""
        words = [LATSCOPE, *words]
        line = " ".join(words) if line is None else LATSCOPE + " " + line
        q = shlex.quote
        script = "\n".join([
            f"source {q(BASH_COMPLETION)} || exit 3",
            # loaded inside a function, as on a first TAB: its tables must still be global
            f"BASH_COMPLETION_USER_DIR={q(self.user_dir)} __load_completion latscope || exit 4",
            # the function `complete -p` says the script registered for latscope
            "spec=$(complete -p latscope) || exit 4",
            "[[ $spec =~ -F\\ ([^ ]+) ]] || exit 4",
            f"COMP_WORDS=({' '.join(q(w) for w in words)})",
            f"COMP_CWORD={len(words) - 1}",
            f"COMP_LINE={q(line)}",
            "COMP_POINT=${#COMP_LINE}",
            "COMPREPLY=()",
            f"\"${{BASH_REMATCH[1]}}\" {q(words[0])} {q(words[-1])} {q(words[-2])}",
            "printf '%s\\n' \"${COMPREPLY[@]}\"",
        ])
        p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                           timeout=60, env=env, cwd=self.tmp)
        self.assertEqual(p.returncode, 0, f"{words}: {p.stderr}")
        self.assertEqual(p.stderr, "", words)
        return sorted(w for w in p.stdout.split("\n") if w)

    def test_a_command_is_completed_from_its_first_letters(self):
        self.assertEqual(self.complete("t"), ["timer", "tune"])
        self.assertEqual(self.complete("comp"), ["compare", "completion"])

    def test_an_option_is_completed_from_its_first_letters(self):
        self.assertEqual(self.complete("timer", "--pol"), ["--policy"])
        self.assertEqual(self.complete("compare", "--fo"), ["--format"])

    def test_an_option_with_a_list_of_values_offers_the_list_its_parser_takes(self):
        self.assertEqual(self.complete("timer", "--policy", ""), sorted(["fifo", "rr", "other", "deadline"]))
        self.assertEqual(self.complete("timer", "--policy", "=", "f", line="timer --policy=f"), ["fifo"])
        self.assertEqual(self.complete("timer", "--mode", ""), sorted(["nanosleep", "timerfd", "posix"]))
        self.assertEqual(self.complete("export", "--format", ""), sorted(["openmetrics", "json", "gnuplot"]))
        self.assertEqual(self.complete("runs", "--probe", ""), sorted(["timer", "noise", "wake", "io", "clock", "attach"]))
        self.assertEqual(self.complete("compare", "--columns", "p99,ma"), ["p99,max"])
        self.assertEqual(self.complete("completion", ""), ["bash"])
        self.assertEqual(self.complete("rtla", ""), ["timerlat"])
        self.assertEqual(self.complete("rtla", "timerlat", ""), ["hist", "top"])

    def test_a_cpu_list_offers_the_online_cpus(self):
        cpus = sorted(str(c) for c in online_cpus())
        self.assertEqual(self.complete("timer", "-a", ""), cpus)
        self.assertEqual(self.complete("noise", "--cpus", ""), cpus)
        self.assertEqual(self.complete("cyclictest", "-a", ""), cpus)
        first = str(online_cpus()[0])
        self.assertEqual(self.complete("timer", "-a", first + ","),
                         sorted(first + "," + c for c in cpus if c != first))

    def test_a_run_id_is_offered_from_the_store_the_command_line_or_latscope_db_names(self):
        db = self.path("runs.db")
        for _ in range(2):
            p = run("timer", "-a", str(online_cpus()[0]), "-l", "50", "--window", "50ms", "--policy", "other",
                    "-p", "0", "-q", "--db", db)
            self.assertEqual(p.returncode, 0, p.stderr)
        p = run("runs", "--ids", "--db", db)
        self.assertEqual((p.returncode, p.stdout), (0, "1\n2\n"), p.stderr)
        self.assertEqual(self.complete("show", "--db", db, ""), ["1", "2"])
        self.assertEqual(self.complete("compare", "--db", "=", db, "1", "", line=f"compare --db={db} 1 "),
                         ["1", "2"])
        self.assertEqual(self.complete("show", "", env=dict(os.environ, LATSCOPE_DB=db)), ["1", "2"])
        self.assertEqual(self.complete("compare", "--baseline", "", env=dict(os.environ, LATSCOPE_DB=db)),
                         ["1", "2"])
        # show takes one run: after it, its options
        self.assertIn("--json", self.complete("show", "--db", db, "1", ""))
        # a store that is not there: nothing, and nothing said
        self.assertEqual(self.complete("show", "--db", self.path("none.db"), ""), [])

    def test_compare_by_and_columns_offer_the_label_keys_of_the_stored_runs_as_a_list(self):
        """What compare --by groups by is a label key, and --columns shows one: the ones the store's runs
        have (runs --label-keys)."""
        db = self.path("runs.db")
        for labels in (["config=a", "domain=x"], ["config=b", "sched=fifo"]):
            p = run("timer", "-a", str(online_cpus()[0]), "-l", "50", "--window", "50ms", "--policy", "other",
                    "-p", "0", "-q", "--db", db, *[a for l in labels for a in ("--label", l)])
            self.assertEqual(p.returncode, 0, p.stderr)
        p = run("runs", "--label-keys", "--db", db)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "config\ndomain\nsched\n", ""))
        p = run("runs", "--label-keys", "--label", "config=a", "--db", db)
        self.assertEqual((p.returncode, p.stdout), (0, "config\ndomain\n"), p.stderr)
        self.assertEqual(self.complete("compare", "--db", db, "--by", ""), ["config", "domain", "sched"])
        self.assertEqual(self.complete("compare", "--by", "", env=dict(os.environ, LATSCOPE_DB=db)),
                         ["config", "domain", "sched"])
        self.assertEqual(self.complete("compare", "--db", db, "--by", "=", "d", line=f"compare --db {db} --by=d"),
                         ["domain"])
        # a list: each key once, after a comma
        self.assertEqual(self.complete("compare", "--db", db, "--by", "config,"), ["config,domain", "config,sched"])
        # --columns takes a label too: its figures and the keys
        self.assertEqual(self.complete("compare", "--db", db, "--columns", "p99,d"), ["p99,domain"])
        self.assertIn("p99,max", self.complete("compare", "--db", db, "--columns", "p99,"))
        # a key no label can have, written into the store by another tool, is not offered: compgen
        # would expand it
        con = sqlite3.connect(db)
        with con:
            con.execute("INSERT INTO labels (run_id, key, value) VALUES (1, '$(touch expanded)', 'x')")
        con.close()
        self.assertEqual(self.complete("compare", "--db", db, "--by", ""), ["config", "domain", "sched"])
        self.assertFalse(os.path.exists(self.path("expanded")))
        # a store that is not there: nothing, nothing said, and nothing made
        none = self.path("none/runs.db")
        self.assertEqual(self.complete("compare", "--db", none, "--by", ""), [])
        self.assertFalse(os.path.exists(os.path.dirname(none)))

    def test_every_long_option_a_commands_help_prints_is_offered(self):
        p = run("--help")
        commands = re.findall(r"^  ([a-z]+) ", p.stdout, re.M)
        self.assertIn("completion", commands)
        for cmd in commands:
            with self.subTest(cmd):
                h = run(cmd, "--help")
                self.assertEqual(h.returncode, 0, h.stderr)
                printed = help_long_options(h.stdout)
                self.assertIn("--help", printed, f"{cmd}: the help's option lines were not read")
                offered = set(self.complete(cmd, "--"))
                self.assertEqual(printed - offered, set(), f"{cmd}: printed by --help, not completed")


class Usage(unittest.TestCase):
    def test_a_shell_it_cannot_write_for_is_named_with_status_2(self):
        p = run("completion", "tcsh")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertEqual(p.stderr.splitlines(), [
            "latscope completion: 'tcsh' is not a shell latscope writes completion for (bash)",
            "Try 'latscope completion --help'."])

    def test_help_says_how_to_load_it(self):
        p = run("completion", "--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("source <(latscope completion bash)", p.stdout)


if __name__ == "__main__":
    main()
