"""Line and branch coverage per directory of src/, from a gcov build's counts.

Usage: python3 tests/coverage.py BUILD_DIR   (./check --coverage runs it)

Runs gcovr (Debian package gcovr) over BUILD_DIR, writes its HTML report to
BUILD_DIR/coverage/index.html (a page a file) and prints one row a directory of
src/ (files directly in src/ as "src").  Exit status 1 when a directory has
less than FLOOR per cent of its lines covered, 2 when gcovr fails.
"""
import json
import os
import subprocess
import sys

FLOOR = 80.0


def main(build):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    summary = os.path.join(build, "coverage-summary.json")
    html = os.path.join(build, "coverage")
    os.makedirs(html, exist_ok=True)
    cmd = ["gcovr", "-r", root, "--object-directory", build, "-f", os.path.join(root, "src") + "/",
           "--json-summary", summary, "--html-details", os.path.join(html, "index.html")]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print("coverage: gcovr failed: " + (p.stderr.strip().splitlines() or ["?"])[-1], file=sys.stderr)
        return 2
    with open(summary) as f:
        files = json.load(f)["files"]
    dirs = {}
    for entry in files:
        name = entry["filename"]
        d = os.path.dirname(name) if name.count("/") > 1 else "src"
        t = dirs.setdefault(d, [0, 0, 0, 0])
        t[0] += entry["line_covered"]
        t[1] += entry["line_total"]
        t[2] += entry["branch_covered"]
        t[3] += entry["branch_total"]
    low = []
    print("%-14s %7s %7s %8s %8s %8s" % ("directory", "lines", "covered", "line %", "branches", "branch %"))
    for d in sorted(dirs):
        lc, lt, bc, bt = dirs[d]
        lp = 100.0 * lc / lt if lt else 100.0
        bp = 100.0 * bc / bt if bt else 100.0
        print("%-14s %7d %7d %7.1f%% %8d %7.1f%%" % (d, lt, lc, lp, bt, bp))
        if lp < FLOOR:
            low.append("%s (%.1f%%)" % (d, lp))
    lc, lt, bc, bt = (sum(t[i] for t in dirs.values()) for i in range(4))
    print("%-14s %7d %7d %7.1f%% %8d %7.1f%%" % ("all", lt, lc, 100.0 * lc / lt, bt, 100.0 * bc / bt))
    print("coverage: HTML report in " + os.path.join(html, "index.html"))
    if low:
        print("coverage: under %.0f%% of lines: %s" % (FLOOR, ", ".join(low)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
