#!/usr/bin/env python3
"""Decode a Salt master event-bus stream with Salt's own Python code (baseline).

Mirrors what Salt 3006's subscriber does for every event:

  plain  (eras C/E): salt.utils.msgpack.Unpacker(raw=False) fed with chunks of
         the stream (as salt/transport/ipc.py IPCMessageSubscriber._read does),
         iterate framed messages, take framed_msg["body"];
  len32  (era D, 3006.26): 4-byte big-endian length, then that many bytes
         decoded with salt.utils.msgpack.loads(frame, raw=False);

then salt.utils.event.SaltEvent.unpack(body) -> (tag, data), which splits the
body at the first b"\\n\\n" and calls salt.payload.loads(mdata, encoding="utf-8").

Only the decode loop is timed (the file is read into memory first). The loop
runs --repeat times; "seconds" is the best run, "seconds_median" the median.
Prints ONE JSON line on stdout. If DIR/manifest.json (from make_stream.py) lists
the file, the decoded event count and byte size are checked against it.

Run with the Salt venv's python:
    .cache/venv/salt-3006.25/bin/python bench/salt_decode.py build/bench-streams/small.plain.raw

--check-jsonl FILE.jsonl compares the decoded events (outside the timed loop)
with a capture's .jsonl (bytes as {"__bytes_b64__": ...}).
"""

import argparse
import base64
import datetime
import gc
import json
import os
import statistics
import struct
import sys
import time

import salt.payload
import salt.utils.event
import salt.utils.msgpack
import salt.version


def detect_framing(buf):
    if not buf:
        return "plain"
    b = buf[0]
    if 0x80 <= b <= 0x8F or b in (0xDE, 0xDF):
        return "plain"
    if b == 0x00:
        return "len32"
    raise SystemExit("cannot detect framing: first byte 0x%02x" % b)


def iter_bodies_plain(buf, chunk):
    """Yield event bodies the way IPCMessageSubscriber._read does."""
    unpacker = salt.utils.msgpack.Unpacker(raw=False)
    n = len(buf)
    for off in range(0, n, chunk):
        unpacker.feed(buf[off : off + chunk])
        for framed_msg in unpacker:
            yield framed_msg["body"]
    left = n - unpacker.tell()
    if left:
        raise ValueError("stream ends inside a frame (%d bytes left over)" % left)


def iter_bodies_len32(buf, chunk):
    n = len(buf)
    pos = 0
    unpack_from = struct.unpack_from
    loads = salt.utils.msgpack.loads
    while pos < n:
        if pos + 4 > n:
            raise ValueError("truncated length prefix at offset %d" % pos)
        (size,) = unpack_from(">I", buf, pos)
        pos += 4
        if pos + size > n:
            raise ValueError("truncated frame at offset %d" % (pos - 4))
        framed_msg = loads(buf[pos : pos + size], raw=False)
        pos += size
        yield framed_msg["body"]


def decode_once(buf, framing, chunk):
    """The timed loop. Returns the number of events."""
    unpack = salt.utils.event.SaltEvent.unpack
    it = iter_bodies_plain if framing == "plain" else iter_bodies_len32
    count = 0
    for body in it(buf, chunk):
        tag, data = unpack(body)
        count += 1
    # sanity on the last event only (keeps the loop lean)
    if count and not (isinstance(tag, str) and isinstance(data, dict)):
        raise ValueError("last event did not decode to (str, dict)")
    return count


def validate(buf, framing, chunk):
    """Untimed full pass: every event must be (str tag, dict data with _stamp)."""
    unpack = salt.utils.event.SaltEvent.unpack
    it = iter_bodies_plain if framing == "plain" else iter_bodies_len32
    bad = 0
    count = 0
    for body in it(buf, chunk):
        count += 1
        if not isinstance(body, bytes) or b"\n\n" not in body:
            bad += 1
            continue
        tag, data = unpack(body)
        if not (isinstance(tag, str) and tag and isinstance(data, dict)):
            bad += 1
        elif "_stamp" not in data:
            bad += 1
    return count, bad


def to_jsonable(obj):
    if isinstance(obj, bytes):
        return {"__bytes_b64__": base64.b64encode(obj).decode("ascii")}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, datetime.datetime):
        return obj.isoformat()
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return repr(obj)


def check_jsonl(buf, framing, chunk, jsonl_path):
    unpack = salt.utils.event.SaltEvent.unpack
    it = iter_bodies_plain if framing == "plain" else iter_bodies_len32
    got = [to_jsonable(dict(zip(("tag", "data"), unpack(b)))) for b in it(buf, chunk)]
    with open(jsonl_path, encoding="utf-8") as fh:
        want = [json.loads(line) for line in fh if line.strip()]
    mismatches = sum(1 for g, w in zip(got, want) if g != w)
    mismatches += abs(len(got) - len(want))
    return {"jsonl": jsonl_path, "jsonl_events": len(want), "jsonl_mismatches": mismatches}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--framing", choices=["auto", "plain", "len32"], default="auto")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs (default 3)")
    ap.add_argument(
        "--chunk",
        type=int,
        default=65536,
        help="bytes fed to the Unpacker per read for plain framing (default 65536)",
    )
    ap.add_argument("--check-jsonl", metavar="JSONL")
    ap.add_argument("--no-validate", action="store_true", help="skip untimed full check")
    ap.add_argument("--manifest", help="default: manifest.json next to FILE")
    args = ap.parse_args()

    with open(args.file, "rb") as fh:
        buf = fh.read()
    framing = detect_framing(buf) if args.framing == "auto" else args.framing

    result = {
        "decoder": "salt-python",
        "salt_version": salt.version.__version__,
        "file": args.file,
        "framing": framing,
    }
    ok = True

    if not args.no_validate:
        count, bad = validate(buf, framing, args.chunk)
        result["invalid_events"] = bad
        ok = ok and bad == 0

    times = []
    events = None
    for _ in range(max(1, args.repeat)):
        gc.collect()
        t0 = time.perf_counter()
        n = decode_once(buf, framing, args.chunk)
        times.append(time.perf_counter() - t0)
        if events is not None and n != events:
            raise SystemExit("event count changed between runs")
        events = n
    best = min(times)
    result.update(
        {
            "events": events,
            "bytes": len(buf),
            "seconds": round(best, 6),
            "seconds_median": round(statistics.median(times), 6),
            "repeat": len(times),
            "seconds_all": [round(t, 4) for t in times],
            "events_per_s": round(events / best, 1),
            "mb_per_s": round(len(buf) / best / 1e6, 3),
        }
    )
    if framing == "plain":
        result["chunk"] = args.chunk

    mpath = args.manifest or os.path.join(
        os.path.dirname(os.path.abspath(args.file)), "manifest.json"
    )
    if os.path.exists(mpath):
        with open(mpath) as fh:
            entry = json.load(fh).get("files", {}).get(os.path.basename(args.file))
        if entry is not None:
            match = entry.get("events") == events and entry.get("bytes") == len(buf)
            result["manifest_ok"] = match
            ok = ok and match

    if args.check_jsonl:
        result.update(check_jsonl(buf, framing, args.chunk, args.check_jsonl))
        ok = ok and result["jsonl_mismatches"] == 0

    print(json.dumps(result))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
