"""TLS and authentication against a real endpoint: nginx in front of a real OpenSearch.

One OpenSearch (2.19, or as $SALTTAP_ENGINE_FLAVORS says) and one nginx for the module (conftest.py: `opensearch`, `tls_proxy`).
nginx terminates TLS with a certificate for 127.0.0.1/localhost from a CA the test makes
with `openssl`, and has three doors (tls_proxy.py): basic auth; basic auth and a client
certificate required (`ssl_verify_client on`); an API key. salttap is driven as an operator
drives it: `salttap replay --ship` of real captures, `salttap setup`, and `salttap run` tapping
a bus that plays real capture bytes (its /metrics scraped). Each case:

  verification on, the right CA       every document searchable in OpenSearch
  the wrong CA                        setup refused, the log names the certificate problem,
                                      counted (reason "tls"); the documents stay in the spool
                                      (none dead-lettered) and ship, all of them, once the
                                      CA is right
  the wrong password                  401 counted (setup: reason "http_auth"; with
                                      install_templates off, the bulk requests') and logged;
                                      nothing dead-lettered
  a client certificate required       works with client_cert/client_key; without them setup
                                      fails naming nginx's refusal, and the bulk requests
                                      (install_templates off) keep the documents in the spool
  any secret                          the password, the API key, the Authorization header's
                                      value and the client key never appear in a log line
                                      or on /metrics

No timing asserts: every wait is on a condition, with a generous deadline.

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_tls_auth_engines.py -v
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from engine import ROOT
from indexed import assert_ids_present, counts_by_index, expected_documents, total_count
from salttap_process import SalttapRun, metric
from tls_proxy import TlsProxy

CAPTURES = [ROOT / "tests" / "captures" / "salt-3006.25" / f"{name}.raw"
            for name in ("test_ping", "cmd_run_false", "state_apply_fail", "unicode_utf8")]
# Every event of CAPTURES (their .jsonl twins hold one a line).
EVENTS = sum(len(p.with_suffix(".jsonl").read_text().splitlines()) for p in CAPTURES)
ACKED = "all acknowledged by the engine"
MASTER = "tls-master"


# ---------------------------------------------------------------- config and secrets

def write_config(tmp: Path, url: str, prefix: str, spool: Path, tls: dict | None = None,
                 auth: dict | None = None, install_templates: bool = True) -> Path:
    """salttap's config as JSON (which is YAML)."""
    indexer = {"hosts": [url], "index_prefix": prefix, "install_templates": install_templates,
               "spool": {"dir": str(spool)},
               "bulk": {"max_docs": 50, "max_wait_ms": 200, "backoff_initial_ms": 200, "backoff_max_ms": 1000,
                        "connect_timeout_ms": 5000, "request_timeout_ms": 30000}}
    if tls is not None:
        indexer["tls"] = tls
    if auth is not None:
        indexer["auth"] = auth
    cfg = {"master_id": MASTER, "indexer": indexer, "reconcile": {"enabled": False},
           "checkpoint": {"enabled": False}}
    path = tmp / f"salttap-{prefix}.yaml"
    path.write_text(json.dumps(cfg, indent=1))
    return path


def secret_file(tmp: Path, name: str, value: str) -> str:
    path = tmp / name
    path.write_text(value + "\n")
    path.chmod(0o600)
    return str(path)


def secrets_of(proxy: TlsProxy, *more: str) -> list[str]:
    """Everything that must never be shown: passwords, API keys, the basic-auth header's value,
    and every base64 line of the client's private key."""
    out = [proxy.password, proxy.api_key, base64.b64encode(f"{proxy.username}:{proxy.password}".encode()).decode(),
           *more]
    key_lines = [line for line in proxy.pki.client_key.read_text().splitlines() if line and "-----" not in line]
    assert key_lines, "client key has no body"
    return out + [line for line in key_lines if len(line) >= 16]


def assert_no_secret(text: str, secrets: list[str], where: str) -> None:
    assert text, f"{where}: nothing to check"
    for s in secrets:
        assert s not in text, f"a secret ({s[:3]}...) appears in {where}"


# ---------------------------------------------------------------- salttap replay / setup

def replay_ship(salttap: Path, captures: list[Path], config: Path, log: Path, timeout: float = 240,
                env: dict | None = None) -> tuple[int, str]:
    argv = [str(salttap), "replay", *map(str, captures), "--ship", "--config", str(config),
            "--ship-timeout", str(timeout)]
    with open(log, "wb") as out:
        proc = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, timeout=timeout + 60,
                              env=dict(os.environ, **(env or {})))
    return proc.returncode, log.read_text(errors="replace")


def setup(salttap: Path, config: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(salttap), "setup", "--config", str(config)], capture_output=True, text=True,
                          timeout=120)


def assert_shipped(url: str, prefix: str, salttap: Path, captures: list[Path], config: Path) -> None:
    """The engine holds exactly what `replay --output documents` says, every _id of it."""
    exp = expected_documents(salttap, captures, config)
    got = counts_by_index(url, prefix)
    assert got == exp.per_index(), f"engine {got} != expected {exp.per_index()}"
    for index in got:
        assert_ids_present(url, index, exp.ids(index))


def dead_letters(spool: Path) -> list[Path]:
    dead = spool / "dead"
    return sorted(dead.iterdir()) if dead.exists() else []


# ---------------------------------------------------------------- salttap run on a played bus

class CaptureBus:
    """A master's pub socket (`master_event_pub.ipc` in a fresh sock_dir) that sends each
    reader the bytes of real captures, then stays open and quiet, as an idle master does."""

    def __init__(self, captures: list[Path]):
        # A short path: AF_UNIX paths are limited to 108 bytes.
        self.sock_dir = Path(tempfile.mkdtemp(prefix="stbus-", dir="/tmp"))
        self.payload = b"".join(p.read_bytes() for p in captures)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(self.sock_dir / "master_event_pub.ipc"))
        self.server.listen(4)
        self.readers: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.readers.append(conn)
            try:
                conn.sendall(self.payload)
            except OSError:
                pass

    def close(self) -> None:
        self.server.close()
        for conn in self.readers:
            conn.close()
        self.thread.join(timeout=10)
        shutil.rmtree(self.sock_dir, ignore_errors=True)


def wait_all_events(run: SalttapRun) -> str:
    """Until every event of CAPTURES was read and went through the pipeline (metrics are
    published after each batch's documents are in the spool); the /metrics text then."""
    return run.wait_metric("salttap_tap_events_total", EVENTS)


def left_in_spool(run: SalttapRun) -> int:
    """After it stopped: what `run` says it left in the spool for the next start."""
    m = re.search(r"run: stopped; (\d+) documents left in the spool", run.output())
    assert m, run.output()[-4000:]
    return int(m.group(1))


def held_in_spool(run: SalttapRun, metrics: str) -> tuple[int, str]:
    """With every event through (`metrics`, wait_all_events's): nothing shipped and nothing
    dead-lettered, to the index or the file; on SIGTERM `run` stops cleanly with documents left in
    its spool. How many, and its log."""
    assert metric(metrics, "salttap_spool_acked_documents_total") == 0
    assert metric(metrics, 'salttap_indexer_documents_dead_lettered_total{destination="index"}') == 0
    assert metric(metrics, 'salttap_indexer_documents_dead_lettered_total{destination="file"}') == 0
    assert run.sigterm() == 0
    held = left_in_spool(run)
    assert held > 0
    return held, run.output()


def error_lines(log: str, fragment: str) -> list[str]:
    """The ERROR lines of `log` that hold `fragment`."""
    return [line for line in log.splitlines() if "ERROR" in line and fragment in line]


@pytest.fixture
def daemons(tmp_path):
    """start(salttap, config, captures, name, env) -> a started `salttap run --sock-dir BUS` (not
    waited for: some never become healthy) on a bus playing the captures; every one still
    running is stopped and every bus closed at teardown."""
    started: list[tuple[SalttapRun, CaptureBus]] = []

    def start(salttap, config, captures, name, env=None) -> SalttapRun:
        bus = CaptureBus(captures)
        run = SalttapRun(salttap, config, name, tmp_path, ["--sock-dir", str(bus.sock_dir)], env=env)
        started.append((run, bus))
        run.start(wait=False)
        return run

    yield start
    for run, bus in started:
        run.stop()
        bus.close()
        print(f"--- {run.name}\n{run.output()[-4000:]}")  # shown when the test failed


def reship(salttap: Path, config: Path, tmp: Path, held: int) -> str:
    """`replay --ship` of an empty capture on the spool of `config`: the spool alone must hold
    `held` documents, and the engine must acknowledge all of them."""
    empty = tmp / "empty.jsonl"
    empty.write_text("")
    rc, log = replay_ship(salttap, [empty], config, tmp / f"reship-{config.stem}.log")
    assert rc == 0, log[-4000:]
    m = re.search(r"spool \S+ holds (\d+) unacknowledged documents", log)
    assert m and int(m.group(1)) == held, (m and m.group(0), held, log[-3000:])
    assert ACKED in log, log[-4000:]
    return log


# ---------------------------------------------------------------- verification on, the right CA

@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_verified_tls_with_basic_auth_ships_every_document(opensearch, tls_proxy, salttap, tmp_path, host):
    """The CA the server's certificate comes from, verification on (the default), the password
    from a file: every document of four real captures is searchable, through nginx."""
    prefix = f"tls-ok-{'ip' if host[0].isdigit() else 'name'}"
    spool = tmp_path / "spool"
    config = write_config(tmp_path, tls_proxy.url("basic", host), prefix, spool,
                          tls={"verify": True, "ca_file": str(tls_proxy.pki.ca)},
                          auth={"username": tls_proxy.username,
                                "password_file": secret_file(tmp_path, "pw", tls_proxy.password)})
    rc, log = replay_ship(salttap, CAPTURES, config, tmp_path / "replay.log")
    assert rc == 0, log[-4000:]
    assert ACKED in log, log[-4000:]
    assert_shipped(opensearch.url, prefix, salttap, CAPTURES, config)
    assert not dead_letters(spool)
    assert re.search(r'"POST /_bulk\?[^"]*" 200 ', tls_proxy.access_log()), "the bulk requests went through nginx"
    assert_no_secret(log, secrets_of(tls_proxy), "replay --ship's log")


# ---------------------------------------------------------------- the wrong CA

def test_wrong_ca_is_refused_and_the_documents_wait_in_the_spool(opensearch, tls_proxy, salttap, daemons,
                                                                 tmp_path):
    """A CA that did not sign the server's certificate: setup is refused with the certificate
    problem named, counted as `tls`; the documents wait in the spool, none dead-lettered, and
    with the right CA every one of them ships."""
    prefix = "tls-wrongca"
    spool = tmp_path / "spool"
    auth = {"username": tls_proxy.username, "password_file": secret_file(tmp_path, "pw", tls_proxy.password)}
    wrong = write_config(tmp_path, tls_proxy.url("basic"), prefix, spool,
                         tls={"ca_file": str(tls_proxy.pki.wrong_ca)}, auth=auth)
    d = daemons(salttap, wrong, CAPTURES, "run")
    d.wait_metric('salttap_indexer_setup_failures_total{reason="tls"}')
    m = wait_all_events(d)
    assert metric(m, "salttap_spool_pending_documents") > 0
    assert metric(m, "salttap_indexer_setup_done") == 0
    held, log = held_in_spool(d, m)
    errors = error_lines(log, "indexer: setup failed")
    assert errors, log[-4000:]
    assert f"cannot reach the engine at {tls_proxy.url('basic')}: TLS failed: " \
           "SSL certificate problem: unable to get local issuer certificate" in errors[0], errors[0]
    assert "documents stay in the spool" in errors[0], errors[0]
    assert total_count(opensearch.url, prefix) <= 0, "nothing may reach the engine"
    assert not dead_letters(spool)
    secrets = secrets_of(tls_proxy)
    assert_no_secret(log, secrets, "run's log")
    assert_no_secret(m, secrets, "/metrics")

    # The same spool, the right CA: all of the held documents ship.
    right = write_config(tmp_path, tls_proxy.url("basic"), prefix, spool,
                         tls={"ca_file": str(tls_proxy.pki.ca)}, auth=auth)
    reship(salttap, right, tmp_path, held)
    assert total_count(opensearch.url, prefix) > 0
    assert not dead_letters(spool)


def test_verification_off_accepts_the_unknown_ca(opensearch, tls_proxy, salttap, tmp_path):
    """`verify: false` is the operator's explicit choice: the unknown CA is accepted."""
    prefix = "tls-noverify"
    config = write_config(tmp_path, tls_proxy.url("basic"), prefix, tmp_path / "spool",
                          tls={"verify": False, "ca_file": str(tls_proxy.pki.wrong_ca)},
                          auth={"username": tls_proxy.username, "password": tls_proxy.password})
    rc, log = replay_ship(salttap, CAPTURES[:1], config, tmp_path / "replay.log")
    assert rc == 0 and ACKED in log, log[-4000:]
    assert_shipped(opensearch.url, prefix, salttap, CAPTURES[:1], config)
    assert_no_secret(log, secrets_of(tls_proxy), "replay --ship's log")


# ---------------------------------------------------------------- the wrong password

@pytest.mark.parametrize("install_templates", [True, False], ids=["setup", "bulk"])
def test_wrong_password_is_a_counted_and_logged_401(opensearch, tls_proxy, salttap, daemons, tmp_path,
                                                    install_templates):
    """nginx answers 401. With index setup (the default) setup fails, counted as `http_auth`,
    with an ERROR naming the 401 and the credentials; without it, every bulk request fails the
    same way, counted as `http_auth`, and the documents stay in the spool (none dead-lettered)."""
    prefix = f"tls-401-{'setup' if install_templates else 'bulk'}"
    spool = tmp_path / "spool"
    wrong_password = "wrong-" + tls_proxy.password[::-1]
    config = write_config(tmp_path, tls_proxy.url("basic"), prefix, spool,
                          tls={"ca_file": str(tls_proxy.pki.ca)},
                          auth={"username": tls_proxy.username, "password_env": "SALTTAP_TEST_ES_PASSWORD"},
                          install_templates=install_templates)
    d = daemons(salttap, config, CAPTURES, "run", env={"SALTTAP_TEST_ES_PASSWORD": wrong_password})
    if install_templates:
        m = d.wait_metric('salttap_indexer_setup_failures_total{reason="http_auth"}')
        assert metric(m, "salttap_indexer_setup_done") == 0
    else:
        m = d.wait_metric('salttap_indexer_bulk_request_failures_total{reason="http_auth"}')
        assert metric(m, 'salttap_indexer_bulk_request_failures_total{reason="http_4xx"}') == 0
    m = wait_all_events(d)
    assert metric(m, "salttap_spool_pending_documents") > 0
    _, log = held_in_spool(d, m)
    url = tls_proxy.url("basic")
    if install_templates:
        lines = error_lines(log, "indexer: setup failed")
        assert lines and f"the engine at {url} answered GET / with 401: it requires authentication and " \
                         "refused the credentials sent" in lines[0], log[-4000:]
    else:
        lines = error_lines(log, f"documents to {url}: HTTP 401")
        assert lines, log[-4000:]
        assert "check the indexer's credentials" in lines[0], lines[0]
    assert total_count(opensearch.url, prefix) <= 0
    assert not dead_letters(spool)
    secrets = secrets_of(tls_proxy, wrong_password)
    assert_no_secret(log, secrets, "run's log")
    assert_no_secret(m, secrets, "/metrics")


# ---------------------------------------------------------------- a client certificate required

def test_client_certificate_required_works_with_one(opensearch, tls_proxy, salttap, tmp_path):
    prefix = "tls-mtls"
    config = write_config(tmp_path, tls_proxy.url("mtls"), prefix, tmp_path / "spool",
                          tls={"ca_file": str(tls_proxy.pki.ca), "client_cert": str(tls_proxy.pki.client_cert),
                               "client_key": str(tls_proxy.pki.client_key)},
                          auth={"username": tls_proxy.username, "password": tls_proxy.password})
    r = setup(salttap, config)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith(f"server: OpenSearch {opensearch.info['version']['number']}\n"), r.stdout
    rc, log = replay_ship(salttap, CAPTURES, config, tmp_path / "replay.log")
    assert rc == 0 and ACKED in log, log[-4000:]
    assert_shipped(opensearch.url, prefix, salttap, CAPTURES, config)
    secrets = secrets_of(tls_proxy)
    assert_no_secret(r.stdout + r.stderr, secrets, "setup's output")
    assert_no_secret(log, secrets, "replay --ship's log")


def test_client_certificate_required_fails_clearly_without_one(opensearch, tls_proxy, salttap, daemons,
                                                               tmp_path):
    """Without client_cert/client_key nginx answers its own 400 page: `setup` exits 1 naming it;
    `run` without index setup keeps every document in the spool (a proxy's refusal is not the
    engine rejecting documents: nothing is dead-lettered), and with the certificate added they
    all ship."""
    prefix = "tls-nocert"
    spool = tmp_path / "spool"
    url = tls_proxy.url("mtls")
    tls = {"ca_file": str(tls_proxy.pki.ca)}
    auth = {"username": tls_proxy.username, "password": tls_proxy.password}
    with_setup = write_config(tmp_path, url, prefix, spool, tls=tls, auth=auth)
    r = setup(salttap, with_setup)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"ERROR setup: the engine at {url} answered GET / with HTTP 400: " in r.stderr, r.stderr
    assert "400 No required SSL certificate was sent" in r.stderr, r.stderr

    no_setup = write_config(tmp_path, url, prefix, spool, tls=tls, auth=auth, install_templates=False)
    d = daemons(salttap, no_setup, CAPTURES, "run")
    d.wait_metric('salttap_indexer_bulk_request_failures_total{reason="http_4xx"}')
    m = wait_all_events(d)
    held, log = held_in_spool(d, m)
    lines = error_lines(log, f"documents to {url}: HTTP 400")
    assert lines, log[-4000:]
    assert "400 No required SSL certificate was sent (not the engine's answer: a proxy in between?)" in lines[0], \
        lines[0]
    assert "dead letter" not in log, log[-4000:]
    assert not dead_letters(spool)
    assert total_count(opensearch.url, prefix) <= 0
    secrets = secrets_of(tls_proxy)
    assert_no_secret(r.stdout + r.stderr + log, secrets, "setup's and run's logs")
    assert_no_secret(m, secrets, "/metrics")

    with_cert = write_config(tmp_path, url, prefix, spool,
                             tls=dict(tls, client_cert=str(tls_proxy.pki.client_cert),
                                      client_key=str(tls_proxy.pki.client_key)), auth=auth)
    reship(salttap, with_cert, tmp_path, held)
    assert total_count(opensearch.url, prefix) > 0
    assert not dead_letters(spool)


# ---------------------------------------------------------------- secrets

def test_api_key_ships_and_no_secret_reaches_a_log_or_metrics(opensearch, tls_proxy, salttap, daemons, tmp_path):
    """An API key from a file through the door that checks it: `run` ships everything; then a
    wrong key from the environment: 401 counted. Neither key, nor the password, nor the client
    key, appears in either log or on /metrics."""
    prefix = "tls-apikey"
    right = write_config(tmp_path, tls_proxy.url("api_key"), prefix, tmp_path / "spool",
                         tls={"ca_file": str(tls_proxy.pki.ca), "client_cert": str(tls_proxy.pki.client_cert),
                              "client_key": str(tls_proxy.pki.client_key)},
                         auth={"api_key_file": secret_file(tmp_path, "key", tls_proxy.api_key)})
    d = daemons(salttap, right, CAPTURES, "run-right")
    d.wait_metric("salttap_indexer_setup_done")
    wait_all_events(d)
    good = d.wait_until(lambda: (m := d.metrics_text()) and (metric(m, "salttap_spool_acked_documents_total") or 0) > 0
                        and metric(m, "salttap_spool_pending_documents") == 0 and m, 120, "everything acknowledged")
    assert d.sigterm() == 0
    assert total_count(opensearch.url, prefix) > 0

    wrong_key = base64.b64encode(b"salttap-key:" + tls_proxy.api_key.encode()[::-1]).decode()
    wrong = write_config(tmp_path, tls_proxy.url("api_key"), prefix + "-wrong", tmp_path / "spool-wrong",
                         tls={"ca_file": str(tls_proxy.pki.ca)}, auth={"api_key_env": "SALTTAP_TEST_API_KEY"})
    w = daemons(salttap, wrong, CAPTURES, "run-wrong", env={"SALTTAP_TEST_API_KEY": wrong_key})
    bad = w.wait_metric('salttap_indexer_setup_failures_total{reason="http_auth"}')
    assert w.sigterm() == 0

    secrets = secrets_of(tls_proxy, wrong_key)
    for where, text in (("run's log (right key)", d.output()), ("run's log (wrong key)", w.output()),
                        ("/metrics (right key)", good), ("/metrics (wrong key)", bad)):
        assert_no_secret(text, secrets, where)
