#!/usr/bin/env python3
"""Record real `_bulk` responses, `GET /` banners and search answers from the test engines as fuzz seeds.

    .cache/venv/tools/bin/python tests/fuzz/record_bulk_seeds.py [--flavor opensearch|elasticsearch|all]
                                                                  [--out tests/fuzz/corpus]

Starts OpenSearch 2.19 and Elasticsearch 7.17 with tests/harness/engine.py (one at a time,
each in a temporary directory, stopped by its PID at the end, whatever happens), sends them
the requests below and writes every exact answer (status, body bytes) as a seed:

  corpus/bulk_result/rec-<os|es>-<case>   [HTTP status: 2 bytes BE][documents sent: 1 byte][body]
  corpus/server_info/rec-<os|es>-<case>   [HTTP status: 2 bytes BE][X-Elastic-Product length: 1 byte]
                                          [X-Elastic-Product][body]

  corpus/search_response/rec-<os|es>-<case>
                                          [HTTP status: 2 bytes BE][0 jobs|1 returns|2 minions][body]

(the input formats of bulk_result_fuzz.cpp, server_info_fuzz.cpp and search_response_fuzz.cpp). Bulk requests go to
`/_bulk?filter_path=errors,items.*.status,items.*.error`, the path salttap's shipper uses,
except the `-unfiltered` cases, which show the engine's whole answer. Cases:

  all-created            three `create`s into a new index: 201 each
  mixed-created-409      the same three again plus two new ones: 409 (already there) and 201
  mapping-rejection      a string into a `long` field: 400 mapper_parsing_exception per item
  external-version       `index` with version_type=external and an older version: 409
  unknown-index          auto_create_index off, an index that does not exist: 404 per item
  write-block            an index with index.blocks.write: 403 cluster_block_exception per item
  closed-index           a closed index
  mapping-depth-limit    a document nested deeper than index.mapping.depth.limit
  bad-index-name         an upper-case index name
  malformed-json         a body line that is not JSON: the whole request fails
  no-final-newline       a body without the final newline: the whole request fails
  unknown-action         an action line the engine does not know
  empty-body             no body at all
  too-large              a Content-Length over http.max_content_length: 413 before the body is read
  banner, banner-compat  GET / (OpenSearch also with compatibility.override_main_response_version)
  search-*               the searches of `salttap jobs` and `salttap minions` (history/query_bodies.cpp):
                         jobs newest first, a wildcard filter, a minions page and the next, the last
                         page, a pattern matching no index, a missing index (404), a bad query (400)

Re-recording changes only what the engines make up each time (uuids, dates, took).
make_corpus.py keeps these rec-* files; run this script when the engines change.
"""
from __future__ import annotations

import argparse
import http.client
import json
import pathlib
import struct
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "harness"))  # the shared test helpers
from engine import Engine  # noqa: E402

BULK_PATH = "/_bulk?filter_path=errors,items.*.status,items.*.error"
SHORT = {"opensearch": "os", "elasticsearch": "es"}


class Client:
    def __init__(self, url: str):
        host, port = url.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)

    def request(self, method: str, path: str, body: bytes | None = None,
                content_type: str = "application/json", content_length: int | None = None):
        """(status, headers, body bytes), exactly as received."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            conn.putrequest(method, path)
            if body is not None or content_length is not None:
                conn.putheader("Content-Type", content_type)
                conn.putheader("Content-Length", str(content_length if content_length is not None else len(body)))
            conn.endheaders()
            if body is not None:
                conn.send(body)
            resp = conn.getresponse()
            return resp.status, resp.headers, resp.read()
        finally:
            conn.close()

    def json(self, method: str, path: str, doc=None):
        status, _, body = self.request(method, path, None if doc is None else json.dumps(doc).encode())
        if status >= 300:
            raise RuntimeError(f"{method} {path}: HTTP {status}: {body[:300]!r}")
        return json.loads(body or b"null")


def ndjson(lines) -> bytes:
    return b"".join((ln if isinstance(ln, bytes) else json.dumps(ln, separators=(",", ":")).encode()) + b"\n"
                    for ln in lines)


def create(index: str, doc_id: str, doc: dict):
    return [{"create": {"_index": index, "_id": doc_id}}, doc]


def job(jid: str) -> dict:
    return {"@timestamp": "2026-11-29T12:00:00.123Z", "jid": jid, "fun": "test.ping", "n": 1}


def bulk_seed(status: int, sent: int, body: bytes) -> bytes:
    return struct.pack(">HB", status, sent) + body


def banner_seed(status: int, product: str, body: bytes) -> bytes:
    p = product.encode()
    return struct.pack(">HB", status, len(p)) + p + body


def search_seed(status: int, which: int, body: bytes) -> bytes:
    return struct.pack(">HB", status, which) + body


def record_searches(client: Client, save) -> None:
    """The searches of `salttap jobs` / `minions` on a few jobs and returns, as their bodies are built."""
    one_shard = {"settings": {"number_of_shards": 1, "number_of_replicas": 0}}
    kw = {"type": "keyword"}
    client.json("PUT", "/rec-jobs-2026.11.29", {**one_shard, "mappings": {"properties": {
        "jid": kw, "fun": kw, "status": kw, "started_at": {"type": "date"}}}})
    client.json("PUT", "/rec-returns-2026.11.29", {**one_shard, "mappings": {"properties": {
        "jid": kw, "minion": kw, "status": kw, "@timestamp": {"type": "date"}, "job_started_at": {"type": "date"}}}})
    lines = []
    for i, (fun, status) in enumerate([("test.ping", "succeeded"), ("state.apply", "failed"), ("cmd.run", "missing")]):
        jid = f"2026112912000{i}000000"
        lines += create("rec-jobs-2026.11.29", jid, {"jid": jid, "fun": fun, "status": status, "user": "root",
                                                      "started_at": f"2026-11-29T12:00:0{i}.123456Z",
                                                      "counts": {"expected": 2, "succeeded": 1},
                                                      "failed_states": [{"minion": "web1", "id": "x"}]})
        for m, st in (("web1", status), ("web2", "succeeded"), ("db1", "missing")):
            lines += create("rec-returns-2026.11.29", f"{jid}/{m}", {
                "jid": jid, "minion": m, "status": st, "retcode": 0, "@timestamp": f"2026-11-29T12:00:1{i}Z",
                "job_started_at": f"2026-11-29T12:00:0{i}Z", "return_text": "true"})
    client.request("POST", "/_bulk?refresh=true", ndjson(lines), content_type="application/x-ndjson")

    def search(case: str, which: int, index: str, body: dict):
        status, _, answer = client.request("POST", f"/{index}/_search", json.dumps(body).encode())
        save("search_response", case, search_seed(status, which, answer))
        print(f"search {case:26} HTTP {status} {len(answer)} bytes", file=sys.stderr)
        return json.loads(answer)

    sort = [{"started_at": {"order": "desc", "unmapped_type": "date"}}]
    search("search-jobs", 0, "rec-jobs-*", {"size": 50, "track_total_hits": False, "sort": sort,
                                            "query": {"bool": {"filter": []}}})
    search("search-jobs-wildcard", 0, "rec-jobs-*", {"size": 50, "sort": sort, "query": {"bool": {"filter": [
        {"wildcard": {"fun": {"value": "state.*"}}},
        {"range": {"started_at": {"gte": 1764417600000, "format": "epoch_millis"}}}]}}})
    search("search-returns", 1, "rec-returns-*", {"size": 10000, "track_total_hits": True,
                                                  "sort": [{"minion": {"order": "asc", "unmapped_type": "keyword"}}],
                                                  "query": {"bool": {"filter": [
                                                      {"term": {"jid": "20261129120001000000"}}]}}})
    status = lambda s: {"filter": {"term": {"status": s}}}
    minions = lambda after: {"size": 0, "track_total_hits": False, "aggs": {"minions": {
        "composite": {"size": 2, "sources": [{"minion": {"terms": {"field": "minion"}}}],
                      **({"after": after} if after else {})},
        "aggs": {"succeeded": status("succeeded"), "failed": status("failed"), "missing": status("missing"),
                 "answered": {"filter": {"bool": {"must_not": {"term": {"status": "missing"}}}},
                              "aggs": {"last": {"max": {"field": "@timestamp"}}}}}}}}
    after = search("search-minions-page", 2, "rec-returns-*", minions(None))["aggregations"]["minions"]["after_key"]
    after = search("search-minions-next", 2, "rec-returns-*", minions(after))["aggregations"]["minions"].get("after_key")
    search("search-minions-last", 2, "rec-returns-*", minions(after))
    search("search-no-indices", 0, "nothing-jobs-*", {"size": 50, "sort": sort})
    search("search-missing-index", 0, "nothing-jobs", {"size": 50})
    search("search-bad-query", 0, "rec-jobs-*", {"size": 50, "query": {"bool": {"filter": [{"no_such_query": {}}]}}})


def record(flavor: str, client: Client, out: pathlib.Path) -> list[pathlib.Path]:
    short = SHORT[flavor]
    written = []

    def save(target: str, case: str, data: bytes):
        path = out / target / f"rec-{short}-{case}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        written.append(path)

    def bulk(case: str, lines, sent: int, path: str = BULK_PATH, raw: bytes | None = None, **kw):
        body = raw if raw is not None else ndjson(lines)
        status, _, answer = client.request("POST", path, body, content_type="application/x-ndjson", **kw)
        save("bulk_result", case, bulk_seed(status, sent, answer))
        print(f"{flavor:13} {case:28} HTTP {status} {len(answer)} bytes", file=sys.stderr)

    status, headers, answer = client.request("GET", "/")
    save("server_info", "banner", banner_seed(status, headers.get("X-Elastic-Product", ""), answer))

    one_shard = {"settings": {"number_of_shards": 1, "number_of_replicas": 0}}
    client.json("PUT", "/salt-jobs-2026.11.29", {**one_shard, "mappings": {"properties": {"n": {"type": "long"}}}})
    three = [ln for i in range(3) for ln in create("salt-jobs-2026.11.29", f"j{i}", job(f"2026112912000000000{i}"))]
    bulk("all-created", three, 3)
    two_more = [ln for i in range(3, 5) for ln in create("salt-jobs-2026.11.29", f"j{i}", job(f"2026112912000000000{i}"))]
    bulk("mixed-created-409", three + two_more, 5)
    bulk("mixed-created-409-unfiltered", three + create("salt-jobs-2026.11.29", "j9", job("20261129120000000009")), 4,
         path="/_bulk")

    bad = dict(job("20261129120000000010"), n="not a number")
    bulk("mapping-rejection", create("salt-jobs-2026.11.29", "m1", job("20261129120000000011"))
         + create("salt-jobs-2026.11.29", "m2", bad) + create("salt-jobs-2026.11.29", "m3", {"n": {"nested": 1}}), 3)
    bulk("mapping-rejection-unfiltered", create("salt-jobs-2026.11.29", "m4", bad), 1, path="/_bulk")

    ext = lambda v: {"index": {"_index": "salt-jobs-2026.11.29", "_id": "x1", "version": v,
                               "version_type": "external"}}
    bulk("external-version", [ext(5), job("20261129120000000020"), ext(3), job("20261129120000000021"),
                              ext(5), job("20261129120000000022"), ext(6), job("20261129120000000023")], 4)

    client.json("PUT", "/_cluster/settings", {"persistent": {"action.auto_create_index": False}})
    bulk("unknown-index", create("salt-events-2026.11.29", "e1", job("1")) + create("salt-jobs-2026.11.29", "e2",
                                                                                     job("2")), 2)
    bulk("unknown-index-unfiltered", create("salt-events-2026.11.29", "e1", job("1")), 1, path="/_bulk")
    client.json("PUT", "/_cluster/settings", {"persistent": {"action.auto_create_index": None}})

    client.json("PUT", "/salt-alerts-2026.11.29", {"settings": {**one_shard["settings"], "index.blocks.write": True}})
    bulk("write-block", create("salt-alerts-2026.11.29", "a1", job("1")) + create("salt-alerts-2026.11.29", "a2",
                                                                                   job("2")), 2)
    client.json("PUT", "/salt-states-2026.11.29", one_shard)
    client.json("POST", "/salt-states-2026.11.29/_close")
    bulk("closed-index", create("salt-states-2026.11.29", "s1", job("1")) + create("salt-jobs-2026.11.29", "s2",
                                                                                    job("2")), 2)

    deep: dict = {"leaf": 1}
    for _ in range(25):
        deep = {"d": deep}
    bulk("mapping-depth-limit", create("salt-returns-2026.11.29", "r1", {"return": deep}), 1)
    bulk("bad-index-name", create("Salt-Jobs", "b1", job("1")), 1)

    bulk("malformed-json", None, 2, raw=ndjson(create("salt-jobs-2026.11.29", "p1", job("1"))) + b"{not json}\n")
    bulk("no-final-newline", None, 1, raw=ndjson(create("salt-jobs-2026.11.29", "p2", job("1")))[:-1])
    bulk("unknown-action", [{"upsert": {"_index": "salt-jobs-2026.11.29", "_id": "u1"}}, job("1")], 1)
    bulk("empty-body", None, 1, raw=b"")
    bulk("too-large", None, 2, raw=b"", content_length=1 << 30)

    record_searches(client, save)

    if flavor == "opensearch":
        client.json("PUT", "/_cluster/settings",
                    {"persistent": {"compatibility.override_main_response_version": True}})
        status, headers, answer = client.request("GET", "/")
        save("server_info", "banner-compat", banner_seed(status, headers.get("X-Elastic-Product", ""), answer))
    return written


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flavor", choices=[*SHORT, "all"], default="all")
    ap.add_argument("--out", type=pathlib.Path, default=HERE / "corpus")
    args = ap.parse_args()
    written = []
    for flavor in (SHORT if args.flavor == "all" else [args.flavor]):
        with tempfile.TemporaryDirectory(prefix=f"salttap-record-{flavor}-") as tmp:
            with Engine(flavor, pathlib.Path(tmp) / "engine") as eng:  # stops by PID on exit
                written += record(flavor, Client(eng.url), args.out)
    print(f"{len(written)} recorded seed files in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
