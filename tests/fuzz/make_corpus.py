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
  corpus/json_transcoder/ the frames, bodies and hand-made bodies of event_decoder,
                         and hand-made ones for the transcoder (odd keys inside
                         keys, escapes, constants as keys, tiny-limit edges)
  corpus/master_config/  salt-master config files
  corpus/spool_recovery/ spool directories (ledger + segments, docs/spool.md):
                         valid, torn tail, bad CRC, ids going back, ledger cases
  corpus/bulk_result/    hand-made `_bulk` answers: 429/5xx items, whole-request
                         errors, truncated and malformed bodies, odd reasons
  corpus/event_from_json/ lines of the .jsonl captures and hand-made lines
                         (deep nesting, bad base64, invalid UTF-8, huge numbers,
                         NaN)
  corpus/server_info/    the `GET /` banners of tests/unit/indexer/server_info_test.cpp
                         and hand-made answers
  corpus/job_cache_file/ the files of the captured job caches (<captures>/*/jobcache),
                         each behind the target's [kind] byte, and hand-made
                         ones (cut, trailing bytes, a bare pre-2018.3 return,
                         runner and minion-return loads, syndic lists)
  corpus/tap_journal/    tap journal segments (docs/tap-journal.md): frames of
                         the captures as records, torn tails, bad CRCs, odd
                         kinds and lengths
  corpus/search_response/ answers to the searches of `salttap jobs` / `minions`
                         (service/search_response.h): hits, minion pages, engine
                         errors, shard failures, odd shapes
  corpus/web_request/    the job browser's requests (target, Host, Origin, Sec-Fetch-Site):
                         %FF and %0A in parameters and paths, rebinding hosts, origins
  corpus/reconcile_state/ `run`'s coverage record (service/reconcile_state.h) as
                         written (with open jobs), and damaged: cut, extra lines, signs, CRLF
Files named crash-* are regression inputs for fixed bugs, rec-* answers recorded
from the real engines by record_bulk_seeds.py: both are never deleted.
"""

import argparse
import json
import os
import pathlib
import re
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent
DEFAULT_CAPTURES = HERE.parent / "captures"  # tests/captures

MAX_WHOLE_CAPTURE = 16 * 1024   # whole .raw seeds for frame_decoder
MAX_FRAME_SEED = 8 * 1024       # single frames / bodies for event_decoder
FRAMES_PER_CAPTURE = {"plain": 3, "len32": 1}  # the frame format is the same in both
JSON_LINES_PER_CAPTURE = 1
MAX_JSON_LINE_SEED = 16 * 1024  # event_from_json: the run-fuzzers.sh max_len
JSON_EVENT_LINES_PER_CAPTURE = 2


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


def write_all(dirpath, seeds, written, prefix=""):
    """Every {name: bytes} seed, as <prefix><name>."""
    for name, data in seeds.items():
        write(dirpath, prefix + name, data, written)


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
    write_all(d, edge, written)


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
        # a JSON line cannot carry this tag: event_body_from_json refuses it
        "hand-old-padded-tag-newline": b"salt/job/1234567\n|||" + pack({"jid": "1234567"}),
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
    write_all(d, bodies, written)


def json_transcoder_corpus(out, written):
    d = out / "json_transcoder"
    for f in sorted((out / "event_decoder").iterdir()):
        if f.name.startswith(("frame-", "body-")) or (f.name.startswith("hand-") and "-json-" not in f.name):
            write(d, f.name, f.read_bytes(), written)
    const = Ext(79, pack(["STATE_RET", 1]))
    bodies = {
        "hand-keys-in-keys": b"t\n\n" + pack(Map([(Map([(None, 1), ((1, 2), 2)]), "a"), ((Map([(1, 2)]),), "b")])),
        "hand-ext-keys": b"t\n\n" + pack(Map([(const, 1), (Ext(78, b"20261129T00:00:00.1"), 2), (Ext(3, b""), 3)])),
        "hand-float-keys": b"t\n\n" + pack(Map([(float("nan"), 1), (-0.0, 2), (1e21, 3), (0.1, 4)])) +
                           b"\x81\xca\x3f\xc0\x00\x00\x01",
        "hand-escapes": b"t\"\\\x01\n\n" + pack({"s": "\x00\x08\t\n\x0b\x0c\r\x1f\"\\/\x7f\u00e9\U0001f600"}),
        "hand-constant-as-value-and-key": b"t\n\n" + pack([const, Map([(const, const)])]),
        "hand-wide-tiny-limits": b"t\n\n" + pack(list(range(9))) ,
        "hand-deep-tiny-limits": b"t\n\n" + pack([[[[[1]]]]]),
    }
    for name, data in bodies.items():
        write(d, name, data, written)
        write(d, name + "-frame", frame_of(data), written)


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
    write_all(d, seeds, written)


# --- tap_journal -------------------------------------------------------------

def journal_record(kind, payload):
    """One record: magic, length, kind, reserved, CRC32C(bytes 4..11 + payload), payload."""
    body = struct.pack(">IB3x", len(payload), kind)
    return b"STJ1" + body + struct.pack(">I", crc32c(body + payload)) + payload


def journal_input(flags, seg1, seg2=b""):
    """The target's input: [flags][seg1 len BE16] seg1 seg2 (flags: tests/fuzz/tap_journal_fuzz.cpp)."""
    return bytes([flags]) + struct.pack(">H", len(seg1)) + seg1 + seg2


def tap_journal_corpus(captures, out, written):
    d = out / "tap_journal"
    raw = (captures / "salt-3006.25" / "test_ping.raw").read_bytes()
    frames = split_frames(raw)[0][:6]
    recs = [journal_record(1, f) for f in frames]
    body = frame_body(frames[0])
    bad_crc = bytearray(recs[1])
    bad_crc[20] ^= 0x01
    long_len = bytearray(recs[1])
    long_len[4] = 0x7F
    odd_kind = bytearray(recs[1])
    odd_kind[8] = 9
    seeds = {
        "frames-one-segment": journal_input(0x00, b"".join(recs[:4])),
        "frames-two-segments": journal_input(0x01, b"".join(recs[:3]), b"".join(recs[3:])),
        "body-record": journal_input(0x00, journal_record(2, body) + recs[0]),
        "torn-tail": journal_input(0x00, recs[0] + recs[1][:-9]),
        "torn-header": journal_input(0x01, recs[0] + recs[1][:7], recs[2]),
        "bad-crc-mid-segment": journal_input(0x01, recs[0] + bytes(bad_crc) + recs[2], recs[3]),
        "bad-length": journal_input(0x00, recs[0] + bytes(long_len) + recs[2]),
        "odd-kind": journal_input(0x00, recs[0] + bytes(odd_kind)),
        "not-a-frame": journal_input(0x00, journal_record(1, b"\x93\x01\x02\x03") + journal_record(2, b"no tag")),
        "zeroes": journal_input(0x01, bytes(64), recs[0]),
        "empty": journal_input(0x00, b""),
        "append-after-leftover": journal_input(0x04, recs[0]),
        # bit 1: the target recomputes the CRCs, so mutations get past them
        "crc-fixed-frames": journal_input(0x03, b"".join(recs[:2]), b"".join(recs[2:4])),
    }
    write_all(d, seeds, written)


# --- bulk_result -------------------------------------------------------------

def bulk_input(status, sent, body):
    """bulk_result's input: [HTTP status BE16][documents sent][body] (bulk_result_fuzz.cpp)."""
    return struct.pack(">HB", status, sent) + (body.encode() if isinstance(body, str) else body)


def bulk_items(*items):
    return json.dumps({"errors": True, "items": list(items)}, separators=(",", ":"), ensure_ascii=False)


def bulk_item(status, error=None, action="create"):
    item = {"status": status}
    if error is not None:
        item["error"] = error
    return {action: item}


def bulk_result_corpus(out, written):
    d = out / "bulk_result"
    err = lambda t, r, **kw: {"type": t, "reason": r, **kw}
    rejected = err("es_rejected_execution_exception",
                   "rejected execution of coordinating operation [coordinating_and_primary_bytes=0, "
                   "replica_bytes=0, all_bytes=0, coordinating_operation_bytes=3171, max_coordinating_and_"
                   "primary_bytes=107374182]")
    long_reason = "failed to parse field [return] — " + "é" * 300  # cut at 500 bytes, inside a character
    ok2 = bulk_items(bulk_item(201), bulk_item(201))
    seeds = {
        "items-429-and-created": bulk_input(200, 3, bulk_items(bulk_item(201), bulk_item(429, rejected),
                                                               bulk_item(201))),
        "items-all-429": bulk_input(200, 2, bulk_items(bulk_item(429, rejected), bulk_item(429, rejected))),
        "items-503-unavailable-shards": bulk_input(200, 2, bulk_items(
            bulk_item(503, err("unavailable_shards_exception", "[salt-jobs-2026.11.29][0] primary shard is not "
                               "active Timeout: [1m]")), bulk_item(200, action="index"))),
        "items-500-caused-by": bulk_input(200, 1, bulk_items(bulk_item(500, err(
            "exception", "java.lang.OutOfMemoryError", caused_by=err("out_of_memory_error", "Java heap space"))))),
        "items-error-string": bulk_input(200, 2, bulk_items(bulk_item(400, "mapper_parsing_exception\n  at line 1"),
                                                            bulk_item(429, "queue full"))),
        "items-error-without-type": bulk_input(200, 2, bulk_items(bulk_item(400, {"reason": "no type"}),
                                                                  bulk_item(400, {}))),
        "items-no-error-object": bulk_input(200, 3, bulk_items(bulk_item(400), bulk_item(503), bulk_item(409))),
        "items-caused-by-not-object": bulk_input(200, 1, bulk_items(bulk_item(400, err("x", "y", caused_by="z")))),
        "items-long-multibyte-reason": bulk_input(200, 1, bulk_items(bulk_item(400, err("mapper_parsing_exception",
                                                                                        long_reason)))),
        "items-reason-newlines-tabs": bulk_input(200, 1, bulk_items(bulk_item(400, err(
            "json_parse_exception", "Unexpected character\n at [Source: (byte[])\r\n\tline: 1]")))),
        "items-odd-statuses": bulk_input(200, 6, bulk_items(bulk_item(0), bulk_item(-1), bulk_item(100),
                                                            bulk_item(299), bulk_item(300), bulk_item(2147483647))),
        "items-status-not-int": bulk_input(200, 4, '{"items":[{"create":{"status":"201"}},{"create":{"status":201.0}},'
                                                   '{"create":{"status":4294967297}},{"create":{"status":null}}]}'),
        "items-malformed-wrappers": bulk_input(200, 5, '{"items":[1,[],{},{"create":{"status":201},"index":{}},'
                                                       '{"create":[201]}]}'),
        "items-invalid-utf8-reason": bulk_input(200, 1, b'{"items":[{"create":{"status":400,"error":{"type":"t\xff",'
                                                        b'"reason":"bad \xc3\x28 bytes"}}}]}'),
        "items-escaped-nul": bulk_input(200, 1, '{"items":[{"create":{"status":400,"error":{"type":"a\\u0000b",'
                                                '"reason":"c\\u0000d"}}}]}'),
        "items-fewer-than-sent": bulk_input(200, 3, ok2),
        "items-more-than-sent": bulk_input(200, 1, ok2),
        "items-none-sent": bulk_input(200, 0, '{"took":0,"errors":false,"items":[]}'),
        "items-not-array": bulk_input(200, 1, '{"errors":false,"items":{"create":{"status":201}}}'),
        "items-missing": bulk_input(200, 1, '{"took":1,"errors":false}'),
        "truncated-mid-item": bulk_input(200, 2, ok2[:-12]),
        "truncated-mid-string": bulk_input(200, 1, '{"errors":true,"items":[{"create":{"status":400,"error":{"type":"ma'),
        "trailing-garbage": bulk_input(200, 2, ok2 + "\n{}"),
        "body-not-json": bulk_input(200, 1, "<html><body><h1>502 Bad Gateway</h1></body></html>"),
        "body-empty-200": bulk_input(200, 1, ""),
        "body-deep-nesting": bulk_input(200, 1, '{"items":' + "[" * 200000 + "]" * 200000 + "}"),
        "status-no-response": bulk_input(0, 3, ""),
        "status-401-security": bulk_input(401, 2, '{"error":{"root_cause":[{"type":"security_exception","reason":'
                                                  '"missing authentication credentials for REST request [/_bulk]",'
                                                  '"header":{"WWW-Authenticate":"Basic realm=\\"security\\""}}],'
                                                  '"type":"security_exception","reason":"missing authentication '
                                                  'credentials for REST request [/_bulk]"},"status":401}'),
        "status-403-action": bulk_input(403, 1, '{"error":{"type":"security_exception","reason":"action '
                                                '[indices:data/write/bulk] is unauthorized for user [salttap]"},'
                                                '"status":403}'),
        "status-404-no-handler": bulk_input(404, 1, '{"error":"no handler found for uri [/_bulkx] and method [POST]"}'),
        "status-408-timeout": bulk_input(408, 2, ""),
        "status-413-proxy-html": bulk_input(413, 4, "<html><head><title>413 Request Entity Too Large</title></head>"),
        "status-429-circuit-breaker": bulk_input(429, 2, '{"error":{"type":"circuit_breaking_exception","reason":'
                                                         '"[parent] Data too large","bytes_wanted":1,"bytes_limit":0,'
                                                         '"durability":"TRANSIENT"},"status":429}'),
        "status-500-html": bulk_input(500, 1, "<html>Internal Server Error</html>"),
        "status-503-json": bulk_input(503, 2, '{"error":{"type":"cluster_block_exception","reason":"blocked by: '
                                              '[SERVICE_UNAVAILABLE/1/state not recovered / initialized];"},"status":503}'),
        "status-406-content-type": bulk_input(406, 1, '{"error":"Content-Type header [text/plain] is not supported",'
                                                      '"status":406}'),
        "status-400-error-array": bulk_input(400, 1, '{"error":[1,2],"status":400}'),
        "status-400-long-body": bulk_input(400, 1, "x" * 498 + "日本語\n"),
        "status-302-redirect": bulk_input(302, 1, ""),
        "status-max": bulk_input(65535, 1, "{}"),
    }
    write_all(d, seeds, written)


# --- event_from_json ---------------------------------------------------------

def event_from_json_corpus(captures, out, written):
    d = out / "event_from_json"
    seen = set()
    for jsonl in sorted(captures.glob("*/*.jsonl")):
        lines = [ln for ln in jsonl.read_bytes().splitlines() if ln.strip() and len(ln) <= MAX_JSON_LINE_SEED]
        # Spread the picks over the capture: first, then the longest (the most nested data).
        picks = list(dict.fromkeys([0, max(range(len(lines)), key=lambda i: len(lines[i]))])) if lines else []
        for k in picks[:JSON_EVENT_LINES_PER_CAPTURE]:
            if lines[k] in seen:
                continue
            seen.add(lines[k])
            write(d, f"{jsonl.parent.name}-{jsonl.stem}-{k:03d}", lines[k], written)

    line = lambda data, tag=b'"salt/job/20261129000000000001/ret/minion-a"': b'{"tag":' + tag + b',"data":' + data + b"}"
    deep = lambda n, o, c: line(o * n + c * n)
    edge = {
        "deep-arrays-200000": deep(200000, b"[", b"]"),
        "deep-arrays-1024": deep(1024, b"[", b"]"),
        "deep-arrays-1025": deep(1025, b"[", b"]"),
        "deep-maps-300": line(b'{"a":' * 300 + b"1" + b"}" * 300),
        "deep-bytes-objects": line(b'{"x":' * 50 + b'{"__bytes_b64__":"AAE="}' + b"}" * 50),
        "b64-valid": line(b'{"return":{"__bytes_b64__":"QklOAAEC//79IGNhZukK"},"e":{"__bytes_b64__":""}}'),
        "b64-invalid-chars": line(b'{"__bytes_b64__":"not base64!"}'),
        "b64-unpadded": line(b'{"__bytes_b64__":"aGk"}'),
        "b64-non-canonical-bits": line(b'{"__bytes_b64__":"aGl="}'),
        "b64-embedded-space": line(b'{"__bytes_b64__":"aG k="}'),
        "b64-url-alphabet": line(b'{"__bytes_b64__":"-_-_"}'),
        "b64-not-string": line(b'[{"__bytes_b64__":5},{"__bytes_b64__":null},{"__bytes_b64__":["AA=="]}]'),
        "b64-extra-member": line(b'{"__bytes_b64__":"AA==","x":1}'),
        "b64-key-nul": line(b'{"__bytes_b64__\u0000":"AA=="}'),
        "invalid-utf8-string": line(b'{"s":"\xff\xfe ok \xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80"}'),
        "invalid-utf8-tag": line(b"{}", tag=b'"salt/\xff\xfe/tag"'),
        "invalid-utf8-key": line(b'{"\xc0\xaf":1}'),
        "escapes-surrogates": line(b'["\ud83d\ude80","\u00e9","\u0000","\ud800"]'),
        "escape-nul-in-tag": line(b"1", tag=b'"a\u0000b"'),
        "numbers-huge": line(b"[18446744073709551615,18446744073709551616,-9223372036854775808,"
                             b"-9223372036854775809,1e308,1.7976931348623157e308,123456789012345678901234567890]"),
        "numbers-too-big": line(b"[1e400]"),
        "numbers-integral-floats": line(b"[1.0,-0.0,0.0,2.5e1,-1e2,9007199254740993.0,1e19,1.8446744073709552e19]"),
        "numbers-tiny": line(b"[5e-324,2.2250738585072011e-308,1e-400,0.30000000000000004]"),
        "numbers-nan-inf": line(b'{"x":NaN,"y":Infinity,"z":-Infinity}'),
        "numbers-nan-lowercase": line(b"[nan]"),
        "tag-with-separator": line(b"{}", tag=b'"salt/job/1\\n\\nextra"'),
        "tag-ending-newline": line(b"{}", tag=b'"salt/job/1\\n"'),
        "tag-empty": line(b'{"x":1}', tag=b'""'),
        "tag-not-string": line(b"{}", tag=b"42"),
        "tag-duplicate": b'{"tag":"first","tag":"second","data":1}',
        "no-data": b'{"tag":"salt/auth"}',
        "data-null": line(b"null"),
        "keys-duplicate": line(b'{"a":1,"a":2}'),
        "top-level-array": b'["salt/auth",{}]',
        "empty-line": b"",
        "whitespace-line": b" \t\r",
        "bom-prefix": b"\xef\xbb\xbf" + line(b"{}"),
        "trailing-garbage": line(b"{}") + b" x",
        "two-objects": line(b"{}") + line(b"{}"),
        "truncated": line(b'{"return":[1,2,')[:-1],
    }
    write_all(d, edge, written, prefix="edge-")


# --- server_info -------------------------------------------------------------

def banner_input(status, product, body):
    """server_info's input: [HTTP status BE16][product length][product][body] (server_info_fuzz.cpp)."""
    p = product.encode()
    return struct.pack(">HB", status, len(p)) + p + (body.encode() if isinstance(body, str) else body)


# The X-Elastic-Product header each banner of the unit test comes with.
UNIT_TEST_PRODUCT = {"kEs717": "Elasticsearch", "kEs8": "Elasticsearch", "kEs9": "Elasticsearch"}


def server_info_corpus(out, written):
    d = out / "server_info"
    unit_test = (HERE.parent / "unit" / "indexer" / "server_info_test.cpp").read_text()
    banners = re.findall(r'constexpr const char\* (k\w+) = R"\((.*?)\)";', unit_test, re.S)
    if not banners:
        sys.exit("no banners found in tests/unit/indexer/server_info_test.cpp")
    for name, text in banners:
        write(d, f"unit-{name[1:]}", banner_input(200, UNIT_TEST_PRODUCT.get(name, ""), text), written)

    es = lambda number, **kw: json.dumps({"name": "n", "version": {"number": number, **kw},
                                          "tagline": "You Know, for Search"})
    os_compat = lambda lucene: json.dumps({"name": "n", "version": {"number": "7.10.2", "lucene_version": lucene},
                                           "tagline": "The OpenSearch Project: https://opensearch.org/"})
    edge = {
        "no-response": banner_input(0, "", ""),
        "401-security": banner_input(401, "Elasticsearch", '{"error":{"type":"security_exception","reason":"missing '
                                                          'authentication credentials"},"status":401}'),
        "403": banner_input(403, "", "Forbidden"),
        "503-html": banner_input(503, "", "<html>Service Unavailable</html>"),
        "302-redirect": banner_input(302, "", ""),
        "html-it-works": banner_input(200, "", "<html><body>It works!</body></html>"),
        "empty": banner_input(200, "", ""),
        "array": banner_input(200, "", "[]"),
        "version-string": banner_input(200, "", '{"version":"7.17.0"}'),
        "no-version": banner_input(200, "", '{"name":"x","tagline":"You Know, for Search"}'),
        "product-header-only": banner_input(200, "Elasticsearch", '{"version":{"number":"8.1.0"},"tagline":"hi"}'),
        "quickwit": banner_input(200, "", '{"version":{"number":"0.40.0"},"tagline":"Quickwit"}'),
        "number-words": banner_input(200, "", es("seven")),
        "number-snapshot": banner_input(200, "", es("8.16.0-SNAPSHOT", build_flavor="default")),
        "number-overflow": banner_input(200, "", es("99999999999.1.2")),
        "number-negative": banner_input(200, "", es("-7.1.0")),
        "number-major-only": banner_input(200, "", es("7")),
        "number-trailing-dot": banner_input(200, "", es("7.")),
        "number-four-parts": banner_input(200, "", es("7.17.29.1")),
        "number-not-string": banner_input(200, "", '{"version":{"number":7.17},"tagline":"You Know, for Search"}'),
        "number-multiline": banner_input(200, "Elasticsearch", es("6.8\nforged log line\n" + "x" * 200)),
        "es-6": banner_input(200, "", es("6.8.23", build_flavor="default")),
        "es-7-oss": banner_input(200, "", es("7.9.3", build_flavor="oss")),
        "distribution-other": banner_input(200, "", json.dumps({"version": {"distribution": "elasticsearch",
                                                                            "number": "8.0.0"}})),
        "distribution-multiline-long": banner_input(200, "", json.dumps(
            {"version": {"distribution": "line1\nline2\r" + "d" * 300, "number": "1.0.0"}, "tagline": "t"})),
        "tagline-multibyte-long": banner_input(200, "", json.dumps(
            {"version": {"number": "1.0"}, "tagline": "Ω" * 200}, ensure_ascii=False)),
        "body-multibyte-long": banner_input(200, "", "<html>" + "日本語" * 60 + "</html>"),
        "error-multibyte-long": banner_input(500, "", "错误" * 100),
        "os-compat-lucene-8": banner_input(200, "", os_compat("8.10.1")),
        "os-compat-lucene-10": banner_input(200, "", os_compat("10.2.2")),
        "os-compat-lucene-11": banner_input(200, "", os_compat("11.0.0")),
        "os-compat-lucene-garbage": banner_input(200, "", os_compat("x")),
        "os-distribution-bad-number": banner_input(200, "", json.dumps({"version": {"distribution": "opensearch",
                                                                                    "number": ""}})),
        "invalid-utf8-tagline": banner_input(200, "", b'{"version":{"number":"1.0"},"tagline":"\xff\xfe' + b"x" * 130
                                             + b'"}'),
        "deep-nesting": banner_input(200, "", '{"version":' + "[" * 200000 + "]" * 200000 + "}"),
    }
    write_all(d, edge, written, prefix="edge-")


# --- job_cache_file ------------------------------------------------------------

JOB_CACHE_KINDS = {".load.p": 0, "return.p": 1, ".minions.p": 2, "out.p": 3}
MAX_JOB_CACHE_SEED = 16 * 1024  # the run-fuzzers.sh max_len


def job_cache_file_corpus(captures, out, written):
    d = out / "job_cache_file"
    seen = set()
    for path in sorted(captures.glob("*/jobcache/*/*/**/*")):
        kind = JOB_CACHE_KINDS.get(path.name)
        if kind is None or not path.is_file():
            continue
        data = path.read_bytes()
        # Files of one kind and size differ by a jid at most (30 test.arg
        # jobs, two releases): one of them is seed enough.
        if len(data) > MAX_JOB_CACHE_SEED or (kind, len(data)) in seen:
            continue
        seen.add((kind, len(data)))
        release = path.relative_to(captures).parts[0]
        write(d, f"{release}-{path.name.strip('.')}-{len(seen):03}", bytes([kind]) + data, written)
    load = pack({"cmd": "publish", "tgt": "*", "fun": "test.ping", "arg": [], "tgt_type": "glob",
                 "jid": "20261129192428536894", "user": "root"})
    edge = {
        "load-cut": (0, load[:len(load) // 2]),
        "load-empty": (0, b""),
        "load-trailing": (0, load + b"\x00"),
        "load-not-map": (0, pack(["not", "a", "load"])),
        "load-runner": (0, pack({"id": "m", "tgt": "m", "jid": "20261129192428536894", "fun": "runner.test.arg",
                                 "user": "root", "return": {"fun": "runner.test.arg", "jid": "20261129192428536894",
                                                            "user": "root", "fun_args": [], "return": True,
                                                            "success": True, "_stamp": "2026-11-29T19:24:28.6"}})),
        "load-wheel-bare-return": (0, pack({"fun": "wheel.key.list", "return": 7})),
        "load-minion-return": (0, pack({"cmd": "_return", "id": "minion-a", "fun": "cmd.run", "jid": "req",
                                        "return": "x", "retcode": 0, "schedule": "s", "_stamp": 5})),
        "load-multi-function": (0, pack({"fun": ["test.ping", "test.echo"], "arg": [[], ["hi"]], "tgt": "*"})),
        "load-find-job": (0, pack({"fun": "saltutil.find_job", "tgt": "*"})),
        "load-raw-keys": (0, b"\x82\xa3fun\xa9test.ping\xa3tgt\xa1*"),
        "return-bare-pre-2018": (1, pack({"id": 7})),
        "return-bin": (1, pack({"return": b"\x00\xff", "retcode": 0})),
        "return-ext-78": (1, b"\x81\xa6return\xd7\x4e" + bytes(8)),
        "return-nested-deep": (1, b"\x81\xa6return" + b"\x91" * 300 + b"\xc0"),
        "return-multi-retcode": (1, pack({"return": {"a": 1}, "retcode": {"test.ping": 0, "x": 2}})),
        "minions-not-list": (2, pack({"minion-a": 1})),
        "minions-nil": (2, b"\xc0"),
        "minions-mixed": (2, pack(["minion-a", 1, None, "minion-b"])),
        "out-not-string": (3, pack([1])),
    }
    for name, (kind, data) in edge.items():
        write(d, f"edge-{name}", bytes([kind]) + data, written)


# --- reconcile_state -----------------------------------------------------------

def reconcile_state_corpus(out, written):
    d = out / "reconcile_state"
    good = "salttap-reconcile 1\nlive_until 1764633600000000\nopen_since {}\n"
    seeds = {
        "written": good.format("1764633000000000"),
        "written-none-open": good.format("-"),
        "cut": good.format("1764633000000000")[:40],
        "no-newline-at-end": good.format("-").rstrip("\n"),
        "extra-line": good.format("-") + "more 1\n",
        "negative": "salttap-reconcile 1\nlive_until -5\nopen_since -\n",
        "plus-sign": "salttap-reconcile 1\nlive_until +5\nopen_since -\n",
        "overflow": "salttap-reconcile 1\nlive_until 99999999999999999999999\nopen_since -\n",
        "crlf": good.format("-").replace("\n", "\r\n"),
        "version-2": good.format("-").replace("reconcile 1", "reconcile 2"),
        "open-jobs": good.format("1764633000000000") + "open 20251201000000000000\nopen 20251201000000000001_42\n",
        "open-truncated": good.format("1764633000000000") + "open 20251201000000000000\nopen_truncated\n",
        "after-truncated": good.format("-") + "open_truncated\nopen 1\n",
        "open-empty-jid": good.format("-") + "open \n",
        "empty": "",
    }
    for name, text in seeds.items():
        write(d, name, text.encode(), written)


# --- search_response ---------------------------------------------------------

def search_input(status, which, body):
    """search_response's input: [HTTP status BE16][0 jobs|1 returns|2 minions][body] (search_response_fuzz.cpp)."""
    return struct.pack(">HB", status, which) + (body.encode() if isinstance(body, str) else body)


def search_response_corpus(out, written):
    d = out / "search_response"
    shards = {"total": 1, "successful": 1, "skipped": 0, "failed": 0}
    job = {"jid": "20261129192535054311", "status": "failed", "fun": ["state.apply", "test.ping"], "tgt": "web*",
           "user": "root", "started_at": "2026-11-29T19:25:35.054311Z", "master": "salt-01", "kind": "job",
           "counts": {"expected": 2, "returned": 2, "succeeded": 1, "failed": 1, "missing": 0},
           "risk": {"level": "medium", "reasons": ["state run"]},
           "failed_states": [{"minion": "web1", "id": "will_fail", "function": "cmd.run",
                              "comment": "Command \"false\" run\nretcode: 1", "run_num": 0}]}
    ret = {"jid": "20261129192535054311", "minion": "web1", "status": "failed", "retcode": 2,
           "reason": "2 failed states", "failed_state_ids": ["will_fail", 7], "return_text": "{\"x\": 1}"}
    hits = lambda sources, total=None: json.dumps({
        "took": 3, "timed_out": False, "_shards": shards,
        "hits": {"total": {"value": len(sources) if total is None else total, "relation": "eq"},
                 "max_score": None, "hits": [{"_index": "salt-jobs-2026.11.29", "_id": f"salt-01/{i}",
                                              "_score": None, "_source": s, "sort": [1]}
                                             for i, s in enumerate(sources)]}})
    bucket = lambda m, n, last: {"key": {"minion": m}, "doc_count": n, "succeeded": {"doc_count": n - 1},
                                 "failed": {"doc_count": 1}, "missing": {"doc_count": 0},
                                 "answered": {"doc_count": n, "last": {"value": 1.7e12, "value_as_string": last}}}
    page = lambda buckets, after=None: json.dumps({
        "took": 1, "_shards": shards, "hits": {"total": {"value": 9, "relation": "eq"}, "hits": []},
        "aggregations": {"minions": ({"after_key": after} if after else {}) | {"buckets": buckets}}})
    error = lambda status, type_, reason: json.dumps({"error": {"root_cause": [{"type": type_, "reason": reason}],
                                                                "type": type_, "reason": reason}, "status": status})
    seeds = {
        "jobs-two": search_input(200, 0, hits([job, {"jid": "1", "status": "running"}])),
        "jobs-empty": search_input(200, 0, hits([])),
        "jobs-es6-total": search_input(200, 0, json.dumps({"_shards": shards, "hits": {"total": 1, "hits": [
            {"_source": job}]}})),
        "jobs-no-indices": search_input(200, 0, json.dumps({"_shards": {"total": 0, "successful": 0, "failed": 0},
                                                            "hits": {"hits": []}})),
        "jobs-source-string": search_input(200, 0, '{"hits":{"hits":[{"_source":"x"}]}}'),
        "jobs-hits-object": search_input(200, 0, '{"hits":{"hits":{}}}'),
        "jobs-wrong-types": search_input(200, 0, hits([{"jid": 1, "fun": {"a": 1}, "counts": [1],
                                                        "failed_states": "none", "risk": "high"}])),
        "jobs-unicode": search_input(200, 0, hits([{"jid": "j", "fun": "ünïcödé.ä", "tgt": "\u00e9\t\n"}])),
        # A collapsed jobs search: each jid's documents, one per master, as inner hits (merged, job_merge.h).
        "jobs-collapsed-masters": search_input(200, 0, json.dumps({"_shards": shards, "hits": {"hits": [
            {"_source": job, "inner_hits": {"documents": {"hits": {"hits": [
                {"_source": dict(job, fleet="f1", syndics=["lower-syndic"], minions={
                    "expected": ["web1", "lower-syndic"], "failed": ["web1"], "missing": ["lower-syndic"]})},
                {"_source": dict(job, master="salt-02", fleet="f1", kind="orphan", user="", minions={
                    "succeeded": ["web1"], "late": ["web1"]})},
                {"_source": dict(job, master="salt-03", fleet="f1", args_text="[\"other\"]",
                                 minions={"expected": "web2", "succeeded": [1, "web2"]},
                                 truncated_lists=["expected"])}]}}}},
            {"_source": {"jid": "2"}, "inner_hits": {"documents": {"hits": {"hits": "none"}}}}]}})),
        "jobs-shard-failure": search_input(200, 0, json.dumps({"_shards": {"total": 2, "failed": 1, "failures": [
            {"shard": 0, "reason": {"type": "query_shard_exception", "reason": "failed to create query"}}]},
            "hits": {"hits": []}})),
        "returns-two": search_input(200, 1, hits([ret, {"minion": "web2", "status": "succeeded", "retcode": 0}],
                                                 total=12000)),
        "returns-retcode-huge": search_input(200, 1, hits([{"minion": "m", "retcode": 1e300}])),
        "minions-page": search_input(200, 2, page([bucket("web1", 5, "2026-11-29T19:25:35.054Z"),
                                                   bucket("web2", 3, None)], {"minion": "web2"})),
        "minions-last-page": search_input(200, 2, page([])),
        "minions-no-key": search_input(200, 2, page([{"doc_count": 1}])),
        "minions-negative-count": search_input(200, 2, page([{"key": {"minion": "m"}, "doc_count": -1}])),
        "minions-no-aggs": search_input(200, 2, json.dumps({"_shards": shards, "hits": {"hits": []}})),
        "error-404-index": search_input(404, 0, error(404, "index_not_found_exception", "no such index [salt-jobs]")),
        "error-401": search_input(401, 1, error(401, "security_exception", "missing authentication credentials")),
        "error-400-multiline": search_input(400, 2, error(400, "x_content_parse_exception", "line 1\nline 2\r")),
        "error-503-html": search_input(503, 0, "<html><body>503 Service Unavailable</body></html>"),
        "no-response": search_input(0, 0, ""),
        "not-json": search_input(200, 1, "ok"),
        "array": search_input(200, 2, "[]"),
    }
    write_all(d, seeds, written)


def web_request_corpus(out, written):
    """The attack run's requests against the job browser: target, Host, Origin, Sec-Fetch-Site."""
    d = out / "web_request"
    cases = {
        "jobs-filters": "/ui/api/jobs?status=failed&fun=state.*&minion=web-*&since=1d&until=2h&limit=5\n127.0.0.1:9109",
        "ff-in-fun": "/ui/api/jobs?fun=%FF\n127.0.0.1:9109",
        "ff-in-name": "/ui/api/jobs?%FF=1\nlocalhost",
        "newline-in-path": "/ui/api/jobs/a%0AFORGED%20ERROR\nlocalhost:9109",
        "crlf-in-query": "/ui/api/alerts?kind=a%0D%0Ab&since=all\n[::1]:9109",
        "surrogate": "/ui/minion/%ED%A0%80\nlocalhost",
        "overlong-slash": "/ui/api/minions/%C0%AF?since=7d\nlocalhost",
        "escaped-slash": "/ui/api/jobs/a%2Fb\nlocalhost",
        "bad-escape": "/ui/api/jobs?fun=%G1%4&user=%\nlocalhost",
        "plus-space": "/ui/api/jobs?fun=a+b&&=&x\nlocalhost",
        "rebinding-host": "/ui/api/jobs\nattacker.example:9109",
        "rebinding-suffix": "/ui/api/jobs\n127.0.0.1.nip.io",
        "bracket-host": "/ui/\n[::1\n",
        "userinfo-host": "/ui/\nevil@127.0.0.1",
        "cross-origin": "/ui/api/jobs\n127.0.0.1:9109\nhttp://attacker.example",
        "null-origin": "/ui/api/jobs\n127.0.0.1:9109\nnull",
        "same-origin": "/ui/api/jobs\n127.0.0.1:9109\nhttp://127.0.0.1:9109\nsame-origin",
        "cross-site": "/ui/api/jobs\n127.0.0.1:9109\n\ncross-site",
        "root": "/\nlocalhost",
        "empty": "",
        "static": "/ui/static/app.js?v=1\nsalt.example",
        "long": "/ui/api/jobs?fun=" + "a" * 3000 + "\nlocalhost",
    }
    for name, text in cases.items():
        write(d, name, text.encode("latin-1"), written)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--captures", type=pathlib.Path, default=DEFAULT_CAPTURES)
    ap.add_argument("--out", type=pathlib.Path, default=HERE / "corpus")
    args = ap.parse_args()
    if not any(args.captures.glob("*/*.raw")):
        sys.exit(f"no captures under {args.captures}")
    written = []
    for target in ("frame_decoder", "event_decoder", "json_transcoder", "master_config", "spool_recovery", "bulk_result",
                   "event_from_json", "server_info", "job_cache_file", "reconcile_state", "search_response",
                   "tap_journal", "web_request"):
        d = args.out / target
        d.mkdir(parents=True, exist_ok=True)
        for f in d.iterdir():  # regenerate seeds; keep crash-* regressions and rec-* recordings
            if f.is_file() and not f.name.startswith(("crash-", "rec-")):
                f.unlink()
    frame_decoder_corpus(args.captures, args.out, written)
    event_decoder_corpus(args.captures, args.out, written)
    json_transcoder_corpus(args.out, written)
    master_config_corpus(args.out, written)
    spool_recovery_corpus(args.out, written)
    bulk_result_corpus(args.out, written)
    event_from_json_corpus(args.captures, args.out, written)
    server_info_corpus(args.out, written)
    job_cache_file_corpus(args.captures, args.out, written)
    reconcile_state_corpus(args.out, written)
    search_response_corpus(args.out, written)
    tap_journal_corpus(args.captures, args.out, written)
    web_request_corpus(args.out, written)
    total = sum(p.stat().st_size for p in written)
    print(f"{len(written)} seed files, {total} bytes, in {args.out}")


if __name__ == "__main__":
    main()
