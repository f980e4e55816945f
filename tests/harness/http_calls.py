"""HTTP calls to the engines and to salttap's own listener, polling for an outcome, and free ports.

Named http_calls, not http: this directory is on sys.path, where a module called `http` would
hide the standard library's. Standard library only (the benchmarks import it too).
"""
from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request


def call(url: str, method: str = "GET", body=None, ndjson: bool = False, timeout: float = 60.0,
         headers: dict | None = None):
    """(status, body): the body parsed when the answer is JSON (None when empty), else its text.
    `body` is sent as JSON, or with ndjson=True as one JSON line per item. HTTP errors are
    returned, not raised; a connection that fails raises (an OSError)."""
    data, sent = None, dict(headers or {})
    if body is not None:
        if ndjson:
            data = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in body).encode()
            sent["Content-Type"] = "application/x-ndjson"
        else:
            data = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
    req = urllib.request.Request(url, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw, status, ctype = resp.read(), resp.status, resp.headers.get("Content-Type", "")
    except urllib.error.HTTPError as e:
        raw, status, ctype = e.read(), e.code, e.headers.get("Content-Type", "")
    if "json" in ctype:
        return status, json.loads(raw or b"null")
    return status, raw.decode("utf-8", "replace")


def hits(url: str, index: str, query: dict, size: int = 10000, version: bool = False) -> list[dict]:
    """The hits (with _index, _id, _source; _version when asked) of `query` in `index` after a
    refresh; [] while the index is absent or starting."""
    call(f"{url}/{index}/_refresh", "POST")
    body = {"size": size, "query": query}
    if version:
        body["version"] = True
    status, got = call(f"{url}/{index}/_search", "POST", body)
    # 404: no such index yet; 503 "all shards failed": it was just created and its primary
    # shard is not started yet. Both: nothing searchable yet.
    if status in (404, 503):
        return []
    assert status == 200, f"search {index}: {status} {got}"
    return got["hits"]["hits"]


def search(url: str, index: str, query: dict, size: int = 100) -> list[dict]:
    """The sources of hits(): what the engine holds of `query`."""
    return [h["_source"] for h in hits(url, index, query, size)]


def wait_until(check, timeout: float, what: str, diag=lambda: "", interval: float = 0.5):
    """Polls check() until it returns a truthy value, which is returned. `timeout` guards
    against a hang: past it the test fails, naming `what`, the last value and diag()."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}; last: {last}\n{diag()}")


def free_ports(n: int) -> list[int]:
    """n distinct free TCP ports on 127.0.0.1 (all held open until all are chosen)."""
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def free_port() -> int:
    return free_ports(1)[0]
