"""latscope host, the agent on a VM's host (src/host, src/cli/host.c), with a fake VM: a Python
child whose threads are named as QEMU names its vCPU threads ("CPU 0/KVM"), and which can answer
QMP on a unix socket (greeting, qmp_capabilities, query-cpus-fast) as QEMU does.

Nothing here judges a latency: the time exchange is checked against the client's own clock (the
same CLOCK_MONOTONIC on the same machine), an order that holds however slow the machine is."""
import json
import os
import re
import select
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import unittest

import harness
from harness import LATSCOPE, run

# The fake VM: argv is THREAD-NAMES (comma-separated) QMP-SOCKET|- -name NAME.  It names its
# threads, serves QMP when asked, prints {"pid":..,"tids":{name: tid}} and lives until stdin closes.
FAKE_VM = r'''
import json, os, socket, sys, threading
names = sys.argv[1].split(",")
qmp_path = sys.argv[2] if sys.argv[2] != "-" else None
tids, lock, ready = {}, threading.Lock(), threading.Semaphore(0)

spin = os.environ.get("FAKE_VM_SPIN")

def vcpu(name):
    tid = threading.get_native_id()
    with open("/proc/self/task/%d/comm" % tid, "w") as f:
        f.write(name)
    with lock:
        tids[name] = tid
    ready.release()
    if name == spin:
        while True:          # a vCPU that runs its guest without a halt
            pass
    threading.Event().wait()

def qmp_client(conn):
    f = conn.makefile("rw")
    f.write(json.dumps({"QMP": {"version": {"qemu": {"major": 8, "minor": 2, "micro": 0}}, "capabilities": []}}) + "\n")
    f.flush()
    for line in f:
        cmd = json.loads(line).get("execute")
        if cmd == "qmp_capabilities":
            f.write(json.dumps({"return": {}}) + "\n")
        elif cmd == "query-cpus-fast":
            f.write(json.dumps({"event": "RESUME", "timestamp": {"seconds": 1, "microseconds": 0}}) + "\n")
            cpus = [{"cpu-index": i, "thread-id": tids[n], "qom-path": "/machine/unattached/device[%d]" % i,
                     "target": "x86_64"} for i, n in enumerate(names)]
            f.write(json.dumps({"return": cpus}) + "\n")
        else:
            f.write(json.dumps({"error": {"class": "CommandNotFound", "desc": "no %s" % cmd}}) + "\n")
        f.flush()
    conn.close()

def qmp_server():
    s = socket.socket(socket.AF_UNIX)
    s.bind(qmp_path)
    s.listen(4)
    ready.release()
    while True:
        conn, _ = s.accept()
        threading.Thread(target=qmp_client, args=(conn,), daemon=True).start()

for n in names:
    threading.Thread(target=vcpu, args=(n,), daemon=True).start()
if qmp_path:
    threading.Thread(target=qmp_server, daemon=True).start()
for _ in range(len(names) + bool(qmp_path)):
    ready.acquire()
print(json.dumps({"pid": os.getpid(), "tids": tids}), flush=True)
sys.stdin.read()
os._exit(0)
'''

START_LINE = re.compile(r"^latscope host: VM pid (\d+) '([^']*)', (\d+) vCPUs? by ([^:]+):((?: \d+=\d+)*); "
                        r"listening on (\S+?)(, a secret required)?$")


class FakeVM:
    def __init__(self, tc, names=("CPU 0/KVM", "CPU 1/KVM"), qmp=None, spin=None):
        self.name = "fakevm-%d-%d" % (os.getpid(), id(self) % 100000)
        env = dict(os.environ, FAKE_VM_SPIN=spin or "")
        self.proc = subprocess.Popen([sys.executable, "-c", FAKE_VM, ",".join(names), qmp or "-", "-name", self.name],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        tc.addCleanup(self.close)
        info = json.loads(self.proc.stdout.readline())
        self.pid, self.tids = info["pid"], info["tids"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(10)
        self.proc.stdout.close()


class Agent:
    """latscope host started in the background; its start-up line read."""

    def __init__(self, tc, *args, record=False):
        # Recording is TestRecording's subject (and the guest tests' in test_guest_host.py); elsewhere
        # it only costs time, a lot of it under AddressSanitizer (libtracefs's page buffers).
        args = args if record else (*args, "--no-record")
        self.proc = subprocess.Popen([LATSCOPE, "host", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, preexec_fn=harness.hangup_as_default)
        tc.addCleanup(self.close)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        self.line = self.proc.stdout.readline().rstrip("\n") if ready else ""
        m = START_LINE.match(self.line)
        if not m:
            self.proc.kill()
            raise AssertionError("no start-up line: %r %s" % (self.line, self.proc.stderr.read()))
        self.pid, self.how, self.where = int(m.group(1)), m.group(4), m.group(6)
        self.vcpus = dict(tuple(map(int, p.split("="))) for p in m.group(5).split())

    def connect(self):
        if self.where.startswith("unix:"):
            s = socket.socket(socket.AF_UNIX)
            s.connect(self.where[5:])
        else:
            host, port = self.where.rsplit(":", 1)
            s = socket.create_connection((host, int(port)))
        s.settimeout(10)
        return Client(s)

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, out, err

    def close(self):
        harness.kill_and_close(self.proc)


class Client:
    def __init__(self, sock):
        self.sock, self.buf = sock, b""
        self.greeting = self.read()

    def read(self):
        """The next line as JSON, or None when the agent closed the connection."""
        while b"\n" not in self.buf:
            try:
                data = self.sock.recv(65536)
            except ConnectionResetError:
                data = b""
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def ask(self, msg):
        self.sock.sendall((json.dumps(msg) + "\n").encode())
        return self.read()

    def hello(self, auth=None):
        msg = {"op": "hello", "version": 1}
        if auth:
            msg["auth"] = auth
        return self.ask(msg)

    def close(self):
        self.sock.close()


def hmac_of(secret, nonce):
    import hashlib
    import hmac
    return hmac.new(secret, nonce.encode(), hashlib.sha256).hexdigest()


class TestFinding(harness.TempDirCase):
    def test_the_agent_finds_the_vcpus_by_thread_names_and_says_so(self):
        vm = FakeVM(self)
        for spec in (str(vm.pid), vm.name):
            a = Agent(self, "--vm", spec, "--listen", "unix:" + self.path("h.sock"))
            self.assertEqual(a.pid, vm.pid)
            self.assertEqual(a.how, "thread names")
            self.assertEqual(a.vcpus, {0: vm.tids["CPU 0/KVM"], 1: vm.tids["CPU 1/KVM"]})
            self.assertIn("'%s'" % vm.name, a.line)
            self.assertEqual(a.stop()[0], 0)

    def test_the_agent_finds_the_vcpus_by_qmp_and_says_so(self):
        qmp = self.path("qmp.sock")
        vm = FakeVM(self, names=("worker-a", "worker-b"), qmp=qmp)
        a = Agent(self, "--vm", "qmp:" + qmp, "--listen", "unix:" + self.path("h.sock"))
        self.assertEqual(a.pid, vm.pid)
        self.assertEqual(a.how, "QMP query-cpus-fast")
        self.assertEqual(a.vcpus, {0: vm.tids["worker-a"], 1: vm.tids["worker-b"]})
        c = a.connect()
        hello = c.hello()
        self.assertEqual(hello["found_by"], "qmp")
        self.assertEqual([v["name"] for v in hello["vcpus"]], ["worker-a", "worker-b"])

    def test_firecracker_and_cloud_hypervisor_thread_names_are_known(self):
        for names in (("fc_vcpu 0", "fc_vcpu 1"), ("vcpu0", "vcpu1")):
            vm = FakeVM(self, names=names)
            a = Agent(self, "--vm", str(vm.pid), "--listen", "unix:" + self.path("h.sock"))
            self.assertEqual(a.vcpus, {0: vm.tids[names[0]], 1: vm.tids[names[1]]})
            a.stop()

    def test_a_process_that_is_no_vm_is_refused(self):
        p = run("host", "--vm", str(os.getpid()), "--listen", "unix:" + self.path("h.sock"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("has no thread named as a vCPU", p.stderr)
        self.assertIn("Try 'latscope host --help'.", p.stderr)

    def test_a_vcpu_tid_that_is_not_a_thread_of_the_vm_is_refused(self):
        vm = FakeVM(self)
        p = run("host", "--vm", str(vm.pid), "--vcpu", "0=%d" % os.getpid(), "--listen", "unix:" + self.path("h.sock"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.splitlines()[0], "latscope host: option '--vcpu': '0=%d': %d is not a thread of pid %d"
                         % (os.getpid(), os.getpid(), vm.pid))
        a = Agent(self, "--vm", str(vm.pid), "--vcpu", "1=%d" % vm.tids["CPU 0/KVM"], "--listen",
                  "unix:" + self.path("h.sock"))
        self.assertEqual((a.how, a.vcpus), ("--vcpu", {1: vm.tids["CPU 0/KVM"]}))


class TestProtocol(harness.TempDirCase):
    def setUp(self):
        super().setUp()
        self.vm = FakeVM(self)

    def exchange_times(self, agent):
        c = agent.connect()
        self.assertEqual(c.greeting["latscope_host"], 1)
        self.assertRegex(c.greeting["nonce"], r"^[0-9a-f]{32}$")
        self.assertIs(c.greeting["auth"], False)
        hello = c.hello()
        self.assertEqual(hello["op"], "hello")
        self.assertEqual(hello["vm"], {"pid": self.vm.pid, "name": self.vm.name})
        self.assertEqual(hello["found_by"], "thread names")
        self.assertEqual(hello["clock"], "CLOCK_MONOTONIC")
        self.assertEqual(hello["vcpus"], [{"vcpu": 0, "tid": self.vm.tids["CPU 0/KVM"], "name": "CPU 0/KVM"},
                                          {"vcpu": 1, "tid": self.vm.tids["CPU 1/KVM"], "name": "CPU 1/KVM"}])
        for seq in range(20):
            t1 = time.monotonic_ns()
            r = c.ask({"op": "time", "seq": seq, "t1": t1})
            t4 = time.monotonic_ns()
            self.assertEqual((r["op"], r["seq"], r["t1"]), ("time", seq, t1))
            self.assertTrue(t1 <= r["t2"] <= r["t3"] <= t4, (t1, r, t4))
        c.close()

    def test_hello_and_time_over_a_unix_socket_fall_inside_the_clients_interval(self):
        self.exchange_times(Agent(self, "--vm", str(self.vm.pid), "--listen", "unix:" + self.path("h.sock")))

    def test_hello_and_time_over_tcp_port_0_with_the_bound_port_printed(self):
        a = Agent(self, "--vm", str(self.vm.pid), "--listen", "127.0.0.1:0")
        self.assertRegex(a.where, r"^127\.0\.0\.1:[1-9]\d*$")
        self.exchange_times(a)

    def test_an_unknown_op_is_answered_with_an_error_line_and_the_connection_kept(self):
        c = Agent(self, "--vm", str(self.vm.pid), "--listen", "unix:" + self.path("h.sock")).connect()
        self.assertEqual(c.ask({"op": "time", "seq": 1, "t1": 5}),
                         {"op": "error", "seq": 1, "error": 'say hello first: {"op":"hello","version":1}'})
        c.hello()
        self.assertEqual(c.ask({"op": "reboot", "seq": 2}),
                         {"op": "error", "seq": 2, "error": "unknown op 'reboot' (known: hello, time, explain, greet)"})
        c.sock.sendall(b"{not json\n")
        self.assertTrue(c.read()["error"].startswith("not JSON: "))
        self.assertEqual(c.ask({"op": "time", "seq": 3, "t1": 5})["op"], "time")

    @harness.needs(root=True)
    def test_explain_answers_an_existing_vcpu_and_names_a_missing_one(self):
        c = Agent(self, "--vm", str(self.vm.pid), "--listen", "unix:" + self.path("h.sock"), record=True).connect()
        c.hello()
        now = time.monotonic_ns()
        r = c.ask({"op": "explain", "seq": 4, "vcpu": 1, "from_ns": now - 10**9, "to_ns": now})
        self.assertEqual((r["op"], r["seq"], r["vcpu"], r["from_ns"], r["to_ns"], r["min_ns"]),
                         ("explain", 4, 1, now - 10**9, now, 1000000), r)
        # The fake vCPU sleeps: a halted vCPU is no episode.
        self.assertEqual((r["episodes"], r["more"]), ([], 0), r)
        self.assertLessEqual(r["complete_from_ns"], now)
        self.assertEqual(c.ask({"op": "explain", "seq": 5, "vcpu": 7, "from_ns": 1, "to_ns": 2})["error"],
                         "no vCPU 7: VM pid %d has 2 vCPUs, numbered 0 to 1" % self.vm.pid)

    @harness.needs(root=True)
    def test_an_agent_that_cannot_record_says_why_at_start_and_to_every_explain(self):
        import pwd
        sock = os.path.join(self.tmp, "nobody.sock")
        os.chmod(self.tmp, 0o777)
        nobody = pwd.getpwnam("nobody")
        # nobody finds the VM's threads (/proc is readable) but may not trace.
        p = subprocess.Popen([LATSCOPE, "host", "--vm", str(self.vm.pid), "--listen", "unix:" + sock],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, user=nobody.pw_uid,
                             group=nobody.pw_gid, extra_groups=[], preexec_fn=harness.hangup_as_default)
        self.addCleanup(harness.kill_and_close, p)
        deadline = time.monotonic() + 30
        while not os.path.exists(sock) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        s.settimeout(10)
        c = Client(s)
        c.hello()
        why = c.ask({"op": "explain", "seq": 1, "vcpu": 1, "from_ns": 1, "to_ns": 2})["error"]
        self.assertTrue(why.startswith("this agent does not record: "), why)
        c.close()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("latscope host: not recording, so explain is answered with why: " + why[len("this agent does not record: "):],
                      err.splitlines())

    def test_a_line_over_64_kib_gets_an_error_line_and_the_connection_closed(self):
        c = Agent(self, "--vm", str(self.vm.pid), "--listen", "unix:" + self.path("h.sock")).connect()
        try:
            c.sock.sendall(b"x" * 70000)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.assertEqual(c.read(), {"op": "error", "error": "a message is longer than 65536 bytes"})
        self.assertIsNone(c.read())

    def test_a_second_client_gets_an_error_line_and_is_closed_while_the_first_goes_on(self):
        a = Agent(self, "--vm", str(self.vm.pid), "--listen", "unix:" + self.path("h.sock"))
        first = a.connect()
        first.hello()
        second = a.connect()
        self.assertEqual(second.greeting["op"], "error")
        self.assertIn("one client at a time", second.greeting["error"])
        self.assertIsNone(second.read())
        self.assertEqual(first.ask({"op": "time", "seq": 1, "t1": 1})["op"], "time")
        first.close()
        self.assertEqual(a.connect().hello()["op"], "hello")


class TestSecurity(harness.TempDirCase):
    def setUp(self):
        super().setUp()
        self.vm = FakeVM(self)
        self.secret = self.path("secret")
        with open(self.secret, "wb") as f:
            f.write(b"s3cret value\n")
        os.chmod(self.secret, 0o600)

    def test_a_wrong_or_missing_secret_is_refused_and_the_connection_closed(self):
        a = Agent(self, "--vm", str(self.vm.pid), "--listen", "unix:" + self.path("h.sock"), "--secret", self.secret)
        self.assertTrue(a.line.endswith(", a secret required"))
        for auth in (None, hmac_of(b"wrong", "0" * 32), "zz"):
            c = a.connect()
            self.assertIs(c.greeting["auth"], True)
            bad = auth if auth != "zz" else "z" * 64
            self.assertEqual(c.hello(bad), {"op": "error", "error": "authentication failed"})
            self.assertIsNone(c.read())
        c = a.connect()
        hello = c.hello(hmac_of(b"s3cret value", c.greeting["nonce"]))
        self.assertEqual(hello["op"], "hello")
        self.assertEqual(c.ask({"op": "time", "seq": 1, "t1": 1})["op"], "time")

    def test_a_secret_file_of_mode_0644_is_refused_naming_it(self):
        os.chmod(self.secret, 0o644)
        p = run("host", "--vm", str(self.vm.pid), "--secret", self.secret)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.splitlines(), [
            "latscope host: option '--secret': '%s' has mode 0644: others may read it; a secret must be 0600 or "
            "stricter (chmod 600 '%s')" % (self.secret, self.secret), "Try 'latscope host --help'."])

    def test_a_listen_off_loopback_needs_allow_and_secret(self):
        for extra in ([], ["--secret", self.secret], ["--allow", "10.0.0.0/8"]):
            p = run("host", "--vm", str(self.vm.pid), "--listen", "0.0.0.0:0", *extra)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stderr.splitlines()[0], "latscope host: option '--listen': '0.0.0.0:0' is reachable "
                             "from other machines: give --allow CIDR and --secret FILE")
        a = Agent(self, "--vm", str(self.vm.pid), "--listen", "0.0.0.0:0", "--allow", "127.0.0.0/8", "--secret",
                  self.secret)
        port = int(a.where.rsplit(":", 1)[1])
        c = Client(socket.create_connection(("127.0.0.1", port), timeout=10))
        self.assertEqual(c.hello(hmac_of(b"s3cret value", c.greeting["nonce"]))["op"], "hello")

    def test_a_client_outside_allow_gets_an_error_line_and_is_closed(self):
        a = Agent(self, "--vm", str(self.vm.pid), "--listen", "0.0.0.0:0", "--allow", "10.0.0.0/8", "--secret",
                  self.secret)
        port = int(a.where.rsplit(":", 1)[1])
        c = Client(socket.create_connection(("127.0.0.1", port), timeout=10))
        self.assertEqual(c.greeting, {"op": "error", "error": "this address is not allowed (--allow)"})
        self.assertIsNone(c.read())

    def test_the_socket_file_is_removed_after_each_stop_signal(self):
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            sock = self.path("h.sock")
            a = Agent(self, "--vm", str(self.vm.pid), "--listen", "unix:" + sock)
            self.assertTrue(stat.S_ISSOCK(os.lstat(sock).st_mode))
            c = a.connect()
            c.hello()
            rc, out, err = a.stop(sig)
            self.assertEqual(rc, 0, err)
            self.assertFalse(os.path.exists(sock), sig)
            self.assertIn("stopped by %s" % sig.name, out)

    def test_without_vm_or_with_a_bad_listen_the_usage_error_names_the_option(self):
        p = run("host")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.splitlines(), ["latscope host: option '--vm' is required: the VM's pid, its name, or "
                                                 "qmp:SOCKET", "Try 'latscope host --help'."])
        p = run("host", "--vm", "1", "--listen", "tcp:1")
        self.assertEqual(p.returncode, 2)
        self.assertIn("option '--listen': 'tcp:1' is not unix:PATH, ADDR:PORT", p.stderr)
        p = run("host", "--vm", "1", "--listen", "unix:" + self.path("h.sock"), "--allow", "10.0.0.0/8")
        self.assertIn("option '--allow': only for a --listen ADDR:PORT", p.stderr)

    @harness.needs(root=True, programs=("runuser",))
    def test_run_as_nobody_it_says_what_it_cannot_do(self):
        private = self.path("private")
        os.mkdir(private, 0o700)
        qmp = os.path.join(private, "qmp.sock")
        FakeVM(self, qmp=qmp)
        p = self.as_nobody("host", "--vm", "qmp:" + qmp, "--listen", "unix:" + self.path("h.sock"))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stderr, "latscope host: cannot connect to the QMP socket '%s': Permission denied\n" % qmp)
        p = self.as_nobody("host", "--vm", str(self.vm.pid), "--listen", "unix:" + os.path.join(private, "h.sock"))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stderr, "latscope host: cannot listen on 'unix:%s': Permission denied\n"
                         % os.path.join(private, "h.sock"))
        p = self.as_nobody("host", "--vm", str(self.vm.pid), "--secret", self.secret)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("cannot open '%s': Permission denied" % self.secret, p.stderr)


@harness.needs(root=True)
class TestRecording(harness.TempDirCase):
    """A known answer on this machine alone: a fake VM whose vCPU 1 thread spins on CPU 1, and
    lat-inject taking CPU 1 at FIFO 50 for 30 ms every 300 ms.  The agent must tell each burst as
    one episode of vCPU 1, preempted, naming lat-inject and its pid, at the times lat-inject logged
    on the same clock.  A hypervisor stall of this machine lengthens a burst for both alike."""

    def test_each_injected_preemption_is_one_episode_naming_the_hog_at_its_own_times(self):
        if len(harness.online_cpus()) < 2:
            self.skipTest("needs 2 CPUs: the vCPU and the hog on one, the agent on another")
        vm = FakeVM(self, spin="CPU 1/KVM")
        tid = vm.tids["CPU 1/KVM"]
        os.sched_setaffinity(tid, {1})
        # Nice -19: this VM's init has threads at nice -10 that took the spinning vCPU's CPU for
        # 30-270 ms at a time (one episode held two bursts once); at -19 they get slices of a few
        # ms, under the 15 ms asked for, and only the hog at FIFO 50 takes it for longer.
        os.setpriority(os.PRIO_PROCESS, tid, -19)
        agent = Agent(self, "--vm", str(vm.pid), "--listen", "unix:" + self.path("h.sock"), record=True)
        os.sched_setaffinity(agent.proc.pid, {0})
        log = self.path("bursts")
        start = time.monotonic_ns()
        hog = subprocess.Popen([harness.LAT_INJECT, "1", "50", "30ms", "300ms", "3", log], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        _, err = hog.communicate(timeout=60)
        self.assertEqual(hog.returncode, 0, err)
        with open(log) as f:
            bursts = [tuple(map(int, line.split())) for line in f]
        self.assertGreaterEqual(len(bursts), 9)
        c = agent.connect()
        c.hello()
        r = c.ask({"op": "explain", "seq": 1, "vcpu": 1, "from_ns": start, "to_ns": time.monotonic_ns(),
                   "min_ns": 15 * 10**6})
        self.assertEqual(r["op"], "explain", r)
        eps = sorted(r["episodes"], key=lambda e: e["from_ns"])
        self.assertEqual(r["more"], 0)
        def on_burst(e, b0, b1):
            return e["from_ns"] < b1 and e["to_ns"] > b0

        edges_on_time = unknown = 0
        for b0, b1 in bursts:
            mine = [e for e in eps if on_burst(e, b0, b1)]
            self.assertEqual(len(mine), 1, ((b0, b1), eps))
            e = mine[0]
            overlap = min(e["to_ns"], b1) - max(e["from_ns"], b0)
            self.assertGreaterEqual(overlap, (b1 - b0) * 9 // 10, ((b0, b1), e["from_ns"], e["to_ns"]))
            # The switch away comes with the hog's wakeup, the switch back when it sleeps again; a stall of
            # this machine's own hypervisor at that moment may move one edge, but not most of them.
            edges_on_time += abs(e["from_ns"] - b0) <= 10**6
            edges_on_time += abs(e["to_ns"] - b1) <= 10**6
            self.assertEqual(e["tid"], tid)
            self.assertGreaterEqual(e["state_ns"]["preempted"], (b1 - b0) * 9 // 10, e["state_ns"])
            # Where the kernel's buffer lost events, the agent says so (lost, not covered), and what ran
            # is then what the events it kept say: the switch to the hog lost, the task before it seems to
            # run on.  That is judged below by how often, not here.
            if e["lost"] or not e["covered"]:
                unknown += 1
                continue
            # The hog ran for the burst; another task of this busy machine may have held the CPU
            # longer in the same episode (a nice -10 daemon here took 190 ms once), and is then
            # named first, truly.
            hogs = [r for r in e["ran"] if r.get("comm") == "lat-inject"]
            self.assertEqual(len(hogs), 1, (e["ran"], e["covered"], e["lost"]))
            top = hogs[0]
            self.assertEqual((top["kind"], top["comm"], top["id"], top["prio"]), ("task", "lat-inject", hog.pid, 49),
                             top)
            # The policy is read from the task when the agent answers: lat-inject has ended by then.
            self.assertIn(top["policy"], (1, -1), top)
            self.assertGreaterEqual(top["ns"], (b1 - b0) * 9 // 10)
        # Losses are rare and said: most bursts are judged whole.
        self.assertLessEqual(unknown, len(bursts) // 5, [(e["covered"], e["lost"]) for e in eps])
        # No episode is put on the hog where it did not run; one where another task of this busy
        # machine held the vCPU's CPU for 15 ms is a true answer, and names that task.
        hogged = [e for e in eps if any(r.get("comm") == "lat-inject" for r in e["ran"])]
        for e in hogged:
            self.assertTrue(any(on_burst(e, b0, b1) for b0, b1 in bursts),
                            ("an episode named the hog where it was not injected", e))
        self.assertGreaterEqual(len(hogged), len(bursts) - unknown, eps)
        for e in eps:
            if e not in hogged:
                self.assertTrue(e["ran"] and e["ran"][0]["kind"] == "task" and e["ran"][0]["ns"] > 0, e)
        self.assertGreaterEqual(edges_on_time, 2 * len(bursts) * 8 // 10, (bursts, eps))
        c.close()


class TestGuestSide(harness.TempDirCase):
    """--host on a measuring command: what a guest run does when the agent is missing, goes away,
    or answers; the agent here follows a fake VM on this machine, so no answer is judged."""

    def timer(self, *args, timeout=120):
        out = self.path("t.json")
        p = run("timer", "-a", str(harness.online_cpus()[0]), "-i", "1ms", "--no-store", "-q", "--json", out, *args,
                timeout=timeout)
        doc = harness.parse(open(out).read(), what="the timer's result") if os.path.exists(out) else None
        return p, doc

    def test_a_host_out_of_reach_is_said_once_and_the_run_goes_on(self):
        missing = self.path("no-agent.sock")
        p, doc = self.timer("-l", "200", "--host", "unix:" + missing)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertTrue(lines[0].startswith("latscope timer: --host: measuring without the host: "), lines)
        self.assertIn(missing, lines[0])
        self.assertNotIn("host", doc)
        self.assertTrue(any(n.startswith("--host: measuring without the host: ") for n in doc["notes"]), doc["notes"])
        self.assertEqual(doc["cpus"][0]["metrics"]["latency"]["count"], 200)

    def test_a_host_secret_without_host_or_of_a_loose_mode_is_a_usage_error_naming_it(self):
        secret = self.path("secret")
        with open(secret, "w") as f:
            f.write("s3cret\n")
        os.chmod(secret, 0o644)
        p = run("timer", "-l", "10", "--no-store", "--host-secret", secret)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.splitlines()[0], "latscope timer: option '--host-secret' needs '--host'")
        p = run("timer", "-l", "10", "--no-store", "--host", "unix:" + self.path("x"), "--host-secret", secret)
        self.assertEqual(p.returncode, 2)
        self.assertTrue(p.stderr.startswith("latscope timer: option '--host-secret': "), p.stderr)
        self.assertIn(secret, p.stderr.splitlines()[0])
        p = run("timer", "-l", "10", "--no-store", "--host", "junk")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.splitlines()[0],
                         "latscope timer: option '--host': 'junk' is not ADDR:PORT (an IPv4 address or [IPv6])")

    def test_a_run_lined_up_with_its_host_keeps_the_agent_the_line_up_and_what_it_asked(self):
        vm = FakeVM(self)
        agent = Agent(self, "--vm", str(vm.pid), "--listen", "unix:" + self.path("h.sock"), record=True)
        p, doc = self.timer("-D", "4", "--host", agent.where)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        h = doc["host"]
        self.assertEqual((h["agent"], h["vm"], h["found_by"]), (agent.where, {"pid": vm.pid, "name": vm.name},
                                                              "thread names"))
        self.assertIsNotNone(h["sync"], h)
        self.assertGreaterEqual(h["sync"]["exchanges"], 12)
        self.assertNotIn("lost", h)
        # Once a second for the measured CPU's vCPU: an agent not recording (nobody, no tracefs) refuses each.
        self.assertGreaterEqual(h["asked"], 3)
        if os.geteuid() == 0:
            self.assertEqual(h["answered"], h["asked"])
        self.assertEqual(h["spikes_answered"], 0, "no --trace: no spikes to answer")
        self.assertTrue(h["largest"], h)
        for e in h["largest"]:
            self.assertTrue(e["host"]["line"].startswith("the host: "), e)

    def test_an_agent_gone_during_the_run_is_noted_and_the_run_kept(self):
        vm = FakeVM(self)
        agent = Agent(self, "--vm", str(vm.pid), "--listen", "unix:" + self.path("h.sock"))
        out = self.path("t.json")
        p = subprocess.Popen([LATSCOPE, "timer", "-a", str(harness.online_cpus()[0]), "-D", "5", "--no-store", "-q",
                              "--json", out, "--host", agent.where], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        self.addCleanup(harness.kill_and_close, p)
        # The agent answers its first exchanges, then goes (orchestration, not a measurement).
        time.sleep(2)
        agent.stop(signal.SIGKILL)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        with open(out) as f:
            doc = json.load(f)
        self.assertIn("lost", doc["host"])
        self.assertTrue(any(n.startswith("--host: the link to the host ended during the run") for n in doc["notes"]),
                        doc["notes"])
        self.assertGreater(doc["cpus"][0]["metrics"]["latency"]["count"], 4000)


if __name__ == "__main__":
    harness.main()
