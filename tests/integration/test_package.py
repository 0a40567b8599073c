"""The Debian package: it builds, lintian finds no error or warning, and installed on this machine
it works, is upgraded over with the user's configuration kept, and purged leaves nothing of itself.
The release tarball: it holds every file of the commit, and builds and passes its unit tests from
itself.

The package is built by scripts/build-package and the tarball by scripts/build-dist, into
$LATSCOPE_PACKAGE_DIR and $LATSCOPE_DIST_DIR when ./check has built them already (beside the timing
modules), else here.  The install changes this machine and puts it back:
it runs only where no latscope package or file of one is there to be replaced."""
import glob
import os
import re
import shutil
import stat
import subprocess
import tempfile

from harness import TempDirCase, main, needs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Where the package puts what a user of the monitor may have put there by hand (contrib/README.md).
OWN = ["/var/lib/latscope", "/etc/default/latscope", "/lib/systemd/system/latscope-monitor.service"]
APT_ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
_built = {}


def built(script, env):
    """The directory scripts/SCRIPT filled: ./check's ($ENV), or one built now (once)."""
    given = os.environ.get(env)
    if given:
        return given
    if script not in _built:
        _built[script] = tempfile.mkdtemp(prefix="latscope-%s-" % script)
        subprocess.run([os.path.join(ROOT, "scripts", script), _built[script]], timeout=900)
    return _built[script]


def status_of(directory):
    with open(os.path.join(directory, "status")) as f:
        return f.read().strip()


def debs(directory):
    found = sorted(glob.glob(os.path.join(directory, "latscope_*.deb")))
    return found[0] if found else None


def sh(*cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, env=APT_ENV, timeout=300, **kw)


@needs(programs=("dpkg-buildpackage", "dh", "lintian"))
class Package(TempDirCase):
    def setUp(self):
        super().setUp()
        self.dir = built("build-package", "LATSCOPE_PACKAGE_DIR")
        self.status = status_of(self.dir)

    def test_it_builds_and_lintian_finds_no_error_or_warning(self):
        log = os.path.join(self.dir, "build.log")
        self.assertEqual(self.status, "0", "%s failed; the end of %s:\n%s" % (self.status, log, tail(log)))
        lint = open(os.path.join(self.dir, "lintian.log")).read()
        self.assertEqual([line for line in lint.splitlines() if re.match(r"^[EW]: ", line)], [])
        self.assertIsNotNone(debs(self.dir))
        self.assertTrue(glob.glob(os.path.join(self.dir, "latscope-dbgsym_*.deb")), "no -dbgsym package")

    def test_its_files_are_where_a_debian_user_looks_for_them(self):
        deb = debs(self.dir)
        self.assertIsNotNone(deb, self.status)
        listing = sh("dpkg-deb", "-c", deb).stdout
        paths = {line.split()[5].lstrip("."): line for line in listing.splitlines()}
        for want in ("/usr/bin/latscope", "/usr/share/man/man1/latscope-timer.1.gz", "/usr/share/doc/latscope/NEWS.md.gz",
                     "/usr/share/doc/latscope/tail-method.md.gz", "/usr/share/latscope/result.schema.json",
                     "/usr/share/latscope/contrib/prometheus/latscope.rules.yml",
                     "/usr/share/latscope/contrib/grafana/latscope.json", "/lib/systemd/system/latscope-monitor.service",
                     "/etc/default/latscope", "/var/lib/latscope/",
                     "/usr/share/bash-completion/completions/latscope",
                     # latscope/loop.h, its pkg-config file and its page (doc/loop.md)
                     "/usr/include/latscope/loop.h", "/usr/share/pkgconfig/latscope-loop.pc",
                     "/usr/share/doc/latscope/loop.md.gz"):
            self.assertIn(want, paths)
        # the stand-ins for rt-tests' tools: never in /usr/bin, where they would shadow rt-tests'
        for name in ("cyclictest", "rtla", "oslat"):
            self.assertNotIn("/usr/bin/" + name, paths)
            self.assertRegex(listing, r"\./usr/libexec/latscope/%s -> \.\./\.\./bin/latscope\n" % name)
        self.assertTrue(paths["/var/lib/latscope/"].startswith("drwx------"), paths["/var/lib/latscope/"])
        # every man page is of this version
        version = sh("dpkg-deb", "-f", deb, "Version").stdout.strip()
        for page in glob.glob(os.path.join(ROOT, "doc", "*.1")):
            with open(page) as f:
                self.assertRegex(f.read(), re.compile(r'^\.TH .* "latscope %s"' % re.escape(version), re.M), page)
        control = sh("dpkg-deb", "-f", deb, "Depends", "Recommends", "Suggests").stdout
        for lib in ("libjansson4", "libsqlite3-0", "liburing2", "libtracefs1", "libbpf1"):
            self.assertRegex(control, r"Depends: .*\b%s\b" % lib)
        self.assertRegex(control, r"Recommends: .*libmicrohttpd12.*libyaml-0-2")   # loaded by the monitor only
        self.assertRegex(control, r"Suggests: .*rt-tests.*prometheus")

    @needs(root=True, programs=("apt-get", "man", "systemd-analyze"))
    def test_installed_it_works_an_upgrade_keeps_the_configuration_and_purge_leaves_nothing(self):
        deb = debs(self.dir)
        self.assertIsNotNone(deb, self.status)
        if sh("dpkg-query", "-W", "-f", "${Status}", "latscope").stdout.startswith("install ok"):
            self.skipTest("this machine has latscope installed as a package: the test will not replace it")
        there = [p for p in OWN if os.path.lexists(p)]
        if there:
            self.skipTest("this machine has the package's files from elsewhere (%s): the test will not "
                          "replace them" % ", ".join(there))
        self.addCleanup(self.purge_all)
        dirs_before = {d for d in self.package_dirs(deb) if os.path.isdir(d)}

        p = sh("apt-get", "install", "-y", "-q", deb)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        v = sh("/usr/bin/latscope", "--version")
        version = sh("dpkg-deb", "-f", deb, "Version").stdout.strip()   # debian/changelog's
        self.assertRegex(v.stdout, r"^latscope %s( \(\S+\))?\n$" % re.escape(version))   # meson.build's
        r = sh("/usr/bin/latscope", "run", "--quick", "--db", self.path("runs.db"))
        self.assertEqual(r.returncode, 0, r.stderr)
        m = subprocess.run(["man", "-P", "cat", "latscope-timer"], capture_output=True, text=True,
                           env=dict(APT_ENV, MANPATH="/usr/share/man", MANWIDTH="80"))
        self.assertEqual(m.returncode, 0, m.stderr)
        self.assertIn("latscope-timer - ", m.stdout)
        unit = "/lib/systemd/system/latscope-monitor.service"
        u = sh("systemd-analyze", "verify", "--man=no", unit)
        self.assertEqual((u.returncode, u.stderr), (0, ""))
        self.assertIn("ExecStart=/usr/bin/latscope monitor", open(unit).read())
        # installed, neither enabled nor started
        self.assertEqual(glob.glob("/etc/systemd/system/*.wants/latscope-monitor.service"), [])
        conffiles = sh("dpkg-query", "-W", "-f", "${Conffiles}", "latscope").stdout
        self.assertIn("/etc/default/latscope", conffiles)
        self.assertEqual(stat.S_IMODE(os.stat("/var/lib/latscope").st_mode), 0o700)

        # An upgrade keeps what the user changed in /etc/default/latscope.
        with open("/etc/default/latscope", "a") as f:
            f.write("# the user's line\n")
        p = sh("apt-get", "install", "-y", "-q", self.next_version(deb))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(sh("dpkg-query", "-W", "-f", "${Version}", "latscope").stdout, r"\+upgrade1$")
        self.assertIn("# the user's line\n", open("/etc/default/latscope").read())

        # Purge keeps a store with runs in it, and says so; everything else of the package goes.
        s = sh("/usr/bin/latscope", "timer", "-a", "0", "-D", "200ms", "-q", "--db", "/var/lib/latscope/runs.db")
        self.assertEqual(s.returncode, 0, s.stderr)
        files = self.installed_files()
        p = sh("apt-get", "purge", "-y", "-q", "latscope")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("latscope: keeping /var/lib/latscope: it holds stored runs", p.stdout + p.stderr)
        self.assertTrue(os.path.exists("/var/lib/latscope/runs.db"))
        self.assertEqual(self.left(files, dirs_before, keep="/var/lib/latscope"), [])
        shutil.rmtree("/var/lib/latscope")

        # With nothing stored, purge leaves nothing at all.
        p = sh("apt-get", "install", "-y", "-q", deb)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        files = self.installed_files()
        p = sh("apt-get", "purge", "-y", "-q", "latscope")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(self.left(files, dirs_before), [])

    def package_dirs(self, deb):
        listing = sh("dpkg-deb", "-c", deb).stdout
        return [line.split()[5].lstrip(".").rstrip("/") or "/" for line in listing.splitlines()
                if line.startswith("d")]

    def installed_files(self):
        return [f for f in sh("dpkg-query", "-L", "latscope").stdout.splitlines() if f.startswith("/") and f != "/."] + \
            ["/etc/default/latscope"]

    @staticmethod
    def left(files, dirs_before, keep=None):
        """What of the package's files is still there, but the directories that were there before it
        and what keep names."""
        return [f for f in files if os.path.lexists(f) and f not in dirs_before
                and not (keep and (f == keep or f.startswith(keep + "/")))]

    def next_version(self, deb):
        """The same package as the next version: what an upgrade installs over this one."""
        tree = self.path("next")
        subprocess.run(["dpkg-deb", "-R", deb, tree], check=True)
        control = os.path.join(tree, "DEBIAN", "control")
        text = open(control).read()
        with open(control, "w") as f:
            f.write(re.sub(r"^Version: (.*)$", r"Version: \1+upgrade1", text, flags=re.M))
        out = self.path("latscope_next_amd64.deb")
        subprocess.run(["dpkg-deb", "-b", "-Zgzip", tree, out], check=True, capture_output=True)
        return out

    @staticmethod
    def purge_all():
        sh("apt-get", "purge", "-y", "-q", "latscope")
        shutil.rmtree("/var/lib/latscope", ignore_errors=True)


@needs(programs=("git", "meson", "ninja"))
class Dist(TempDirCase):
    def test_the_release_tarball_holds_the_commit_and_builds_and_passes_its_unit_tests_from_itself(self):
        if not os.path.exists(os.path.join(ROOT, ".git")):
            self.skipTest("this build's source is no git checkout (a release tarball): meson dist makes "
                          "tarballs from git")
        d = built("build-dist", "LATSCOPE_DIST_DIR")
        log = os.path.join(d, "dist.log")
        self.assertEqual(status_of(d), "0", "the end of %s:\n%s" % (log, tail(log)))
        tarball = glob.glob(os.path.join(d, "latscope-*.tar.xz"))
        self.assertEqual(len(tarball), 1)
        listed = sh("tar", "-tJf", tarball[0]).stdout.splitlines()
        held = {name.split("/", 1)[1] for name in listed if "/" in name and not name.endswith("/")}
        committed = set(sh("git", "-C", ROOT, "ls-files").stdout.splitlines())
        self.assertEqual(committed - held, set())
        v = sh(os.path.join(d, "build", "src", "latscope"), "--version")
        self.assertRegex(v.stdout, r"^latscope \d+\.\d+\.\d+\n$")   # no git there: the version alone
        # its unit tests ran in scripts/build-dist (status "unit N" when they failed); here, that
        # they ran and none failed
        with open(os.path.join(d, "unit.log")) as f:
            unit = f.read()
        m = re.search(r"^Ok:\s+(\d+)\s*$.*^Fail:\s+(\d+)\s*$", unit, re.M | re.S)
        self.assertIsNotNone(m, unit[-3000:])
        self.assertGreater(int(m.group(1)), 0, unit[-3000:])
        self.assertEqual(int(m.group(2)), 0, unit[-3000:])


def project_version():
    with open(os.path.join(ROOT, "meson.build")) as f:
        return re.search(r"^\s*version\s*:\s*'([^']+)'", f.read(), re.M).group(1)


class Versions(TempDirCase):
    def test_news_the_debian_changelog_and_the_man_pages_name_meson_builds_version(self):
        version = project_version()
        with open(os.path.join(ROOT, "debian", "changelog")) as f:
            self.assertRegex(f.readline(), r"^latscope \(%s\) " % re.escape(version))
        with open(os.path.join(ROOT, "NEWS.md")) as f:
            headings = re.findall(r"^## (\S+)", f.read(), re.M)
        # above the newest version only what is on the branch since: "Unreleased"
        numbered = [h for h in headings if h != "Unreleased"]
        self.assertEqual(numbered[:1], [version], headings)
        self.assertIn(headings.index(numbered[0]), (0, 1), headings)
        for page in glob.glob(os.path.join(ROOT, "doc", "*.1")):
            with open(page) as f:
                self.assertRegex(f.read(), re.compile(r'^\.TH .* "latscope %s"' % re.escape(version), re.M), page)


@needs(programs=("git", "meson", "ninja"))
class Describe(TempDirCase):
    """What the build writes to describe.h (what --version prints beside the version, cli/version.c) in
    a scratch clone of this repository holding this tree as it is: without a release tag, after one,
    on it, and with uncommitted changes.  Tags are made in the clone only."""

    def git(self, *args):
        p = sh("git", "-C", self.clone, "-c", "user.name=test", "-c", "user.email=test@example.org", *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip()

    def describe(self):
        """The describe the build of the clone writes (only describe.h is made)."""
        p = sh("ninja", "-C", self.build, "src/describe.h")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(self.build, "src", "describe.h")) as f:
            return re.search(r'#define LATSCOPE_DESCRIBE "([^"]*)"', f.read()).group(1)

    def setUp(self):
        super().setUp()
        if not os.path.exists(os.path.join(ROOT, ".git")):
            self.skipTest("this source is no git checkout (a release tarball): there is nothing to clone")
        self.clone, self.build = self.path("clone"), self.path("build")
        p = sh("git", "clone", "-q", "--no-checkout", ROOT, self.clone)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.git("checkout", "-q", "--detach", sh("git", "-C", ROOT, "rev-parse", "HEAD").stdout.strip())
        # this tree's files as they are, committed: what is tested is this tree's version logic
        files = sh("git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
        for rel in filter(None, files.split("\0")):
            src, dst = os.path.join(ROOT, rel), os.path.join(self.clone, rel)
            if os.path.isfile(src) and not os.path.islink(src):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(src, dst)
        self.git("add", "-A")
        if self.git("status", "--porcelain"):
            self.git("commit", "-q", "-m", "this tree as it is")
        for tag in self.git("tag", "-l").split():
            self.git("tag", "-d", tag)
        p = sh("meson", "setup", self.build, self.clone, "-Dtests=false")
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr)
        self.version = project_version()

    def test_without_a_release_tag_it_is_the_commit(self):
        self.git("tag", "nightly")      # no v<digit> tag: not a release's
        self.assertEqual(self.describe(), self.git("rev-parse", "--short", "HEAD"))

    def test_after_a_release_tag_it_is_git_describe_without_the_v(self):
        self.git("tag", "-a", "-m", "release", "v" + self.version)
        self.git("commit", "-q", "--allow-empty", "-m", "one")
        self.git("commit", "-q", "--allow-empty", "-m", "two")
        self.assertEqual(self.describe(), "%s-2-g%s" % (self.version, self.git("rev-parse", "--short", "HEAD")))

    def test_on_the_release_tag_it_is_the_version_and_uncommitted_changes_are_dirty(self):
        self.git("tag", "v" + self.version)
        self.assertEqual(self.describe(), self.version)     # --version prints the version alone
        with open(os.path.join(self.clone, "README.md"), "a") as f:
            f.write("a change\n")
        self.assertEqual(self.describe(), self.version + "-dirty")


def tail(path, lines=30):
    try:
        with open(path) as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return str(e)


if __name__ == "__main__":
    main()
