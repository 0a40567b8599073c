"""doc/result.schema.json: a valid JSON Schema that every probe's result, show --json and merge obey."""
import copy
import json
import os
import subprocess
import time
import unittest

from harness import LATSCOPE, SCHEMA_PATH, TempDirCase, load, main, online_cpus, parse, run, schema_errors

CPU = online_cpus()[-1]


class SchemaCase(unittest.TestCase):
    def test_the_schema_is_a_valid_2020_12_json_schema_whose_version_is_the_results(self):
        import jsonschema
        with open(SCHEMA_PATH) as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        self.assertEqual(schema["$schema"], "https://json-schema.org/draft/2020-12/schema")
        self.assertEqual(schema["properties"]["schema"], {"const": "latscope.result"})
        with open(os.path.join(os.path.dirname(SCHEMA_PATH), os.pardir, "src", "result", "result.h")) as f:
            version = [int(l.split()[2]) for l in f if l.startswith("#define RESULT_SCHEMA_VERSION ")]
        self.assertEqual(schema["properties"]["schema_version"], {"const": version[0]})


class ResultsCase(TempDirCase):
    """One short run of each probe, stored, shown and merged: each document validates, and breaking
    one in a way the code never writes makes it fail.  Only the documents' shape is judged: no figure
    a stall of this host could turn."""

    def measure(self, probe, *args):
        out = self.path(probe + ".json")
        p = run(probe, *args, "-q", "--db", self.path("runs.db"), "--json", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = load(out)
        self.assertEqual(doc["probe"], probe)
        self.assertGreater(doc["all"]["metrics"][doc["metrics"][0]]["count"], 0, "not an empty result")
        return doc

    def test_a_result_of_every_probe_and_its_show_and_merge_validate(self):
        data = self.path("data")
        self.assertEqual(run("io", "--make", data, "--size", "4M").returncode, 0)
        # a run stopped by its duration (-D) and one by its count (-l): each stop_reason validates
        probes = [("timer", "-a", str(CPU), "-D", "300ms"), ("noise", "-a", str(CPU), "-D", "200ms"),
                  ("wake", "--cpus", "%d,%d" % (CPU, CPU), "-i", "200us", "-l", "300"),
                  ("wake", "--cpus", "%d,%d" % (CPU, CPU), "--pingpong", "-i", "200us", "-l", "300"),
                  ("io", data, "-a", str(CPU), "-n", "200"), ("clock", "-a", str(CPU), "-D", "200ms"),
                  ("timer", "-a", str(CPU), "-l", "200", "-i", "200us")]
        for i, (probe, *args) in enumerate(probes, 1):
            with self.subTest(probe=probe, args=args):
                self.measure(probe, *args)
                shown = parse(run("show", str(i), "--json", "--db", self.path("runs.db")).stdout)
                self.assertEqual(shown["id"], i)
        self.assertIn("roundtrip", shown_metrics(self, 4))
        p = run("export", "1", "3", "--format", "json", "--db", self.path("runs.db"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([d["id"] for d in parse(p.stdout, "export", "export --format json")], [1, 3])
        for ids in (("1",), ("1", "7")):        # a merge of one run, and of two
            with self.subTest(merge=ids):
                out = self.path("merged.json")
                p = run("merge", *ids, "-q", "--db", self.path("runs.db"), "--json", out)
                self.assertEqual(p.returncode, 0, p.stderr)
                merged = load(out)
                self.assertEqual(merged["stop_reason"], "merged")
                last = run("runs", "--db", self.path("runs.db")).stdout.splitlines()[-1].split()[0]
                self.assertEqual(parse(run("show", last, "--json", "--db", self.path("runs.db")).stdout)["params"],
                                 merged["params"])

    def test_every_checkpoint_of_a_run_and_its_final_result_validate(self):
        """The checkpoint at 1 s (the shortest --checkpoint; windows of 250 ms have ended by then) stays
        the file's text until the final result at 1.5 s: 500 ms for a reader polling every 20 ms, far
        above any stall of this host."""
        out = self.path("ck.json")
        proc = subprocess.Popen([LATSCOPE, "timer", "-a", str(CPU), "-D", "1500ms", "--window", "250ms",
                                 "--checkpoint", "1s", "-q", "--no-store", "--json", out], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        seen = {}
        try:
            while proc.poll() is None:      # each version of the file, as a reader finds it
                if os.path.exists(out):
                    with open(out) as f:
                        text = f.read()
                    if text not in seen:
                        seen[text] = parse(text, what="a version of the --json file")
                time.sleep(0.02)
        finally:
            proc.kill()
            _, err = proc.communicate()
        self.assertEqual(proc.returncode, 0, err)
        self.assertNotIn("partial", load(out))
        self.assertTrue([d for d in seen.values() if d.get("partial") is True],
                        "a checkpoint was read while the run measured")

    def test_documents_the_code_never_writes_are_refused(self):
        doc = self.measure("timer", "-a", str(CPU), "-l", "200", "-i", "200us")
        breaks = {
            "a negative count": lambda d: d["all"]["metrics"]["latency"].__setitem__("count", -1),
            "an unknown probe": lambda d: d.__setitem__("probe", "hammer"),
            "an unknown top-level key": lambda d: d.__setitem__("surprise", 1),
            "a fractional nanosecond": lambda d: d["cpus"][0]["metrics"]["latency"].__setitem__("max_ns", 1.5),
            "a missing all block": lambda d: d.pop("all"),
            "a metric the probe has not": lambda d: d.__setitem__("metrics", ["gap"]),
            "a bucket of two numbers": lambda d: d["all"]["metrics"]["latency"]["histogram"]["buckets"]
            .__setitem__(0, [1, 2]),
            "another schema version": lambda d: d.__setitem__("schema_version", 2),
            "a count past 2^63 - 1": lambda d: d["all"].__setitem__("missed", 1 << 63),
        }
        for what, spoil in breaks.items():
            with self.subTest(what):
                bad = copy.deepcopy(doc)
                spoil(bad)
                self.assertTrue(schema_errors(bad), what + " validates")
        self.assertEqual(schema_errors(doc), [], "the unspoiled result validates")


def shown_metrics(tc, run_id):
    p = run("show", str(run_id), "--json", "--db", tc.path("runs.db"))
    return parse(p.stdout)["metrics"]


if __name__ == "__main__":
    main()
