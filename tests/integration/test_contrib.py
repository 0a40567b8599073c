"""The shipped monitoring files of `latscope monitor` (contrib/): the Prometheus rules pass
promtool and their own unit tests, the Grafana dashboard is valid, both name only the metric
families the monitor exports (contrib/metrics.txt) and only the label names a running monitor
gives them (as do the rule tests' input series), and the systemd unit verifies."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import urllib.request

import yaml

from harness import LATSCOPE, TempDirCase, main, needs, online_cpus, run

CONTRIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib")
RULES = os.path.join(CONTRIB, "prometheus", "latscope.rules.yml")
RULES_TEST = os.path.join(CONTRIB, "prometheus", "latscope.rules.test.yml")
DASHBOARD = os.path.join(CONTRIB, "grafana", "latscope.json")
METRICS = os.path.join(CONTRIB, "metrics.txt")
UNIT = os.path.join(CONTRIB, "systemd", "latscope-monitor.service")
DEFAULTS = os.path.join(CONTRIB, "systemd", "latscope.default")
INSTALLED_BINARY = "/usr/local/bin/latscope"
PROMTOOL = shutil.which("promtool", path=os.environ.get("PATH", os.defpath) + ":/usr/sbin:/sbin")
# Series Prometheus makes itself for every target: the rules may read them, the dashboard does not.
SYNTHETIC = {"up"}


def families(path=METRICS, options=None):
    """contrib/metrics.txt as {name: type}: every family, or with options (a set) those a monitor
    given these options exports (a third field names the option a family needs)."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, kind, *needs = line.split()
            if options is not None and not set(needs) <= options:
                continue
            if name in out:
                raise ValueError(f"{path}:{n}: {name} listed twice")
            out[name] = kind
    return out


def series_names(fams):
    """The metric names a query may select: each family's, a histogram's three."""
    names = set()
    for name, kind in fams.items():
        names.update([name + s for s in ("_bucket", "_sum", "_count")] if kind == "histogram" else [name])
    return names


_STRINGS = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_CLAUSES = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
# An identifier not inside a number, variable or longer name, and not called as a function.
_IDENT = re.compile(r"(?<![\w.$:])([A-Za-z_:][\w:]*)(?![\w:])(?!\s*\()")
_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool",
             "offset", "inf", "nan"}


def metric_names(expr):
    """The metric names a PromQL expression selects: what is left once strings, label
    matchers, ranges, grouping clauses, function calls and keywords are taken out."""
    s = _STRINGS.sub('""', expr)
    s = re.sub(r"\{[^}]*\}", " ", s)
    s = re.sub(r"\[[^\]]*\]", " ", s)
    s = _CLAUSES.sub(" ", s)
    return {m for m in _IDENT.findall(s) if m.lower() not in _KEYWORDS}


def rules_of(path=RULES):
    with open(path) as f:
        doc = yaml.safe_load(f)
    return [r for g in doc["groups"] for r in g["rules"]]


def recorded(rules):
    return {r["record"] for r in rules if "record" in r}


def unknown_in_rules(rules, fams):
    """(rule, name) for each name a rule selects that is neither exported, nor recorded by
    these rules, nor made by Prometheus."""
    allowed = series_names(fams) | recorded(rules) | SYNTHETIC
    return [(r.get("record") or r.get("alert"), n) for r in rules for n in sorted(metric_names(r["expr"]))
            if n not in allowed]


def dashboard_parts(doc):
    """The PromQL of a dashboard: (target, None) for each panel target (a dict with "expr"),
    and (query, label) for each template variable (label_values(METRIC, LABEL) gives METRIC
    and LABEL; another query, itself and None)."""
    out = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("expr"), str):
                out.append((node, None))
            for k, v in node.items():
                if k != "expr":
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc.get("panels", []))
    for var in doc.get("templating", {}).get("list", []):
        if var.get("type") != "query":
            continue
        q = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
        m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", q)
        out.append((m.group(1), m.group(2)) if m else (q, None))
    return out


def dashboard_queries(doc):
    """Every PromQL query of a dashboard: panel targets and template variables."""
    return [part["expr"] if isinstance(part, dict) else part for part, _ in dashboard_parts(doc)]

def unknown_in_dashboard(doc, fams, rules):
    allowed = series_names(fams) | recorded(rules)
    return [(q, n) for q in dashboard_queries(doc) for n in sorted(metric_names(q)) if n not in allowed]


_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*[a-z]|-[a-zA-Z])(?![\w-])")


def help_entries(text):
    """{option: its description, whitespace folded} of a --help text's option list: an entry
    is a line that starts with an option, and the more indented lines after it."""
    out, current = {}, []
    for line in text.splitlines():
        m = re.match(r"\s+((?:-[a-zA-Z], )?--[a-z-]+|-[a-zA-Z])(?![\w-])", line)
        if m:
            current = [o.strip() for o in m.group(1).split(",")]
            out.update((o, line) for o in current)
        elif line.startswith("      ") and current:
            for o in current:
                out[o] += " " + line
        else:
            current = []
    return {o: " ".join(d.split()) for o, d in out.items()}


def options_file_problems(defaults, unit, help_text):
    """What the /etc/default file and the unit say of the monitor's options that its --help
    does not: an option it lacks, or a default it does not give."""
    have = help_entries(help_text)
    entries = []  # "#   --opt ARG  what it does (default X)" and its indented lines
    for line in defaults.splitlines():
        if re.match(r"#\s{3}-", line):
            entries.append(line[1:])
        elif re.match(r"#\s{4,}\S", line) and entries:
            entries[-1] += " " + line[1:]
    commands = [l.split("=", 1)[1] for l in defaults.splitlines() if re.match(r"#?LATSCOPE_MONITOR_OPTS=", l)]
    commands += [l.split("=", 1)[1] for l in unit.splitlines() if l.startswith("ExecStart=")]
    out = []
    for text in entries + commands:
        # An entry's options are those before its description (two spaces on); a command's, all.
        named = _OPTION.findall(re.split(r"\s{2,}", text.strip(), 1)[0] if text in entries else text)
        text = " ".join(text.split())
        out += [f"{o}: not an option of latscope monitor ({text})" for o in named if o not in have]
        for claim in re.findall(r"default:? ([^;)]+)", text):
            if not any(f"default {claim}" in have.get(o, "") or f"default: {claim}" in have.get(o, "")
                       for o in named):
                out.append(f"{' '.join(named)}: --help does not give the default {claim!r}")
    return out

def promtool(*args):
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=120)


# --- Label names: what each series really carries, and what the rules and dashboard ask of it.
#
# A series' "shapes" are the label-name sets it can have (the histogram's buckets have cpu only
# with --per-cpu-histograms: two shapes).  The checker below reads the PromQL the rules and the
# dashboard use, works out the shapes of every subexpression, and reports each grouping clause,
# matcher, histogram_quantile, template variable, legend and alert summary that names a label
# its input does not have.
TARGET_LABELS = frozenset({"job", "instance"})  # what Prometheus adds to every scraped series
AGGREGATIONS = {"sum", "min", "max", "avg", "count", "stddev", "stdvar", "group", "topk", "bottomk", "quantile",
                "count_values", "limitk", "limit_ratio"}
_KEEP_INPUT = {"topk", "bottomk", "limitk", "limit_ratio"}
_PRECEDENCE = {"or": 1, "and": 2, "unless": 2, "==": 3, "!=": 3, "<=": 3, "<": 3, ">=": 3, ">": 3,
               "+": 4, "-": 4, "*": 5, "/": 5, "%": 5, "atan2": 5, "^": 6}
_TOKEN = re.compile(r"""\s*(?:
    (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
  | (?P<dur>\d+(?:ms|[smhdwy])(?:\d+(?:ms|[smhdwy]))*(?![\w.]))
  | (?P<num>0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|(?i:inf|nan)(?![\w:]))
  | (?P<range>\[[^\]]*\])
  | (?P<ident>[A-Za-z_:][\w:]*)
  | (?P<op>==|!=|>=|<=|=~|!~|[-+*/%^<>=(){},])
)""", re.X)


def exposition_shapes(text):
    """{series name: {frozenset of label names}} of a Prometheus text exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        series = line.rpartition(" ")[0]
        name, _, labels = series.partition("{")
        names = frozenset(re.findall(r'([A-Za-z_]\w*)="(?:\\.|[^"\\])*"', labels))
        out.setdefault(name, set()).add(names)
    return out


def scraped(shapes):
    """The shapes as Prometheus stores them: job and instance added, and its own up."""
    out = {name: {s | TARGET_LABELS for s in ss} for name, ss in shapes.items()}
    out["up"] = {TARGET_LABELS}
    return out


class _Vec:
    """A subexpression's result: a vector of the given shapes, or a scalar (shapes None)."""

    def __init__(self, shapes=None):
        self.shapes = None if shapes is None else list(dict.fromkeys(shapes))


class LabelCheck:
    """Reads one PromQL expression against known series shapes; problems lists what names a
    label its input lacks, shapes what the expression yields."""

    def __init__(self, expr, known):
        self.known = known
        self.problems = []
        self.toks = [(m.lastgroup, m.group(m.lastgroup)) for m in _TOKEN.finditer(expr) if m.lastgroup]
        if "".join(t for _, t in self.toks) != re.sub(r"\s+", "", expr):
            raise ValueError(f"cannot read {expr!r}")
        self.i = 0
        v = self.expr(0)
        if self.i != len(self.toks):
            raise ValueError(f"cannot read {expr!r} from {self.toks[self.i][1]!r}")
        self.shapes = v.shapes or []

    # tokens
    def peek(self, k=0):
        return self.toks[self.i + k] if self.i + k < len(self.toks) else (None, None)

    def take(self, text=None):
        kind, tok = self.peek()
        if text is not None and tok != text:
            raise ValueError(f"expected {text!r}, found {tok!r}")
        self.i += 1
        return kind, tok

    def names(self):
        """( label, ... )"""
        self.take("(")
        out = []
        while self.peek()[1] != ")":
            out.append(self.take()[1])
            if self.peek()[1] == ",":
                self.take(",")
        self.take(")")
        return out

    def problem(self, what):
        self.problems.append(what)

    def need_everywhere(self, what, labels, v):
        for label in labels:
            if v.shapes is not None and not all(label in s for s in v.shapes):
                self.problem(f"{what} ({label}): not every input has {label} ({self.show(v)})")

    def need_somewhere(self, what, labels, v):
        for label in labels:
            if v.shapes is not None and not any(label in s for s in v.shapes):
                self.problem(f"{what} ({label}): no input has {label} ({self.show(v)})")

    @staticmethod
    def show(v):
        return " | ".join(",".join(sorted(s)) for s in v.shapes)

    # grammar
    def expr(self, min_prec):
        left = self.unary()
        while True:
            op = self.peek()[1]
            op = op.lower() if op else op
            prec = _PRECEDENCE.get(op)
            if prec is None or prec < min_prec:
                return left
            self.take()
            mods = {}
            while (self.peek()[1] or "").lower() in ("bool", "on", "ignoring", "group_left", "group_right"):
                word = self.take()[1].lower()
                mods[word] = self.names() if word != "bool" and self.peek()[1] == "(" else []
            right = self.expr(prec if op == "^" else prec + 1)
            left = self.binary(op, mods, left, right)

    def unary(self):
        if self.peek()[1] in ("-", "+"):
            self.take()
            return self.unary()
        v = self.primary()
        while True:
            kind, tok = self.peek()
            if kind == "range":
                self.take()
            elif (tok or "").lower() == "offset":
                self.take()
                self.take(None)
            else:
                return v

    def primary(self):
        kind, tok = self.take()
        if kind in ("num", "str", "dur"):
            return _Vec()
        if tok == "(":
            v = self.expr(0)
            self.take(")")
            return v
        if kind != "ident":
            raise ValueError(f"unexpected {tok!r}")
        if tok.lower() in AGGREGATIONS:
            return self.aggregation(tok.lower())
        if self.peek()[1] == "(":
            return self.call(tok)
        return self.selector(tok)

    def args(self):
        self.take("(")
        out = []
        while self.peek()[1] != ")":
            start = self.i
            out.append((self.expr(0), self.toks[start]))
            if self.peek()[1] == ",":
                self.take(",")
        self.take(")")
        return out

    def selector(self, name):
        if name not in self.known:
            self.problem(f"{name}: no such series")
            shapes = [frozenset()]
        else:
            shapes = list(self.known[name])
        if self.peek()[1] == "{":
            self.take("{")
            while self.peek()[1] != "}":
                label = self.take()[1]
                op = self.take()[1]
                value = self.take()[1][1:-1]
                if self.peek()[1] == ",":
                    self.take(",")
                if label == "__name__":
                    continue
                having = [s for s in shapes if label in s]
                if not having:
                    self.problem(f"{name}{{{label}{op}...}}: {name} has no label {label}")
                elif not _matches_empty(op, value):
                    shapes = having  # a series without the label has it empty: not selected
            self.take("}")
        return _Vec(shapes)

    def call(self, fn):
        args = self.args()
        vectors = [v for v, _ in args if v.shapes is not None]
        if fn == "histogram_quantile":
            (v,) = vectors
            self.need_everywhere("histogram_quantile", ["le"], v)
            return _Vec([s - {"le"} for s in v.shapes])
        if fn in ("absent", "absent_over_time", "vector"):
            return _Vec([frozenset()])
        if fn in ("scalar", "time"):
            return _Vec()
        if fn in ("label_replace", "label_join"):
            dst = args[1][1][1][1:-1]
            return _Vec([s | {dst} for s in vectors[0].shapes])
        return _Vec(vectors[0].shapes) if vectors else _Vec()

    def aggregation(self, op):
        clause = None
        if (self.peek()[1] or "").lower() in ("by", "without"):
            clause = (self.take()[1].lower(), self.names())
        args = self.args()
        if (self.peek()[1] or "").lower() in ("by", "without"):
            clause = (self.take()[1].lower(), self.names())
        v = args[-1][0]
        if v.shapes is None:
            raise ValueError(f"{op} of a scalar")
        if op == "count_values":
            v = _Vec([s | {args[0][1][1][1:-1]} for s in v.shapes])
        if clause and clause[0] == "by":
            self.need_everywhere(f"{op} by", clause[1], v)
        elif clause:
            self.need_somewhere(f"{op} without", clause[1], v)
        if op in _KEEP_INPUT:
            return v
        if not clause:
            return _Vec([frozenset()])
        if clause[0] == "by":
            return _Vec([s & set(clause[1]) for s in v.shapes])
        return _Vec([s - set(clause[1]) for s in v.shapes])

    def binary(self, op, mods, left, right):
        if left.shapes is None or right.shapes is None:
            return left if left.shapes is not None else right
        on, ignoring = mods.get("on"), mods.get("ignoring")
        for side in (left, right):
            if on is not None:
                self.need_everywhere(f"{op} on", on, side)
            if ignoring is not None:
                self.need_somewhere(f"{op} ignoring", ignoring, side)
        if op == "or":
            return _Vec(left.shapes + right.shapes)
        if op in ("and", "unless"):
            return left
        if "group_left" in mods or "group_right" in mods:
            many, one, extra = ((left, right, mods["group_left"]) if "group_left" in mods
                                else (right, left, mods["group_right"]))
            self.need_everywhere("group_left/right", extra, one)
            return _Vec([s | set(extra) for s in many.shapes])
        if on is not None:
            return _Vec([s & set(on) for s in left.shapes])
        if ignoring is not None:
            return _Vec([s - set(ignoring) for s in left.shapes])
        if not set(left.shapes) & set(right.shapes):
            self.problem(f"{op} without on/ignoring: the sides never have the same labels "
                         f"({self.show(left)} vs {self.show(right)})")
        return left


def _matches_empty(op, value):
    """Whether a matcher selects a series that lacks its label (Grafana's $variables may be .*)."""
    if "$" in value:
        return True
    if op in ("=", "!="):
        return (value == "") == (op == "=")
    return (re.fullmatch(value, "") is not None) == (op == "=~")


_TEMPLATE_LABEL = re.compile(r"\$labels\.(\w+)")
_LEGEND_LABEL = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def rule_label_problems(rules, known):
    """(rule, problem) for the rules in order; known gains each recorded series' shapes."""
    out = []
    for r in rules:
        name = r.get("record") or r.get("alert")
        c = LabelCheck(r["expr"], known)
        out += [(name, p) for p in c.problems]
        if "record" in r:
            known[r["record"]] = set(c.shapes)
            continue
        labels = set().union(*c.shapes) | set(r.get("labels", {}))
        for key, text in r.get("annotations", {}).items():
            for label in _TEMPLATE_LABEL.findall(text):
                if label not in labels:
                    out.append((name, f"{key} prints $labels.{label}, which the alert never has"))
    return out


def dashboard_label_problems(doc, known):
    """(query, problem) for each panel target, its legend, and each label_values variable."""
    out = []
    for part, label in dashboard_parts(doc):
        q = part["expr"] if isinstance(part, dict) else part
        c = LabelCheck(q, known)
        out.extend((q, p) for p in c.problems)
        have = set().union(*c.shapes) if c.shapes else set()
        legend = part.get("legendFormat", "") if isinstance(part, dict) else ""
        for printed in _LEGEND_LABEL.findall(legend):
            if printed not in have:
                out.append((q, f"the legend prints {{{{{printed}}}}}, which the query never has"))
        if label is not None and label not in have:
            out.append((q, f"the variable reads label {label}, which the query never has"))
    return out

def input_series_problems(tests, known):
    """(series, problem) for each input series of a promtool test file whose label names are
    not exactly those of one shape of its series (as scraped: with job and instance)."""
    out = []
    for t in tests:
        for s in t.get("input_series", []):
            name, _, labels = s["series"].partition("{")
            have = frozenset(re.findall(r'([A-Za-z_]\w*)\s*=\s*"(?:\\.|[^"\\])*"', labels))
            if name not in known:
                out.append((s["series"], f"{name} is not a series the monitor exports"))
            elif have not in known[name]:
                want = " or ".join("{" + ",".join(sorted(k)) + "}" for k in known[name])
                out.append((s["series"], f"labels {{{','.join(sorted(have))}}}, the monitor's are {want}"))
    return out


def run_monitor(*extra, timeout=30.0):
    """The /metrics text of a real `latscope monitor` on a free port, once every measured CPU
    has a finished window (of 100 ms: only the label names are read) and its kernel counts;
    the monitor is stopped with SIGTERM."""
    cpu = online_cpus()[1]
    proc = subprocess.Popen([LATSCOPE, "monitor", "-a", str(cpu), "--window", "100ms", "--listen", "127.0.0.1:0",
                             "--no-store", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        err = []
        for line in proc.stderr:
            err.append(line)
            m = re.search(r"serving http://(127\.0\.0\.1:\d+)/metrics", line)
            if m:
                break
        else:
            raise AssertionError("the monitor never served: " + "".join(err))
        url = f"http://{m.group(1)}/metrics"
        end = time.monotonic() + timeout
        while True:
            with urllib.request.urlopen(url, timeout=5) as r:
                text = r.read().decode()
            shapes = exposition_shapes(text)
            if "latscope_window_max_seconds" in shapes and "latscope_steal_seconds_total" in shapes:
                return text
            if time.monotonic() > end:
                raise AssertionError(f"no window or steal series in {timeout} s:\n{text}")
            time.sleep(0.05)  # polling for the first window to finish, not a measurement
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


class MetricListCase(unittest.TestCase):
    def test_the_metric_list_names_valid_families_of_known_types(self):
        fams = families()
        self.assertIn("latscope_latency_seconds", fams)
        self.assertEqual(fams["latscope_latency_seconds"], "histogram")
        for name, kind in fams.items():
            with self.subTest(name):
                self.assertRegex(name, r"^latscope_[a-z0-9_]+$")
                self.assertIn(kind, ("counter", "gauge", "histogram"))
                self.assertEqual(name.endswith("_total"), kind == "counter", "a counter and only a counter ends in _total")

    def test_the_checker_finds_the_metrics_of_a_query(self):
        q = ('histogram_quantile(0.999, sum by (host, le) (rate(latscope_latency_seconds_bucket{host=~"$host",'
             'le!="1e-06"}[$__rate_interval]))) > on (host) group_left max without (cpu) (latscope_threshold_seconds)'
             ' * 1e9 or absent(up{job="latscope"} offset 5m) and bool host:x:rate5m')
        self.assertEqual(metric_names(q), {"latscope_latency_seconds_bucket", "latscope_threshold_seconds", "up",
                                           "host:x:rate5m"})


class RulesCase(TempDirCase):
    def setUp(self):
        super().setUp()
        self.rules = rules_of()
        self.fams = families()

    def test_the_rules_name_only_exported_metrics(self):
        self.assertGreater(len(self.rules), 0)
        self.assertEqual(unknown_in_rules(self.rules, self.fams), [])
        named = set().union(*(metric_names(r["expr"]) for r in self.rules))
        self.assertIn("latscope_latency_seconds_bucket", named, "the checker saw the rules' metrics")

    def test_a_rule_naming_a_metric_the_monitor_does_not_export_is_caught(self):
        bad = self.rules + [{"record": "host:latscope_latency:p99_5m",
                             "expr": "histogram_quantile(0.99, sum by (le) (rate(latscope_latency_bucket[5m])))"}]
        self.assertIn(("host:latscope_latency:p99_5m", "latscope_latency_bucket"), unknown_in_rules(bad, self.fams))

    def test_every_alert_and_record_is_tested_firing_and_quiet(self):
        with open(RULES_TEST) as f:
            tests = yaml.safe_load(f)["tests"]
        firing, quiet, checked = set(), set(), set()
        for t in tests:
            for a in t.get("alert_rule_test", []):
                (firing if a["exp_alerts"] else quiet).add(a["alertname"])
            for e in t.get("promql_expr_test", []):
                if e["exp_samples"]:
                    checked |= metric_names(e["expr"])
        alerts = {r["alert"] for r in self.rules if "alert" in r}
        self.assertEqual(len(alerts), 4)
        self.assertEqual(alerts - firing, set(), "alerts never seen firing")
        self.assertEqual(alerts - quiet, set(), "alerts never seen quiet")
        self.assertEqual(recorded(self.rules) - checked, set(), "recorded series never checked")

    @needs(programs=("promtool",))
    def test_promtool_check_rules_passes(self):
        p = promtool("check", "rules", RULES)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"SUCCESS: {len(self.rules)} rules found", p.stdout)

    @needs(programs=("promtool",))
    def test_promtool_check_rules_refuses_a_broken_expression(self):
        broken = self.path("broken.rules.yml")
        with open(RULES) as f:
            doc = yaml.safe_load(f)
        doc["groups"][0]["rules"][0]["expr"] += ")"
        with open(broken, "w") as f:
            yaml.safe_dump(doc, f)
        p = promtool("check", "rules", broken)
        self.assertNotEqual(p.returncode, 0, p.stdout)

    @needs(programs=("promtool",))
    def test_promtool_test_rules_passes(self):
        p = promtool("test", "rules", RULES_TEST)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("SUCCESS", p.stdout + p.stderr)

    @needs(programs=("promtool",))
    def test_the_rule_tests_fail_on_rules_that_would_not_fire(self):
        """The unit tests can fail: with the steal alert's share raised to 50% the noisy host's
        10% no longer fires it, and promtool says so."""
        for name in ("latscope.rules.yml", "latscope.rules.test.yml"):
            shutil.copy(os.path.join(CONTRIB, "prometheus", name), self.path(name))
        with open(self.path("latscope.rules.yml")) as f:
            text = f.read()
        self.assertIn("ratio_rate5m > 0.05", text)
        with open(self.path("latscope.rules.yml"), "w") as f:
            f.write(text.replace("ratio_rate5m > 0.05", "ratio_rate5m > 0.5"))
        p = promtool("test", "rules", self.path("latscope.rules.test.yml"))
        self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("LatscopeStealHigh", p.stdout + p.stderr)


# Shapes for the checker's own tests, whatever the monitor exports today.
FIXED = scraped({
    "latscope_spikes_total": {frozenset({"host", "probe"})},
    "latscope_steal_seconds_total": {frozenset({"host", "cpu"})},
    "latscope_threshold_seconds": {frozenset({"host", "probe"})},
    "latscope_latency_seconds_bucket": {frozenset({"host", "probe", "le"}), frozenset({"host", "probe", "cpu", "le"})},
})


class LabelCheckerCase(unittest.TestCase):
    """The checker can fail: each way of naming a label that is not there is reported."""

    def problems(self, expr):
        return LabelCheck(expr, dict(FIXED)).problems

    def test_the_checker_reports_grouping_by_a_label_the_series_lacks(self):
        self.assertEqual(len(self.problems("sum by (host, probe, cpu) (rate(latscope_spikes_total[5m]))")), 1)
        self.assertEqual(self.problems("sum by (host, probe) (rate(latscope_spikes_total[5m])) * 3600"), [])
        self.assertEqual(len(self.problems("max without (cpu) (latscope_spikes_total)")), 1)

    def test_the_checker_reports_a_matcher_or_a_join_on_a_label_the_series_lacks(self):
        self.assertEqual(len(self.problems('rate(latscope_steal_seconds_total{probe=~"$probe"}[5m])')), 1)
        self.assertEqual(len(self.problems("latscope_spikes_total > on (host, cpu) latscope_threshold_seconds")), 2)
        self.assertEqual(self.problems("latscope_spikes_total > on (host, probe) latscope_threshold_seconds"), [])
        self.assertEqual(len(self.problems("latscope_spikes_total > latscope_steal_seconds_total")), 1)

    def test_the_checker_lets_a_matcher_choose_the_per_cpu_histogram(self):
        q = "sum by (host, probe, cpu, le) (rate(latscope_latency_seconds_bucket{cpu!=\"\"}[5m]))"
        self.assertEqual(self.problems("histogram_quantile(0.99, " + q + ")"), [])
        self.assertEqual(len(self.problems(q.replace('{cpu!=\"\"}', ""))), 1, "the merged histogram has no cpu")
        self.assertEqual(len(self.problems("histogram_quantile(0.99, sum by (host) (latscope_latency_seconds_bucket))")), 1)

    def test_the_checker_reports_a_summary_and_a_legend_printing_a_missing_label(self):
        known = dict(FIXED)
        rules = [{"record": "host_probe:spikes:rate5m", "expr": "sum by (host, probe) (rate(latscope_spikes_total[5m]))"},
                 {"alert": "A", "expr": "host_probe:spikes:rate5m > 0", "labels": {"severity": "warning"},
                  "annotations": {"summary": "{{ $labels.host }} CPU {{ $labels.cpu }} {{ $labels.severity }}"}}]
        self.assertEqual([p for _, p in rule_label_problems(rules, known)],
                         ["summary prints $labels.cpu, which the alert never has"])
        doc = {"panels": [{"targets": [{"expr": "host_probe:spikes:rate5m", "legendFormat": "{{host}} cpu {{cpu}}"}]}],
               "templating": {"list": [{"type": "query", "query": "label_values(latscope_spikes_total, cpu)"}]}}
        self.assertEqual(len(dashboard_label_problems(doc, known)), 2)

    def test_the_checker_reports_an_input_series_with_a_label_too_many_or_too_few(self):
        tests = [{"input_series": [
            {"series": 'latscope_spikes_total{job="j",instance="i",host="h",probe="timer",cpu="1"}'},
            {"series": 'latscope_steal_seconds_total{job="j",instance="i",host="h"}'},
            {"series": 'latscope_steal_seconds_total{job="j",instance="i",host="h",cpu="1"}'},
            {"series": 'latscope_latency_seconds_bucket{job="j",instance="i",host="h",probe="t",cpu="1",le="1"}'},
            {"series": 'up{job="j",instance="i"}'}]}]
        self.assertEqual([s for s, _ in input_series_problems(tests, FIXED)],
                         [tests[0]["input_series"][i]["series"] for i in (0, 1)])


@needs(cpus=2)      # the monitor measures one, the test runs on another
class MonitorLabelsCase(unittest.TestCase):
    """The rules, their tests and the dashboard against the label names of the real monitor's
    /metrics, in both of its histogram modes.  Only label names are read: no figure a stall of this
    host could turn."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.texts = [run_monitor(), run_monitor("--per-cpu-histograms")]
        cls.shapes = {}
        for text in cls.texts:
            for name, ss in exposition_shapes(text).items():
                cls.shapes.setdefault(name, set()).update(ss)

    def known(self):
        return scraped(self.shapes)

    def test_the_monitor_exports_the_families_of_the_metric_list_and_no_other(self):
        for text in self.texts:
            types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
            self.assertEqual(types, families(options=set()))
        self.assertEqual(self.shapes["latscope_spikes_total"], {frozenset({"host", "probe"})}, "the checker sees labels")

    def test_every_input_series_of_the_rule_tests_has_the_monitors_label_names(self):
        with open(RULES_TEST) as f:
            tests = yaml.safe_load(f)["tests"]
        self.assertGreater(sum(len(t["input_series"]) for t in tests), 20)
        self.assertEqual(input_series_problems(tests, self.known()), [])

    def test_the_rules_group_filter_and_print_only_labels_the_monitor_exports(self):
        self.assertEqual(rule_label_problems(rules_of(), self.known()), [])

    def test_the_dashboard_groups_filters_and_prints_only_labels_the_monitor_exports(self):
        known = self.known()
        rule_label_problems(rules_of(), known)
        with open(DASHBOARD) as f:
            doc = json.load(f)
        self.assertEqual(dashboard_label_problems(doc, known), [])


class DashboardCase(unittest.TestCase):
    def setUp(self):
        with open(DASHBOARD) as f:
            self.doc = json.load(f)
        self.fams = families()
        self.rules = rules_of()

    def test_the_dashboard_names_only_exported_metrics_and_recorded_rules(self):
        queries = dashboard_queries(self.doc)
        self.assertGreaterEqual(len(queries), 10)
        self.assertEqual(unknown_in_dashboard(self.doc, self.fams, self.rules), [])

    def test_a_dashboard_query_naming_an_unknown_metric_is_caught(self):
        self.doc["panels"][0]["targets"][0]["expr"] = 'sum(latscope_up{host=~"$host"})'
        self.doc["templating"]["list"][1]["query"]["query"] = "label_values(latscope_monitor_up_total, host)"
        found = {n for _, n in unknown_in_dashboard(self.doc, self.fams, self.rules)}
        self.assertLessEqual({"latscope_up", "latscope_monitor_up_total"}, found)

    def test_the_dashboard_draws_the_heatmap_p99_9_spikes_and_steal(self):
        panels = self.doc["panels"]
        self.assertEqual(len({p["id"] for p in panels}), len(panels), "panel ids are unique")
        heatmaps = [p for p in panels if p["type"] == "heatmap"]
        self.assertEqual(len(heatmaps), 1)
        (t,) = heatmaps[0]["targets"]
        self.assertEqual(t["format"], "heatmap", "Grafana de-accumulates the le buckets only in heatmap format")
        self.assertIn("latscope_latency_seconds_bucket", metric_names(t["expr"]))
        self.assertRegex(t["expr"], r"\bby \(le\)")
        shown = set().union(*(metric_names(q) for q in dashboard_queries(self.doc)))
        for name in ("host_probe:latscope_latency_seconds:p99_9_5m", "host_probe:latscope_spikes:per_hour_rate5m",
                     "host_cpu:latscope_steal_seconds:ratio_rate5m"):
            self.assertIn(name, shown)


class SystemdCase(TempDirCase):
    def unit_text(self):
        with open(UNIT) as f:
            return f.read()

    def verify(self, text):
        """systemd-analyze verify on a copy of the unit whose ExecStart is the built binary."""
        analyze = shutil.which("systemd-analyze")
        self.assertIsNotNone(analyze, "systemd-analyze is missing (Debian package systemd; scripts/install-deps)")
        exe = os.path.abspath(LATSCOPE)
        self.assertTrue(os.access(exe, os.X_OK), f"LATSCOPE={LATSCOPE} is not an executable")
        self.assertIn(f"ExecStart={INSTALLED_BINARY} ", text)
        unit = self.path("latscope-monitor.service")
        with open(unit, "w") as f:
            f.write(text.replace(f"ExecStart={INSTALLED_BINARY} ", f"ExecStart={exe} "))
        # --man=no: the man page is the build's, not yet in the system's man database.
        return subprocess.run([analyze, "verify", "--man=no", unit], capture_output=True, text=True, timeout=120)

    def monitor_help(self):
        p = run("monitor", "--help")
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_the_options_file_and_the_unit_name_the_monitors_options_and_defaults(self):
        with open(DEFAULTS) as f:
            defaults = f.read()
        self.assertGreaterEqual(len(re.findall(r"\n#\s{3}-", defaults)), 15, "the checker sees the options")
        self.assertEqual(options_file_problems(defaults, self.unit_text(), self.monitor_help()), [])

    def test_an_option_or_a_default_the_monitor_does_not_have_is_caught(self):
        with open(DEFAULTS) as f:
            defaults = f.read()
        self.assertIn("(default 100us)", defaults)
        bad = defaults.replace("(default 100us)", "(default 50us)").replace("--rotate DUR", "--rotation DUR")
        found = options_file_problems(bad, self.unit_text().replace("--db ", "--store "), self.monitor_help())
        self.assertEqual({f.split(":")[0] for f in found}, {"--threshold", "--rotation", "--store"}, found)

    def test_systemd_analyze_verifies_the_unit(self):
        p = self.verify(self.unit_text())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("latscope-monitor.service", p.stdout + p.stderr, "no complaint about the unit")

    def test_systemd_analyze_complains_of_a_misspelt_key(self):
        p = self.verify(self.unit_text().replace("ProtectHome=yes", "ProtectHomes=yes"))
        self.assertIn("ProtectHomes", p.stdout + p.stderr)

    def test_the_unit_is_sandboxed_where_the_measurement_does_not_suffer(self):
        settings = dict(line.split("=", 1) for line in self.unit_text().splitlines()
                        if "=" in line and not line.startswith("#"))
        for key, value in (("Type", "simple"), ("LimitMEMLOCK", "infinity"), ("ProtectSystem", "strict"),
                           ("ProtectHome", "yes"), ("PrivateTmp", "yes"), ("NoNewPrivileges", "yes")):
            self.assertEqual(settings.get(key), value, key)
        # Each would stop part of the measurement: /dev/cpu_dma_latency, tracefs, SCHED_FIFO,
        # latscope's own choice of policy; User= would lose the real-time priority.
        for key in ("PrivateDevices", "ProtectClock", "ProtectKernelTunables", "RestrictRealtime",
                    "CPUSchedulingPolicy", "DevicePolicy", "User"):
            self.assertNotIn(key, settings)

    def test_the_unit_stores_in_its_state_directory_with_the_options_file(self):
        text = self.unit_text()
        self.assertIn("StateDirectory=latscope\n", text)
        self.assertIn("ReadWritePaths=/var/lib/latscope\n", text)
        self.assertRegex(text, r"\nExecStart=/usr/local/bin/latscope monitor --db /var/lib/latscope/runs\.db "
                               r"\$LATSCOPE_MONITOR_OPTS\n")
        self.assertIn("EnvironmentFile=-/etc/default/latscope\n", text)
        with open(DEFAULTS) as f:
            defaults = f.read()
        self.assertRegex(defaults, r"\nLATSCOPE_MONITOR_OPTS=", "the file sets the variable the unit reads")
        self.assertNotRegex(defaults, r"\n#?LATSCOPE_MONITOR_OPTS=.*--db", "the store is the unit's")


if __name__ == "__main__":
    main()
