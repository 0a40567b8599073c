"""Importing results from other hosts: the store holds only what latscope recomputed and can read back,
and no file costs time or memory out of proportion to its size."""
import json
import math
import os
import resource
import subprocess
import unittest

from harness import LATSCOPE, TempDirCase, check_consistent, load, main, online_cpus, run

INT64_MAX = 2 ** 63 - 1
CPUS = online_cpus()[:2]
TWO = len(CPUS) == 2
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
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":") if compact else None, indent=None if compact else 1)
    return path


def run_measured(*args, timeout=600):
    """Run latscope; returns (CompletedProcess-like, cpu_seconds, peak_rss_bytes) of that process alone."""
    outp, errp = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.dup2(outp[1], 1)
            os.dup2(errp[1], 2)
            os.execv(LATSCOPE, [LATSCOPE, *args])
        finally:
            os._exit(127)
    os.close(outp[1])
    os.close(errp[1])
    out, err = b"", b""
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(outp[0], selectors.EVENT_READ, "out")
    sel.register(errp[0], selectors.EVENT_READ, "err")
    open_fds = 2
    while open_fds:
        for key, _ in sel.select(timeout):
            data = os.read(key.fd, 65536)
            if not data:
                sel.unregister(key.fd)
                os.close(key.fd)
                open_fds -= 1
            elif key.data == "out":
                out += data
            else:
                err += data
    _, status, ru = os.wait4(pid, 0)
    result = subprocess.CompletedProcess([LATSCOPE, *args], os.waitstatus_to_exitcode(status),
                                         out.decode(errors="replace"), err.decode(errors="replace"))
    return result, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024


class ImportCase(TempDirCase):
    def setUp(self):
        super().setUp()
        self.db = self.path("runs.db")

    def lat(self, *args, db=None, timeout=300):
        return run(*args, "--db", db or self.db, timeout=timeout)

    def imported(self, path, db=None):
        p = self.lat("import", path, db=db)
        self.assertEqual(p.returncode, 0, p.stderr)
        return int(p.stdout.strip().split()[-1])

    def refused(self, path, *needles):
        p = self.lat("import", path)
        self.assertEqual(p.returncode, 2, f"{path}: {p.stdout}{p.stderr}")
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        for needle in needles:
            self.assertIn(needle, p.stderr)
        self.assertFalse(os.path.exists(self.db) and self.lat("runs").stdout.count("\n") > 1, "nothing was stored")
        return p.stderr


class RunIds(ImportCase):
    def test_show_of_a_long_range_of_run_ids_says_one_run_id_at_once(self):
        dump(synthetic({0: {0: [5000]}}), self.path("one.json"))
        self.imported(self.path("one.json"))
        p, short, _ = run_measured("show", "1-10", "--db", self.db)
        self.assertEqual(p.returncode, 2)
        self.assertIn("one run id, please", p.stderr)
        p, long, _ = run_measured("show", "1-99999", "--db", self.db)
        self.assertEqual(p.returncode, 2)
        self.assertIn("one run id, please", p.stderr)
        # Sorting 10^5 ids costs milliseconds; comparing each with those before it, seconds.
        self.assertLess(long, 20 * short + 0.05, f"1-99999 took {long:.3f} s of CPU, 1-10 {short:.3f} s")


class Overflow(ImportCase):
    def test_merge_refuses_counts_that_would_overflow(self):
        for i in (1, 2):
            self.imported(dump(huge(2 ** 62, start_ns=1700000000000000000 + i), self.path("%d.json" % i)))
        p = self.lat("merge", "1", "2", "-q")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(p.stderr, "latscope merge: runs 1 and 2 cannot be merged: "
                                   "cpu 0's sample count would reach 2^63\n")
        self.assertEqual(self.lat("show", "3").returncode, 2, "nothing was stored")
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
