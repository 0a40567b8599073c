"""The monitor's HTTP endpoint (src/serve), driven through serve-fixture: the
server alone, with a counter the fixture publishes every 100 ms.

Nothing here measures a latency: where a test bounds a time, the bound (1 s for an
answer, three idle timeouts for a close) stands far above this host's stalls (tens
of ms at worst), and what it catches (a server starved or never closing) is seconds
or forever."""
import http.client
import os
import re
import resource
import selectors
import shutil
import socket
import subprocess
import threading
import time
import unittest

import harness

FIXTURE = os.environ.get("SERVE_FIXTURE", "build/tests/integration/serve-fixture")
PROMETHEUS_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
# What Prometheus 2.42 sends when it scrapes.
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;"
                     "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
# The server's idle timeout and the time it gives a whole request (SERVE_IDLE_TIMEOUT_S and
# SERVE_REQUEST_TIMEOUT_MS in src/serve/http.h).
IDLE_TIMEOUT = 5
REQUEST_TIMEOUT = 2
# A scraper on another host: every loopback address is local, so the
# well-behaved client comes from 127.0.0.2 while hostile ones use 127.0.0.1.
OTHER_CLIENT = "127.0.0.2"
# The scraper of the attack tests: an address none of their attackers use.
SCRAPER = "127.0.0.100"


class Fixture:
    def __init__(self, *args):
        self.proc = subprocess.Popen([FIXTURE, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line:
            err = self.proc.stderr.read()
            self.proc.wait()
            raise AssertionError(f"serve-fixture did not start: {err}")
        self.port = int(line)

    def stop(self):
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=30)
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        self.proc.stdout.close()
        return rc, err


def get(port, path="/metrics", method="GET", headers=None, source=None, timeout=1.0):
    """(status, headers dict in lower case, body, seconds taken) of one request."""
    start = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                   source_address=(source, 0) if source else None)
    try:
        c.request(method, path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body, time.monotonic() - start
    finally:
        c.close()


def raw(port, data, timeout=5.0):
    """The bytes the server sends back for data, until it closes (or b'' if it drops us)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    out = b""
    try:
        s.sendall(data)
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return out


class Attack(threading.Thread):
    """Keeps count connections open to port, from sources in turn, until stop(): each sends
    a request line at once and then one header line every interval seconds (a slowloris),
    or, with interval None, nothing at all.  A connection the server closes is opened
    again at once, as a real attacker would.  It waits in epoll, so that the attacker's own
    CPU time does not starve the server it attacks on this 2-CPU machine."""

    def __init__(self, port, sources, count, interval):
        super().__init__()
        self.port, self.sources, self.count, self.interval = port, sources, count, interval
        self.socks = [None] * count
        self.next_line = [0.0] * count
        self.sel = selectors.DefaultSelector()
        self.started = threading.Event()
        self.halt = threading.Event()

    def open(self, i):
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=5,
                                         source_address=(self.sources[i % len(self.sources)], 0))
        except OSError:
            self.socks[i] = None
            return
        s.setblocking(False)
        self.socks[i] = s
        self.sel.register(s, selectors.EVENT_READ, i)
        if self.interval is not None:
            self.send(i, b"GET /metrics HTTP/1.1\r\nHost: x\r\n")

    def send(self, i, data):
        try:
            self.socks[i].send(data)
        except OSError:
            pass
        self.next_line[i] = time.monotonic() + self.interval

    def reopen_if_closed(self, i):
        s = self.socks[i]
        try:
            if s.recv(65536) != b"":
                return
        except BlockingIOError:
            return
        except OSError:
            pass
        self.sel.unregister(s)
        s.close()
        self.open(i)

    def run(self):
        try:
            for i in range(self.count):
                self.open(i)
            self.started.set()
            while not self.halt.is_set():
                for key, _ in self.sel.select(timeout=0.05):
                    self.reopen_if_closed(key.data)
                now = time.monotonic()
                for i, s in enumerate(self.socks):
                    if s is None:
                        self.open(i)
                    elif self.interval is not None and now >= self.next_line[i]:
                        self.send(i, b"X-Slow: y\r\n")
        finally:
            self.started.set()
            for s in self.socks:
                if s is not None:
                    s.close()
            self.sel.close()

    def stop(self):
        self.halt.set()
        self.join()


def raise_fd_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def status_of(response):
    m = re.match(rb"HTTP/1\.[01] (\d{3}) ", response)
    return int(m.group(1)) if m else None


def ticks(body):
    m = re.search(rb"^latscope_fixture_ticks_total (\d+)$", body, re.M)
    assert m, body
    return int(m.group(1))


class ServeCase(unittest.TestCase):
    def setUp(self):
        self.fx = Fixture()

    def tearDown(self):
        rc, err = self.fx.stop()
        self.assertEqual(rc, 0, err)
        self.assertEqual(err, "")

    def assert_metrics_served_quickly(self, source=OTHER_CLIENT):
        """Within 1 s: a bound 30 times this host's worst stall, where a starved server takes seconds."""
        status, headers, body, took = get(self.fx.port, source=source, timeout=1.0)
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], PROMETHEUS_TYPE)
        ticks(body)
        self.assertLess(took, 1.0)


class TestRoutes(ServeCase):
    def test_metrics_is_prometheus_text_when_the_client_asks_for_nothing_special(self):
        for accept in (None, "text/plain", "*/*", "application/json"):
            with self.subTest(accept=accept):
                status, headers, body, _ = get(self.fx.port, headers={"Accept": accept} if accept else {})
                self.assertEqual(status, 200)
                self.assertEqual(headers["content-type"], PROMETHEUS_TYPE)
                self.assertNotIn(b"# EOF", body)
                ticks(body)

    def test_metrics_is_openmetrics_when_the_scraper_asks_for_it(self):
        for accept in (PROMETHEUS_ACCEPT, "application/openmetrics-text", "Application/OpenMetrics-Text; q=0.2"):
            with self.subTest(accept=accept):
                status, headers, body, _ = get(self.fx.port, headers={"Accept": accept})
                self.assertEqual(status, 200)
                self.assertEqual(headers["content-type"], OPENMETRICS_TYPE)
                self.assertTrue(body.endswith(b"# EOF\n"), body)
                self.assertEqual(headers.get("vary"), "Accept")

    def test_metrics_stays_prometheus_text_when_openmetrics_is_refused_or_ranked_lower(self):
        for accept in ("application/openmetrics-text;q=0", "application/openmetrics-text;q=0.4,text/plain;q=0.5"):
            with self.subTest(accept=accept):
                _, headers, _, _ = get(self.fx.port, headers={"Accept": accept})
                self.assertEqual(headers["content-type"], PROMETHEUS_TYPE)

    def test_the_page_is_html_and_healthz_says_ok(self):
        status, headers, body, _ = get(self.fx.port, "/")
        self.assertEqual((status, headers["content-type"]), (200, "text/html; charset=utf-8"))
        self.assertIn(b"<p>ticks ", body)
        status, headers, body, _ = get(self.fx.port, "/healthz")
        self.assertEqual((status, body), (200, b"ok\n"))

    def test_head_sends_the_headers_of_get_without_the_body(self):
        for path in ("/metrics", "/", "/healthz"):
            with self.subTest(path=path):
                _, get_headers, _, _ = get(self.fx.port, path)
                status, headers, body, _ = get(self.fx.port, path, method="HEAD")
                self.assertEqual(status, 200)
                self.assertEqual(body, b"")
                self.assertEqual(headers["content-type"], get_headers["content-type"])
                self.assertGreater(int(headers["content-length"]), 0)

    def test_a_query_string_does_not_change_what_is_served(self):
        status, headers, body, _ = get(self.fx.port, "/metrics?name[]=x&y=%00")
        self.assertEqual((status, headers["content-type"]), (200, PROMETHEUS_TYPE))
        ticks(body)

    def test_an_unknown_path_is_404(self):
        for path in ("/metrics/", "/metricsx", "/METRICS", "/index.html", "/healthz/x", "//metrics"):
            with self.subTest(path=path):
                self.assertEqual(get(self.fx.port, path)[0], 404)

    def test_a_path_with_dot_dot_or_an_escaped_nul_is_404(self):
        for target in (b"/x/../metrics", b"/../metrics", b"/metrics/..", b"/%2e%2e/metrics", b"/metrics%00",
                       b"/metrics%00/../healthz", b"/.%2e/metrics"):
            with self.subTest(target=target):
                answer = raw(self.fx.port, b"GET " + target + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                self.assertEqual(status_of(answer), 404, answer[:200])

    def test_a_raw_nul_in_the_request_line_is_never_served(self):
        for line in (b"GET /metrics\0junk HTTP/1.1", b"GET /metrics\0 HTTP/1.1", b"GET /\0/metrics HTTP/1.1",
                     b"GET /metrics HTTP/1.1\0"):
            with self.subTest(line=line):
                answer = raw(self.fx.port, line + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
                self.assertIn(status_of(answer), (400, 404), answer[:200])

    def test_a_method_other_than_get_or_head_is_405_with_allow(self):
        for path in ("/metrics", "/", "/healthz"):
            for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"):
                with self.subTest(path=path, method=method):
                    status, headers, _, _ = get(self.fx.port, path, method=method)
                    self.assertEqual(status, 405)
                    self.assertEqual(headers["allow"], "GET, HEAD")

    def test_a_post_with_a_body_is_refused_and_changes_nothing(self):
        before = ticks(get(self.fx.port)[2])
        answer = raw(self.fx.port, b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n"
                     b"latscope_fixture_ticks_total 999999999\n\n")
        self.assertEqual(status_of(answer), 405)
        self.assertGreaterEqual(ticks(get(self.fx.port)[2]), before)
        self.assertLess(ticks(get(self.fx.port)[2]), 999999999)

    def test_the_served_text_changes_as_it_is_published(self):
        seen = [ticks(get(self.fx.port)[2])]
        deadline = time.monotonic() + 10
        while len(set(seen)) < 3 and time.monotonic() < deadline:
            seen.append(ticks(get(self.fx.port)[2]))
            time.sleep(0.05)
        self.assertGreaterEqual(len(set(seen)), 3, seen)
        self.assertEqual(seen, sorted(seen))

    @harness.needs(programs=("promtool",))
    def test_promtool_accepts_the_served_prometheus_text(self):
        promtool = shutil.which("promtool", path=os.environ.get("PATH", os.defpath) + ":/usr/sbin:/sbin")
        body = get(self.fx.port)[2]
        p = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


class TestHostile(ServeCase):
    def test_a_one_megabyte_header_is_refused_and_metrics_still_served(self):
        answer = raw(self.fx.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
        self.assertNotEqual(status_of(answer), 200, answer[:200])
        answer = raw(self.fx.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"X-Many: b\r\n" * 100000 + b"\r\n")
        self.assertNotEqual(status_of(answer), 200, answer[:200])
        self.assert_metrics_served_quickly(source="127.0.0.1")

    def test_a_thousand_idle_connections_do_not_starve_metrics(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 1000 + 64
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
        n = min(1000, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 64)
        self.assertGreaterEqual(n, 200, "too few file descriptors for the test")
        idle = []
        try:
            for _ in range(n):
                idle.append(socket.create_connection(("127.0.0.1", self.fx.port), timeout=5))
            self.assert_metrics_served_quickly()
        finally:
            for s in idle:
                s.close()
        self.assert_metrics_served_quickly(source="127.0.0.1")

    def test_requests_that_never_finish_do_not_hold_the_server(self):
        stop, trickling = threading.Event(), threading.Event()
        slow = [socket.create_connection(("127.0.0.1", self.fx.port), timeout=5) for _ in range(100)]

        def trickle():
            try:
                for s in slow:
                    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                rounds = 0
                while not stop.wait(0.1):
                    for s in slow:
                        try:
                            s.sendall(b"X: y\r\n")
                        except OSError:
                            pass
                    rounds += 1
                    if rounds == 2:
                        trickling.set()
            finally:
                trickling.set()
        t = threading.Thread(target=trickle)
        t.start()
        try:
            # every request begun, and two more lines of each sent, before the first GET
            self.assertTrue(trickling.wait(30))
            for _ in range(5):
                self.assert_metrics_served_quickly()
        finally:
            stop.set()
            t.join()
            for s in slow:
                s.close()

    def scrapes_answered_during(self, attack):
        """How many of 20 scrapes from an address no attacker uses are answered whole within
        1 s while attack goes on (a bound 30 times this host's worst stall; a server that
        lets the attack keep the scraper out takes seconds or never answers)."""
        attack.start()
        try:
            self.assertTrue(attack.started.wait(60))
            time.sleep(1)  # the attack in full swing: every header line sent at least once
            answered, seen = 0, []
            for _ in range(20):
                try:
                    status, _, body, took = get(self.fx.port, source=SCRAPER, timeout=1.0)
                    ok = status == 200 and took < 1.0 and ticks(body) >= 0
                    seen.append("%d in %.2fs" % (status, took))
                except (OSError, http.client.HTTPException) as e:
                    ok = False
                    seen.append(type(e).__name__)
                answered += ok
                time.sleep(0.25)
            return answered, seen
        finally:
            attack.stop()

    def test_a_slowloris_from_four_addresses_does_not_keep_a_scraper_out(self):
        """64 connections from 127.0.0.2-5, each sending one header line every 3 s and opened
        again when the server closes it: at least 19 of 20 scrapes are answered within 1 s.
        (8 connections from one address at most already held this one to 32 of the 64.)"""
        raise_fd_limit(1024)
        answered, seen = self.scrapes_answered_during(
            Attack(self.fx.port, ["127.0.0.%d" % a for a in range(2, 6)], 64, interval=3.0))
        self.assertGreaterEqual(answered, 19, seen)

    def test_a_slowloris_from_sixteen_addresses_does_not_keep_a_scraper_out(self):
        """The same from 127.0.0.2-17, 128 connections: enough to take every connection the
        server has even with 8 from one address at most."""
        raise_fd_limit(1024)
        answered, seen = self.scrapes_answered_during(
            Attack(self.fx.port, ["127.0.0.%d" % a for a in range(2, 18)], 128, interval=3.0))
        self.assertGreaterEqual(answered, 19, seen)

    def test_a_thousand_idle_connections_from_five_hundred_addresses_do_not_keep_a_scraper_out(self):
        """1,000 connections that send nothing, two from each of 500 addresses and opened
        again when the server closes them: at least 19 of 20 scrapes answered within 1 s."""
        self.assertGreaterEqual(raise_fd_limit(1000 + 256), 1000 + 256, "too few file descriptors for the test")
        sources = ["127.1.%d.%d" % (i // 250, 1 + i % 250) for i in range(500)]
        answered, seen = self.scrapes_answered_during(Attack(self.fx.port, sources, 1000, interval=None))
        self.assertGreaterEqual(answered, 19, seen)

    def test_a_request_trickled_in_is_closed_at_its_deadline_though_never_idle(self):
        """A header line every 0.5 s keeps the idle timeout away; the request's own time
        (2 s) still ends it, within three of it."""
        s = socket.create_connection(("127.0.0.1", self.fx.port), timeout=0.5)
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            start, closed = time.monotonic(), False
            while not closed and time.monotonic() - start < REQUEST_TIMEOUT * 3:
                try:
                    closed = s.recv(1024) == b""
                except socket.timeout:
                    try:
                        s.sendall(b"X-Slow: y\r\n")
                    except OSError:
                        closed = True
                except OSError:
                    closed = True
            self.assertTrue(closed, "still open after %.1f s" % (time.monotonic() - start))
        finally:
            s.close()

    def test_a_silent_half_request_is_closed_after_the_idle_timeout(self):
        """The server's own timeouts (constants of src/serve: the request's 2 s comes before the
        idle 5 s) are the wait; three idle timeouts are allowed, far above any stall of this host."""
        s = socket.create_connection(("127.0.0.1", self.fx.port), timeout=IDLE_TIMEOUT * 3)
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            start = time.monotonic()
            try:
                self.assertEqual(s.recv(1024), b"")
            except ConnectionResetError:
                pass
            self.assertLess(time.monotonic() - start, IDLE_TIMEOUT * 3)
        finally:
            s.close()


class TestStart(unittest.TestCase):
    def test_metrics_is_503_until_the_first_publish(self):
        fx = Fixture("127.0.0.1:0", "--silent")
        try:
            self.assertEqual(get(fx.port)[0], 503)
            self.assertEqual(get(fx.port, "/")[0], 503)
            self.assertEqual(get(fx.port, "/healthz")[0], 200)
        finally:
            fx.stop()

    def test_an_ipv6_loopback_address_is_served(self):
        if not socket.has_ipv6 or not os.path.exists("/proc/net/if_inet6"):
            self.skipTest("this machine has no IPv6")
        fx = Fixture("[::1]:0")
        try:
            c = http.client.HTTPConnection("::1", fx.port, timeout=2)
            c.request("GET", "/healthz")
            self.assertEqual(c.getresponse().read(), b"ok\n")
            c.close()
        finally:
            fx.stop()

    def test_a_port_in_use_is_refused_with_the_address_and_the_reason(self):
        fx = Fixture()
        try:
            p = subprocess.run([FIXTURE, f"127.0.0.1:{fx.port}"], capture_output=True, text=True, timeout=30)
            self.assertEqual(p.returncode, 1)
            self.assertEqual(p.stderr, f"serve-fixture: cannot listen on 127.0.0.1:{fx.port}: Address already in use\n")
        finally:
            fx.stop()

    def test_a_bad_address_is_refused_naming_the_option(self):
        for spec in ("localhost:9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:x", "::1:9464", "[::1]9464", ""):
            with self.subTest(spec=spec):
                p = subprocess.run([FIXTURE, spec], capture_output=True, text=True, timeout=30)
                self.assertEqual(p.returncode, 1)
                self.assertEqual(p.stderr, f"serve-fixture: option '--listen': '{spec}' is not ADDR:PORT"
                                 " (an IPv4 address or [IPv6], or none)\n")
        p = subprocess.run([FIXTURE, "127.0.0.1:65536"], capture_output=True, text=True, timeout=30)
        self.assertEqual(p.stderr, "serve-fixture: option '--listen': '127.0.0.1:65536': port is not in 0-65535\n")


if __name__ == "__main__":
    harness.main()
