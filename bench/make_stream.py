#!/usr/bin/env python3
"""Build large synthetic Salt master event-bus streams from real captures.

The real Salt 3006.25 captures in tests/captures (plain framing, see
docs/salt-event-bus.md §3) are decoded into job
templates. Jobs are then repeated many times: every repeated job gets a fresh
unique 20-digit jid (in every tag and every string of the data that contained
the original jid, including dict keys), fresh minion ids (minion-00001 ...) in
place of minion-a/minion-b (tags, data.id, minion lists, state ids, paths),
and consistent _stamp/ts values. Events are re-encoded the way Salt 3006 does:

    body  = utf8(tag) + b"\\n\\n" + msgpack.packb(data, use_bin_type=True)
    frame = msgpack.packb({"head": {}, "body": body}, use_bin_type=True)

(bin values stay bin, ext types stay ext). Before generating, every frame of
every capture is decoded and re-encoded unchanged and must come out
byte-identical, which checks that the encoder matches Salt's.

Output (in --out DIR):
    small.plain.raw  small.len32.raw   bare-jid + /new + test.ping returns
    mixed.plain.raw  mixed.len32.raw   test.ping, cmd.run, state.* (with prog
                                       and minion/refresh events), grains.items
                                       and ~1 large return per 2000 events
    cost.plain.raw  cost.len32.raw     the cost benchmark's fleet mix, --cost-jobs jobs of
                                       1-8 minions: test.ping, cmd.run, state runs of 40
                                       states (some failing, a few changing), small state
                                       runs and render errors, grains.items, pkg.list_pkgs
    pairs, wide, large, blend          the memory bursts, when asked (--NAME-events):
                                       test.ping jobs of 2 and of 1,000 minions;
                                       small jobs with a large return every ~1,000
                                       events; every shape at once
    manifest.json                      events / bytes / sha256 per file, and the
                                       jobs (salt/job/<jid>/new events) and returns
                                       (salt/job/<jid>/ret/<minion> events) in it:
                                       the counts the benchmarks check their output
                                       against

"plain" = concatenated frames (eras C/E), "len32" = 4-byte big-endian length
before each frame (era D, Salt 3006.26). Deterministic for a given --seed.

Run with the Salt venv's python (needs msgpack):
    .cache/venv/salt-3006.25/bin/python bench/make_stream.py --out build/bench-streams
"""

import argparse
import datetime
import glob
import hashlib
import json
import os
import random
import struct
import sys
import time

import msgpack

DEFAULT_CAPTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "captures", "salt-3006.25")
TAGEND = b"\n\n"
EPOCH = datetime.datetime(1970, 1, 1)
START_TIME = datetime.datetime(2026, 12, 1, 8, 0, 0)
MINION_POOL = 10000

SMALL_TEMPLATES = ["test_ping"]

# (weight, capture names, (min, max) number of minions per job)
MIXED_JOBS = [
    (35, ["test_ping"], (1, 64)),
    (25, ["cmd_run_echo", "cmd_run_false", "cmd_run_exit3_stderr"], (1, 32)),
    (
        25,
        [
            "state_apply_good",
            "state_apply_change",
            "state_apply_fail",
            "state_apply_test_true",
            "state_highstate",
            "state_apply_missing_sls",
            "state_apply_render_error",
        ],
        (1, 16),
    ),
    (15, ["grains_items"], (1, 8)),
]
LARGE_TEMPLATE = "large_return"
LARGE_EVERY = 2000  # one large return per ~this many events

# The 1M-event memory bursts beside pairs and wide (bench/burst_bench.py):
# large: small test.ping and cmd.run jobs with a large return every ~1,000 events;
# blend: every shape at once: jobs of two minions (async bursts), jobs of 1,000 minions,
# the mixed stream's jobs (state runs with progress events, cmd.run, grains.items),
# and a large return every ~2,000 events.
LARGE_JOBS = [
    (60, ["test_ping"], (1, 8)),
    (40, ["cmd_run_echo", "cmd_run_false", "cmd_run_exit3_stderr"], (1, 8)),
]
LARGE_STREAM_EVERY = 1000
BLEND_JOBS = [
    (50, ["test_ping"], (2, 2)),
    (0.4, ["test_ping"], (1000, 1000)),
] + [(w / 5, names, span) for w, names, span in MIXED_JOBS]


# The cost benchmark's fleet (bench/cost_bench.py): what a day of a real fleet runs,
# without the 869 KB returns. The state runs of 40 states and pkg.list_pkgs are made
# from the captured state.highstate and test.ping jobs (synthetic_templates): the
# captures' state runs have 2 to 4 states, a real highstate tens. Their state ids and
# package names are the same on every minion, as in a real fleet (the captured state
# runs name per-minion paths in their state ids, which would give a schema-less store
# a new field per minion).
COST_JOBS = [
    (30, ["test_ping"], (1, 8)),
    (20, ["cmd_run_echo", "cmd_run_false", "cmd_run_exit3_stderr"], (1, 8)),
    (15, ["highstate_40_ok", "highstate_40_ok", "highstate_40_fail"], (1, 8)),
    (5, ["state_apply_good", "state_apply_render_error", "state_apply_missing_sls"], (1, 8)),
    (15, ["grains_items"], (1, 8)),
    (15, ["pkg_list_pkgs"], (1, 8)),
]
HIGHSTATE_STATES = 40
PKG_COUNT = 300


# --------------------------------------------------------------------------
# decoding captures


def unpack_frames_plain(raw):
    """Yield (frame_obj, frame_bytes) for a plain (unprefixed) capture."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, max_buffer_size=0)
    unpacker.feed(raw)
    pos = 0
    for frame in unpacker:
        end = unpacker.tell()
        yield frame, raw[pos:end]
        pos = end
    if pos != len(raw):
        raise ValueError("trailing %d bytes" % (len(raw) - pos))


def split_body(body):
    tag, sep, mdata = body.partition(TAGEND)
    if not sep:
        raise ValueError("event body without tag separator")
    return tag.decode("utf-8"), msgpack.unpackb(mdata, raw=False, strict_map_key=False)


def encode_event(tag, data, packer):
    """Same bytes as SaltEvent.pack() + salt.transport.frame.frame_msg_ipc()."""
    body = b"".join([tag.encode("utf-8"), TAGEND, packer.pack(data)])
    return packer.pack({"head": {}, "body": body})


def self_check(captures_dir):
    """Every captured frame must re-encode byte-identically."""
    packer = msgpack.Packer(use_bin_type=True)
    n = 0
    for path in sorted(glob.glob(os.path.join(captures_dir, "*.raw"))):
        with open(path, "rb") as fh:
            raw = fh.read()
        for frame, frame_bytes in unpack_frames_plain(raw):
            tag, data = split_body(frame["body"])
            if encode_event(tag, data, packer) != frame_bytes:
                raise SystemExit(
                    "self-check failed: %s tag %r does not re-encode identically"
                    % (path, tag)
                )
            n += 1
    return n


def load_capture(captures_dir, name):
    with open(os.path.join(captures_dir, name + ".raw"), "rb") as fh:
        raw = fh.read()
    return [split_body(frame["body"]) for frame, _ in unpack_frames_plain(raw)]


# --------------------------------------------------------------------------
# synthetic jobs made from captured ones


def highstate_return(n_states, failing, seed):
    """A state run's return of n_states states: packages, files, services, commands, users;
    a few changing (a file diff, a restarted service), `failing` failed (a missing source and
    the requisite that depends on it, then more missing sources)."""
    rng = random.Random(seed)
    kinds = [
        ("pkg", "installed", "pkg-{i}", "{name}", "All specified packages are already installed"),
        ("file", "managed", "/etc/app/conf-{i}.yaml", "{name}", "File {name} is in the correct state"),
        ("service", "running", "svc-{i}", "{name}", "The service {name} is already running"),
        ("cmd", "run", "migrate-{i}", "/usr/local/bin/migrate --step {i}", "Command \"{name}\" run"),
        ("user", "present", "deploy{i}", "{name}", "User {name} is present and up to date"),
    ]
    out, t = {}, 0.0
    for i in range(n_states):
        mod, fun, sid_fmt, name_fmt, comment = kinds[i % len(kinds)]
        sid = sid_fmt.format(i=i)
        name = name_fmt.format(name=sid, i=i)
        duration = round(rng.uniform(0.3, 80.0), 3)
        state = {"name": name, "changes": {}, "result": True, "comment": comment.format(name=name),
                 "__sls__": "role.%s" % ("base", "web", "db", "monitoring")[i % 4], "__run_num__": i,
                 "start_time": "08:00:%06.3f" % (t % 60), "duration": duration, "__id__": sid}
        t += duration / 1000
        if i in (3, 17, 31):  # a changed file, a restarted service
            state["changes"] = {"diff": "--- \n+++ \n@@ -1,3 +1,3 @@\n workers: 4\n-timeout: 30\n+timeout: 60\n"} \
                if mod == "file" else {sid: True}
        if i < 2 * failing and i % 2 == 1:
            state.update(result=False, comment="Source file salt://files/conf-%d.yaml not found in saltenv 'base'" % i)
        elif i < 2 * failing and i % 2 == 0 and i:
            state.update(result=False, comment="One or more requisite failed: role.web.conf-%d" % (i - 1))
        out["%s_|-%s_|-%s_|-%s" % (mod, sid, name, fun)] = state
    return out


def pkg_list_return(n, seed):
    rng = random.Random(seed)
    stems = ["lib", "python3-", "perl-", "fonts-", "x11-", "gir1.2-", "node-", "golang-", ""]
    words = ["ssl", "curl", "xml2", "yaml", "zstd", "systemd", "openssh", "nginx", "postgresql", "gnupg",
             "tzdata", "locales", "rsync", "sudo", "vim", "less", "iproute2", "procps", "util-linux", "dbus"]
    pkgs = {}
    while len(pkgs) < n:
        name = rng.choice(stems) + rng.choice(words) + rng.choice(["", "1", "3", "-common", "-dev", "-bin", "2.0"])
        pkgs[name] = "%d.%d.%d-%d+deb12u%d" % (rng.randint(0, 9), rng.randint(0, 40), rng.randint(0, 20),
                                                rng.randint(1, 5), rng.randint(0, 3))
    return dict(sorted(pkgs.items()))


def synthetic_templates(captures_dir):
    """(name, events) of the jobs a capture lab does not run: state runs of many states,
    package listings; every other part (tags, jids, stamps, prog events) as captured."""
    out = []
    highstate = load_capture(captures_dir, "state_highstate")
    for name, failing in (("highstate_40_ok", 0), ("highstate_40_fail", 2)):
        ret = highstate_return(HIGHSTATE_STATES, failing, 7)
        events = []
        for tag, data in highstate:
            if "/ret/" in tag:
                data = dict(data, **{"return": ret, "retcode": 2 if failing else 0, "success": not failing})
            events.append((tag, data))
        out.append((name, events))
    pkgs = pkg_list_return(PKG_COUNT, 11)
    events = []
    for tag, data in load_capture(captures_dir, "test_ping"):
        data = dict(data)
        if data.get("fun") == "test.ping":
            data["fun"] = "pkg.list_pkgs"
        if "/ret/" in tag:
            data["return"] = pkgs
        events.append((tag, data))
    out.append(("pkg_list_pkgs", events))
    return out


# --------------------------------------------------------------------------
# templates
#
# A "plan" says where a template object needs substitution, so that per
# instance only those paths are copied:
#   ("s",)                    string containing the jid / a minion id
#   ("m",)                    list equal to the job's full minion list
#   ("d", {key: plan}, rekey) dict; rekey=True if some key needs substitution
#   ("l", {index: plan})      list
# Top-level "_stamp" and "ts" of the data are handled separately.


def _contains(s, needles):
    for n in needles:
        if n in s:
            return True
    return False


def compile_plan(obj, needles, minion_list):
    if isinstance(obj, str):
        return ("s",) if _contains(obj, needles) else None
    if isinstance(obj, dict):
        sub = {}
        rekey = False
        for k, v in obj.items():
            if isinstance(k, str) and _contains(k, needles):
                rekey = True
            p = compile_plan(v, needles, minion_list)
            if p is not None:
                sub[k] = p
        return ("d", sub, rekey) if (sub or rekey) else None
    if isinstance(obj, list):
        if (
            minion_list is not None
            and len(obj) == len(minion_list)
            and all(isinstance(v, str) for v in obj)
            and sorted(obj) == sorted(minion_list)
        ):
            return ("m",)
        sub = {}
        for i, v in enumerate(obj):
            p = compile_plan(v, needles, minion_list)
            if p is not None:
                sub[i] = p
        return ("l", sub) if sub else None
    return None


def apply_plan(obj, plan, ctx):
    kind = plan[0]
    if kind == "s":
        for old, new in ctx.repl:
            obj = obj.replace(old, new)
        return obj
    if kind == "m":
        return list(ctx.minions)
    if kind == "d":
        sub, rekey = plan[1], plan[2]
        if rekey:
            out = {}
            for k, v in obj.items():
                if k in sub:
                    v = apply_plan(v, sub[k], ctx)
                if isinstance(k, str):
                    for old, new in ctx.repl:
                        k = k.replace(old, new)
                out[k] = v
            return out
        out = dict(obj)
        for k, p in sub.items():
            out[k] = apply_plan(obj[k], p, ctx)
        return out
    if kind == "l":
        out = list(obj)
        for i, p in plan[1].items():
            out[i] = apply_plan(obj[i], p, ctx)
        return out
    raise AssertionError(kind)


def parse_stamp_us(s):
    return to_us(datetime.datetime.fromisoformat(s))


def to_us(dt):
    d = dt - EPOCH
    return (d.days * 86400 + d.seconds) * 1000000 + d.microseconds


def jid_to_us(jid):
    return to_us(datetime.datetime.strptime(jid, "%Y%m%d%H%M%S%f"))


class EventTemplate:
    """One captured event, ready to be instantiated for a new jid/minion."""

    def __init__(self, tag, data, jid, jid_us, src_minions, own_minion):
        self.data = data
        self.needles = [jid] + list(src_minions)
        # tag as a format string: {jid} and {minion}
        t = tag.replace("{", "{{").replace("}", "}}").replace(jid, "{jid}")
        if own_minion is not None:
            t = t.replace(own_minion, "{minion}")
        self.tag_fmt = t
        self.own_minion = own_minion
        body = {k: v for k, v in data.items() if k not in ("_stamp", "ts")}
        self.plan = compile_plan(
            body, self.needles, list(src_minions) if own_minion is None else None
        )
        self.stamp_off = None
        if isinstance(data.get("_stamp"), str):
            self.stamp_off = parse_stamp_us(data["_stamp"]) - jid_us
        self.has_ts = isinstance(data.get("ts"), int) and not isinstance(
            data.get("ts"), bool
        )

    def instantiate(self, ctx, extra_us):
        if self.plan is not None:
            data = apply_plan(self.data, self.plan, ctx)
        else:
            data = dict(self.data)
        t_us = ctx.t_us + (self.stamp_off or 0) + extra_us
        if self.stamp_off is not None:
            data["_stamp"] = (EPOCH + datetime.timedelta(microseconds=t_us)).isoformat()
        if self.has_ts:
            data["ts"] = t_us // 1000000
        tag = self.tag_fmt.format(jid=ctx.jid, minion=ctx.minion)
        return tag, data


class Ctx:
    __slots__ = ("jid", "t_us", "minions", "minion", "repl")


class JobTemplate:
    """A captured job: header events (bare jid, /new) + per-minion sequences."""

    def __init__(self, name, events):
        self.name = name
        header = [(t, d) for t, d in events if t.isdigit() and len(t) == 20]
        if len(header) != 1:
            raise ValueError("%s: expected exactly one bare-jid event" % name)
        jid = header[0][0]
        self.src_jid = jid
        jid_us = jid_to_us(jid)
        new = [d for t, d in events if t == "salt/job/%s/new" % jid]
        if len(new) != 1:
            raise ValueError("%s: expected one /new event" % name)
        src_minions = list(new[0]["minions"])
        self.src_minions = src_minions
        self.header = []
        self.per_minion = {m: [] for m in src_minions}
        for tag, data in events:
            owner = None
            for m in src_minions:
                if (
                    tag == "minion/refresh/" + m
                    or tag == "salt/job/%s/ret/%s" % (jid, m)
                    or tag.startswith("salt/job/%s/prog/%s/" % (jid, m))
                ):
                    owner = m
            if owner is None:
                if jid not in tag:
                    raise ValueError("%s: unexpected event %r" % (name, tag))
                self.header.append(
                    EventTemplate(tag, data, jid, jid_us, src_minions, None)
                )
            else:
                self.per_minion[owner].append(
                    EventTemplate(tag, data, jid, jid_us, src_minions, owner)
                )
        self.sources = [self.per_minion[m] for m in src_minions if self.per_minion[m]]
        if not self.sources:
            raise ValueError("%s: no per-minion events" % name)


class Generator:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.t_us = to_us(START_TIME)
        self.used_jids = set()

    def next_job_ctx(self):
        self.t_us += self.rng.randint(150, 4000)
        dt = EPOCH + datetime.timedelta(microseconds=self.t_us)
        jid = dt.strftime("%Y%m%d%H%M%S%f")
        assert len(jid) == 20 and jid not in self.used_jids
        self.used_jids.add(jid)
        ctx = Ctx()
        ctx.jid = jid
        ctx.t_us = self.t_us
        return ctx

    def pick_minions(self, kmin, kmax):
        k = self.rng.randint(kmin, kmax)
        start = self.rng.randrange(MINION_POOL)
        return ["minion-%05d" % (1 + (start + i) % MINION_POOL) for i in range(k)]

    def job_events(self, tmpl, minions):
        """Yield (tag, data) for one instance of a job template."""
        ctx = self.next_job_ctx()
        ctx.minions = minions
        ctx.minion = None
        src_jid = tmpl.src_jid
        # header: jid -> new jid; every source minion name stays as-is except
        # where it appears in the full minion list (replaced by ctx.minions).
        ctx.repl = ((src_jid, ctx.jid),)
        for et in tmpl.header:
            yield et.instantiate(ctx, 0)
        # per-minion sequences, returned in random order, interleaved by step
        order = list(range(len(minions)))
        self.rng.shuffle(order)
        seqs = []
        for rank, i in enumerate(order):
            src_idx = i % len(tmpl.sources)
            seq = tmpl.sources[src_idx]
            seqs.append((minions[i], seq, rank))
        nsrc = len(tmpl.src_minions)
        step = 0
        while True:
            emitted = False
            for minion, seq, rank in seqs:
                if step >= len(seq):
                    continue
                emitted = True
                et = seq[step]
                mctx = Ctx()
                mctx.jid = ctx.jid
                mctx.t_us = ctx.t_us
                mctx.minions = minions
                mctx.minion = minion
                mctx.repl = ((src_jid, ctx.jid), (et.own_minion, minion))
                if nsrc > 1:
                    # other source minions mentioned in this minion's events
                    other = [m for m in tmpl.src_minions if m != et.own_minion]
                    mctx.repl += tuple((m, minion) for m in other)
                yield et.instantiate(mctx, rank * 53)
            if not emitted:
                break
            step += 1


# --------------------------------------------------------------------------
# output


class StreamWriter:
    def __init__(self, out_dir, stem):
        self.names = {
            "plain": stem + ".plain.raw",
            "len32": stem + ".len32.raw",
        }
        self.fh = {
            k: open(os.path.join(out_dir, v), "wb") for k, v in self.names.items()
        }
        self.sha = {k: hashlib.sha256() for k in self.names}
        self.size = {k: 0 for k in self.names}
        self.buf_plain = []
        self.buf_len32 = []
        self.buffered = 0
        self.events = 0
        self.jobs = 0
        self.returns = 0
        self.max_frame = 0

    def add(self, frame, tag):
        n = len(frame)
        parts = tag.split("/")
        if len(parts) == 4 and parts[:2] == ["salt", "job"] and parts[3] == "new":
            self.jobs += 1
        elif len(parts) == 5 and parts[:2] == ["salt", "job"] and parts[3] == "ret":
            self.returns += 1
        self.buf_plain.append(frame)
        self.buf_len32.append(struct.pack(">I", n))
        self.buf_len32.append(frame)
        self.buffered += n
        self.events += 1
        if n > self.max_frame:
            self.max_frame = n
        if self.buffered >= (8 << 20):
            self.flush()

    def flush(self):
        for key, buf in (("plain", self.buf_plain), ("len32", self.buf_len32)):
            chunk = b"".join(buf)
            self.fh[key].write(chunk)
            self.sha[key].update(chunk)
            self.size[key] += len(chunk)
        self.buf_plain = []
        self.buf_len32 = []
        self.buffered = 0

    def close(self):
        self.flush()
        for fh in self.fh.values():
            fh.close()

    def manifest_entries(self, description, seed):
        out = {}
        for key, name in self.names.items():
            out[name] = {
                "framing": key,
                "events": self.events,
                "jobs": self.jobs,
                "returns": self.returns,
                "bytes": self.size[key],
                "sha256": self.sha[key].hexdigest(),
                "max_frame_bytes": self.max_frame,
                "content": description,
                "seed": seed,
            }
        return out


def write_small(out_dir, n_events, templates, seed):
    gen = Generator(seed)
    packer = msgpack.Packer(use_bin_type=True)
    w = StreamWriter(out_dir, "small")
    tmpl = templates["test_ping"]
    jobs = 0
    while w.events < n_events:
        jobs += 1
        for tag, data in gen.job_events(tmpl, gen.pick_minions(1, 64)):
            w.add(encode_event(tag, data, packer), tag)
            if w.events >= n_events:
                break
    w.close()
    return w.manifest_entries(
        "test.ping jobs: bare-jid, salt/job/<jid>/new, ret/<minion> "
        "(1-64 minions per job, %d jobs)" % jobs,
        seed,
    )


def write_shaped(out_dir, stem, n_events, tmpl, minions, seed):
    """test.ping jobs of exactly `minions` minions each (the memory scenarios)."""
    gen = Generator(seed + minions)
    packer = msgpack.Packer(use_bin_type=True)
    w = StreamWriter(out_dir, stem)
    jobs = 0
    while w.events < n_events:
        jobs += 1
        for tag, data in gen.job_events(tmpl, gen.pick_minions(minions, minions)):
            w.add(encode_event(tag, data, packer), tag)
            if w.events >= n_events:
                break
    w.close()
    return w.manifest_entries(
        "test.ping jobs of %d minions each, every minion returning (%d jobs)" % (minions, jobs), seed)


def write_mixed(out_dir, n_events, templates, seed, stem="mixed", jobs=MIXED_JOBS, large_every=LARGE_EVERY,
                seed_offset=1):
    gen = Generator(seed + seed_offset)
    packer = msgpack.Packer(use_bin_type=True)
    w = StreamWriter(out_dir, stem)
    weights = [j[0] for j in jobs]
    counts = {}
    next_large = gen.rng.randint(large_every // 2, large_every * 3 // 2)
    large = 0
    while w.events < n_events:
        if w.events >= next_large:
            tmpl = templates[LARGE_TEMPLATE]
            minions = gen.pick_minions(1, 1)
            next_large += gen.rng.randint(large_every // 2, large_every * 3 // 2)
        else:
            _, names, (kmin, kmax) = gen.rng.choices(jobs, weights)[0]
            tmpl = templates[gen.rng.choice(names)]
            minions = gen.pick_minions(kmin, kmax)
        counts[tmpl.name] = counts.get(tmpl.name, 0) + 1
        for tag, data in gen.job_events(tmpl, minions):
            frame = encode_event(tag, data, packer)
            if len(frame) > 100000:
                large += 1
            w.add(frame, tag)
            if w.events >= n_events:
                break
    w.close()
    desc = "mixed jobs %s; %d large (>100 kB) returns" % (
        json.dumps(dict(sorted(counts.items()))),
        large,
    )
    return w.manifest_entries(desc, seed)


def write_cost(out_dir, n_jobs, templates, seed, only=None, stem="cost"):
    """COST_JOBS, n_jobs of them (a job count, not an event count: the cost benchmark
    reports per job); only: just these templates (one job shape, for per-shape sizes)."""
    gen = Generator(seed + 4)
    packer = msgpack.Packer(use_bin_type=True)
    w = StreamWriter(out_dir, stem)
    mix = [(wt, [n for n in names if not only or n in only], span) for wt, names, span in COST_JOBS]
    mix = [j for j in mix if j[1]]
    if not mix:
        raise SystemExit("--cost-only names no template of the cost mix")
    weights = [j[0] for j in mix]
    counts = {}
    for _ in range(n_jobs):
        _, names, (kmin, kmax) = gen.rng.choices(mix, weights)[0]
        tmpl = templates[gen.rng.choice(names)]
        counts[tmpl.name] = counts.get(tmpl.name, 0) + 1
        for tag, data in gen.job_events(tmpl, gen.pick_minions(kmin, kmax)):
            w.add(encode_event(tag, data, packer), tag)
    w.close()
    return w.manifest_entries("cost mix %s" % json.dumps(dict(sorted(counts.items()))), seed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--small-events", type=int, default=1000000)
    ap.add_argument("--mixed-events", type=int, default=200000)
    ap.add_argument("--pairs-events", type=int, default=0, help="test.ping jobs of 2 minions (pairs)")
    ap.add_argument("--wide-events", type=int, default=0, help="test.ping jobs of 1,000 minions (wide)")
    ap.add_argument("--large-events", type=int, default=0,
                    help="small jobs with a large return every ~%d events (large)" % LARGE_STREAM_EVERY)
    ap.add_argument("--blend-events", type=int, default=0,
                    help="jobs of 2 and of 1,000 minions, the mixed jobs, large returns (blend)")
    ap.add_argument("--cost-jobs", type=int, default=0, help="jobs of the cost benchmark's fleet mix (cost)")
    ap.add_argument("--cost-only", default="",
                    help="with --cost-jobs: only these templates of the mix (comma-separated), into cost-NAME...")
    ap.add_argument("--captures", default=DEFAULT_CAPTURES)
    ap.add_argument("--seed", type=int, default=20261129)
    args = ap.parse_args()

    t0 = time.perf_counter()
    n_checked = self_check(args.captures)
    names = set(SMALL_TEMPLATES) | {LARGE_TEMPLATE}
    synthetic = synthetic_templates(args.captures)
    for _, group, _ in MIXED_JOBS + LARGE_JOBS + BLEND_JOBS + COST_JOBS:
        names.update(group)
    names -= {name for name, _ in synthetic}
    templates = {}
    for name in sorted(names):
        templates[name] = JobTemplate(name, load_capture(args.captures, name))
    for name, events in synthetic:
        templates[name] = JobTemplate(name, events)

    os.makedirs(args.out, exist_ok=True)
    files = {}
    if args.small_events > 0:
        files.update(write_small(args.out, args.small_events, templates, args.seed))
    if args.mixed_events > 0:
        files.update(write_mixed(args.out, args.mixed_events, templates, args.seed))
    if args.cost_jobs > 0:
        only = [n for n in args.cost_only.split(",") if n]
        files.update(write_cost(args.out, args.cost_jobs, templates, args.seed, only,
                                "cost" + "".join("-" + n for n in only)))
    if args.pairs_events > 0:
        files.update(write_shaped(args.out, "pairs", args.pairs_events, templates["test_ping"], 2, args.seed))
    if args.wide_events > 0:
        files.update(write_shaped(args.out, "wide", args.wide_events, templates["test_ping"], 1000, args.seed))
    if args.large_events > 0:
        files.update(write_mixed(args.out, args.large_events, templates, args.seed, "large", LARGE_JOBS,
                                 LARGE_STREAM_EVERY, seed_offset=2))
    if args.blend_events > 0:
        files.update(write_mixed(args.out, args.blend_events, templates, args.seed, "blend", BLEND_JOBS,
                                 LARGE_EVERY, seed_offset=3))

    manifest = {
        "generator": "bench/make_stream.py",
        "captures": os.path.abspath(args.captures),
        "seed": args.seed,
        "msgpack_version": ".".join(map(str, msgpack.version)),
        "self_check_frames": n_checked,
        "files": files,
    }
    mpath = os.path.join(args.out, "manifest.json")
    # merge with an existing manifest so partial runs keep the other entries
    if os.path.exists(mpath):
        try:
            with open(mpath) as fh:
                old = json.load(fh)
            merged = dict(old.get("files", {}))
            merged.update(files)
            manifest["files"] = merged
        except (ValueError, OSError):
            pass
    with open(mpath, "w") as fh:
        json.dump(manifest, fh, indent=2, sort_keys=True)
        fh.write("\n")
    for name, e in sorted(files.items()):
        print(
            "%-18s %9d events %12d bytes" % (name, e["events"], e["bytes"]),
            file=sys.stderr,
        )
    print("done in %.1f s" % (time.perf_counter() - t0), file=sys.stderr)


if __name__ == "__main__":
    main()
