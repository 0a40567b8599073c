"""Importing results from other hosts: the store holds only what latscope recomputed and can read back,
and no file costs time or memory out of proportion to its size."""
import json
import math
import os
import subprocess
import unittest

from harness import (LATSCOPE, SANITIZED, TempDirCase, check_consistent, load, main, online_cpus, parse, run,
                     schema_errors)

INT64_MAX = 2 ** 63 - 1
CPUS = online_cpus()[:2]
TWO = len(CPUS) == 2
# Peak memory of import and show over the file's size (see RESULT_READ_BUDGET in src/result/json_read.c).
MEMORY_MULTIPLE = 28
FUZZ_SEEDS = os.path.join(os.path.dirname(__file__), "..", "fuzz", "corpus", "import")


# The histogram layout of src/core/hist.h: values below 128 have a bucket each, then every power of
# two is cut into 64 buckets.
def bucket_index(v):
    if v < 128:
        return v
    msb = v.bit_length() - 1
    shift = msb - 6
    return 128 + (msb - 7) * 64 + ((v >> shift) & 63)


def bucket_low(i):
    if i < 128:
        return i
    octave, sub = divmod(i - 128, 64)
    return (64 + sub) << (octave + 1)


def bucket_high(i):
    if i < 128:
        return i
    return bucket_low(i) + (1 << ((i - 128) // 64 + 1)) - 1


def bucket_value(i):
    lo = bucket_low(i)
    return lo + (bucket_high(i) - lo) // 2


def buckets_of(values):
    counts = {}
    for v in values:
        counts[bucket_index(v)] = counts.get(bucket_index(v), 0) + 1
    return [[bucket_low(i), bucket_high(i), counts[i]] for i in sorted(counts)]


def percentile(buckets, n, p, lo, hi):
    """Nearest rank, as the bucket's midpoint clamped to [min, max] (doc/result-schema.md)."""
    rank = max(1, math.ceil(p / 100 * n))
    seen = 0
    for low, _, c in buckets:
        seen += c
        if seen >= rank:
            return min(max(bucket_value(bucket_index(low)), lo), hi)
    raise AssertionError("rank beyond the histogram")


def stats_of(values):
    n = len(values)
    if not n:
        return {"count": 0, "min_ns": 0, "max_ns": 0, "mean_ns": 0.0, "stddev_ns": 0.0}
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / n) if n > 1 else 0.0
    return {"count": n, "min_ns": min(values), "max_ns": max(values), "mean_ns": mean, "stddev_ns": sd}


def summary_of(values, threshold):
    s = stats_of(values)
    b = buckets_of(values)
    above = [v for v in values if v > threshold]
    for key, p in (("p50_ns", 50), ("p90_ns", 90), ("p99_ns", 99), ("p99_9_ns", 99.9), ("p99_99_ns", 99.99)):
        s[key] = percentile(b, len(values), p, s["min_ns"], s["max_ns"]) if values else 0
    s.update(above=len(above), above_total_ns=sum(above), above_pct=100 * len(above) / len(values) if values else 0.0,
             warm_max_ns=None, histogram={"relative_error": 0.0078125, "count": len(values), "buckets": b})
    return s


def window_of(index, values, threshold):
    s = stats_of(values)
    b = buckets_of(values)
    above = [v for v in values if v > threshold]
    s.update(above=len(above), above_total_ns=sum(above), histogram={"count": len(values), "buckets": b})
    return {"index": index, "start_ns": index * 1000, "end_ns": index * 1000 + 999, "missed": 0, "latency": s}


EMPTY_STATS = {"count": 0, "min_ns": 0, "max_ns": 0, "mean_ns": 0.0, "stddev_ns": 0.0}


def cpu_block(cpu, windows, threshold=100000):
    """A CPU of the timer probe whose windows hold the given values: {index: [values]}."""
    values = [v for i in sorted(windows) for v in windows[i]]
    return {"cpu": cpu, "metrics": {"latency": summary_of(values, threshold)}, "missed": 0,
            "overhead": {"clock_read_ns": dict(EMPTY_STATS), "wakeup_to_recorded_ns": dict(EMPTY_STATS)},
            "windows": [window_of(i, windows[i], threshold) for i in sorted(windows) if windows[i]], "largest": []}


def synthetic(cpus, start_ns=1700000000000000000, host="elsewhere"):
    """A whole result of the timer probe made here, not measured: {cpu: {window index: [values]}}.
    Its "all" block is the merge of its CPUs, as latscope would write it."""
    blocks = [cpu_block(c, cpus[c]) for c in sorted(cpus)]
    merged = {}
    for c in cpus:
        for i, vs in cpus[c].items():
            merged.setdefault(i, []).extend(vs)
    allb = cpu_block("all", merged)
    return {"schema": "latscope.result", "schema_version": 1, "tool": {"name": "latscope", "version": "0.1.0"},
            "probe": "timer", "start_time": "2023-11-14T22:13:20.000Z", "start_realtime_ns": start_ns,
            "elapsed_ns": 1000000000, "interrupted": False, "stop_reason": "loops",
            "command_line": ["latscope", "timer"], "params": {}, "labels": {},
            "system": {"hostname": host, "kernel_release": "6.1", "kernel_version": "#1", "machine": "x86_64",
                       "preempt": "none", "preempt_mode": "", "clocksource": "tsc", "clocksources_available": "tsc",
                       "cpu_model": "cpu", "hypervisor": "", "online_cpus": "0-1", "ncpus_online": 2},
            "applied": {"rt_policy": True, "memlock": True, "pm_qos": True, "timer_slack": True,
                        "main_thread_off_measured_cpus": True},
            "notes": [], "threshold_ns": 100000, "warmup_windows": 0, "metrics": ["latency"],
            "cpus": blocks, "all": allb}


def huge(count, value=5000, start_ns=1700000000000000000):
    """A one-CPU result holding count samples of value ns: count may be near INT64_MAX."""
    doc = synthetic({0: {0: [value]}}, start_ns=start_ns)
    for block in (doc["cpus"][0], doc["all"]):
        for s in (block["metrics"]["latency"], block["windows"][0]["latency"]):
            s["count"] = count
            s["histogram"]["buckets"][0][2] = count
            s["histogram"]["count"] = count
    return doc


def dump(doc, path, compact=True):
    # json.dumps, not json.dump: only the one-shot encoder is the C one, five times faster on 27 MB
    text = json.dumps(doc, separators=(",", ":")) if compact else json.dumps(doc, indent=1)
    with open(path, "w") as f:
        f.write(text)
    return path


class Spawner:
    """Runs latscope from a small process forked when this module is loaded.

    A child's peak RSS (ru_maxrss) starts at its parent's RSS when it was forked, even across exec: forked
    from this test process once it has built files of tens of MB, every child would seem to take that much.
    The spawner stays small, so what its children report is what they took."""

    def __init__(self):
        self.req_r, self.req_w = os.pipe()
        self.rep_r, self.rep_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.req_w)
            os.close(self.rep_r)
            self.serve()
            os._exit(0)
        os.close(self.req_r)
        os.close(self.rep_w)
        self.rep = os.fdopen(self.rep_r, "r")
        self.req = os.fdopen(self.req_w, "w")

    def serve(self):
        with os.fdopen(self.req_r, "r") as req, os.fdopen(self.rep_w, "w") as rep:
            for line in req:
                args, out, err = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    try:
                        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
                        os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
                        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
                        os.execv(args[0], args)
                    finally:
                        os._exit(127)
                _, status, ru = os.wait4(pid, 0)
                rep.write(json.dumps([os.waitstatus_to_exitcode(status), ru.ru_utime + ru.ru_stime,
                                      ru.ru_maxrss * 1024]) + "\n")
                rep.flush()

    def run(self, args, out, err):
        self.req.write(json.dumps([args, out, err]) + "\n")
        self.req.flush()
        return json.loads(self.rep.readline())


SPAWNER = Spawner()


def run_measured(*args, tmp="/tmp"):
    """Run latscope; returns (CompletedProcess, CPU seconds, peak RSS in bytes) of that process alone."""
    out, err = os.path.join(tmp, "measured.out"), os.path.join(tmp, "measured.err")
    code, cpu, rss = SPAWNER.run([LATSCOPE, *args], out, err)
    with open(out, errors="replace") as f, open(err, errors="replace") as g:
        result = subprocess.CompletedProcess([LATSCOPE, *args], code, f.read(), g.read())
    os.remove(out)
    os.remove(err)
    return result, cpu, rss


class ImportCase(TempDirCase):
    def setUp(self):
        super().setUp()
        self.db = self.path("runs.db")

    def measured(self, *args):
        return run_measured(*args, tmp=self.tmp)

    def lat(self, *args, db=None, timeout=300):
        return run(*args, "--db", db or self.db, timeout=timeout)

    def imported(self, path, db=None):
        p = self.lat("import", path, db=db)
        self.assertEqual(p.returncode, 0, p.stderr)
        return int(p.stdout.strip().split()[-1])

    def refused(self, path, *needles):
        """Importing path into a store of its own is refused, with one line naming each needle (and the hint)."""
        db = self.path("refused-%d.db" % len(os.listdir(self.tmp)))
        p = self.lat("import", path, db=db)
        self.assertEqual(p.returncode, 2, f"{path}: {p.stdout}{p.stderr}")
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 2, p.stderr)
        self.assertEqual(lines[1], "Try 'latscope import --help'.")
        for needle in needles:
            self.assertIn(needle, lines[0])
        self.assertFalse(os.path.exists(db), "nothing was stored")
        return p.stderr


class RunIds(ImportCase):
    def test_show_of_a_long_range_of_run_ids_says_one_run_id_at_once(self):
        """A relation of CPU times, with a margin of 50 ms that no stall adds to a process's CPU time."""
        dump(synthetic({0: {0: [5000]}}), self.path("one.json"))
        self.imported(self.path("one.json"))
        p, short, _ = self.measured("show", "1-10", "--db", self.db)
        self.assertEqual(p.returncode, 2)
        self.assertIn("one run id, please", p.stderr)
        p, long, _ = self.measured("show", "1-99999", "--db", self.db)
        self.assertEqual(p.returncode, 2)
        self.assertIn("one run id, please", p.stderr)
        # Sorting 10^5 ids costs milliseconds; comparing each with those before it, seconds.
        self.assertLess(long, 20 * short + 0.05, f"1-99999 took {long:.3f} s of CPU, 1-10 {short:.3f} s")


def disjoint(nwin):
    """Two CPUs with nwin windows in all, none of one index: CPU 0 the even ones, CPU 1 the odd ones."""
    return synthetic({0: {i: [4000 + i % 97] for i in range(0, nwin, 2)},
                      1: {i: [6000 + i % 89] for i in range(1, nwin, 2)}})


def empty_cpus(n):
    doc = synthetic({c: {} for c in range(n)})
    return doc


class Cost(ImportCase):
    """Import and every read cost time O(n log n) and memory a small multiple of the file."""

    def assert_memory(self, peak, base, size, multiple):
        """What the process took beyond its needs at rest is at most multiple times the file's size."""
        print(f"\n    {size / 2**20:.1f} MiB: peak {peak / 2**20:.0f} MiB, {base / 2**20:.0f} at rest: "
              f"{(peak - base) / size:.1f} times the file", end=" ")
        if SANITIZED:
            return              # AddressSanitizer's redzones and quarantine are no measure of the code
        self.assertLess(peak - base, multiple * size, f"{size / 2**20:.1f} MiB file: peak {peak / 2**20:.0f} MiB, "
                                                      f"{base / 2**20:.0f} MiB at rest")

    def baseline(self):
        """Peak RSS of importing and showing a small real-looking file: what latscope needs whatever the file."""
        path = dump(synthetic({0: {0: [5000, 6000]}, 1: {0: [7000]}}), self.path("small.json"))
        db = self.path("small.db")
        p, _, imp = self.measured("import", path, "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        p, _, show = self.measured("show", "1", "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        return max(imp, show)

    def cost(self, path, db):
        """CPU seconds and peak RSS of importing path into db, then of showing it; and the run as shown
        with --json (checked against the schema)."""
        p, t1, m1 = self.measured("import", path, "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        rid = p.stdout.strip().split()[-1]
        p, t2, m2 = self.measured("show", rid, "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        p, t3, m3 = self.measured("show", rid, "--json", "--db", db)
        self.assertEqual(p.returncode, 0, p.stderr)
        return t1 + t2 + t3, max(m1, m2, m3), parse(p.stdout, what="show --json")

    def test_import_of_disjoint_windows_is_not_quadratic(self):
        """A relation of CPU times (not wall times) of the same work at two sizes: a stall of this host
        neither adds to the CPU time of the process nor comes near the factor between 4 and 12."""
        n = 5000
        t_small, _, _ = self.cost(dump(disjoint(n), self.path("n.json")), self.path("n.db"))
        path = dump(disjoint(4 * n), self.path("4n.json"))
        base = self.baseline()
        t_large, peak, shown = self.cost(path, self.db)
        self.assertEqual(len(shown["all"]["windows"]), 4 * n, "every window, merged by index")
        # Four times the windows: four times the time, give or take the allocator.  The merged row used
        # to insert each of CPU 1's windows among CPU 0's, moving those after it: 60,000 windows took 199 s,
        # not 6 (a01c2ad).  That quadratic part is 1.3 s at 5,000 windows and 21 s at 20,000, beside 0.5 and
        # 2 s of the rest: some twelve times, as it was at 15,000 and 60,000.
        self.assertLess(t_large, 7 * t_small, f"{n} windows: {t_small:.2f} s of CPU, {4 * n}: {t_large:.2f} s")
        self.assert_memory(peak, base, os.path.getsize(path), MEMORY_MULTIPLE)

    def test_import_of_many_empty_cpus_takes_memory_in_proportion_to_the_file(self):
        path = dump(empty_cpus(4096), self.path("cpus.json"))
        size = os.path.getsize(path)
        base = self.baseline()
        _, peak, shown = self.cost(path, self.db)
        self.assertEqual(len(shown["cpus"]), 4096)
        self.assert_memory(peak, base, size, MEMORY_MULTIPLE)

    def test_import_of_a_big_file_that_is_not_a_result_is_refused_before_it_is_parsed(self):
        path = self.path("big.json")
        with open(path, "w") as f:          # the costliest JSON per byte for a parser that builds a tree
            f.write('{"data": [' + ",".join(["{}"] * 10_000_000) + "]}")
        size = os.path.getsize(path)
        base = self.baseline()
        p, _, peak = self.measured("import", path, "--db", self.db)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("not a latscope result", p.stderr)
        self.assert_memory(peak, base, size, 1.5)      # the text, and nothing built of it

    def test_import_of_a_result_whose_tree_costs_more_than_its_budget_is_refused(self):
        doc = synthetic({0: {0: [5000]}})
        doc["params"] = {"x": [{}] * 3_000_000}     # valid JSON, and 72 bytes of tree per 3 of text
        path = dump(doc, self.path("wide.json"))
        size = os.path.getsize(path)
        base = self.baseline()
        p, _, peak = self.measured("import", path, "--db", self.db)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("more memory to read than", p.stderr)
        self.assert_memory(peak, base, size, 17)       # the text and at most 16 times it of tree

    def test_import_refuses_a_file_past_the_size_limit_before_reading_it(self):
        path = self.path("huge.json")
        with open(path, "wb") as f:
            f.write(b'{"schema": "latscope.result", "notes": ["')
            f.truncate(256 * 2**20 + 1)                 # sparse: costs no disk
        base = self.baseline()
        p, _, peak = self.measured("import", path, "--db", self.db)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr, f"latscope import: '{path}': larger than 256 MiB, the most a result may be\n"
                                   "Try 'latscope import --help'.\n")
        self.assert_memory(peak, base, 2**20, 1)        # not read

    def test_a_file_that_grows_past_the_size_limit_as_latscope_writes_it_is_refused_without_a_crash(self):
        # Kept parameters are written again indented: 150,000 numbers 1,900 arrays deep take 2 MB
        # compact and 270 MB as latscope writes them.  The refusal used to free that text twice.
        doc = synthetic({0: {0: [5000, 6000]}})
        doc["params"]["deep"] = "DEEP"
        deep = "[" * 1900 + ",".join(["1234567890123"] * 150000) + "]" * 1900
        path = self.path("deep.json")
        with open(path, "w") as f:
            f.write(json.dumps(doc, separators=(",", ":")).replace('"DEEP"', deep))
        p = run("import", path, "--db", self.db)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr, f"latscope import: '{path}': as latscope writes it, the result would be larger "
                                   "than 256 MiB, the most a result may be\nTry 'latscope import --help'.\n")
        self.assertFalse(os.path.exists(self.db), "nothing stored")


SUMMARY_KEYS = ("count", "min_ns", "max_ns", "mean_ns", "stddev_ns", "p50_ns", "p90_ns", "p99_ns", "p99_9_ns",
                "p99_99_ns", "warm_max_ns", "above", "above_pct", "above_total_ns")


def figures(doc):
    """What a result says of every CPU and of all: its summary figures and missed periods."""
    out = {}
    for block in doc["cpus"] + [doc["all"]]:
        for name in doc["metrics"]:
            m = block["metrics"][name]
            out[(block["cpu"], name)] = {k: m.get(k) for k in SUMMARY_KEYS}
        out[(block["cpu"], "missed")] = block["missed"]
    return out


class Trust(ImportCase):
    """What import stores is what latscope computed from the file's histograms, and the file must agree."""

    def file(self, doc, name="f.json"):
        return dump(doc, self.path(name))

    def test_import_refuses_an_all_block_that_disagrees_with_its_cpus(self):
        # The trust issue's example: one sample of 5 ms, and an "all" of 999,999 samples whose largest is 0.
        doc = synthetic({0: {0: [5_000_000]}})
        doc["all"]["metrics"]["latency"].update(count=999999, min_ns=0, max_ns=0, mean_ns=0.0, stddev_ns=0.0,
                                                histogram={"count": 999999, "buckets": [[0, 0, 999999]]})
        self.refused(self.file(doc), "all.metrics.latency: count 999999 is not what the CPUs add up to (1)")

        def lie(change):
            doc = synthetic({0: {0: [4_000_000, 5_000_000]}, 1: {0: [6_000_000]}})
            change(doc["all"], doc["all"]["metrics"]["latency"])
            return doc
        cases = ((lambda a, m: a.update(missed=7), "all: missed 7 is not what the CPUs add up to (0)"),
                 (lambda a, m: m.update(max_ns=7_000_000), "all.metrics.latency: max_ns 7000000 is not what the "
                                                            "CPUs add up to (6000000)"),
                 (lambda a, m: m.update(mean_ns=4.5e6), "all.metrics.latency: mean_ns 4500000 is not"),
                 (lambda a, m: m.update(stddev_ns=10.0), "all.metrics.latency: stddev_ns 10 is not"),
                 (lambda a, m: m.update(above=0, above_total_ns=0), "all.metrics.latency: above 0 is not"),
                 (lambda a, m: m["histogram"]["buckets"][0].__setitem__(2, 2) or m["histogram"]["buckets"].pop(1),
                  "all.metrics.latency.histogram: the buckets are not the sum of the CPUs'"),
                 (lambda a, m: m.update(p99_ns=4_000_000), "all.metrics.latency: p99_ns 4000000 is not"))
        for change, needle in cases:
            with self.subTest(needle):
                self.refused(self.file(lie(change)), needle)

    def test_import_refuses_a_probe_or_a_list_of_metrics_that_latscope_never_writes(self):
        def as_(probe, metric):
            doc = synthetic({0: {0: [5000]}})
            doc["probe"], doc["metrics"] = probe, [metric]
            for block in doc["cpus"] + [doc["all"]]:
                block["metrics"] = {metric: block["metrics"].pop("latency")}
                for w in block["windows"]:
                    w[metric] = w.pop("latency")
            return doc
        cases = ((as_("foo", "latency"), "probe 'foo' is not one of latscope's (timer, noise, wake, io, clock, attach)"),
                 (as_("timer", "gap"), "metrics: the timer probe writes latency, not gap"),
                 (as_("noise", "latency"), "metrics: the noise probe writes gap, not latency"),
                 (as_("wake", "latency"), "metrics: the wake probe writes latency, wake_call "
                                          "(and roundtrip), not latency"))
        for doc, needle in cases:
            with self.subTest(needle):
                self.refused(self.file(doc), needle)
        # the schema refuses them too
        for doc, _ in cases:
            self.assertTrue(schema_errors(doc))

    def test_import_refuses_figures_that_contradict_their_histograms(self):
        def lie(change):
            # buckets [4992, 5055] (ten samples) and [8960, 9087] (one)
            doc = synthetic({0: {0: [5000] * 5 + [5010] * 5 + [9000]}})
            doc["cpus"][0]["largest"] = [[300, 9000], [100, 5010]]
            change(doc["cpus"][0]["metrics"]["latency"], doc["cpus"][0]["windows"][0]["latency"])
            if change is largest:
                doc["cpus"][0]["largest"][0][1] = 3_600_000_000_000
            return doc

        def largest(m, w):
            pass
        cases = ((lambda m, w: m.update(min_ns=4000), "cpus[0].metrics.latency: min_ns 4000 is not in the "
                                                       "histogram's first bucket [4992, 5055]"),
                 (lambda m, w: m.update(min_ns=5100), "min_ns 5100 is not in the histogram's first bucket"),
                 (lambda m, w: m.update(max_ns=9999), "max_ns 9999 is not in the histogram's last bucket"),
                 (lambda m, w: m.update(mean_ns=1.0), "min, mean and max are not in order"),
                 (lambda m, w: m.update(p50_ns=9000), "cpus[0].metrics.latency: p50_ns 9000 is not what the "
                                                       "histogram gives (5000 to 5055)"),
                 (lambda m, w: w.update(max_ns=9100), "cpus[0].windows[0].latency: max_ns 9100 is not in the "
                                                       "histogram's last bucket"),
                 (lambda m, w: w.update(p50_ns=9000), "cpus[0].windows[0].latency: p50_ns 9000 is not what"),
                 (largest, "cpus[0]: largest[0]: 3600000000000 ns is not one of the 11 samples in [min_ns, max_ns]"))
        for change, needle in cases:
            with self.subTest(needle):
                self.refused(self.file(lie(change)), needle)

    def test_import_stores_what_latscope_recomputed_not_the_files_text(self):
        doc = synthetic({0: {0: [5000], 3: [7000, 7100]}, 1: {1: [6000]}})
        doc["junk"] = "not part of a result"
        doc["tool"] = {"name": "latscope", "version": "0.0.9-elsewhere"}
        m = doc["cpus"][0]["metrics"]["latency"]
        m.update(warm_max_ns=1, above_pct=55.5)           # derived figures: recomputed, not checked
        # the windows give no p50_ns and p99_ns (they are optional): computed from their histograms
        self.imported(self.file(doc))
        stored = self.stored(1)
        self.assertNotIn("junk", stored)
        self.assertEqual(stored["tool"], {"name": "latscope", "version": "0.0.9-elsewhere"}, "who wrote it is kept")
        m = stored["cpus"][0]["metrics"]["latency"]
        self.assertEqual(m["warm_max_ns"], 7100)
        self.assertEqual(m["above_pct"], 0.0)
        w = stored["cpus"][0]["windows"][1]["latency"]
        self.assertEqual(w["p99_ns"], bucket_value(bucket_index(7100)))
        self.assertEqual([w["index"] for w in stored["all"]["windows"]], [0, 1, 3])
        check_consistent(self, stored)
        with open(self.path("f.json")) as f:
            self.assertNotEqual(json.load(f), stored)  # the test's own input

    def test_import_derives_start_time_from_start_realtime_ns(self):
        doc = synthetic({0: {0: [5000]}}, start_ns=1700000000123456789)
        doc["start_time"] = "1999-12-31T23:59:59.000Z"
        self.imported(self.file(doc))
        self.assertEqual(self.stored(1)["start_time"], "2023-11-14T22:13:20.123Z")
        p = self.lat("runs")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("2023-11-14 22:13:20", p.stdout)
        self.assertNotIn("1999", p.stdout)


class Property(ImportCase):
    """Any stored run, shown with --json and imported into a fresh store, has the very same figures."""

    def again(self, db, rid, latscope_wrote=True):
        """latscope_wrote False: a document no latscope writes (a fuzz seed the schema refuses), which the
        reader takes all the same; it reads back unchanged, but its show --json cannot validate either."""
        shown = self.path("shown.json")
        p = self.lat("show", str(rid), "--json", db=db)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(shown, "w") as f:
            f.write(p.stdout)
        fresh = self.path("fresh-%s-%d.db" % (os.path.basename(db), rid))
        again = self.imported(shown, db=fresh)
        if latscope_wrote:
            before, after = parse(p.stdout), self.stored(again, os.path.basename(fresh))
        else:
            p2 = self.lat("show", str(again), "--json", db=fresh)
            self.assertEqual(p2.returncode, 0, p2.stderr)
            before, after = json.loads(p.stdout), json.loads(p2.stdout)
        self.assertEqual(figures(after), figures(before))
        before.pop("id")
        after.pop("id")
        self.assertEqual(after, before, "the whole result reads back the same")
        return after

    def measure(self, *args):
        p = self.lat(*args, "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        return int(p.stdout.strip().split()[-3]) if "stored as run" in p.stdout else None

    def last_id(self):
        p = self.lat("runs")
        return int([l for l in p.stdout.splitlines() if l.strip()[:1].isdigit()][-1].split()[0])

    def test_a_stored_run_shown_and_imported_again_has_the_same_figures(self):
        cpus = ",".join(map(str, CPUS))
        data = self.path("data")
        p = run("io", "--make", data, "--size", "4M")
        self.assertEqual(p.returncode, 0, p.stderr)
        for args in (["timer", "-a", cpus, "-l", "400", "-i", "500us", "--window", "50ms"],
                     ["noise", "-a", str(CPUS[-1]), "-D", "300ms", "--window", "100ms"],
                     ["wake", "-l", "300", "--window", "50ms"],
                     ["io", data, "-n", "300", "--window", "50ms"],
                     ["timer", "-a", cpus, "-l", "200", "--window", "50ms", "--label", "m=1"]):
            with self.subTest(args[0]):
                self.lat(*args, "-q")
                rid = self.last_id()
                check_consistent(self, self.again(self.db, rid))
        p = self.lat("merge", "1", str(self.last_id()), "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.again(self.db, self.last_id())

    def test_the_fuzz_seeds_read_back_with_the_same_figures(self):
        seeds = sorted(f for f in os.listdir(FUZZ_SEEDS) if f.startswith("seed-"))
        self.assertTrue(seeds)
        accepted = 0
        for name in seeds:
            db = self.path(name + ".db")
            p = run("import", os.path.join(FUZZ_SEEDS, name), "--db", db)
            if p.returncode != 0:
                continue                    # a seed of a refused kind
            accepted += 1
            with open(os.path.join(FUZZ_SEEDS, name)) as f:
                shaped = not schema_errors(json.load(f))
            with self.subTest(name):
                self.again(db, 1, latscope_wrote=shaped)
        self.assertGreater(accepted, len(seeds) // 2)


class Overflow(ImportCase):
    def test_merge_refuses_counts_that_would_overflow(self):
        for i in (1, 2):
            self.imported(dump(huge(2 ** 62, start_ns=1700000000000000000 + i), self.path("%d.json" % i)))
        p = self.lat("merge", "1", "2", "-q")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(p.stderr, "latscope merge: runs 1 and 2 cannot be merged: "
                                   "cpu 0's sample count would reach 2^63\n")
        self.assertEqual(self.lat("show", "3").returncode, 1, "nothing was stored")
        # One sample fewer fits, and the sum is stored and read back.
        self.imported(dump(huge(2 ** 62 - 1, start_ns=1700000000000000003), self.path("3.json")))
        p = self.lat("merge", "1", "3", "-q")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.stored(4)["all"]["metrics"]["latency"]["count"], INT64_MAX)

    def test_merge_help_and_man_page_say_what_cannot_be_merged(self):
        p = run("merge", "--help")
        self.assertIn("2^63", p.stdout)
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "doc", "latscope.1")) as f:
            self.assertIn("2^63", f.read())


if __name__ == "__main__":
    main()
