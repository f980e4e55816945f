#!/usr/bin/env python3
"""The indexing benchmark's comparator: ready-made `_bulk` bodies posted by ONE process over
--in-flight persistent HTTP/1.1 connections (Python's http.client, one thread per
connection, each taking the next body as soon as its previous answer is in).

    bulk_post.py URL BODIES_LIST [--in-flight 2] [--gzip] [--path /_bulk?...]

The bodies (one file path per line of BODIES_LIST, cut and gzipped beforehand) are read into
memory first; the timed part is from the first request to the last answer: no process start,
no file reading, no compression, no response parsing (the answers are kept and checked after).
That is the least any bulk client must do, so it is the strongest honest comparator.

Prints one JSON line: seconds (the timed part), cpu_s (this process's user + system CPU over
the timed part, every thread), bodies, items (the answers' item count), http (status counts),
bad_items (item statuses other than 200, 201 and 409). Exit 1 when an answer is not 200 or
an item failed.
"""
from __future__ import annotations

import argparse
import collections
import http.client
import json
import sys
import threading
import time
import urllib.parse

# What salttap's shipper asks for (indexer/bulk_shipper.cpp): only the statuses and errors.
SALTTAP_BULK_PATH = "/_bulk?filter_path=errors,items.*.status,items.*.error"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("bodies", help="a file listing the body files, one per line")
    ap.add_argument("--in-flight", type=int, default=2)
    ap.add_argument("--gzip", action="store_true", help="the bodies are gzipped (Content-Encoding: gzip)")
    ap.add_argument("--path", default=SALTTAP_BULK_PATH)
    a = ap.parse_args()

    with open(a.bodies) as fh:
        bodies = [open(line.strip(), "rb").read() for line in fh if line.strip()]
    u = urllib.parse.urlsplit(a.url)
    headers = {"Content-Type": "application/x-ndjson"}
    if a.gzip:
        headers["Content-Encoding"] = "gzip"
    answers: list[tuple[int, bytes] | None] = [None] * len(bodies)
    next_body = iter(range(len(bodies)))
    lock = threading.Lock()
    failures: list[str] = []

    def worker() -> None:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
        try:
            while True:
                with lock:
                    i = next(next_body, None)
                if i is None:
                    return
                conn.request("POST", a.path, body=bodies[i], headers=headers)
                r = conn.getresponse()
                answers[i] = (r.status, r.read())
        except OSError as e:
            failures.append(repr(e))
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(a.in_flight)]
    t0, c0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0

    statuses = collections.Counter(ans[0] if ans else "none" for ans in answers)
    bad = collections.Counter()
    items = 0
    for ans in answers:
        if not ans or ans[0] != 200:
            continue
        doc = json.loads(ans[1])
        for item in doc.get("items", []):
            items += 1
            st = next(iter(item.values()))["status"]
            if st not in (200, 201, 409):
                bad[st] += 1
    print(json.dumps({"seconds": seconds, "cpu_s": cpu, "bodies": len(bodies), "items": items,
                      "http": {str(k): v for k, v in statuses.items()}, "bad_items": {str(k): v for k, v in bad.items()},
                      "errors": failures}))
    return 0 if not failures and set(statuses) == {200} and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
