#!/usr/bin/env python3
"""A bare Python reader of a master event-bus stream: the baseline of
`salttap replay --output events` in bench/run-replay-bench.

What any Python tool would do at the least: the C msgpack extension
(msgpack.Unpacker over the bytes for plain framing, msgpack.unpackb per frame
after the 4-byte length for len32, framing detected from the first byte as
salttap does), the body split at the first b"\\n\\n", the data unpacked, and one
json.dumps line per event {"tag": ..., "data": ...} written to stdout. bin and
ext values become {"__bytes_b64__": ...} / {"__ext__": ...}, invalid UTF-8 is
replaced, as salttap prints them (not byte-identical to salttap: floats and
escapes differ; the work is the same).

Run with a Python that has the msgpack C extension (Salt's virtualenv):
    .cache/venv/salt-3006.25/bin/python bench/bare_reader.py STREAM > /dev/null
"""

import base64
import json
import struct
import sys

import msgpack

CHUNK = 1 << 20


def default(o):
    if isinstance(o, (bytes, bytearray)):
        return {"__bytes_b64__": base64.b64encode(o).decode()}
    if isinstance(o, msgpack.ExtType):
        return {"__ext__": {"type": o.code, "b64": base64.b64encode(o.data).decode()}}
    raise TypeError(type(o).__name__)


def frames_plain(buf):
    unpacker = msgpack.Unpacker(raw=False, unicode_errors="replace", strict_map_key=False, max_buffer_size=128 << 20)
    for off in range(0, len(buf), CHUNK):
        unpacker.feed(buf[off : off + CHUNK])
        yield from unpacker


def frames_len32(buf):
    pos, n = 0, len(buf)
    unpack_from, unpackb = struct.unpack_from, msgpack.unpackb
    while pos + 4 <= n:
        (size,) = unpack_from(">I", buf, pos)
        pos += 4
        yield unpackb(buf[pos : pos + size], raw=False, unicode_errors="replace", strict_map_key=False)
        pos += size


def main():
    with open(sys.argv[1], "rb") as f:
        buf = f.read()
    frames = frames_len32(buf) if buf[:1] == b"\x00" else frames_plain(buf)
    out = sys.stdout
    dumps, unpackb = json.dumps, msgpack.unpackb
    for frame in frames:
        body = frame["body"]
        if isinstance(body, str):
            body = body.encode("utf-8", "surrogateescape")
        sep = body.find(b"\n\n")
        tag = body[:sep].decode("utf-8", "replace")
        data = unpackb(body[sep + 2 :], raw=False, unicode_errors="replace", strict_map_key=False)
        out.write(dumps({"tag": tag, "data": data}, ensure_ascii=False, separators=(",", ":"), default=default))
        out.write("\n")


if __name__ == "__main__":
    main()
