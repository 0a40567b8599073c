"""The shipped monitoring files of `latscope monitor` (contrib/): the Prometheus rules pass
promtool and their own unit tests, the Grafana dashboard is valid and both name only the
metric families the monitor exports (contrib/metrics.txt), and the systemd unit verifies."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import yaml

from harness import LATSCOPE, TempDirCase, main

CONTRIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib")
RULES = os.path.join(CONTRIB, "prometheus", "latscope.rules.yml")
RULES_TEST = os.path.join(CONTRIB, "prometheus", "latscope.rules.test.yml")
DASHBOARD = os.path.join(CONTRIB, "grafana", "latscope.json")
METRICS = os.path.join(CONTRIB, "metrics.txt")
UNIT = os.path.join(CONTRIB, "systemd", "latscope-monitor.service")
DEFAULTS = os.path.join(CONTRIB, "systemd", "latscope.default")
INSTALLED_BINARY = "/usr/local/bin/latscope"
PROMTOOL = shutil.which("promtool")
NO_PROMTOOL = "promtool is not installed (Debian package prometheus; scripts/install-deps installs it)"
# Series Prometheus makes itself for every target: the rules may read them, the dashboard does not.
SYNTHETIC = {"up"}


def families(path=METRICS):
    """contrib/metrics.txt as {name: type}."""
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, kind = line.split()
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


def dashboard_queries(doc):
    """Every PromQL query of a dashboard: panel targets and template variables
    (label_values(METRIC, LABEL) names METRIC)."""
    out = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "expr" and isinstance(v, str):
                    out.append(v)
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(doc.get("panels", []))
    for var in doc.get("templating", {}).get("list", []):
        if var.get("type") != "query":
            continue
        q = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
        m = re.fullmatch(r"\s*label_values\((.*),\s*\w+\s*\)\s*", q)
        out.append(m.group(1) if m else q)
    return out


def unknown_in_dashboard(doc, fams, rules):
    allowed = series_names(fams) | recorded(rules)
    return [(q, n) for q in dashboard_queries(doc) for n in sorted(metric_names(q)) if n not in allowed]


def promtool(*args):
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=120)


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

    @unittest.skipIf(PROMTOOL is None, NO_PROMTOOL)
    def test_promtool_check_rules_passes(self):
        p = promtool("check", "rules", RULES)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn(f"SUCCESS: {len(self.rules)} rules found", p.stdout)

    @unittest.skipIf(PROMTOOL is None, NO_PROMTOOL)
    def test_promtool_check_rules_refuses_a_broken_expression(self):
        broken = self.path("broken.rules.yml")
        with open(RULES) as f:
            doc = yaml.safe_load(f)
        doc["groups"][0]["rules"][0]["expr"] += ")"
        with open(broken, "w") as f:
            yaml.safe_dump(doc, f)
        p = promtool("check", "rules", broken)
        self.assertNotEqual(p.returncode, 0, p.stdout)

    @unittest.skipIf(PROMTOOL is None, NO_PROMTOOL)
    def test_promtool_test_rules_passes(self):
        p = promtool("test", "rules", RULES_TEST)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("SUCCESS", p.stdout + p.stderr)

    @unittest.skipIf(PROMTOOL is None, NO_PROMTOOL)
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
        for name in ("host_probe:latscope_latency_seconds:p99_9_5m", "host_probe_cpu:latscope_spikes:per_hour_rate5m",
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
