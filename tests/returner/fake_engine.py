"""A small fake search engine for the returner's unit tests.

It answers `POST /<pattern>/_search` from documents held in memory, with just
the query language the returner sends: bool filter / must_not / should of term, terms, exists,
range and wildcard; sort; size; search_after; a composite terms aggregation. Every
request is recorded (path, headers, body). `status` and `raw_answer` make it
answer with an error or with bytes that are not JSON; `fail_next`
makes the next requests fail.
"""

from __future__ import annotations

import fnmatch
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _field(doc: dict, path: str):
    cur = doc
    for part in path.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _matches(doc: dict, clause: dict) -> bool:
    (kind, spec), = clause.items()
    if kind == "bool":
        should = spec.get("should", [])
        return (all(_matches(doc, c) for c in spec.get("filter", []))
                and not any(_matches(doc, c) for c in spec.get("must_not", []))
                and (not should or sum(_matches(doc, c) for c in should) >= spec.get("minimum_should_match", 1)))
    if kind == "exists":
        return _field(doc, spec["field"]) is not None
    (field, want), = spec.items()
    have = _field(doc, field)
    values = have if isinstance(have, list) else [have]
    if kind == "term":
        return want in values
    if kind == "terms":
        return any(v in want for v in values)
    if kind == "range":  # jids and times: fixed-width strings compare as values do
        bounds = {"lt": str.__lt__, "lte": str.__le__, "gt": str.__gt__, "gte": str.__ge__}
        return any(isinstance(v, str) and all(bounds[op](v, b) for op, b in want.items()) for v in values)
    if kind == "wildcard":
        return any(isinstance(v, str) and fnmatch.fnmatchcase(v, want) for v in values)
    raise ValueError(f"query clause not supported by the fake: {clause}")


class FakeEngine:
    def __init__(self):
        self.indices: dict[str, list[dict]] = {}
        self.requests: list[dict] = []
        self.status = 200
        self.raw_answer: bytes | None = None
        self.fail_next = 0  # answer this many requests with 503 first
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with fake.lock:
                    fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    status, answer = fake.answer(self.path, body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> "FakeEngine":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add(self, index: str, *docs: dict) -> None:
        self.indices.setdefault(index, []).extend(docs)

    def searches(self) -> list[dict]:
        with self.lock:
            return [r for r in self.requests if "/_search" in r["path"]]

    def answer(self, path: str, body: dict) -> tuple[int, bytes]:
        if self.fail_next > 0:
            self.fail_next -= 1
            return 503, b'{"error": "fake unavailable"}'
        if self.raw_answer is not None:
            return self.status, self.raw_answer
        if self.status != 200:
            return self.status, json.dumps({"error": {"type": "fake_error"}, "status": self.status}).encode()
        pattern = path.split("?")[0].strip("/").split("/")[0]
        docs = [d for name, ds in self.indices.items() if fnmatch.fnmatchcase(name, pattern) for d in ds]
        query = body.get("query", {}).get("bool", {})
        docs = [d for d in docs
                if all(_matches(d, c) for c in query.get("filter", []))
                and not any(_matches(d, c) for c in query.get("must_not", []))]
        if "aggs" in body:
            return 200, json.dumps({"hits": {"hits": []}, "aggregations": self._composite(docs, body["aggs"])}).encode()
        sort = [next(iter(s.items())) for s in body.get("sort", [])]
        for field, order in reversed(sort):
            docs.sort(key=lambda d, f=field: str(_field(d, f)), reverse=(order == "desc"))
        keyed = [([str(_field(d, f)) for f, _ in sort], d) for d in docs]
        if "search_after" in body:
            after = body["search_after"]

            def beyond(key):
                for (f, order), k, a in zip(sort, key, after):
                    if k != a:
                        return k > a if order == "asc" else k < a
                return False
            keyed = [(k, d) for k, d in keyed if beyond(k)]
        keyed = keyed[: body.get("size", 10)]
        hits = [{"_source": d, "sort": k} for k, d in keyed]
        return 200, json.dumps({"hits": {"hits": hits}}).encode()

    @staticmethod
    def _composite(docs: list[dict], aggs: dict) -> dict:
        (name, agg), = aggs.items()
        comp = agg["composite"]
        (key_name, src), = comp["sources"][0].items()
        field = src["terms"]["field"]
        keys = sorted({_field(d, field) for d in docs if _field(d, field) is not None})
        if "after" in comp:
            keys = [k for k in keys if k > comp["after"][key_name]]
        page = keys[: comp["size"]]
        out = {"buckets": [{"key": {key_name: k}, "doc_count": 1} for k in page]}
        if page:
            out["after_key"] = {key_name: page[-1]}
        return {name: out}
