"""What ./check ran, in one closing line, and every skip with its reason.

Usage: python3 tests/summary.py [--failed-step NAME]... LOG...

Each LOG is a meson testlog.json (./check keeps one a run, named N-BUILD.json)
or a build directory (its meson-logs/testlog.json).  Counts tests, not meson tests:
an integration module says its counts in a harness.COUNT_MARK line, a cmocka
program in its summary lines; any other meson test (a fuzz replay) counts as
one.  A meson test that failed without saying so (a crash, a timeout) counts
one failure more.

A test may skip only for what this machine or this build cannot have, and its
reason then begins with "this machine" or "this build" (harness.MACHINE_REASONS,
tests/unit/skipwhy.h).  Any other skip names something ./check or
scripts/install-deps could have provided: it is listed apart and counted as a
failure, as is each --failed-step (a step of ./check that is no test, such as
clang-tidy).  Each failure is followed by why, as its output said it (the
failing tests' names and their assertion or error lines), so that a log that
keeps only the summary still tells the cause.  Exit status: 0 when nothing
failed, 1 otherwise.
"""
import json
import os
import re
import sys

SKIP_MARK = "latscope-skip: "
COUNT_MARK = "latscope-count: "
MACHINE_REASONS = ("this machine", "this build")
CMOCKA = {name: re.compile(r"^\[  %s *\] (\d+) test" % name) for name in ("PASSED", "SKIPPED", "FAILED")}


def counts_of(record):
    """(passed, failed, skipped) of one meson test."""
    out = record.get("stdout") or ""
    said = None
    for line in out.splitlines():
        if line.startswith(COUNT_MARK):
            said = tuple(int(x) for x in line[len(COUNT_MARK):].split())
    if said is None and "[==========]" in out:
        said = tuple(sum(int(m.group(1)) for m in map(CMOCKA[k].match, out.splitlines()) if m)
                     for k in ("PASSED", "FAILED", "SKIPPED"))
    ok = record["result"] in ("OK", "SKIP", "EXPECTEDFAIL")
    if said is None:
        return {"OK": (1, 0, 0), "SKIP": (0, 0, 1)}.get(record["result"], (0, 1, 0))
    passed, failed, skipped = said
    if not ok and failed == 0:
        failed = 1                        # it crashed, timed out or exited non-zero without saying
    return passed, failed, skipped


# unittest's "FAIL: test (...)" and its exception line; cmocka's failed tests and its messages.
WHY = re.compile(r"^(FAIL|ERROR): |^\w*(Error|Exception)\b.*: |^\[  (FAILED|ERROR) +\] |^\[   LINE   \] |"
                 r"^Timeout|TIMEOUT|^==\d+==ERROR|^SUMMARY: ")
WHY_LINES, WHY_WIDTH = 8, 300


def why_failed(record):
    """The lines of a failed meson test's output that say what failed, the last WHY_LINES of them."""
    out = (record.get("stdout") or "") + "\n" + (record.get("stderr") or "")     # unittest writes to stderr
    lines = [line.strip() for line in out.splitlines() if WHY.search(line.strip())]
    return [line if len(line) <= WHY_WIDTH else line[:WHY_WIDTH] + "..." for line in lines[-WHY_LINES:]]


def main(args):
    passed = failed = skipped = 0
    skips, unprovided, broken = [], [], []
    builds = []
    while args:
        arg = args.pop(0)
        if arg == "--failed-step" and args:
            broken.append(args.pop(0))
            failed += 1
        else:
            builds.append(arg)
    for build in builds:
        log = build
        if os.path.isdir(build):
            log = os.path.join(build, "meson-logs", "testlog.json")
        else:
            build = re.sub(r"^\d+-|\.json$", "", os.path.basename(build))
        if not os.path.exists(log):
            continue
        with open(log) as f:
            records = [json.loads(line) for line in f if line.strip()]
        for r in records:
            name = r["name"].split(":", 1)[-1].strip()
            p, fl, s = counts_of(r)
            passed, failed, skipped = passed + p, failed + fl, skipped + s
            if fl:
                broken.append(f"{build}: {name}: {r['result']}")
                broken.extend("    " + line for line in why_failed(r))
            reasons = [line[len(SKIP_MARK):] for line in (r.get("stdout") or "").splitlines()
                       if line.startswith(SKIP_MARK)]
            if r["result"] == "SKIP" and not reasons:
                reasons = ["(exit 77, no reason given)"]
            for why in reasons:
                test, _, reason = why.partition(": ")
                line = f"{build}: {name}: {why}"
                (skips if reason.startswith(MACHINE_REASONS) else unprovided).append(line)
    failed += len(unprovided)
    skipped = max(0, skipped - len(unprovided))
    if broken:
        print("check: failed:")
        print("\n".join("  " + b for b in broken))
    if unprovided:
        print("check: skipped for what the check could have provided (counted as failures):")
        print("\n".join("  " + u for u in unprovided))
    print(f"check: {passed} passed, {failed} failed, {skipped} skipped")
    if skips:
        print("check: skipped, for what this machine or build cannot have:")
        print("\n".join("  " + s for s in skips))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
