#!/usr/bin/env python3
"""--trace and monitor --trace-spikes mount tracefs where it is not mounted (as
root), say so, and unmount only what they mounted.  Every test runs in a
private mount namespace (unshare -m --propagation private): the machine's own
tracefs, which other tests use at the same time, is never unmounted."""
import os
import shutil
import subprocess

from harness import LATSCOPE, TempDirCase, load, main, needs, online_cpus

CPU = online_cpus()[-1]
MOUNTED = "tracefs was not mounted: latscope mounted it at '/sys/kernel/tracing'"
UNMOUNTED = "unmounted tracefs from '/sys/kernel/tracing', which latscope had mounted"

# Every tracefs and debugfs (whose tracing/ the kernel mounts on use) of the namespace gone.
UNMOUNT_ALL = ("for i in 1 2 3 4 5 6; do "
               "d=$(awk '$3 == \"tracefs\" || $3 == \"debugfs\" { print $2; exit }' /proc/self/mounts); "
               "[ -n \"$d\" ] && umount -l \"$d\"; done; "
               "grep -E ' (tracefs|debugfs) ' /proc/self/mounts && exit 99; ")
AFTER = "echo rc=$?; echo '--mounts--'; grep ' tracefs ' /proc/self/mounts; true"
# The runs' length is not the subject: a count of samples, enough for the trace to match some.
SAMPLES = "300"


@needs(root=True, tracefs=True, programs=("unshare",))
class MountsTracefs(TempDirCase):
    """Stalls: every test judges a relation they cannot turn (what is mounted, said and traced); none
    measures a latency."""

    def in_namespace(self, script, *argv, timeout=120):
        """script run by sh in a private mount namespace, with argv as "$@"; its
        output, its rc=N line and the tracefs mounts left in the namespace."""
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", *argv],
                           capture_output=True, text=True, timeout=timeout)
        self.assertNotEqual(p.returncode, 99, "tracefs could not be unmounted in the namespace: " + p.stdout)
        out, _, mounts = p.stdout.partition("--mounts--\n")
        return out, p.stderr, mounts

    def timer(self, *extra):
        # tracefs's backend: the BPF collector needs no tracefs (test_bpf_traces_with_no_tracefs_and_mounts_none)
        return [LATSCOPE, "timer", "-a", str(CPU), "-l", SAMPLES, "--trace", "--trace-backend", "tracefs",
                "--no-store", *extra]

    def test_trace_mounts_tracefs_where_it_is_not_says_so_and_unmounts_it_after(self):
        out = self.path("t.json")
        stdout, stderr, mounts = self.in_namespace(UNMOUNT_ALL + '"$@"; ' + AFTER, *self.timer("--json", out))
        self.assertIn("rc=0", stdout, stderr)
        self.assertIn(MOUNTED + " for this run", stderr)
        doc = load(out)
        self.assertIn("trace", doc, doc["notes"])          # traced
        self.assertGreater(doc["trace"]["cpus"][0]["matched"], 0)
        self.assertTrue(any(n.startswith(MOUNTED) for n in doc["notes"]), doc["notes"])
        self.assertIn(UNMOUNTED, doc["notes"])
        self.assertEqual(mounts, "", "tracefs is unmounted again")

    @needs(bpf=True)
    def test_bpf_traces_with_no_tracefs_and_mounts_none(self):
        out = self.path("t.json")
        stdout, stderr, mounts = self.in_namespace(UNMOUNT_ALL + '"$@"; ' + AFTER, LATSCOPE, "timer", "-a", str(CPU),
                                                   "-l", SAMPLES, "--trace", "--no-store", "--json", out)
        self.assertIn("rc=0", stdout, stderr)
        self.assertNotIn("mounted", stderr)
        trace = load(out)["trace"]
        self.assertEqual(trace["backend"], "bpf")
        self.assertGreater(trace["cpus"][0]["matched"], 0.9 * trace["cpus"][0]["samples"])
        self.assertEqual(mounts, "")

    def test_with_tracefs_mounted_nothing_is_mounted_or_unmounted(self):
        out = self.path("t.json")
        stdout, stderr, mounts = self.in_namespace('"$@"; ' + AFTER, *self.timer("--json", out))
        self.assertIn("rc=0", stdout, stderr)
        self.assertNotIn("mounted", stderr)
        doc = load(out)
        self.assertIn("trace", doc, doc["notes"])
        self.assertFalse([n for n in doc["notes"] if "mounted" in n], doc["notes"])
        self.assertIn(" /sys/kernel/tracing tracefs ", mounts)

    @needs(programs=("runuser",))
    def test_without_root_tracefs_is_not_mounted_and_the_run_says_why(self):
        exe = self.path("latscope-nobody")
        shutil.copy(LATSCOPE, exe)
        os.chmod(exe, 0o755)
        stdout, stderr, mounts = self.in_namespace(UNMOUNT_ALL + 'runuser -u nobody -- "$@"; ' + AFTER, exe, "timer",
                                                   "-a", str(CPU), "-l", SAMPLES, "--trace", "--trace-backend",
                                                   "tracefs", "-q", "--no-store")
        self.assertIn("rc=0", stdout, stderr)
        self.assertIn("not traced: tracefs is not mounted and cannot be mounted at '/sys/kernel/tracing': "
                      "Operation not permitted (mounting it needs root)", stderr)
        self.assertEqual(mounts, "")

    def test_after_a_sigkill_the_guard_unmounts_what_latscope_mounted(self):
        ns = os.stat("/proc/self/ns/pid").st_ino
        # A wait for a state, polled: the instance made, then the guard done.
        script = (UNMOUNT_ALL + '"$@" & p=$!; i=0; '
                  'while [ ! -d /sys/kernel/tracing/instances/latscope-%d-$p ] && [ $i -lt 400 ]; do '
                  'sleep 0.05; i=$((i + 1)); done; '
                  'grep -q " tracefs " /proc/self/mounts && echo mounted-while-running; '
                  'kill -KILL $p; wait $p; i=0; '
                  'while grep -q " tracefs " /proc/self/mounts && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done; '
                  % ns) + AFTER
        stdout, stderr, mounts = self.in_namespace(script, LATSCOPE, "timer", "-a", str(CPU), "-D", "60", "--trace",
                                                   "--trace-backend", "tracefs", "-q", "--no-store")
        self.assertIn("mounted-while-running", stdout, stderr)
        self.assertEqual(mounts, "", "the guard unmounted tracefs")

    @needs(cpus=2)      # the monitor measures on a CPU of its own
    def test_monitor_trace_spikes_mounts_tracefs_and_unmounts_it_at_the_end(self):
        db = self.path("runs.db")
        script = (UNMOUNT_ALL + '"$@" 2>"$ERR" & p=$!; i=0; '
                  'while ! grep -q serving "$ERR" && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done; '
                  'kill -TERM $p; wait $p; ' + AFTER)
        err = self.path("monitor.err")
        env_script = 'ERR="%s"; ' % err + script
        stdout, _, mounts = self.in_namespace(env_script, LATSCOPE, "monitor", "--listen", "127.0.0.1:0", "--db", db,
                                              "-a", str(CPU), "--trace-spikes", "1ms")
        with open(err) as f:
            stderr = f.read()
        self.assertIn("rc=0", stdout, stderr)
        self.assertNotIn("not traced", stderr)
        self.assertIn("--trace-spikes: " + MOUNTED + " for the monitor", stderr)
        self.assertIn("--trace-spikes: " + UNMOUNTED, stderr)
        self.assertEqual(mounts, "", "tracefs is unmounted again")


if __name__ == "__main__":
    main()
