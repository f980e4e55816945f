#!/usr/bin/env python3
"""Regenerate the seed corpora of tests/fuzz from the real captures.

    tests/fuzz/make_corpus.py [--captures tests/captures] [--out tests/fuzz/corpus]

Plain Python 3 only (a minimal msgpack walker and packer below); the captures
are only read. Writes, per target:
  corpus/frame_decoder/  whole small .raw captures of both framings, each
                         behind the target's 2-byte [mode][seed] header, and
                         hand-made stream edge cases
  corpus/event_decoder/  single frames split out of the captures, their
                         bodies (tag "\\n\\n" msgpack), JSON lines, hand-made
                         bodies (old padded tag, ext 78/79, odd keys...)
  corpus/master_config/  salt-master config files
  corpus/spool_recovery/ spool directories (ledger + segments, docs/spool.md):
                         valid, torn tail, bad CRC, ids going back, ledger cases
Files named crash-* are regression inputs for fixed bugs: never deleted.
"""

import argparse
import json
import os
import pathlib
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_CAPTURES = HERE.parent / "captures"  # tests/captures

MAX_WHOLE_CAPTURE = 16 * 1024   # whole .raw seeds for frame_decoder
MAX_FRAME_SEED = 8 * 1024       # single frames / bodies for event_decoder
FRAMES_PER_CAPTURE = {"plain": 3, "len32": 1}  # the frame format is the same in both
JSON_LINES_PER_CAPTURE = 1


# --- minimal msgpack ---------------------------------------------------------

def _be(buf, off, n):
    if off + n > len(buf):
        raise ValueError("truncated")
    return int.from_bytes(buf[off:off + n], "big")


def header(buf, off):
    """(header_len, payload_len, children) of the object at buf[off]."""
    b = buf[off]
    if b <= 0x7F or b >= 0xE0 or b in (0xC0, 0xC2, 0xC3):
        return 1, 0, 0
    if 0x80 <= b <= 0x8F:
        return 1, 0, 2 * (b & 0x0F)
    if 0x90 <= b <= 0x9F:
        return 1, 0, b & 0x0F
    if 0xA0 <= b <= 0xBF:
        return 1, b & 0x1F, 0
    fixed = {0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: 1, 0xD1: 2,
             0xD2: 4, 0xD3: 8, 0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17}
    if b in fixed:
        return 1, fixed[b], 0
    blob = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}
    if b in blob:
        n = blob[b]
        return 1 + n, _be(buf, off + 1, n), 0
    ext = {0xC7: 1, 0xC8: 2, 0xC9: 4}
    if b in ext:
        n = ext[b]
        return 2 + n, _be(buf, off + 1, n), 0
    if b in (0xDC, 0xDD):
        n = 2 if b == 0xDC else 4
        return 1 + n, 0, _be(buf, off + 1, n)
    if b in (0xDE, 0xDF):
        n = 2 if b == 0xDE else 4
        return 1 + n, 0, 2 * _be(buf, off + 1, n)
    raise ValueError("byte 0xc1")


def skip(buf, off):
    """Offset just past the msgpack object at buf[off]."""
    todo = 1
    while todo:
        if off >= len(buf):
            raise ValueError("truncated")
        h, payload, children = header(buf, off)
        off += h + payload
        todo += children - 1
    if off > len(buf):
        raise ValueError("truncated")
    return off


def blob(buf, off):
    """Payload of the str/bin at buf[off], or None."""
    b = buf[off]
    if 0xA0 <= b <= 0xBF or b in (0xC4, 0xC5, 0xC6, 0xD9, 0xDA, 0xDB):
        h, n, _ = header(buf, off)
        return bytes(buf[off + h:off + h + n])
    return None


def frame_body(frame):
    """The "body" value of a {"head", "body"} frame, or None."""
    h, _, children = header(frame, 0)
    off = h
    for _ in range(children // 2):
        key = blob(frame, off)
        off = skip(frame, off)
        if key == b"body":
            return blob(frame, off)
        off = skip(frame, off)
    return None


def split_frames(raw):
    """Frames of a capture, and its framing ("plain" or "len32")."""
    frames = []
    if raw[:1] == b"\x00":
        off = 0
        while off + 4 <= len(raw):
            n = struct.unpack(">I", raw[off:off + 4])[0]
            frames.append(bytes(raw[off + 4:off + 4 + n]))
            off += 4 + n
        return frames, "len32"
    off = 0
    while off < len(raw):
        end = skip(raw, off)
        frames.append(bytes(raw[off:end]))
        off = end
    return frames, "plain"


class Ext:
    def __init__(self, code, data):
        self.code, self.data = code, data


class Map(list):
    """A msgpack map as (key, value) pairs: keys Python cannot tell apart (1, True)."""


def pack(o):
    """A small msgpack packer (enough for hand-made seeds)."""
    if o is None:
        return b"\xc0"
    if o is True:
        return b"\xc3"
    if o is False:
        return b"\xc2"
    if isinstance(o, int):
        if 0 <= o <= 0x7F:
            return bytes([o])
        if -32 <= o < 0:
            return struct.pack("b", o)
        if o >= 0:
            return b"\xcf" + struct.pack(">Q", o)
        return b"\xd3" + struct.pack(">q", o)
    if isinstance(o, float):
        return b"\xcb" + struct.pack(">d", o)
    if isinstance(o, str):
        o = o.encode("utf-8", "surrogateescape")
        return (bytes([0xA0 | len(o)]) if len(o) < 32 else b"\xd9" + bytes([len(o)]) if len(o) < 256
                else b"\xdb" + struct.pack(">I", len(o))) + o
    if isinstance(o, (bytes, bytearray)):
        return b"\xc4" + bytes([len(o)]) + bytes(o) if len(o) < 256 else b"\xc6" + struct.pack(">I", len(o)) + bytes(o)
    if isinstance(o, Ext):
        return b"\xc7" + bytes([len(o.data)]) + struct.pack("b", o.code) + o.data
    if isinstance(o, (list, tuple)) and not isinstance(o, Map):
        return (bytes([0x90 | len(o)]) if len(o) < 16 else b"\xdc" + struct.pack(">H", len(o))) + b"".join(map(pack, o))
    if isinstance(o, (dict, Map)):
        items = b"".join(pack(k) + pack(v) for k, v in (o.items() if isinstance(o, dict) else o))
        return (bytes([0x80 | len(o)]) if len(o) < 16 else b"\xde" + struct.pack(">H", len(o))) + items
    raise TypeError(type(o))


def frame_of(body, body_first=False):
    """A plain frame {"head": {}, "body": bin(body)} as Salt 3006 writes it."""
    b = pack(bytes(body))
    if body_first:
        return b"\x82\xa4body" + b + b"\xa4head\x80"
    return b"\x82\xa4head\x80\xa4body" + b


def len32(frame):
    return struct.pack(">I", len(frame)) + frame


# --- corpora -----------------------------------------------------------------

def write(dirpath, name, data, written):
    path = dirpath / name
    path.write_bytes(data)
    written.append(path)


def frame_decoder_corpus(captures, out, written):
    d = out / "frame_decoder"
    # [mode][seed]: split 0-3 in bits 0-1, limits profile in bits 2-3, reconnect bit 4.
    modes = [(0x00, 0), (0x01, 7), (0x02, 40), (0x03, 0), (0x04, 0), (0x12, 128), (0x08, 3), (0x0D, 17)]
    i = 0
    for raw_path in sorted(captures.glob("*/*.raw")):
        raw = raw_path.read_bytes()
        if not raw or len(raw) > MAX_WHOLE_CAPTURE:
            continue
        mode, seed = modes[i % len(modes)]
        i += 1
        write(d, f"seed-{raw_path.parent.name}-{raw_path.stem}", bytes([mode, seed]) + raw, written)

    body = b"salt/job/20261129000000000001/new\n\n" + pack({"jid": "20261129000000000001", "fun": "test.ping",
                                                           "_stamp": "2026-11-29T00:00:00.000000"})
    plain = frame_of(body)
    framed = len32(plain)
    big_bin = b"\x82\xa4head\x80\xa4body\xc6" + struct.pack(">I", 2 << 20) + b"x" * 64
    zmtp = b"\xff\x00\x00\x00\x00\x00\x00\x00\x01\x7f\x03\x00NULL" + b"\x00" * 16
    edge = {
        "edge-empty": b"",
        "edge-garbage-prefix-plain": b"\x00\x00" + b"\x00junk\xa4he" + plain * 2,
        "edge-garbage-prefix-len32": b"\x03\x00" + b"\x01\x02\x03junk" + framed * 2,
        "edge-garbage-mid-plain": b"\x02\x09" + plain + b"\xc1\xc1\xa4head" + plain,
        "edge-garbage-mid-len32": b"\x01\x05" + framed + b"\x00\x00\x00\x07\x01" + framed,
        "edge-truncated-plain": b"\x00\x00" + plain + plain[:-5],
        "edge-truncated-len32": b"\x00\x00" + framed + framed[:-5],
        "edge-truncated-header-len32": b"\x00\x00" + framed + b"\x00\x00",
        "edge-oversize-len32-header": b"\x00\x00" + b"\x00\x20\x00\x00\x82\xa4head" + b"\x00" * 40 + framed,
        "edge-oversize-len32-max": b"\x00\x00" + b"\xff\xff\xff\xff\x82" + b"\x00" * 16,
        "edge-oversize-len32-small-limit": b"\x04\x00" + framed * 3,
        "edge-oversize-plain-bin32": b"\x00\x00" + big_bin + plain,
        "edge-oversize-plain-small-limit": b"\x09\x00" + plain + plain + plain,
        "edge-zero-length-len32": b"\x00\x00" + b"\x00\x00\x00\x00" + framed,
        "edge-zmtp-greeting": b"\x00\x00" + zmtp + plain,
        "edge-body-first-plain": b"\x00\x00" + frame_of(body, body_first=True) * 2,
        "edge-body-first-len32": b"\x00\x00" + len32(frame_of(body, body_first=True)) * 2,
        "edge-depth-bomb-plain": b"\x00\x00" + b"\x81\xa4head" + b"\x91" * 400 + b"\xc0" + plain,
        "edge-count-bomb-len32": b"\x00\x00" + len32(b"\x81\xa4head\xdd\x00\xff\xff\xff" + b"\xc0" * 8) + framed,
        "edge-reconnect-mid-frame": b"\x10\x80" + plain + plain,
        "edge-bad-frame-ok-framing": b"\x00\x00" + len32(b"\x81\xa4head\x80") + len32(b"\x81\xa4body\x01") + framed,
    }
    for name, data in edge.items():
        write(d, name, data, written)


def event_decoder_corpus(captures, out, written):
    d = out / "event_decoder"
    seen = set()
    for raw_path in sorted(captures.glob("*/*.raw")):
        raw = raw_path.read_bytes()
        if not raw:
            continue
        frames, framing = split_frames(raw)
        picked = [f for f in frames if len(f) <= MAX_FRAME_SEED]
        # Spread the picks over the capture: middle, first, last.
        idx = list(dict.fromkeys([len(picked) // 2, 0, len(picked) - 1])) if picked else []
        for k in idx[:FRAMES_PER_CAPTURE[framing]]:
            f = picked[k]
            if f in seen:
                continue
            seen.add(f)
            stem = f"{raw_path.parent.name}-{raw_path.stem}-{k:03d}"
            write(d, f"frame-{stem}", f, written)
            if framing == "plain":  # bodies are the same in both framings: take them once
                body = frame_body(f)
                if body is not None:
                    write(d, f"body-{stem}", body, written)
    for jsonl in sorted(captures.glob("salt-3006.25/*.jsonl")):
        lines = [ln for ln in jsonl.read_bytes().splitlines() if ln.strip() and len(ln) <= MAX_FRAME_SEED]
        for n, line in enumerate(sorted(lines, key=len)[:JSON_LINES_PER_CAPTURE]):
            write(d, f"json-{jsonl.stem}-{n}", line, written)

    old_tag = b"salt/job/1234|||||||"  # pre-2015.5: 20 chars padded with '|', no separator
    bodies = {
        "hand-old-padded-tag": old_tag + pack({"jid": "1234", "fun": "test.ping"}),
        "hand-ext78-datetime": b"t\n\n" + pack({"_stamp": Ext(78, b"20261129T00:00:00.123456")}),
        "hand-ext79-constant": b"t\n\n" + pack({"c": Ext(79, pack(["SALT_CONSTANT", 1]))}),
        "hand-ext79-nested": b"t\n\n" + pack([Ext(79, pack(Ext(79, pack(Ext(79, pack([1]))))))]),
        "hand-ext-other": b"t\n\n" + pack({"x": Ext(5, b"\x00\x01\x02")}),
        "hand-nonstring-keys": b"t\n\n" + pack(Map([(1, "a"), (-3, "b"), (None, "c"), (True, "d"), (1.5, "e"), ((1, 2), "f")])),
        "hand-bin-keys": b"t\n\n" + b"\x82\xc4\x02\xff\xfe\x01\xc4\x03abc\x02",
        "hand-invalid-utf8": b"t\xff\n\n" + pack({"s": "\udcff\udcfeok", "tag": b"\xed\xa0\x80"}),
        "hand-nan-inf": b"t\n\n" + pack([float("nan"), float("inf"), -float("inf"), -0.0, 1e308]) +
                        b"\xca\x7f\xc0\x00\x00",
        "hand-int-edges": b"t\n\n" + pack([2 ** 64 - 1, -(2 ** 63), 2 ** 63, -1, 0]),
        "hand-trailing-bytes": b"t\n\n\x01\x02\x03",
        "hand-empty-data": b"tag-only\n\n",
        "hand-bytes-b64-key": b"t\n\n" + pack({"__bytes_b64__": "not base64!"}),
        "hand-frame-str-body": b"\x82\xa4head\x80\xa4body" + pack("salt/auth\n\n" + "\x80"),
        "hand-frame-no-body": b"\x81\xa4head\x80",
        "hand-frame-int-body": b"\x81\xa4body\x05",
        "hand-frame-not-map": b"\x93\x01\x02\x03",
        "hand-frame-count-bomb": b"\x81\xa4body\xc4\x07t\n\n\xdd\xff\xff",
        "hand-json-deep": b'{"tag":"t","data":' + b"[" * 300 + b"]" * 300 + b"}",
        "hand-json-nan": b'{"tag":"a\\n\\nb","data":{"x":NaN,"y":-Infinity,"b":{"__bytes_b64__":"aGk="}}}',
        "hand-json-escapes": b'{"tag":"t\\u0000\\ud83d\\ude80","data":["\\u00e9",18446744073709551615,-9223372036854775808,1e400]}',
        "hand-json-float": b'{"tag":"t","data":[0.1,2.2250738585072011e-308,5e-324,1.7976931348623157e308,0.30000000000000004]}',
    }
    for name, data in bodies.items():
        write(d, name, data, written)


MASTER_CONFIGS = {
    "default-empty": "",
    "comments-only": "# salt master\n#interface: 0.0.0.0\n",
    "tcp": "ipc_mode: tcp\ntcp_master_pub_port: 4520\ntcp_master_pull_port: 4521\n",
    "root-dir": "root_dir: /srv/salt-root\nsock_dir: /var/run/salt/master\ncachedir: /var/cache/salt/master\n",
    "root-dir-trailing-slash": "root_dir: /srv/root//\nsock_dir: /srv/root/run\n",
    "long-sock-dir": "sock_dir: /" + "x" * 120 + "\ncachedir: /c\n",
    "id-user": "id: master-1\nuser: salt\n",
    "include-self": "include: '*'\nid: included\n",
    "include-list": "include:\n  - 'master.d/*.conf'\n  - /nonexistent/*.conf\ndefault_include: 'extra/*.conf'\n",
    "bad-port": "tcp_master_pub_port: 70000\n",
    "bad-type": "sock_dir: [a, b]\n",
    "not-a-map": "- a\n- b\n",
    "invalid-yaml": "sock_dir: [unclosed\n",
    "anchors": "base: &b /var/run/x\nsock_dir: *b\ncachedir: *b\n",
    "tabs-and-unicode": "id: \"m\\u00e9\\t1\"\nuser: ' root '\n",
    "null-values": "sock_dir: ~\ncachedir:\nipc_mode: null\n",
}


def master_config_corpus(out, written):
    d = out / "master_config"
    for name, text in MASTER_CONFIGS.items():
        write(d, name, text.encode(), written)


# --- spool_recovery ----------------------------------------------------------

def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _CRC32C[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def spool_record(rid, cls, payload):
    """One segment record: magic, length, id, class, reserved, CRC32C(bytes 4..19 + payload), payload."""
    body = struct.pack(">IQB3x", len(payload), rid, cls)
    return b"STP1" + body + struct.pack(">I", crc32c(body + payload)) + payload


def spool_ledger(acked_id, next_id):
    head = b"STPL" + struct.pack(">IQQ", 1, acked_id, next_id)
    return head + struct.pack(">I", crc32c(head)) + bytes(36)


def spool_input(flags, ledger, seg1, seg2=b"", seg2_name=0):
    """The target's input: [flags][ledger len][seg1 len BE16][seg2 name] ledger seg1 seg2
    (flags: tests/fuzz/spool_recovery_fuzz.cpp)."""
    return bytes([flags, len(ledger)]) + struct.pack(">H", len(seg1)) + bytes([seg2_name]) + ledger + seg1 + seg2


def spool_recovery_corpus(out, written):
    d = out / "spool_recovery"
    doc = lambda i: b'{"create":{"_index":"salt-jobs","_id":"%d"}}\n{"jid":"%d"}\n' % (i, i)
    recs = {i: spool_record(i, i % 5, doc(i)) for i in range(1, 9)}
    run = lambda *ids: b"".join(recs[i] for i in ids)
    bad_crc = bytearray(recs[2])
    bad_crc[30] ^= 0x01
    long_len = bytearray(recs[2])
    long_len[5] = 0x01
    seeds = {
        "valid-one-segment": spool_input(0x01, spool_ledger(1, 4), run(1, 2, 3)),
        "valid-two-segments": spool_input(0x03, spool_ledger(0, 5), run(1, 2), run(3, 4), 1),
        "valid-small-segments-append": spool_input(0x29, spool_ledger(0, 4), run(1, 2, 3)),
        "torn-tail": spool_input(0x01, spool_ledger(0, 4), run(1, 2) + recs[3][:-7]),
        "torn-header": spool_input(0x01, spool_ledger(0, 3), run(1) + recs[2][:11]),
        "torn-zeroed-new-segment": spool_input(0x03, spool_ledger(0, 3), run(1, 2), bytes(48), 1),
        "bad-crc-mid-segment": spool_input(0x01, spool_ledger(0, 4), recs[1] + bytes(bad_crc) + recs[3]),
        "bad-length-mid-segment": spool_input(0x01, spool_ledger(0, 4), recs[1] + bytes(long_len) + recs[3]),
        "bad-tail-older-segment": spool_input(0x03, spool_ledger(0, 5), recs[1] + bytes(bad_crc), run(3, 4), 1),
        "ids-not-increasing": spool_input(0x01, spool_ledger(0, 5), run(1, 2, 3, 2, 4)),
        "ids-back-across-segments": spool_input(0x03, spool_ledger(0, 6), run(3, 4, 5), run(1, 2), 7),
        "ledger-ahead": spool_input(0x01, spool_ledger(10, 11), run(1, 2)),
        "ledger-behind": spool_input(0x01, spool_ledger(1, 2), run(5, 6)),
        "ledger-missing": spool_input(0x00, b"", run(1, 2, 3)),
        "ledger-bad-crc": spool_input(0x01, spool_ledger(1, 4)[:60] + b"\xff\xff\xff\xff", run(1, 2, 3)),
        "ledger-short": spool_input(0x01, spool_ledger(1, 4)[:40], run(1, 2, 3)),
        "fully-acked": spool_input(0x07, spool_ledger(8, 9), run(1, 2, 3), run(4, 5), 2),
        "empty": spool_input(0x00, b"", b""),
        # bits 6-7: the target recomputes the CRCs, so mutations get past them
        "crc-fixed-valid": spool_input(0xC3, spool_ledger(1, 5), run(1, 2), run(3, 4), 1),
        "crc-fixed-append-small-segments": spool_input(0xD9, spool_ledger(0, 4), run(1, 2, 3)),
    }
    for name, data in seeds.items():
        write(d, name, data, written)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--captures", type=pathlib.Path, default=DEFAULT_CAPTURES)
    ap.add_argument("--out", type=pathlib.Path, default=HERE / "corpus")
    args = ap.parse_args()
    if not any(args.captures.glob("*/*.raw")):
        sys.exit(f"no captures under {args.captures}")
    written = []
    for target in ("frame_decoder", "event_decoder", "master_config", "spool_recovery"):
        d = args.out / target
        d.mkdir(parents=True, exist_ok=True)
        for f in d.iterdir():  # regenerate seeds; keep crash-* regression inputs
            if f.is_file() and not f.name.startswith("crash-"):
                f.unlink()
    frame_decoder_corpus(args.captures, args.out, written)
    event_decoder_corpus(args.captures, args.out, written)
    master_config_corpus(args.out, written)
    spool_recovery_corpus(args.out, written)
    total = sum(p.stat().st_size for p in written)
    print(f"{len(written)} seed files, {total} bytes, in {args.out}")


if __name__ == "__main__":
    main()
