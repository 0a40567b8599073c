#!/usr/bin/env python3
"""The emulated guest (guest.py) that the tests of latscope in a VM and its host agent use
(issue 28): it boots, runs this build of latscope with its output exact, shows its vCPU
threads by name and over QMP, carries bytes over its virtio-serial port, keeps its writes to
itself and goes away on every exit path.  One guest serves the module; one more is killed by a
timeout, and one is killed before it is up.

Nothing here judges a latency: TCG's timer wakeups are what emulation makes them."""
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import unittest

from guest import SCRATCH, SERIAL_PORT, Guest, GuestError, Qmp, lacking
from harness import LATSCOPE, TempDirCase, check_consistent, main, parse

WHY = lacking()
needs_guest = unittest.skipIf(WHY is not None, WHY or "")


@needs_guest
class InTheGuest(unittest.TestCase):
    """One guest for these tests, with the test's end of its serial port listening."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="latscope-test-")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, True)
        cls.serial = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        cls.addClassCleanup(cls.serial.close)
        cls.serial.bind(os.path.join(cls.tmp, "serial.sock"))
        cls.serial.listen(1)
        cls.guest = Guest(cls.tmp, serial_socket=os.path.join(cls.tmp, "serial.sock")).__enter__()
        cls.addClassCleanup(cls.guest.close)

    def test_the_guest_boots_debians_kernel_with_its_ports_named_as_udev_would(self):
        g = self.guest
        p = g.run(["sh", "-c", "uname -r; readlink /dev/virtio-ports/" + SERIAL_PORT])
        self.assertEqual(p.returncode, 0, p.stderr)
        release, port = p.stdout.splitlines()
        self.assertEqual(release, g.kernel)
        self.assertNotEqual(release, os.uname().release, "the guest runs Debian's kernel, not this machine's")
        self.assertIn(SERIAL_PORT, g.ports.values())
        self.assertEqual(g.ports[os.path.basename(port)], SERIAL_PORT)

    def test_stdout_stderr_and_the_exit_status_come_back_apart_and_exact(self):
        script = "printf 'out\\0with a nul\\n\\377'; printf 'err\\n' >&2; printf 'no newline' >&2; exit 3"
        p = self.guest.run(["sh", "-c", script], text=False)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (3, b"out\0with a nul\n\377", b"err\nno newline"))
        p = self.guest.run(["sh", "-c", "head -c 300000 /dev/zero"], text=False)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, b"\0" * 300000, b""))

    def test_what_the_guest_writes_stays_in_its_tmpfs_and_this_machines_files_are_read_only(self):
        here = os.path.join(os.path.dirname(os.path.abspath(LATSCOPE)), "written-by-the-guest")
        p = self.guest.run(["sh", "-c", "echo kept > %s/kept && cat %s/kept && echo x > " % (SCRATCH, SCRATCH) + here])
        self.assertEqual(p.stdout, "kept\n")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("Read-only file system", p.stderr)
        self.assertFalse(os.path.exists(here))
        self.assertEqual(self.guest.read(SCRATCH + "/kept"), b"kept\n")

    def test_a_timer_run_inside_the_emulated_guest_measures_every_cpu_and_its_json_comes_back(self):
        g = self.guest
        p = g.run([os.path.abspath(LATSCOPE), "timer", "-a", "0,1", "-l", "300", "-i", "1ms", "-q", "--no-store",
                   "--json", SCRATCH + "/timer.json"], timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = parse(g.read(SCRATCH + "/timer.json").decode(), what="the guest's timer result")
        check_consistent(self, doc)
        self.assertEqual([c["cpu"] for c in doc["cpus"]], [0, 1])
        self.assertEqual([c["metrics"][doc["metrics"][0]]["count"] for c in doc["cpus"]], [300, 300])
        self.assertEqual(doc["system"]["kernel_release"], g.kernel)
        self.assertEqual(doc["system"]["ncpus_online"], 2)
        self.assertEqual(doc["system"]["hypervisor"], "QEMU-TCG", "named by its CPUID signature")

    def test_the_guests_vcpu_threads_are_found_by_their_names_and_by_qmp_query_cpus_fast(self):
        g = self.guest
        named = g.vcpu_threads()
        self.assertEqual(sorted(named), [0, 1], named)
        with Qmp(g.qmp_socket) as qmp:
            self.assertIn("QMP", qmp.greeting)
            cpus = qmp.execute("query-cpus-fast")
        self.assertEqual({c["cpu-index"]: c["thread-id"] for c in cpus}, named)
        self.assertEqual(len(set(named.values())), 2, "one thread a vCPU (multi-threaded TCG)")
        for tid in named.values():
            self.assertTrue(os.path.exists("/proc/%d/task/%d" % (g.pid, tid)))

    def test_bytes_written_to_the_guests_virtio_serial_port_reach_the_host_socket_and_back(self):
        payload = bytes(range(256)) * 16
        heard = {}

        def host_side():
            conn, _ = self.serial.accept()
            with conn:
                conn.settimeout(30)
                f = conn.makefile("rb")
                heard["hello"] = f.readline()
                conn.sendall(payload)
                heard["echo"] = f.read(len(payload))
                f.close()

        host = threading.Thread(target=host_side, daemon=True)
        host.start()
        dev = "/dev/virtio-ports/" + SERIAL_PORT
        p = self.guest.run(["sh", "-c", "exec 3<>%s; echo hello from the guest >&3; head -c %d <&3 >&3; echo done"
                            % (dev, len(payload))], timeout=30)
        host.join(30)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "done\n", ""))
        self.assertEqual(heard.get("hello"), b"hello from the guest\n")
        self.assertEqual(heard.get("echo"), payload)


@needs_guest
class Ending(TempDirCase):
    def test_a_command_past_its_timeout_ends_the_guest_and_its_qemu(self):
        with Guest(self.tmp) as g:
            with self.assertRaises(subprocess.TimeoutExpired):
                g.run(["sleep", "60"], timeout=2)
            self.assertIsNotNone(g.proc.poll(), "QEMU was killed")
        self.assertFalse(os.path.exists(g.control_socket))

    def test_a_guest_that_does_not_come_up_in_time_is_killed(self):
        g = Guest(self.tmp, boot_timeout=1)
        with self.assertRaisesRegex(GuestError, "did not"):
            g.__enter__()
        self.assertIsNotNone(g.proc.poll(), "QEMU was killed")
        self.assertFalse(os.path.exists("/proc/%d/task" % g.pid))

if __name__ == "__main__":
    main()
