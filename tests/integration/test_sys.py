"""latscope sys: the fingerprint and findings of this machine, of a fake tree, and as nobody.

What this machine must show is read from its own files here, so the test holds on
any machine: the hypervisor its CPUID signature names (read apart, by cpuid-sig), the
guest finding, steal time, RT throttling and the serial console."""
import os
import re
import subprocess

from harness import TempDirCase, main, needs, parse, run

SEVERITY_ORDER = {"problem": 0, "warning": 1, "info": 2}


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def cpu_flags():
    for line in (read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("flags"):
            return line.split(":", 1)[1].split()
    return []


def expected_findings():
    """The rules this machine's own files say must fire.  Read before latscope reads them:
    steal time only grows, so latscope's later view covers the test's."""
    ids = set()
    if "hypervisor" in cpu_flags():
        ids.add("guest")
    stat = (read("/proc/stat") or "").splitlines()
    if stat and stat[0].startswith("cpu ") and int(stat[0].split()[8]) > 0:
        ids.add("steal-time")
    runtime = read("/proc/sys/kernel/sched_rt_runtime_us")
    if runtime is not None and int(runtime) != -1:
        ids.add("rt-throttling")
    for line in (read("/proc/consoles") or "").splitlines():
        name, flags = line.split()[0], line[line.find("(") + 1:line.find(")")]
        if name.startswith(("ttyS", "ttyAMA", "hvc")) and "E" in flags:
            ids.add("serial-console")
    cmdline = read("/proc/cmdline") or ""
    isolated = (read("/sys/devices/system/cpu/isolated") or "").strip()
    if "isolcpus=" not in cmdline and "nohz_full=" not in cmdline.split(" -- ")[0] and not isolated:
        ids.add("no-isolation")
    return ids


# The public CPUID signatures (leaf 0x40000000) of the hypervisors latscope names.
HYPERVISOR_SIGNATURES = {
    b"KVMKVMKVM\0\0\0": "KVM", b"XenVMMXenVMM": "Xen", b"Microsoft Hv": "Hyper-V", b"VMwareVMware": "VMware",
    b"TCGTCGTCGTCG": "QEMU-TCG", b"ACRNACRNACRN": "ACRN", b"bhyve bhyve ": "bhyve", b" lrpepyh  vr": "Parallels",
    b"VBoxVBoxVBox": "VirtualBox",
}


def hypervisor_by_cpuid():
    """The name of the hypervisor this machine's CPUID signature says (tests/integration/cpuid-sig.c,
    read apart from latscope); None where there is none, it is not one of these, or the helper is not
    built (not x86)."""
    exe = os.environ.get("CPUID_SIG") or ""
    if not exe:
        return None
    p = subprocess.run([exe], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    return HYPERVISOR_SIGNATURES.get(bytes.fromhex(p.stdout.strip()))


class SysOnThisMachine(TempDirCase):
    def test_the_fingerprint_and_the_findings_this_machine_must_show(self):
        expected = expected_findings()
        p = run("sys")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        for group in ("Virtualization", "Kernel", "Timekeeping", "CPUs", "Idle and frequency", "Isolation",
                      "Interrupts", "Memory", "Console", "Scheduling", "Findings:"):
            self.assertIn("\n" + group if group != "Virtualization" else group, p.stdout)
        for rule in expected:
            self.assertRegex(p.stdout, r"\n  (problem|warning|info) +%s\n" % rule)
        name = hypervisor_by_cpuid()
        if name:
            self.assertRegex(p.stdout, r"hypervisor +%s \(a guest" % re.escape(name))

    def test_json_parses_and_has_the_groups_and_sorted_findings(self):
        expected = expected_findings()
        p = run("sys", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = parse(p.stdout, "sys", "sys --json")
        self.assertEqual(set(doc), {"fingerprint", "findings"})
        fp = doc["fingerprint"]
        self.assertEqual(list(fp), ["virtualization", "kernel", "timekeeping", "cpus", "idle_frequency", "isolation",
                                    "interrupts", "memory", "console", "scheduling"])
        self.assertEqual(fp["kernel"]["release"], os.uname().release)
        self.assertEqual(fp["cpus"]["count"], os.cpu_count())
        ids = [f["id"] for f in doc["findings"]]
        self.assertTrue(expected <= set(ids), f"{expected} not all in {ids}")
        for f in doc["findings"]:
            self.assertEqual(set(f), {"id", "severity", "saw", "why", "fix"})
            self.assertTrue(f["saw"] and f["why"] and f["fix"])
        order = [SEVERITY_ORDER[f["severity"]] for f in doc["findings"]]
        self.assertEqual(order, sorted(order), "most severe first")
        name = hypervisor_by_cpuid()
        if name:
            self.assertEqual(fp["virtualization"]["hypervisor"], name)
        if "rt-throttling" in ids:
            self.assertIsInstance(fp["scheduling"]["sysctl"]["kernel.sched_rt_runtime_us"], int)

    def test_findings_only_leaves_out_the_fingerprint(self):
        p = run("sys", "--findings-only")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("Findings:"), p.stdout[:80])
        self.assertNotIn("Virtualization", p.stdout)
        p = run("sys", "--findings-only", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(list(parse(p.stdout, "sys", "sys --json")), ["findings"])

    @needs(root=True, programs=("runuser",))
    def test_nobody_gets_the_fingerprint_without_an_error(self):
        expected = expected_findings()
        for args in (["sys"], ["sys", "--json"]):
            p = self.as_nobody(*args)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stderr, "")
        doc = parse(p.stdout, "sys", "sys --json")
        ids = {f["id"] for f in doc["findings"]}
        self.assertTrue(expected <= ids, f"{expected} not all in {ids}")


class SysOnAFakeTree(TempDirCase):
    def make_tree(self, files, name="root"):
        root = self.path(name)
        for rel, text in files.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        return root

    def test_a_copied_tree_is_read_under_sysroot(self):
        root = self.make_tree({
            "proc/sys/kernel/arch": "x86_64\n",
            "proc/sys/kernel/osrelease": "6.1.0-copied\n",
            "sys/devices/system/clocksource/clocksource0/current_clocksource": "hpet\n",
            "sys/devices/system/clocksource/clocksource0/available_clocksource": "tsc hpet \n",
            "sys/hypervisor/type": "xen\n",
        })
        p = run("sys", "--json", "--sysroot", root)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = parse(p.stdout, "sys", "sys --json")
        self.assertEqual(doc["fingerprint"]["kernel"]["release"], "6.1.0-copied")
        self.assertEqual(doc["fingerprint"]["virtualization"]["hypervisor"], "Xen")
        self.assertIsNone(doc["fingerprint"]["kernel"]["hz"])
        first = doc["findings"][0]
        self.assertEqual((first["id"], first["severity"]), ("clocksource-not-tsc", "problem"))
        self.assertIn("hpet", first["saw"])
        p = run("sys", "--sysroot", root)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("timer frequency      unknown", p.stdout)

    XEN_TIMER_LIST = ("Tick Device: mode:     1\nPer CPU device: 0\nClock Event Device: xen\n"
                      " max_delta_ns:   4294967295\n min_delta_ns:   100000\n mult:           1\n\n")

    def test_a_xen_guest_shows_its_timer_slop_and_a_finding_against_the_default_interval(self):
        root = self.make_tree({
            "sys/hypervisor/type": "xen\n",
            "proc/timer_list": self.XEN_TIMER_LIST,
            "proc/cmdline": "root=/dev/xvda1 xen_timer_slop=70000\n",
        })
        p = run("sys", "--sysroot", root)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("hypervisor slop      100us (the xen clock event device in /proc/timer_list)\n", p.stdout)
        self.assertRegex(p.stdout, r"\n  warning +timer-slop\n")
        p = run("sys", "--json", "--sysroot", root)
        doc = parse(p.stdout, "sys", "sys --json")
        tk = doc["fingerprint"]["timekeeping"]
        self.assertEqual((tk["timer_slop_ns"], tk["timer_slop_source"]), (100000, "/proc/timer_list"))
        slop = [f for f in doc["findings"] if f["id"] == "timer-slop"]
        self.assertEqual(len(slop), 1)
        self.assertIn("10 % of latscope timer's default interval 1ms", slop[0]["saw"])

    def test_another_hypervisors_timer_slop_is_unknown_and_said_so(self):
        root = self.make_tree({"sys/hypervisor/type": "kvm\n", "proc/cmdline": "xen_timer_slop=70000\n"})
        p = run("sys", "--sysroot", root)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("hypervisor slop      unknown (kvm does not show it to the guest)\n", p.stdout)
        self.assertNotIn("timer-slop", p.stdout)
        root = self.make_tree({"sys/hypervisor/type": "xen\n"}, "xen")
        p = run("sys", "--sysroot", root)
        self.assertIn("hypervisor slop      unknown (no xen clock event device in a readable /proc/timer_list",
                      p.stdout)
        self.assertIn("the kernel's default is 100us)", p.stdout)

    def test_a_sysroot_that_is_not_a_directory_is_a_usage_error(self):
        p = run("sys", "--sysroot", self.path("missing"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("'--sysroot'", p.stderr)
        self.assertIn("No such file or directory", p.stderr)
        self.assertEqual(p.stdout, "")
        p = run("sys", "stray")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unexpected argument 'stray'", p.stderr)


if __name__ == "__main__":
    main()
