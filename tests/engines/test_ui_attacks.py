"""Hostile clients and hostile pages against the job browser's listener, with a real OpenSearch
behind it: `salttap ui`, and `salttap run`'s metrics listener while it ships.

Each test is one finding of an attack run against the listener (docs/ui.md#threat-model):
- DNS rebinding: a foreign Host gets 421, a cross-origin API call 403, before any search;
- slow and idle clients: 500 slow-header and 500 idle keep-alive connections are closed by the
  listener's timeouts while a normal request still answers, and the file handles and memory
  they took come back (the figures are printed as [figures] lines, docs/benchmarks.md);
- the connection cap: connections beyond it are answered 503 and counted, and never take the
  file handles the spool and the shipper need: `run` reads every event the bus plays and ships
  every job and return of it (checked in the engine against the captures) under the attack;
- oversized requests: 414 and 431, answered, not reset;
- %FF and %0A in every parameter and path segment: 400 naming the parameter, no engine address
  in any answer, and no forged line in the log;
- /metrics and /healthz: GET and HEAD only, with the security headers.

Every wait is on an event (the server closing a connection, a metric, a document count) with a
generous bound; the listener's timeouts are set small in the test's config.
salttap binary: $SALTTAP_BIN, else $SALTTAP_BUILD_DIR/salttap, else build/dev/salttap.

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_ui_attacks.py -v
"""
from __future__ import annotations

import http.client
import json
import os
import re
import resource
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from capture_bus import CaptureBus
from engine import ROOT
from http_calls import free_port, hits, wait_until
from indexed import replay_config, ship
from salttap_process import SalttapRun, metric, stop_child

PREFIX = "uia"
HOSTILE = 500            # slow-header connections, and as many idle ones
CLOSE_BOUND = 60         # seconds the listener may take to close them all: a hang guard, not a measure
TIMEOUTS = {"header_timeout_ms": 1500, "idle_timeout_ms": 1500, "request_timeout_ms": 10000}
FORGED = "FORGED-LINE salttap ERROR"


def listener_yaml(**keys) -> str:
    return "listener: {" + ", ".join(f"{k}: {v}" for k, v in {**TIMEOUTS, **keys}.items()) + "}\n"


def set_nofile(limit: int = 8192) -> None:
    """RLIMIT_NOFILE's soft limit: room for the hostile connections in this process, and the
    limit salttap starts with (its budget for the listener derives from it)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(limit, hard), hard))


class Ui:
    """`salttap ui` on a free port of 127.0.0.1 with its log in a file, stopped by its PID."""

    def __init__(self, salttap: Path, config: Path, log: Path, nofile: int = 8192):
        self.port = free_port()
        self.log = log
        self.out = open(log, "w")
        self.proc = subprocess.Popen(
            [str(salttap), "ui", "--listen", f"127.0.0.1:{self.port}", "--config", str(config)],
            stdout=self.out, stderr=subprocess.STDOUT, preexec_fn=lambda: set_nofile(nofile))
        wait_until(lambda: self.proc.poll() is not None or self.status("/healthz")[0] == 200, 30,
                   "salttap ui's /healthz", lambda: log.read_text()[-3000:], interval=0.1)
        assert self.proc.poll() is None, log.read_text()[-3000:]

    def request(self, path: str, method: str = "GET", headers: dict | None = None):
        """(status, headers, body) of one request; (0, {}, "") when it is refused at the door."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            c.putrequest(method, path, skip_host="Host" in (headers or {}))
            for k, v in (headers or {}).items():
                c.putheader(k, v)
            c.endheaders()
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read().decode("utf-8", "replace")
        except OSError:
            return 0, {}, ""
        finally:
            c.close()

    def status(self, path: str, **kw) -> tuple[int, str]:
        s, _, body = self.request(path, **kw)
        return s, body

    def metric(self, sample: str) -> float | None:
        return metric(self.status("/metrics")[1], sample)

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def rss_kib(self) -> int:
        return int(re.search(r"VmRSS:\s+(\d+)", Path(f"/proc/{self.proc.pid}/status").read_text()).group(1))

    def stop(self) -> None:
        stop_child(self.proc)
        self.out.close()


def connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    return s


def slow_header(port: int) -> socket.socket:
    """A connection that starts a request and never finishes its header."""
    s = connect(port)
    s.sendall(b"GET /ui/api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return s


def idle_keep_alive(port: int) -> socket.socket:
    """A connection that asked one keep-alive request, read its answer, and stays open, silent."""
    s = connect(port)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    got = b""
    while not got.endswith(b"ok\n"):
        chunk = s.recv(4096)
        assert chunk, f"closed before the answer: {got!r}"
        got += chunk
    assert got.startswith(b"HTTP/1.1 200"), got
    return s


def idle_keep_alive_or_refused(port: int) -> socket.socket:
    """idle_keep_alive, or a connection the listener answered 503 (beyond its cap)."""
    s = connect(port)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    return s


def read_until_closed(s: socket.socket, deadline: float) -> bytes | None:
    """What the server sent before it closed the connection; None when it did not close by `deadline`."""
    got = b""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        s.settimeout(remaining)
        try:
            chunk = s.recv(4096)
        except socket.timeout:
            return None
        except ConnectionResetError:
            return got
        if not chunk:
            return got
        got += chunk


@pytest.fixture(scope="module")
def loaded(salttap, captures, opensearch, tmp_path_factory):
    """The module's OpenSearch with every capture's documents under PREFIX."""
    d = tmp_path_factory.mktemp("attack-load")
    ship(salttap, captures, replay_config(d / "salttap.yaml", opensearch.url, d / "spool", PREFIX))
    return opensearch


def ui_config(d: Path, url: str, **listener) -> Path:
    path = replay_config(d / "salttap.yaml", url, d / "spool", PREFIX)
    with open(path, "a") as f:
        f.write(listener_yaml(**listener))
    return path


@pytest.fixture(scope="module")
def ui(salttap, loaded, tmp_path_factory):
    """A cap above the attack (1100): the timeouts, not the cap, must free the listener."""
    set_nofile()
    d = tmp_path_factory.mktemp("ui-attacks")
    # Long enough for all 1000 to be open at once on a busy machine before the first times out.
    p = Ui(salttap, ui_config(d, loaded.url, max_connections=1100, header_timeout_ms=5000, idle_timeout_ms=5000),
           d / "ui.log")
    yield p
    p.stop()


@pytest.fixture(scope="module")
def ui_dead_engine(salttap, tmp_path_factory):
    """Every search fails: each API call logs the engine's error (and, before, the decoded path)."""
    d = tmp_path_factory.mktemp("ui-dead")
    p = Ui(salttap, ui_config(d, f"http://127.0.0.1:{free_port()}"), d / "ui.log")
    yield p
    p.stop()


# ---------------------------------------------------------------- DNS rebinding, cross-origin

def test_a_foreign_host_is_refused_before_any_search(ui):
    for path in ("/ui/api/jobs", "/ui/api/jobs?fun=*", "/ui/", "/ui/api/minions", "/ui/static/app.js"):
        status, body = ui.status(path, headers={"Host": f"attacker.example:{ui.port}"})
        assert status == 421, (path, status, body[:300])
        assert "jobs" not in body and "minion" not in body, body[:300]
    for host in (f"localhost:{ui.port}", f"127.0.0.1:{ui.port}", "localhost"):
        status, body = ui.status("/ui/api/jobs?limit=1", headers={"Host": host})
        assert status == 200, (host, status, body[:300])
    assert (ui.metric('salttap_ui_requests_total{route="api_jobs",status="421"}') or 0) >= 2


def test_cross_origin_api_calls_are_refused(ui):
    host = f"127.0.0.1:{ui.port}"
    for headers in ({"Origin": "http://attacker.example"}, {"Origin": "null"},
                    {"Origin": f"http://127.0.0.1:{ui.port + 1}"}, {"Sec-Fetch-Site": "cross-site"}):
        status, body = ui.status("/ui/api/jobs", headers={"Host": host, **headers})
        assert status == 403, (headers, status, body[:300])
    status, _ = ui.status("/ui/api/jobs?limit=1", headers={"Host": host, "Origin": f"http://{host}",
                                                            "Sec-Fetch-Site": "same-origin"})
    assert status == 200


# ---------------------------------------------------------------- slow and idle clients

def test_slow_header_and_idle_connections_are_closed_while_a_request_answers(ui):
    """500 slow-header and 500 idle keep-alive connections: all held at once (the cap is above
    them), a normal request still answers, and the listener closes every one of them by its
    timeouts; the file handles and memory they took come back."""
    fds_before, rss_before = ui.fds(), ui.rss_kib()
    hostile = [slow_header(ui.port) for _ in range(HOSTILE)] + [idle_keep_alive(ui.port) for _ in range(HOSTILE)]
    try:
        held = wait_until(lambda: (v := ui.metric("salttap_listener_connections")) is not None and v >= 1 and v, 10,
                          "salttap_listener_connections")
        fds_during, rss_during = ui.fds(), ui.rss_kib()
        status, body = ui.status("/ui/api/jobs?limit=5")
        assert status == 200 and '"jobs"' in body, (status, body[:300])
        deadline = time.monotonic() + CLOSE_BOUND
        still_open = sum(1 for s in hostile if read_until_closed(s, deadline) is None)
        assert still_open == 0, f"{still_open} hostile connections still open after {CLOSE_BOUND}s"
    finally:
        for s in hostile:
            s.close()
    fds_after = wait_until(lambda: (n := ui.fds()) <= fds_before + 4 and n, 30, "the listener's file handles back",
                           lambda: f"{ui.fds()} open, {fds_before} before")
    rss_after = ui.rss_kib()
    assert fds_during >= fds_before + 2 * HOSTILE - 10, (fds_before, fds_during)
    assert (ui.metric('salttap_listener_timeouts_total{phase="header"}') or 0) >= HOSTILE
    assert (ui.metric('salttap_listener_timeouts_total{phase="idle"}') or 0) >= HOSTILE
    print(f"[figures] salttap ui under {HOSTILE} slow-header + {HOSTILE} idle connections: "
          f"fds {fds_before} -> {fds_during} -> {fds_after}; RSS KiB {rss_before} -> {rss_during} -> {rss_after}; "
          f"held {held:.0f}")


def test_connections_beyond_the_cap_are_answered_503_and_counted(salttap, loaded, tmp_path):
    set_nofile()
    cap = 50
    ui = Ui(salttap, ui_config(tmp_path, loaded.url, max_connections=cap), tmp_path / "ui.log")
    try:
        fds_before = ui.fds()
        hostile = [slow_header(ui.port) for _ in range(HOSTILE)]
        try:
            fds_during = ui.fds()
            assert fds_during <= fds_before + cap + 2, (fds_before, fds_during)
            deadline = time.monotonic() + CLOSE_BOUND
            answers = [read_until_closed(s, deadline) for s in hostile]
        finally:
            for s in hostile:
                s.close()
        assert None not in answers, "a connection beyond the cap was held"
        refused = sum(1 for a in answers if a.startswith(b"HTTP/1.1 503 "))
        assert refused >= HOSTILE - cap, refused
        assert ui.metric('salttap_listener_refused_total{reason="connection_cap"}') == refused
        assert ui.metric("salttap_listener_max_connections") == cap
        print(f"[figures] salttap ui, cap {cap}, {HOSTILE} slow-header connections: fds {fds_before} -> "
              f"{fds_during}; {refused} answered 503")
    finally:
        ui.stop()


def test_a_cap_beyond_the_file_handle_budget_is_lowered(salttap, loaded, tmp_path):
    ui = Ui(salttap, ui_config(tmp_path, loaded.url, max_connections=60000), tmp_path / "ui.log", nofile=1024)
    try:
        assert ui.metric("salttap_listener_max_connections") == (1024 - 256 - 2) // 2
        assert "listener.max_connections 60000 lowered to 383" in ui.log.read_text()
    finally:
        ui.stop()


# ---------------------------------------------------------------- oversized requests

@pytest.mark.parametrize("request_bytes,status", [
    (b"GET /ui/api/jobs?fun=" + b"a" * 20000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", b"414"),
    (b"GET /ui/api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n", b"431"),
    (b"GET /ui/api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Many: a\r\n" * 3000 + b"\r\n", b"431"),
])
def test_oversized_requests_are_answered_not_reset(ui, request_bytes, status):
    s = connect(ui.port)
    try:
        s.sendall(request_bytes)
        got = read_until_closed(s, time.monotonic() + CLOSE_BOUND)
    finally:
        s.close()
    assert got is not None and got.startswith(b"HTTP/1.1 " + status + b" "), got and got[:200]


# ---------------------------------------------------------------- %FF and %0A everywhere

API_PARAMS = {"/ui/api/jobs": ["status", "fun", "minion", "user", "tgt", "risk", "since", "until", "limit"],
              "/ui/api/minions": ["since"], "/ui/api/minions/salt-01": ["since", "limit"],
              "/ui/api/alerts": ["kind", "since", "limit"]}
SEGMENTS = ["/ui/api/jobs/{}", "/ui/api/minions/{}", "/ui/job/{}", "/ui/minion/{}"]


def test_invalid_utf8_is_a_400_naming_the_parameter(ui):
    for path, params in API_PARAMS.items():
        for p in params:
            status, body = ui.status(f"{path}?{p}=x%FFy")
            assert status == 400, (path, p, status, body[:300])
            assert body == f'{{"error":"{p} is not valid UTF-8"}}', body
    for seg in SEGMENTS:
        status, body = ui.status(seg.format("20270101%FF"))
        assert status == 400 and "path is not valid UTF-8" in body, (seg, status, body[:300])


def test_no_engine_address_and_no_forged_log_line(ui_dead_engine):
    ui = ui_dead_engine
    targets = [f"{path}?{p}=a%0A{FORGED.replace(' ', '%20')}%0Db" for path, params in API_PARAMS.items()
               for p in params]
    targets += [seg.format(f"a%0A{FORGED.replace(' ', '%20')}") for seg in SEGMENTS]
    targets += [f"{path}?{p}=%FF" for path, params in API_PARAMS.items() for p in params]
    engine = re.search(r"hosts: \[\"(http://[^\"]+)\"\]", (ui.log.parent / "salttap.yaml").read_text()).group(1)
    for t in targets:
        status, headers, body = ui.request(t)
        assert status in (200, 400, 404, 502), (t, status, body[:300])
        assert engine not in body and "127.0.0.1:" not in body, (t, body[:300])
        if status == 502:
            assert re.fullmatch(r'\{"error":"[^"]+","error_id":"[0-9a-f]{16}"\}', body), body
            assert f"engine error {re.search(r'[0-9a-f]{16}', body).group(0)}" in ui.log.read_text()
    log = ui.log.read_text()
    assert "engine error" in log, "the dead engine was never asked: the test saw nothing"
    assert engine in log, "the details, with the engine's address, belong in the log"
    forged = [line for line in log.splitlines() if line.startswith(FORGED) or line.startswith("\r")]
    assert not forged, forged
    assert all(re.match(r"\d{4}-\d\d-\d\dT", line) for line in log.splitlines()), log[-3000:]


# ---------------------------------------------------------------- /metrics and /healthz

@pytest.mark.parametrize("path", ["/metrics", "/healthz"])
def test_metrics_and_healthz_answer_get_and_head_only(ui, path):
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"):
        status, headers, _ = ui.request(path, method=method)
        assert status == 405 and headers.get("Allow") == "GET, HEAD", (method, status, headers)
    for method in ("GET", "HEAD"):
        status, headers, _ = ui.request(path, method=method)
        assert status == 200, (method, status)
        assert headers.get("X-Content-Type-Options") == "nosniff", headers
        assert headers.get("X-Frame-Options") == "DENY", headers
        assert "default-src 'none'" in headers.get("Content-Security-Policy", ""), headers


# ---------------------------------------------------------------- run ships on under the attack

RUN_CAPTURES = [ROOT / "tests" / "captures" / "salt-3006.25" / f"{name}.raw"
                for name in ("test_ping", "cmd_run_false", "state_apply_fail", "unicode_utf8")]


def played(captures: list[Path]) -> tuple[int, set[str], set[tuple[str, str]]]:
    """What the bus plays: its events, the jids it publishes and each (jid, minion) return."""
    tags = [json.loads(line)["tag"] for p in captures for line in p.with_suffix(".jsonl").read_text().splitlines()]
    jids = {m.group(1) for t in tags if (m := re.fullmatch(r"salt/job/(\d+)/new", t))}
    returns = {(m.group(1), m.group(2)) for t in tags if (m := re.fullmatch(r"salt/job/(\d+)/ret/(.+)", t))}
    return len(tags), jids, returns


def test_run_ships_every_document_while_its_listener_is_attacked(salttap, opensearch, tmp_path):
    """`salttap run` on a bus playing real captures, its listener pressed by 500 slow-header and
    500 keep-alive connections at the default cap: the bus plays only once they are open, so
    every event is read and shipped under the attack; the excess is turned away, the file
    handles stay within the budget, and every job and return the bus carried reaches the engine."""
    set_nofile()
    prefix = "uiarun"
    events, jids, returns = played(RUN_CAPTURES)
    config = replay_config(tmp_path / "salttap.yaml", opensearch.url, tmp_path / "spool", prefix)
    with open(config, "a") as f:
        f.write(listener_yaml())
    begin = threading.Event()  # the bus plays once the attack is on: all the shipping happens under it
    bus = CaptureBus(RUN_CAPTURES, begin)
    run = SalttapRun(salttap, config, "run-attacked", tmp_path, ["--sock-dir", str(bus.sock_dir)])
    hostile: list[socket.socket] = []
    try:
        run.start(wait=False)
        port = int(run.metrics.rsplit(":", 1)[1])
        run.wait_until(lambda: run.metric("salttap_listener_connections") is not None, 60, "run's listener")
        pid = run.tap.proc.pid
        fds_before = len(os.listdir(f"/proc/{pid}/fd"))
        fds_during = fds_before
        for _ in range(HOSTILE):
            for open_one in (slow_header, idle_keep_alive_or_refused):
                try:
                    hostile.append(open_one(port))
                except OSError:
                    pass  # refused at the door: what the cap is for
            fds_during = max(fds_during, len(os.listdir(f"/proc/{pid}/fd")))
        begin.set()
        # The cap, the acceptor and one being turned away; the pipeline's own may grow a little meanwhile.
        assert fds_during <= fds_before + 64 + 2 + 16, (fds_before, fds_during)

        def shipped():
            got_jids = {h["_source"]["jid"] for h in hits(opensearch.url, f"{prefix}-jobs-*", {"match_all": {}})}
            got_returns = {(h["_source"]["jid"], h["_source"]["minion"])
                           for h in hits(opensearch.url, f"{prefix}-returns-*", {"match_all": {}})}
            fds_now = len(os.listdir(f"/proc/{pid}/fd"))
            assert fds_now <= fds_before + 64 + 2 + 16, (fds_before, fds_now)
            return got_jids == jids and got_returns == returns
        run.wait_until(shipped, 300, "every job and return of the bus in the engine")
        text = run.wait_until(lambda: run.metrics_text(), 60, "/metrics once the attackers are gone")
        assert metric(text, "salttap_tap_events_total") == events, text[-3000:]
        assert (metric(text, "salttap_tap_dropped_events_total") or 0) == 0
        assert (metric(text, 'salttap_listener_refused_total{reason="connection_cap"}') or 0) > 0
        print(f"[figures] salttap run under {HOSTILE}+{HOSTILE} hostile connections: fds {fds_before} -> "
              f"{fds_during} (at most); {events} events read, {len(jids)} jobs and {len(returns)} returns shipped")
    finally:
        for s in hostile:
            s.close()
        run.stop()
        bus.close()
