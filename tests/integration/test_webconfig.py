"""latscope monitor --web-config: the Prometheus exporter-toolkit web configuration, as node_exporter
reads it.  The real Prometheus server scrapes the monitor over https, with a CA, server and client
certificates made here by openssl and a bcrypt password, and its API returns the samples; what
lacks the password gets 401, what lacks the client certificate gets no TLS session, plain http gets
no answer; bad files are refused in one line, exit 2; promtool check web-config agrees with latscope
on which files are valid, and the few files latscope refuses beyond it are named and tested apart.
Nothing here is timed: the 'memory' suite."""
import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.parse
import urllib.request
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import crypt        # libxcrypt's bcrypt; Python 3.13 drops the module (python3-bcrypt then)

from harness import LATSCOPE, TempDirCase, main, needs, run

SBIN_PATH = os.environ.get("PATH", os.defpath) + ":/usr/sbin:/sbin"
PROMETHEUS = shutil.which("prometheus", path=SBIN_PATH)
PROMTOOL = shutil.which("promtool", path=SBIN_PATH)
OPENSSL = shutil.which("openssl")
PASSWORD = "s3cret, with a comma"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bcrypt(password, cost=4):
    """A bcrypt hash of password from libxcrypt (the lowest cost: the tests stay fast)."""
    return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=2 ** cost))


def openssl(*args, cwd):
    p = subprocess.run([OPENSSL, *args], capture_output=True, text=True, cwd=cwd, timeout=60)
    assert p.returncode == 0, p.stderr


def make_pki(d):
    """ca.pem, server.pem/.key for 127.0.0.1 and client.pem/.key, both signed by the CA; keys 0600."""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=latscope test CA", cwd=d)
    for name, ext in (("server", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"),
                      ("client", "extendedKeyUsage=clientAuth\n")):
        with open(os.path.join(d, name + ".ext"), "w") as f:
            f.write(ext)
        openssl("req", *ec, "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name, cwd=d)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", name + ".ext", "-out", name + ".pem", cwd=d)
    for key in ("ca.key", "server.key", "client.key"):
        os.chmod(os.path.join(d, key), 0o600)


class WebMonitor:
    """latscope monitor --web-config on a free port, read from its 'serving' line."""

    def __init__(self, case, config):
        self.proc = subprocess.Popen([LATSCOPE, "monitor", "--listen", "127.0.0.1:0", "--no-store", "-a", "1",
                                      "--window", "100ms", "-q", "--web-config", config],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=case.tmp)
        case.addCleanup(self.stop)
        self.lines = []
        m = None
        for _ in range(10):
            line = self.proc.stderr.readline()
            self.lines.append(line)
            m = re.search(r"serving (https?)://127\.0\.0\.1:(\d+)/metrics", line)
            if m or not line:
                break
        self.scheme, self.port = (m.group(1), int(m.group(2))) if m else (None, None)
        if m:
            threading.Thread(target=lambda: [self.lines.append(x) for x in self.proc.stderr], daemon=True).start()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)


class WebCase(TempDirCase):
    def setUp(self):
        super().setUp()
        make_pki(self.tmp)
        self.hash = bcrypt(PASSWORD)

    def config(self, text, name="web.yml", mode=0o600):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def full_config(self):
        """TLS with verified client certificates, and a password."""
        return self.config("tls_server_config:\n"
                           "  cert_file: server.pem\n"
                           "  key_file: server.key\n"
                           "  client_auth_type: RequireAndVerifyClientCert\n"
                           "  client_ca_file: ca.pem\n"
                           "basic_auth_users:\n"
                           f"  prometheus: '{self.hash}'\n")

    def tls_context(self, client_cert=True):
        ctx = ssl.create_default_context(cafile=self.path("ca.pem"))
        if client_cert:
            ctx.load_cert_chain(self.path("client.pem"), self.path("client.key"))
        return ctx

    def https_get(self, port, auth=None, client_cert=True, path="/metrics"):
        """(status, headers, body) of one GET over https."""
        c = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=self.tls_context(client_cert))
        try:
            headers = {"Authorization": "Basic " + auth} if auth else {}
            c.request("GET", path, headers=headers)
            r = c.getresponse()
            return r.status, r.headers, r.read().decode()
        finally:
            c.close()

    def assert_no_answer(self, c):
        """A request with the right password on connection c gets no HTTP answer."""
        with self.assertRaises((ssl.SSLError, ConnectionError, http.client.HTTPException)):
            c.request("GET", "/healthz", headers={"Authorization": "Basic " + basic("prometheus", PASSWORD)})
            c.getresponse().read()
        c.close()


def basic(user, password):
    return base64.b64encode(f"{user}:{password}".encode()).decode()


@needs(cpus=2, programs=("openssl",))
class TestServed(WebCase):
    def test_a_scrape_needs_the_password_and_gets_401_without_it(self):
        mon = WebMonitor(self, self.full_config())
        self.assertEqual(mon.scheme, "https", "".join(mon.lines))
        status, headers, _ = self.https_get(mon.port)
        self.assertEqual(status, 401)
        self.assertIn('Basic realm="latscope"', headers["WWW-Authenticate"])
        self.assertEqual(self.https_get(mon.port, basic("prometheus", "wrong"))[0], 401)
        self.assertEqual(self.https_get(mon.port, basic("nobody", PASSWORD))[0], 401)
        self.assertEqual(self.https_get(mon.port, basic("prometheus", PASSWORD), path="/healthz")[0], 200)
        self.assertEqual(self.https_get(mon.port, path="/healthz")[0], 401)       # every path is kept
        status, _, body = self.https_get(mon.port, basic("prometheus", PASSWORD))
        self.assertIn(status, (200, 503))                                         # 503: before the first window
        if status == 200:
            self.assertIn("latscope_", body)

    def test_without_a_client_certificate_there_is_no_tls_session(self):
        """With TLS 1.3 the client learns it at its first read (the certificate comes after its
        Finished); with TLS 1.2 during the handshake.  Either way no HTTP answer comes."""
        mon = WebMonitor(self, self.full_config())
        for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            with self.subTest(version=version):
                ctx = self.tls_context(client_cert=False)
                ctx.minimum_version = ctx.maximum_version = version
                self.assert_no_answer(http.client.HTTPSConnection("127.0.0.1", mon.port, timeout=10, context=ctx))

    def test_a_client_certificate_from_another_ca_is_refused(self):
        other = self.path("other")
        os.mkdir(other)
        make_pki(other)
        mon = WebMonitor(self, self.full_config())
        ctx = self.tls_context(client_cert=False)
        ctx.load_cert_chain(os.path.join(other, "client.pem"), os.path.join(other, "client.key"))
        self.assert_no_answer(http.client.HTTPSConnection("127.0.0.1", mon.port, timeout=10, context=ctx))

    def test_plain_http_to_the_tls_port_gets_no_answer(self):
        mon = WebMonitor(self, self.full_config())
        self.assert_no_answer(http.client.HTTPConnection("127.0.0.1", mon.port, timeout=10))

    def test_basic_auth_alone_serves_http(self):
        mon = WebMonitor(self, self.config(f"basic_auth_users:\n  alice: '{self.hash}'\n"))
        self.assertEqual(mon.scheme, "http", "".join(mon.lines))
        c = http.client.HTTPConnection("127.0.0.1", mon.port, timeout=10)
        c.request("GET", "/healthz")
        self.assertEqual(c.getresponse().status, 401)
        c.close()

    @needs(programs=("prometheus",))
    def test_prometheus_scrapes_over_https_with_its_certificate_and_password(self):
        mon = WebMonitor(self, self.full_config())
        port = free_port()
        config = self.path("prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n"
                    "scrape_configs:\n  - job_name: latscope\n    scheme: https\n"
                    f"    tls_config:\n      ca_file: {self.path('ca.pem')}\n"
                    f"      cert_file: {self.path('client.pem')}\n      key_file: {self.path('client.key')}\n"
                    f"    basic_auth:\n      username: prometheus\n      password: '{PASSWORD}'\n"
                    f"    static_configs:\n      - targets: ['127.0.0.1:{mon.port}']\n")
        with open(self.path("prometheus.log"), "w") as log:
            prom = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={self.path('tsdb')}",
                                     f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=log)
        self.addCleanup(lambda: (prom.terminate(), prom.wait(timeout=30)))

        def query(q):
            url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.load(r)["data"]["result"]

        end, got = time.monotonic() + 90, []
        while time.monotonic() < end:
            try:
                got = query('latscope_samples_total{job="latscope"}')
                if got and float(got[0]["value"][1]) > 0:
                    break
            except OSError:
                pass                    # Prometheus still starting
            time.sleep(0.5)
        with open(self.path("prometheus.log")) as f:
            log = f.read()[-3000:]
        self.assertTrue(got and float(got[0]["value"][1]) > 0, f"no samples scraped; prometheus said: {log}")
        self.assertEqual(float(query('up{job="latscope"}')[0]["value"][1]), 1.0)


# Files both readers judge the same way, with whether they are valid.  Relative paths are the
# web configuration's directory's, as exporter-toolkit resolves them.
AGREED = [
    ("empty", "", True),
    ("password", "basic_auth_users:\n  alice: '{hash}'\n", True),
    ("plain-text password", "basic_auth_users:\n  alice: s3cret\n", False),
    ("unknown top key", "tls_config:\n  cert_file: server.pem\n", False),
    ("unknown tls key", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  certfile: x\n",
     False),
    ("repeated key", "basic_auth_users: {{}}\nbasic_auth_users: {{}}\n", False),
    ("tls", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n", True),
    ("client certs", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
     "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n", True),
    ("no key file", "tls_server_config:\n  cert_file: server.pem\n", False),
    ("no cert file", "tls_server_config:\n  key_file: server.key\n", False),
    ("missing cert file", "tls_server_config:\n  cert_file: nothing.pem\n  key_file: server.key\n", False),
    ("bad client auth", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
     "  client_auth_type: Sometimes\n", False),
    ("ca without client auth", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
     "  client_ca_file: ca.pem\n", False),
    ("bad version", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
     "  min_version: TLS14\n", False),
    ("versions, suites, curves", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
     "  min_version: TLS12\n  max_version: TLS13\n"
     "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256]\n"
     "  curve_preferences: [X25519, CurveP256]\n  prefer_server_cipher_suites: true\n", True),
    ("unknown suite", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
     "  cipher_suites: [TLS_FOO]\n", False),
    ("insecure suite", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
     "  cipher_suites: [TLS_ECDHE_RSA_WITH_RC4_128_SHA]\n", False),
    ("short chacha name", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
     "  cipher_suites: [TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305]\n", False),
    ("http2", "http_server_config:\n  http2: false\n", True),
    ("not a mapping", "- tls_server_config\n", False),
]

# Files latscope refuses and exporter-toolkit takes, each with latscope's reason.
LATSCOPE_ONLY = [
    ("key others may read", "tls_server_config:\n  cert_file: server.pem\n  key_file: open.key\n",
     "holds a private key and everyone may read it"),
    ("verification without a CA", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"
     "  client_auth_type: VerifyClientCertIfGiven\n", "needs client_ca_file"),
    ("headers", "http_server_config:\n  headers:\n    X-Frame-Options: deny\n", "headers are not supported"),
]


@needs(cpus=2, programs=("openssl",))
class TestFiles(WebCase):
    def latscope_verdict(self, path):
        """(valid, stderr): valid when the monitor started serving with the file."""
        mon = WebMonitor(self, path)
        if mon.port:
            mon.stop()
            return True, "".join(mon.lines)
        mon.proc.wait(timeout=30)
        return False, (mon.proc.returncode, "".join(mon.lines))

    def test_bad_files_are_refused_in_one_line_naming_the_file_with_exit_2(self):
        shutil.copy(self.path("server.key"), self.path("open.key"))
        os.chmod(self.path("open.key"), 0o644)
        cases = [(name, text.format(hash=self.hash), why) for name, text, why in LATSCOPE_ONLY] + [
            ("unknown key", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n  certfile: x\n",
             "line 4: unknown key 'certfile' in tls_server_config"),
            ("plain text", "basic_auth_users:\n  alice: s3cret\n", "is not a bcrypt hash"),
        ]
        for name, text, why in cases:
            with self.subTest(name=name):
                path = self.config(text)
                p = run("monitor", "--no-store", "--listen", "127.0.0.1:0", "--web-config", path, timeout=30)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
                self.assertIn(f"option '--web-config': '{path}'", p.stderr)
                self.assertIn(why, p.stderr)
        p = run("monitor", "--no-store", "--web-config", self.path("nothing.yml"), timeout=30)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"cannot read '{self.path('nothing.yml')}': No such file", p.stderr)

    @needs(root=True)
    def test_a_file_its_user_cannot_read_is_refused(self):
        path = self.config(f"basic_auth_users:\n  alice: '{self.hash}'\n")
        p = self.as_nobody("monitor", "--no-store", "--web-config", path)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"cannot read '{path}': Permission denied", p.stderr)

    @needs(programs=("promtool",))
    def test_promtool_check_web_config_agrees_on_which_files_are_valid(self):
        shutil.copy(self.path("server.key"), self.path("open.key"))
        os.chmod(self.path("open.key"), 0o644)
        for name, text, valid in AGREED:
            with self.subTest(name=name):
                path = self.config(text.format(hash=self.hash))
                p = subprocess.run([PROMTOOL, "check", "web-config", path], capture_output=True, text=True,
                                   timeout=60)
                self.assertEqual(p.returncode == 0, valid, p.stdout + p.stderr)
                ours, said = self.latscope_verdict(path)
                self.assertEqual(ours, valid, said)
        for name, text, _ in LATSCOPE_ONLY:
            with self.subTest(name=name, latscope_only=True):
                path = self.config(text.format(hash=self.hash))
                p = subprocess.run([PROMTOOL, "check", "web-config", path], capture_output=True, text=True,
                                   timeout=60)
                self.assertEqual(p.returncode, 0, "promtool refuses it too: move it to AGREED\n" + p.stdout + p.stderr)
                self.assertFalse(self.latscope_verdict(path)[0])


if __name__ == "__main__":
    main()
