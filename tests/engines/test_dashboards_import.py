"""`salttap setup --dashboards URL`: the saved-objects import as Kibana and OpenSearch Dashboards get it.

Neither Kibana nor OpenSearch Dashboards can be installed here (no registry this project reaches
carries them), so the other end is a local HTTP server written below (http.server on 127.0.0.1)
that records every request and answers as the saved-objects import API does. The engine is real
(OpenSearch 2.19 and Elasticsearch 7.17): `setup` takes the product from the engine it detects.

Checked per product: the method and path (`POST /api/saved_objects/_import?overwrite=true`, under
a Kibana space's `/s/<space>` too), the product's XSRF header and not the other's, the
multipart/form-data content type and its boundary, a body with exactly one part, the `file` field
named `salttap.ndjson`, holding the product's export byte for byte with the default index prefix
and, with another prefix, the objects `scripts/dashboards.py --prefix` writes (ids unchanged). Then
every failure's exit code and message (docs/commands.md): no answer, 401, 403, 404, 500, an
answer that is not the import API's, objects that failed (each named), a file that cannot be
read or is not an export (nothing sent). Through a real nginx terminating TLS with the test's
CA and checking basic auth (tls_proxy.py): the import carries the indexer's credentials, and
the wrong CA is a TLS failure with no answer.

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_dashboards_import.py -q
"""
from __future__ import annotations

import base64
import json
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import dashboards  # scripts/dashboards.py
from engine import ROOT, Engine
from http_calls import free_port
from tls_proxy import TlsProxy

IMPORT_PATH = "/api/saved_objects/_import?overwrite=true"
# engine flavor -> (product, export folder, its XSRF header, the other product's)
PRODUCTS = {
    "elasticsearch": ("Kibana", "kibana", "kbn-xsrf", "osd-xsrf"),
    "opensearch": ("OpenSearch Dashboards", "opensearch-dashboards", "osd-xsrf", "kbn-xsrf"),
}


# ---------------------------------------------------------------- the fake Kibana / Dashboards

class Recorded:
    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes):
        self.method, self.path, self.headers, self.body = method, path, headers, body


class FakeDashboards:
    """Records each request; answers with `answer(request) -> (status, body)`, by default as a
    successful import of every object in the file."""

    def __init__(self):
        self.requests: list[Recorded] = []
        self.answer = self.import_everything
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                self._serve()

            def do_GET(self):  # noqa: N802
                self._serve()

            def _serve(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length) if length else b""
                request = Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                fake.requests.append(request)
                status, answer = fake.answer(request)
                data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @staticmethod
    def import_everything(request: Recorded):
        objects = [o for o in file_objects(request) if "type" in o]
        return 200, {"success": True, "successCount": len(objects),
                     "successResults": [{"type": o["type"], "id": o["id"], "meta": {}} for o in objects]}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def multipart_file(request: Recorded) -> tuple[dict[str, str], bytes]:
    """The one part of a multipart/form-data body: its headers and content; asserts the framing."""
    content_type = request.headers["content-type"]
    assert content_type.startswith("multipart/form-data; boundary="), content_type
    boundary = content_type.split("boundary=", 1)[1].encode()
    assert boundary and b'"' not in boundary and len(boundary) <= 70, boundary  # RFC 2046
    body = request.body
    opening, closing = b"--" + boundary + b"\r\n", b"\r\n--" + boundary + b"--\r\n"
    assert body.startswith(opening) and body.endswith(closing), body[:200]
    inner = body[len(opening):-len(closing)]
    assert b"--" + boundary not in inner, "exactly one part, and the boundary is not in the file"
    head, sep, content = inner.partition(b"\r\n\r\n")
    assert sep, "the part has a header block"
    headers = {}
    for line in head.decode().split("\r\n"):
        name, _, value = line.partition(": ")
        headers[name.lower()] = value
    return headers, content


def file_objects(request: Recorded) -> list[dict]:
    _, content = multipart_file(request)
    return [json.loads(line) for line in content.decode().splitlines() if line.strip()]


# ---------------------------------------------------------------- salttap and the engines

@pytest.fixture(scope="module")
def fake():
    server = FakeDashboards()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def elasticsearch(tmp_path_factory) -> Engine:
    eng = Engine("elasticsearch", tmp_path_factory.mktemp("elasticsearch")).start()
    yield eng
    eng.stop()


@pytest.fixture(scope="module", params=list(PRODUCTS))
def engine(request) -> Engine:
    """The module's OpenSearch (conftest.py) or Elasticsearch: the engine decides the product."""
    return request.getfixturevalue(request.param)


@pytest.fixture()
def fresh(fake):
    """The fake starts each test with no requests and its default answer."""
    fake.requests.clear()
    fake.answer = fake.import_everything
    return fake


def write_config(tmp: Path, engine_url: str, prefix: str = "salt", tls: dict | None = None,
                 auth: dict | None = None) -> Path:
    indexer = {"hosts": [engine_url], "index_prefix": prefix, "spool": {"dir": str(tmp / "spool")}}
    if tls is not None:
        indexer["tls"] = tls
    if auth is not None:
        indexer["auth"] = auth
    path = tmp / f"salttap-{prefix}.yaml"
    path.write_text(json.dumps({"master_id": "dash-master", "indexer": indexer}, indent=1))
    return path


def setup(salttap: Path, config: Path, url: str, *more: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(salttap), "setup", "--config", str(config), "--dashboards", url, *more],
                          capture_output=True, text=True, timeout=120)


def export_path(flavor: str) -> Path:
    return ROOT / "deploy" / PRODUCTS[flavor][1] / "salttap.ndjson"


def assert_import_request(request: Recorded, flavor: str, path: str = IMPORT_PATH) -> None:
    _, _, xsrf, other = PRODUCTS[flavor]
    assert request.method == "POST"
    assert request.path == path
    assert request.headers.get(xsrf) == "true", request.headers
    assert other not in request.headers
    assert "content-encoding" not in request.headers
    headers, _ = multipart_file(request)
    assert headers == {"content-disposition": 'form-data; name="file"; filename="salttap.ndjson"',
                       "content-type": "application/ndjson"}


# ---------------------------------------------------------------- the request

def test_the_products_export_as_it_is(salttap, engine, fresh, tmp_path):
    flavor = engine.product
    run = setup(salttap, write_config(tmp_path, engine.url), fresh.url)
    assert run.returncode == 0, run.stderr
    assert len(fresh.requests) == 1
    request = fresh.requests[0]
    assert_import_request(request, flavor)
    _, content = multipart_file(request)
    assert content == export_path(flavor).read_bytes()
    name = PRODUCTS[flavor][0]
    assert f"dashboards: {export_path(flavor)}, 16 objects for {name}, index prefix salt\n" in run.stdout
    assert f"dashboards: imported 16 of 16 objects into {name} at {fresh.url}\n" in run.stdout
    assert "installed: " in run.stdout, "the index setup ran first"


def test_another_prefix_renames_the_index_patterns_only(salttap, engine, fresh, tmp_path):
    flavor = engine.product
    run = setup(salttap, write_config(tmp_path, engine.url, prefix="acme-prod"), fresh.url)
    assert run.returncode == 0, run.stderr
    sent = file_objects(fresh.requests[0])
    original = dashboards.read_export(export_path(flavor))
    assert sent == dashboards.with_index_prefix(original, "acme-prod")
    assert [o.get("id") for o in sent] == [o.get("id") for o in original]
    titles = sorted(o["attributes"]["title"] for o in sent if o.get("type") == "index-pattern")
    assert titles == sorted(f"acme-prod-{kind}*" for kind in dashboards.INDEX_KINDS)
    assert "salt-" not in multipart_file(fresh.requests[0])[1].decode()


def test_a_kibana_space_and_a_file_of_ones_own(salttap, engine, fresh, tmp_path):
    own = tmp_path / "mine.ndjson"
    own.write_text('{"attributes":{"title":"salt-jobs*"},"id":"ip-1","references":[],"type":"index-pattern"}\n'
                   '{"attributes":{"title":"x"},"id":"s-1","references":[],"type":"search"}\n')
    run = setup(salttap, write_config(tmp_path, engine.url, prefix="ops"), fresh.url + "/s/ops/",
                "--dashboards-file", str(own))
    assert run.returncode == 0, run.stderr
    assert_import_request(fresh.requests[0], engine.product, "/s/ops" + IMPORT_PATH)
    assert [o["attributes"]["title"] for o in file_objects(fresh.requests[0])] == ["ops-jobs*", "x"]
    assert "imported 2 of 2 objects" in run.stdout


# ---------------------------------------------------------------- what goes wrong

@pytest.fixture(scope="module")
def opensearch_config(opensearch, tmp_path_factory) -> Path:
    return write_config(tmp_path_factory.mktemp("failures"), opensearch.url)


def test_no_answer_is_exit_3(salttap, opensearch_config):
    url = f"http://127.0.0.1:{free_port()}"
    run = setup(salttap, opensearch_config, url)
    assert run.returncode == 3, run.stderr
    assert f"setup: dashboards: no answer from OpenSearch Dashboards at {url}: " in run.stderr


@pytest.mark.parametrize("status", [401, 403])
def test_refused_credentials_are_exit_4(salttap, opensearch_config, fresh, status):
    fresh.answer = lambda r: (status, {"statusCode": status, "error": "Unauthorized",
                                       "message": "[security_exception] missing authentication credentials"})
    run = setup(salttap, opensearch_config, fresh.url)
    assert run.returncode == 4, run.stderr
    assert (f"refused the credentials (HTTP {status}: [security_exception] missing authentication credentials)"
            in run.stderr)


@pytest.mark.parametrize("status,body,expected", [
    (404, {"statusCode": 404, "error": "Not Found", "message": "Not Found"},
     "answered HTTP 404: Not Found; is {url} the base URL of OpenSearch Dashboards"),
    (500, {"statusCode": 500, "error": "Internal Server Error", "message": "An internal server error occurred."},
     "answered HTTP 500: An internal server error occurred."),
    (200, {"name": "node-1", "cluster_name": "c"},
     "{url} answered HTTP 200 but not as the saved-objects import API does"),
], ids=["404", "500", "200-not-import"])
def test_other_answers_are_exit_5(salttap, opensearch_config, fresh, status, body, expected):
    fresh.answer = lambda r: (status, body)
    run = setup(salttap, opensearch_config, fresh.url)
    assert run.returncode == 5, run.stderr
    assert expected.format(url=fresh.url) in run.stderr


def test_failed_objects_are_exit_6_each_named(salttap, opensearch_config, fresh):
    def answer(request):
        objects = [o for o in file_objects(request) if "type" in o]
        failed = [o for o in objects if o["type"] in ("visualization", "dashboard")]
        errors = [{"id": o["id"], "type": o["type"], "title": o["attributes"]["title"],
                   "meta": {"title": o["attributes"]["title"]},
                   "error": {"type": "missing_references",
                             "references": [{"type": "index-pattern", "id": "gone-1"}]}} for o in failed]
        return 200, {"success": False, "successCount": len(objects) - len(failed), "errors": errors}

    fresh.answer = answer
    run = setup(salttap, opensearch_config, fresh.url)
    assert run.returncode == 6, run.stderr
    failed = [o for o in dashboards.read_export(export_path("opensearch"))
              if o.get("type") in ("visualization", "dashboard")]
    assert len(failed) == 5
    assert f"imported 11 of 16 objects; {len(failed)} failed" in run.stderr
    for o in failed:
        line = (f"setup: dashboards: {o['type']} {o['id']} (\"{o['attributes']['title']}\"): "
                f"missing_references; missing: index-pattern gone-1")
        assert line in run.stderr
    assert "imported 11 of 16" not in run.stdout


def test_a_file_that_cannot_be_read_is_exit_7_and_nothing_is_sent(salttap, opensearch_config, fresh, tmp_path):
    missing = tmp_path / "missing.ndjson"
    run = setup(salttap, opensearch_config, fresh.url, "--dashboards-file", str(missing))
    assert run.returncode == 7, run.stderr
    assert f"cannot read the saved objects: {missing}: No such file or directory" in run.stderr
    assert "installed: " not in run.stdout, "a named file is read before the engine is asked"
    bad = tmp_path / "bad.ndjson"
    bad.write_text('{"type":"search","id":"a"}\nnot json\n')
    run = setup(salttap, opensearch_config, fresh.url, "--dashboards-file", str(bad))
    assert run.returncode == 7, run.stderr
    assert f"setup: dashboards: {bad}: line 2: not JSON" in run.stderr
    assert fresh.requests == []


def test_dashboards_file_needs_dashboards(salttap, opensearch_config, tmp_path):
    run = subprocess.run([str(salttap), "setup", "--config", str(opensearch_config), "--dashboards-file",
                          str(tmp_path / "x.ndjson")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "--dashboards-file requires --dashboards" in run.stderr


# ---------------------------------------------------------------- TLS and basic auth (nginx)

@pytest.fixture(scope="module")
def tls_dashboards(tmp_path_factory):
    """A fake of its own behind nginx (TLS with the test's CA, basic auth)."""
    server = FakeDashboards()
    proxy = TlsProxy(tmp_path_factory.mktemp("tls-dashboards"), server.port)
    yield server, proxy
    proxy.stop()
    server.stop()


def test_tls_and_basic_auth_as_for_the_engine(salttap, opensearch, tls_dashboards, tmp_path):
    server, proxy = tls_dashboards
    password_file = tmp_path / "pw"
    password_file.write_text(proxy.password + "\n")
    auth = {"username": proxy.username, "password_file": str(password_file)}
    config = write_config(tmp_path, opensearch.url, tls={"ca_file": str(proxy.pki.ca)}, auth=auth)
    run = setup(salttap, config, proxy.url("basic"))
    assert run.returncode == 0, run.stderr
    assert len(server.requests) == 1
    request = server.requests[0]
    assert_import_request(request, "opensearch")
    expected = base64.b64encode(f"{proxy.username}:{proxy.password}".encode()).decode()
    assert request.headers["authorization"] == f"Basic {expected}"
    assert multipart_file(request)[1] == export_path("opensearch").read_bytes()
    assert proxy.password not in run.stdout + run.stderr

    # The wrong password: nginx's 401.
    password_file.write_text("not-the-password\n")
    run = setup(salttap, config, proxy.url("basic"))
    assert run.returncode == 4, run.stderr
    assert len(server.requests) == 1

    # The wrong CA: no answer, the certificate named.
    password_file.write_text(proxy.password + "\n")
    (tmp_path / "wrong").mkdir()
    wrong = write_config(tmp_path / "wrong", opensearch.url, tls={"ca_file": str(proxy.pki.wrong_ca)}, auth=auth)
    run = setup(salttap, wrong, proxy.url("basic"))
    assert run.returncode == 3, run.stderr
    assert "TLS failed" in run.stderr
    assert len(server.requests) == 1
