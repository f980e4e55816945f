"""The test engines start, serve the APIs the indexer relies on, and stop cleanly.

Run: .cache/venv/tools/bin/python -m pytest tests/engines -v
Standard library only (urllib), plus pytest.
"""
from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from engine import FLAVORS, Engine, suite_flavors
from http_calls import call, free_port

ENGINE_PY = Path(__file__).resolve().parents[1] / "harness" / "engine.py"  # its command line

# What each product calls its "whole object as one field" type.
FLAT_TYPE = {"opensearch": "flat_object", "elasticsearch": "flattened"}


def port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def job(jid: str, minion: str, retcode, ret) -> dict:
    return {"@timestamp": "2026-11-29T12:00:00.123456789Z", "jid": jid, "minion": minion,
            "fun": "state.apply", "retcode": retcode, "success": retcode == 0,
            "return": ret, "return_flat": ret, "salt_version_extra": "not mapped"}


@pytest.fixture(scope="class", params=suite_flavors())
def engine(request, tmp_path_factory):
    eng = Engine(request.param, tmp_path_factory.mktemp(request.param))
    eng.start()
    yield eng
    eng.stop()


class TestEngine:
    """Tests run in this order per flavor; the last one stops the engine."""

    def test_root_reports_flavor_and_version(self, engine):
        status, info = call(engine.url + "/")
        assert status == 200
        version = info["version"]
        assert version["number"].startswith(FLAVORS[engine.flavor]["version_prefix"])
        if engine.product == "opensearch":
            assert version["distribution"] == "opensearch"
            assert info["tagline"].startswith("The OpenSearch Project")
        else:
            assert "distribution" not in version
            assert version["build_flavor"] == "default"
            assert info["tagline"] == "You Know, for Search"
        assert info == engine.info

    def test_template_bulk_count(self, engine):
        template = {
            "index_patterns": ["salt-returns-*"],
            "priority": 200,
            "template": {
                "settings": {"number_of_shards": 1, "number_of_replicas": 0},
                "mappings": {
                    "dynamic": False,
                    "properties": {
                        "@timestamp": {"type": "date_nanos"},
                        "jid": {"type": "keyword"},
                        "minion": {"type": "keyword"},
                        "fun": {"type": "keyword"},
                        "retcode": {"type": "integer"},
                        "success": {"type": "boolean"},
                        "return": {"type": "object", "enabled": False},
                        "return_flat": {"type": FLAT_TYPE[engine.product]},
                    },
                },
            },
        }
        status, body = call(engine.url + "/_index_template/salt-returns", "PUT", template)
        assert status == 200 and body == {"acknowledged": True}, body

        index = "salt-returns-2026.11.29"
        docs = [job("20261129120000000001", f"minion-{i}", 0,
                    {"pkg_|-vim_|-vim_|-installed": {"result": True, "changes": {"new": str(i)}}})
                for i in range(3)]
        lines = []
        for i, d in enumerate(docs):
            lines += [{"create": {"_index": index, "_id": f"id-{i}"}}, d]
        status, body = call(engine.url + "/_bulk?refresh=wait_for", "POST", lines, ndjson=True)
        assert status == 200
        assert body["errors"] is False, body
        assert [it["create"]["status"] for it in body["items"]] == [201, 201, 201]

        status, body = call(engine.url + f"/{index}/_count")
        assert status == 200 and body["count"] == 3

        status, mapping = call(engine.url + f"/{index}/_mapping")
        props = mapping[index]["mappings"]["properties"]
        assert props["return_flat"]["type"] == FLAT_TYPE[engine.product]
        assert "salt_version_extra" not in props  # dynamic: false keeps it in _source only

        # the flat field's leaves are searchable by dotted path on both flavors
        query = {"query": {"term": {"return_flat.pkg_|-vim_|-vim_|-installed.changes.new": "1"}}}
        status, body = call(engine.url + f"/{index}/_search", "POST", query)
        assert status == 200, body
        assert [h["_id"] for h in body["hits"]["hits"]] == ["id-1"]

        # create with an existing _id: 409 per item (the indexer counts it as success)
        status, body = call(engine.url + "/_bulk", "POST", lines[:2], ndjson=True)
        assert status == 200 and body["items"][0]["create"]["status"] == 409

    def test_bulk_mapping_conflict_is_per_item_400(self, engine):
        index = "salt-returns-2026.11.30"
        good1 = job("20261130000000000001", "a", 0, {"x": 1})
        bad = job("20261130000000000002", "b", "not-a-number", {"x": 2})
        good2 = job("20261130000000000003", "c", 1, "a plain string return")
        good2.pop("return_flat")
        lines = []
        for d in (good1, bad, good2):
            lines += [{"index": {"_index": index}}, d]
        status, body = call(engine.url + "/_bulk?refresh=wait_for", "POST", lines, ndjson=True)
        assert status == 200
        assert body["errors"] is True
        statuses = [it["index"]["status"] for it in body["items"]]
        assert statuses == [201, 400, 201], body
        assert body["items"][1]["index"]["error"]["type"] == "mapper_parsing_exception"
        status, body = call(engine.url + f"/{index}/_count")
        assert body["count"] == 2

    def test_stop_closes_port(self, engine):
        port, pid = engine.port, engine.pid
        assert port_open(port)
        engine.stop()
        assert not port_open(port)
        assert not Path(f"/proc/{pid}").exists()  # exited and reaped
        assert not (engine.dir / "pid").exists()


def test_cli_start_status_stop_fixed_port(tmp_path):
    port = free_port()  # a port that was free a moment ago
    d = tmp_path / "cli"
    run = [sys.executable, str(ENGINE_PY)]
    out = subprocess.run(run + ["start", "--flavor", "opensearch", "--dir", str(d), "--port", str(port)],
                         capture_output=True, text=True, timeout=180)
    try:
        assert out.returncode == 0, out.stderr
        url, pid = out.stdout.split()
        assert url == f"http://127.0.0.1:{port}"
        assert int(pid) > 0
        assert call(url + "/")[1]["version"]["distribution"] == "opensearch"
        st = subprocess.run(run + ["status", "--dir", str(d)], capture_output=True, text=True)
        assert st.returncode == 0 and st.stdout.split() == [url, pid]
        # a second start on the same dir is refused while the first runs
        again = subprocess.run(run + ["start", "--flavor", "opensearch", "--dir", str(d)],
                               capture_output=True, text=True, timeout=60)
        assert again.returncode == 1 and "already runs" in again.stderr
    finally:
        stop = subprocess.run(run + ["stop", "--dir", str(d)], capture_output=True, text=True, timeout=60)
    assert stop.returncode == 0
    assert not port_open(port)
    st = subprocess.run(run + ["status", "--dir", str(d)], capture_output=True, text=True)
    assert st.returncode == 1
