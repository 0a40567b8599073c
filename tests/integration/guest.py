"""An emulated guest for the tests of latscope in a VM and its host agent (issue 28).

QEMU's software emulation (TCG) boots Debian's kernel with a busybox initramfs built here (no image
is checked in): its /init loads the 9p and virtio-serial modules, mounts this machine's / read-only
over 9p, with proc, sysfs, devtmpfs, tracefs and tmpfs for /run, /var/tmp and /dev/shm over it (the scratch directory is /run/guest: a tree
under this machine's /tmp stays visible), and runs
the commands the harness sends it, each in `chroot` to that root, so the guest runs this build of
latscope with this machine's libraries.  What the guest writes stays in its tmpfs.

    with Guest(tmpdir, serial_socket=path) as g:     # path: where the test listens, or None
        p = g.run([LATSCOPE, "timer", ...], timeout=60)   # CompletedProcess: returncode, stdout, stderr
        g.pid, g.qmp_socket, g.vcpu_threads(), g.kernel, g.ports

The commands and their results travel over a virtio-serial port of the harness's own
(org.latscope.harness): a command is one line, its result a header with its exit status and the
lengths of its stdout and stderr, then both byte for byte.  The serial console (the kernel's log
and /init's messages) goes to a file in tmpdir, quoted when the guest fails.  With serial_socket,
QEMU connects that port (org.latscope.0, /dev/virtio-ports/org.latscope.0 in the guest) to the
unix socket the test listens on, as QEMU does for `latscope host --listen unix:PATH`.

What the guest needs, lacking() says in the words of harness.lacking(): root, qemu-system-x86_64,
a Debian kernel with its modules, busybox-static (scripts/install-deps installs the last three)."""
import base64
import ctypes
import glob
import gzip
import hashlib
import json
import lzma
import os
import re
import select
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time

from harness import LATSCOPE
from harness import lacking as harness_lacking

QEMU = "qemu-system-x86_64"
HARNESS_PORT = "org.latscope.harness"
SERIAL_PORT = "org.latscope.0"
# The modules the guest loads, with what modules.dep says they need: the PCI transport of
# the virtio devices, the 9p file system over virtio and the virtio-serial ports.
MODULES = ("virtio_pci", "9p", "9pnet_virtio", "virtio_console")
# TCG boots Debian's kernel in about 10 s here; the rest is headroom for a loaded machine.
BOOT_TIMEOUT = 120
# A KVM guest's kernel prints its first line (its cmdline has no "quiet") within a second of the
# BIOS: one that has printed none by then never will.  A nested KVM guest of a stock kernel stops
# in its real-mode setup on this machine (/dev/kvm is there, its guests are not).
KVM_KERNEL_SECONDS = 20
# What a command in the guest starts with: nothing of the test process's environment, a
# HOME, store and temporary files in the guest's tmpfs, and gcov's counters (./check
# --coverage) written there too, since the build tree is read-only in the guest.
# The scratch directory is under /run, not /tmp: a build tree or a checkout under this
# machine's /tmp must stay visible in the guest (a tmpfs on /tmp hid it).
SCRATCH = "/run/guest"
GUEST_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": SCRATCH,
             "TMPDIR": SCRATCH, "XDG_DATA_HOME": SCRATCH + "/.local/share",
             "XDG_STATE_HOME": SCRATCH + "/.local/state", "GCOV_PREFIX": SCRATCH + "/gcov"}
# The Debian packages, named in a skip's reason.
INSTALL = "(scripts/install-deps installs it)"

# The initramfs's /init.  It says each step that fails on the console and powers off, which
# ends QEMU (-no-reboot): the harness then quotes the console.  /h holds the results of a
# command outside the chroot, where the command cannot reach them.
INIT = r"""#!/bin/busybox sh
# busybox --install finds itself through /proc/self/exe.
/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
export PATH=/bin
fail() { echo "latscope-guest: $*" >/dev/console; poweroff -f; }
mnt() { mount -t $1 $1 $2 || fail "cannot mount $1 on $2"; }
mnt sysfs /sys
mnt devtmpfs /dev
for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m.ko || fail "cannot load module $m"
done
# 9pnet_virtio finds its device as the module loads; a moment's retry covers a late probe.
for try in 1 2 3 4 5 6 7 8 9 10; do
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro host /host 2>/dev/null && break
	[ $try = 10 ] && fail "cannot mount the host's / over 9p (mount_tag host)"
	sleep 0.2
done
mnt proc /host/proc
mnt sysfs /host/sys
mnt devtmpfs /host/dev
mount -t tracefs tracefs /host/sys/kernel/tracing || echo "latscope-guest: no tracefs" >/dev/console
for d in /host/run /host/var/tmp; do
	[ -d $d ] && mnt tmpfs $d
done
mkdir -p /host/run/guest
mkdir -p /host/dev/shm && mnt tmpfs /host/dev/shm
# udev's names of the virtio-serial ports (60-virtio-ports rule): /dev/virtio-ports/NAME, in the
# one devtmpfs that /dev and /host/dev both show.
ctl=
ports=
for try in $(seq 50); do
	for p in /sys/class/virtio-ports/*; do
		[ -e /dev/${p##*/} ] || continue
		name=$(cat $p/name)
		mkdir -p /dev/virtio-ports
		ln -sf ../${p##*/} /dev/virtio-ports/$name
		[ $name = "@HARNESS_PORT@" ] && ctl=/dev/${p##*/}
	done
	[ -n "$ctl" ] && break
	sleep 0.1
done
[ -n "$ctl" ] || fail "no virtio-serial port named @HARNESS_PORT@"
for p in /sys/class/virtio-ports/*; do ports="$ports ${p##*/}=$(cat $p/name)"; done
exec 3<>$ctl
mkdir /h
printf 'latscope-guest-ready %s%s\n' "$(uname -r)" "$ports" >&3
# One command a line, base64 of its shell words; the answer: a header, then stdout and stderr.
while IFS= read -r line <&3; do
	cmd=$(echo "$line" | base64 -d)
	eval "chroot /host $cmd" </dev/null >/h/out 2>/h/err 3>&-
	rc=$?
	printf 'latscope-guest-done %s %s %s\n' $rc $(wc -c </h/out) $(wc -c </h/err) >&3
	cat /h/out /h/err >&3
done
poweroff -f
""".replace("@HARNESS_PORT@", HARNESS_PORT)


class GuestUnavailable(Exception):
    """What this machine lacks to boot the guest, in the words of a skip's reason."""


class GuestError(Exception):
    """The guest did not boot, or went away: the console's last lines say why."""


def _module_name(path):
    """The name of a module as modprobe spells it, from its file's path."""
    base = os.path.basename(path)
    return re.sub(r"\.ko(\.(xz|gz|zst))?$", "", base).replace("-", "_")


def debian_kernel():
    """(vmlinuz, modules directory, release) of the newest kernel in /boot whose modules are
    installed (this machine's own kernel has none there), or None."""
    found = []
    for image in glob.glob("/boot/vmlinuz-*"):
        release = image[len("/boot/vmlinuz-"):]
        moddir = os.path.join("/lib/modules", release)
        if os.path.exists(os.path.join(moddir, "modules.dep")):
            key = [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", release)]
            found.append((key, image, moddir, release))
    return max(found)[1:] if found else None


def _static_elf(path):
    """Whether path is an ELF file without a program interpreter: a static busybox."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:                 # 64-bit ELF
            return False
        order = "little" if head[5] == 1 else "big"
        phoff = int.from_bytes(head[0x20:0x28], order)
        phentsize = int.from_bytes(head[0x36:0x38], order)
        phnum = int.from_bytes(head[0x38:0x3a], order)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    pt_interp = 3
    return all(int.from_bytes(table[i:i + 4], order) != pt_interp for i in range(0, len(table), phentsize))


def static_busybox():
    """The path of a statically linked busybox, or None."""
    for path in ("/bin/busybox", "/usr/bin/busybox"):
        if os.path.exists(path) and _static_elf(path):
            return path
    return None


def lacking():
    """Why the guest cannot boot here, or None; what install-deps provides is named with it.  Root:
    the kernel image and the files the guest reads over 9p are root's."""
    why = harness_lacking(root=True, programs=(QEMU,))
    if why:
        return why
    if not debian_kernel():
        return "no Debian kernel with its modules (/boot/vmlinuz-V and /lib/modules/V): package " \
               "linux-image-amd64 %s" % INSTALL
    if not static_busybox():
        return "no statically linked busybox: package busybox-static %s" % INSTALL
    return None


def _module_order(moddir, wanted):
    """The files of the wanted modules and of those they need, each after what it needs,
    leaving out what the kernel has built in: [(name, path)]."""
    builtin = set()
    try:
        with open(os.path.join(moddir, "modules.builtin")) as f:
            builtin = {_module_name(line.strip()) for line in f if line.strip()}
    except FileNotFoundError:
        pass
    deps = {}
    with open(os.path.join(moddir, "modules.dep")) as f:
        for line in f:
            path, _, needed = line.partition(":")
            deps[_module_name(path)] = (path, [_module_name(p) for p in needed.split()])
    order, seen = [], set()

    def visit(name):
        if name in builtin or name in seen:
            return
        if name not in deps:
            raise GuestUnavailable("the kernel in %s has no module %s" % (moddir, name))
        seen.add(name)
        for d in deps[name][1]:
            visit(d)
        order.append((name, os.path.join(moddir, deps[name][0])))

    for name in wanted:
        visit(name)
    return order


def _module_bytes(path):
    """A module's ELF image, uncompressed here so that busybox's insmod need not know how."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".gz"):
        return gzip.decompress(data)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout
    return data


class _Cpio:
    """An initramfs: a cpio archive in the "newc" format the kernel unpacks."""

    def __init__(self):
        self.parts = []
        self.ino = 0

    def add(self, name, mode, data=b"", rdev=(0, 0)):
        self.ino += 1
        encoded = name.encode() + b"\0"
        fields = (self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(encoded), 0)
        header = b"070701" + b"".join(b"%08x" % v for v in fields) + encoded
        self.parts += [header, b"\0" * (-len(header) % 4), data, b"\0" * (-len(data) % 4)]

    def directory(self, name):
        self.add(name, stat.S_IFDIR | 0o755)

    def file(self, name, data, mode=0o644):
        self.add(name, stat.S_IFREG | mode, data)

    def bytes(self):
        self.add("TRAILER!!!", 0)
        return b"".join(self.parts)


def cache_dir():
    """Where the initramfs is kept: in the meson build tree of $LATSCOPE when it is one,
    else in a directory of this user's under the temporary directory."""
    d = os.path.dirname(os.path.abspath(LATSCOPE))
    while d != os.path.dirname(d):
        if os.path.isdir(os.path.join(d, "meson-private")):
            return os.path.join(d, "tests", "integration", "guest")
        d = os.path.dirname(d)
    return os.path.join(tempfile.gettempdir(), "latscope-guest-%d" % os.getuid())


def initramfs(kernel):
    """The path of the guest's initramfs for kernel (debian_kernel()), built on first use and kept
    under a name that changes with anything it is built from."""
    _, moddir, release = kernel
    busybox = static_busybox()
    modules = _module_order(moddir, MODULES)
    key = hashlib.sha256(json.dumps([INIT, release, busybox, os.stat(busybox).st_mtime_ns,
                                     [(p, os.stat(p).st_mtime_ns) for _, p in modules]]).encode()).hexdigest()
    out = os.path.join(cache_dir(), "initramfs-%s-%s.cpio" % (release, key[:16]))
    if os.path.exists(out):
        return out
    cpio = _Cpio()
    for d in ("bin", "dev", "proc", "sys", "host", "lib", "lib/modules"):
        cpio.directory(d)
    cpio.add("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1))
    with open(busybox, "rb") as f:
        cpio.file("bin/busybox", f.read(), 0o755)
    cpio.file("init", INIT.encode(), 0o755)
    for name, path in modules:
        cpio.file("lib/modules/%s.ko" % name, _module_bytes(path))
    cpio.file("lib/modules/order", "".join(name + "\n" for name, _ in modules).encode())
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = "%s.%d.tmp" % (out, os.getpid())
    with open(tmp, "wb") as f:
        f.write(cpio.bytes())
    os.replace(tmp, out)
    return out


def _die_with_parent():
    """A preexec_fn: QEMU is killed when the test process dies, however it dies."""
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


class _Stream:
    """Lines and exact byte counts from a socket, each read by a deadline."""

    def __init__(self, sock, alive):
        self.sock, self.alive, self.buf = sock, alive, b""

    def _more(self, deadline):
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self.sock], [], [], min(left, 0.5))
            if ready:
                data = self.sock.recv(65536)
                if not data:
                    raise GuestError("the guest closed its harness port")
                self.buf += data
                return
            if not self.alive():
                raise GuestError("QEMU exited")

    def line(self, deadline):
        while b"\n" not in self.buf:
            self._more(deadline)
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode()

    def exactly(self, n, deadline):
        while len(self.buf) < n:
            self._more(deadline)
        data, self.buf = self.buf[:n], self.buf[n:]
        return data


class Guest:
    """A TCG guest of Debian's kernel running this machine's / read-only (the module's doc)."""

    def __init__(self, tmpdir, serial_socket=None, cpus=2, memory="1G", boot_timeout=BOOT_TIMEOUT, accel="tcg"):
        self.tmpdir, self.serial_socket, self.accel = tmpdir, serial_socket, accel
        self.cpus, self.memory, self.boot_timeout = cpus, memory, boot_timeout
        self.qmp_socket = os.path.join(tmpdir, "qmp.sock")
        self.console = os.path.join(tmpdir, "guest-console.log")
        self.control_socket = os.path.join(tmpdir, "harness.sock")
        self.proc = None
        self.pid = None
        self.kernel = None               # the guest's `uname -r`
        self.ports = {}                  # the guest's virtio-serial ports: {device: name}
        self.boot_seconds = None
        self._listener = self._conn = self._stream = None

    def kernel_cmdline(self):
        """TCG's kernel quiet, as it is slow to print; KVM's printing from its decompressor on, so
        that a guest the host's KVM cannot run is told from one that is slow (_boot).  edd=off: the
        real-mode setup prints nothing, which is where a nested KVM guest stops here."""
        if self.accel == "tcg":
            return "console=ttyS0 panic=-1 quiet"
        return "console=ttyS0 earlyprintk=ttyS0 edd=off panic=-1"

    def command_line(self, kernel, initrd):
        args = [QEMU, "-accel", "tcg,thread=multi" if self.accel == "tcg" else self.accel, "-smp", str(self.cpus), "-m", self.memory,
                "-nographic", "-no-reboot", "-nic", "none", "-name", "guest,debug-threads=on",
                "-kernel", kernel, "-initrd", initrd, "-append", self.kernel_cmdline(),
                # multidevs=remap: the file ids of the host's several file systems under / stay apart.
                "-virtfs", "local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap",
                "-qmp", "unix:%s,server=on,wait=off" % self.qmp_socket,
                "-device", "virtio-serial",
                "-chardev", "socket,id=harness,path=%s,server=off" % self.control_socket,
                "-device", "virtserialport,chardev=harness,name=" + HARNESS_PORT]
        if self.serial_socket:
            args += ["-chardev", "socket,id=ls,path=%s,server=off,reconnect=1" % self.serial_socket,
                     "-device", "virtserialport,chardev=ls,name=" + SERIAL_PORT]
        return args

    def __enter__(self):
        why = lacking()
        if why:
            raise GuestUnavailable(why)
        kernel = debian_kernel()
        initrd = initramfs(kernel)
        started = time.monotonic()
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind(self.control_socket)
            self._listener.listen(1)
            with open(self.console, "wb") as log:
                self.proc = subprocess.Popen(self.command_line(kernel[0], initrd), stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
            self.pid = self.proc.pid
            self._boot(started + self.boot_timeout, started + KVM_KERNEL_SECONDS)
        except BaseException:
            self.close()
            raise
        self.boot_seconds = time.monotonic() - started
        return self

    def _boot(self, deadline, kernel_by):
        while not select.select([self._listener], [], [], 0.2)[0]:
            if self.proc.poll() is not None:
                raise GuestError("QEMU exited with status %d:\n%s" % (self.proc.returncode, self.console_tail()))
            if time.monotonic() > deadline:
                raise GuestError("QEMU did not connect its harness port\n" + self.console_tail())
        self._conn, _ = self._listener.accept()
        self._stream = _Stream(self._conn, lambda: self.proc.poll() is None)
        if self.accel != "tcg":
            self._kernel_starts(kernel_by)
        try:
            ready = self._stream.line(deadline).split()
        except (TimeoutError, GuestError) as e:
            why = str(e) or "timed out"
            raise GuestError("the guest did not come up (%s):\n%s" % (why, self.console_tail())) from None
        if ready[:1] != ["latscope-guest-ready"]:
            raise GuestError("the guest said %r:\n%s" % (" ".join(ready), self.console_tail()))
        self.kernel = ready[1]
        self.ports = dict(p.split("=", 1) for p in ready[2:])

    def run(self, argv, timeout=60, env=None, text=True):
        """Run argv in the guest (in the chroot to this machine's /, cwd /tmp, stdin /dev/null):
        a CompletedProcess with its exit status and its stdout and stderr, exact (str with text,
        else bytes).  Past timeout the guest is killed and subprocess.TimeoutExpired raised."""
        if self.proc is None or self.proc.poll() is not None:
            raise GuestError("the guest is not running")
        words = ["/usr/bin/env", "-i", "-C", SCRATCH] + ["%s=%s" % kv for kv in dict(GUEST_ENV, **(env or {})).items()]
        line = " ".join(shlex.quote(w) for w in words + list(argv))
        deadline = time.monotonic() + timeout
        try:
            self._conn.sendall(base64.b64encode(line.encode()) + b"\n")
            done = self._stream.line(deadline).split()
            if len(done) != 4 or done[0] != "latscope-guest-done":
                raise GuestError("the guest answered %r" % " ".join(done))
            rc, nout, nerr = (int(x) for x in done[1:])
            out = self._stream.exactly(nout, deadline)
            err = self._stream.exactly(nerr, deadline)
        except TimeoutError:
            self.close()
            raise subprocess.TimeoutExpired(list(argv), timeout) from None
        except GuestError as e:
            self.close()
            raise GuestError("%s:\n%s" % (e, self.console_tail())) from None
        if text:
            out, err = out.decode(errors="surrogateescape"), err.decode(errors="surrogateescape")
        return subprocess.CompletedProcess(list(argv), rc, out, err)

    def read(self, path):
        """The bytes of a file in the guest."""
        p = self.run(["cat", path], text=False)
        if p.returncode:
            raise FileNotFoundError("guest: %s" % p.stderr.decode(errors="replace").strip())
        return p.stdout

    def vcpu_threads(self):
        """QEMU's vCPU threads by their names ("CPU N/TCG" with debug-threads): {N: tid}."""
        threads = {}
        for task in glob.glob("/proc/%d/task/*" % self.pid):
            try:
                with open(os.path.join(task, "comm")) as f:
                    m = re.fullmatch(r"CPU (\d+)/(TCG|KVM)", f.read().strip())
            except FileNotFoundError:
                continue                 # a thread that just ended
            if m:
                threads[int(m.group(1))] = int(os.path.basename(task))
        return threads

    def _kernel_starts(self, kernel_by):
        """Returns once the kernel has printed; GuestUnavailable if it has not by kernel_by."""
        while not self.kernel_spoke():
            if self.proc.poll() is not None:
                return          # _boot says how QEMU ended
            if time.monotonic() > kernel_by:
                raise GuestUnavailable("this machine's /dev/kvm does not run a guest of Debian's kernel: it "
                                       "printed nothing in %d s after QEMU started (a nested KVM guest "
                                       "stops in its real-mode setup here)" % KVM_KERNEL_SECONDS)
            time.sleep(0.2)

    def kernel_spoke(self):
        """Whether the console has a line from the kernel: text after the BIOS's last "Booting from
        ROM", its terminal escapes aside."""
        text = self._console_text()
        if text is None or "Booting from ROM" not in text:
            return False
        after = text.rsplit("Booting from ROM", 1)[1]
        return re.search(r"[A-Za-z]{3}", re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1bc", "", after)) is not None

    def _console_text(self):
        """What QEMU has written to the console so far, or None before it has written a thing."""
        try:
            with open(self.console, "rb") as f:
                return f.read().decode(errors="replace")
        except FileNotFoundError:
            return None

    def console_tail(self, lines=30):
        text = self._console_text()
        if text is None:
            return "(no console output)"
        return "\n".join(text.splitlines()[-lines:])

    def close(self):
        """Kill QEMU and close what the harness opened; again is harmless."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
        for s in (self._conn, self._listener):
            if s is not None:
                s.close()
        self._conn = self._listener = None
        for path in (self.control_socket, self.qmp_socket):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def __exit__(self, *exc):
        self.close()
        return False


class Qmp:
    """A QMP client on QEMU's unix socket: the greeting read, capabilities negotiated."""

    def __init__(self, path, timeout=10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")
        self.greeting = self._message()
        self.execute("qmp_capabilities")

    def _message(self):
        line = self.file.readline()
        if not line:
            raise GuestError("QMP closed its socket")
        return json.loads(line)

    def execute(self, command, **arguments):
        """The return value of command; an error answer raises GuestError.  Events are skipped."""
        request = {"execute": command}
        if arguments:
            request["arguments"] = arguments
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        while True:
            answer = self._message()
            if "return" in answer:
                return answer["return"]
            if "error" in answer:
                raise GuestError("QMP %s: %s" % (command, answer["error"].get("desc")))

    def close(self):
        self.file.close()
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
