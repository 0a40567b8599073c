"""List what a meson test run skipped, and why: the tests meson shows as SKIP
(exit 77) and every skip an integration module reported inside a test that
passed (harness.SKIP_MARK lines).  Usage: python3 tests/skips.py BUILD_DIR.
Prints nothing when nothing was skipped."""
import json
import os
import sys

MARK = "latscope-skip: "


def main(build):
    log = os.path.join(build, "meson-logs", "testlog.json")
    with open(log) as f:
        records = [json.loads(line) for line in f if line.strip()]
    for r in records:
        name = r["name"].split(":", 1)[-1]
        reasons = [line[len(MARK):] for line in (r.get("stdout") or "").splitlines() if line.startswith(MARK)]
        if r["result"] == "SKIP" and not reasons:
            print(f"{build}: SKIP {name} (exit 77, no reason given)")
        for why in reasons:
            print(f"{build}: {'SKIP' if r['result'] == 'SKIP' else 'skipped in'} {name}: {why}")


if __name__ == "__main__":
    main(sys.argv[1])
