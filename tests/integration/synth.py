"""Results made from values the test chooses: a known answer for what compare and import must say."""
import copy
import datetime
import math


def hist_index(v):
    if v < 128:
        return v
    msb = v.bit_length() - 1
    return 128 + (msb - 7) * 64 + ((v >> (msb - 6)) & 63)


def bucket_low(i):
    if i < 128:
        return i
    k, sub = divmod(i - 128, 64)
    return (64 + sub) << (k + 1)


def bucket_high(i):
    return bucket_low(i + 1) - 1


def histogram(values):
    counts = {}
    for v in values:
        counts[hist_index(v)] = counts.get(hist_index(v), 0) + 1
    return [[bucket_low(i), bucket_high(i), counts[i]] for i in sorted(counts)]


def percentile(values, p):
    """latscope's nearest rank, as the bucket's midpoint, within the exact min and max."""
    s = sorted(values)
    rank = max(1, math.ceil(p / 100.0 * len(s) - 1e-9))
    i = hist_index(s[rank - 1])
    mid = bucket_low(i) + (bucket_high(i) - bucket_low(i)) // 2
    return min(max(mid, s[0]), s[-1])


def stats(values):
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
    return {"count": n, "min_ns": min(values), "max_ns": max(values), "mean_ns": mean, "stddev_ns": sd}


def metric(values, threshold):
    above = [v for v in values if v > threshold]
    m = stats(values)
    m.update({"above": len(above), "above_total_ns": sum(above),
              "histogram": {"relative_error": 1 / 128, "count": len(values), "buckets": histogram(values)}})
    return m


def result(template, windows, start_ns, window_ns=10**9):
    """template (a real result) with one CPU whose windows hold these values (ns) each."""
    doc = copy.deepcopy(template)
    name = doc["metrics"][0]
    thr = doc["threshold_ns"]
    every = [v for w in windows for v in w]
    cpu = copy.deepcopy(doc["cpus"][0])
    for key in ("interrupts", "softirqs", "long_run"):
        cpu.pop(key, None)      # no long_run: read as a file that did not count spikes
    summary = metric(every, thr)
    for p, key in ((50, "p50_ns"), (90, "p90_ns"), (99, "p99_ns"), (99.9, "p99_9_ns"), (99.99, "p99_99_ns")):
        summary[key] = percentile(every, p)
    warm = [v for w in windows[doc["warmup_windows"]:] for v in w]
    summary["warm_max_ns"] = max(warm) if warm else None
    summary["above_pct"] = 100.0 * summary["above"] / len(every)
    cpu["metrics"] = {name: summary}
    cpu["missed"] = 0
    cpu["windows"] = []
    for k, w in enumerate(windows):
        wm = metric(w, thr)
        wm["p50_ns"], wm["p99_ns"] = percentile(w, 50), percentile(w, 99)
        cpu["windows"].append({"index": k, "start_ns": k * window_ns, "end_ns": (k + 1) * window_ns, "missed": 0,
                               name: wm})
    top = sorted(((v, i) for i, v in enumerate(every)), reverse=True)[:16]
    cpu["largest"] = [[i * 1000, v] for v, i in top]
    doc["cpus"] = [cpu]
    doc["all"] = dict(copy.deepcopy(cpu), cpu="all")
    doc.pop("machine", None)
    doc.pop("trace", None)
    doc["start_realtime_ns"] = start_ns
    doc["start_time"] = datetime.datetime.fromtimestamp(start_ns / 1e9, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (start_ns // 10**6 % 1000)
    doc["elapsed_ns"] = len(windows) * window_ns
    doc["interrupted"] = False
    doc["stop_reason"] = "duration"
    return doc
