#include "recovery/checkpoint_format.h"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <msgpack.hpp>
#include "common/enum_names.h"

namespace salttap::recovery {
namespace {

using correlator::Job;
using correlator::MinionId;

constexpr std::size_t kJobFields = 26;       // docs/checkpoint.md, "Job"
constexpr std::size_t kJobFieldsFirst = 24;  // as written before re-runs (items 24, 25) existed

std::uint32_t crc32_of(std::string_view bytes) {
  uLong crc = ::crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed it in pieces.
  while (!bytes.empty()) {
    const auto n = static_cast<uInt>(std::min<std::size_t>(bytes.size(), std::numeric_limits<uInt>::max()));
    crc = ::crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), n);
    bytes.remove_prefix(n);
  }
  return static_cast<std::uint32_t>(crc);
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

std::uint32_t get_u32(std::string_view b, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

using Packer = msgpack::packer<msgpack::sbuffer>;

void pack_str(Packer& p, std::string_view s) {
  p.pack_str(static_cast<std::uint32_t>(s.size()));
  p.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

void pack_states(Packer& p, const correlator::StateCounts& s) {
  p.pack_array(5);
  p.pack(s.total);
  p.pack(s.succeeded);
  p.pack(s.failed);
  p.pack(s.changed);
  p.pack(s.would_change);
}

void pack_failed_states(Packer& p, const std::vector<std::pair<MinionId, correlator::FailedState>>& states) {
  p.pack_array(static_cast<std::uint32_t>(states.size()));
  for (const auto& [m, f] : states) {
    p.pack_array(6);
    p.pack(m);
    pack_str(p, f.id);
    pack_str(p, f.name);
    pack_str(p, f.function);
    pack_str(p, f.comment);
    p.pack(f.run_num);
  }
}

void pack_failures(Packer& p, const std::vector<std::pair<MinionId, std::string>>& failures) {
  p.pack_array(static_cast<std::uint32_t>(failures.size()));
  for (const auto& [m, why] : failures) {
    p.pack_array(2);
    p.pack(m);
    pack_str(p, why);
  }
}

void pack_outcome(Packer& p, const std::optional<bool>& success) {
  if (success)
    p.pack(*success);
  else
    p.pack_nil();
}

void pack_risk(Packer& p, const correlator::Risk& risk) {
  p.pack_array(2);
  p.pack(static_cast<std::uint8_t>(risk.level));
  p.pack_array(static_cast<std::uint32_t>(risk.reasons.size()));
  for (const auto& r : risk.reasons) pack_str(p, r);
}

void pack_job(Packer& p, const Job& j) {
  p.pack_array(kJobFields);
  pack_str(p, j.jid);
  p.pack(static_cast<std::uint8_t>(j.kind));
  pack_str(p, j.fun);
  pack_str(p, j.user);
  pack_str(p, j.tgt);
  pack_str(p, j.tgt_type);
  pack_str(p, j.args_json);
  p.pack(j.started_at);
  p.pack(j.deadline);
  p.pack(j.settled_at);
  p.pack(j.next_check);
  p.pack_array(static_cast<std::uint32_t>(j.minions.size()));
  for (MinionId m : j.minions) p.pack(m);
  p.pack_bin(static_cast<std::uint32_t>(j.flags.size()));
  p.pack_bin_body(reinterpret_cast<const char*>(j.flags.data()), static_cast<std::uint32_t>(j.flags.size()));
  p.pack_array(static_cast<std::uint32_t>(j.extended.size()));
  for (const auto& [m, until] : j.extended) {
    p.pack_array(2);
    p.pack(m);
    p.pack(until);
  }
  p.pack(j.progress_events);
  p.pack(j.state_run);
  pack_states(p, j.states);
  pack_failed_states(p, j.failed_states);
  pack_failures(p, j.failures);
  pack_outcome(p, j.outcome_success);
  pack_str(p, j.outcome_reason);
  pack_risk(p, j.risk);
  p.pack(j.settled);
  p.pack(j.updates);
  pack_str(p, j.rerun_of);
  p.pack(j.args_redacted);
}

// The shared parts of settled jobs (docs/checkpoint.md, "Settled jobs").
void pack_load(Packer& p, const correlator::JobLoad& l) {
  p.pack_array(8);
  pack_str(p, l.fun);
  pack_str(p, l.user);
  pack_str(p, l.tgt);
  pack_str(p, l.tgt_type);
  pack_str(p, l.args_json);
  pack_str(p, l.rerun_of);
  p.pack(l.args_redacted);
  pack_risk(p, l.risk);
}

void pack_detail(Packer& p, const correlator::JobDetail& d) {
  p.pack_array(6);
  p.pack(d.state_run);
  pack_states(p, d.states);
  pack_failed_states(p, d.failed_states);
  pack_failures(p, d.failures);
  pack_outcome(p, d.outcome_success);
  pack_str(p, d.outcome_reason);
}

void pack_settled(Packer& p, const correlator::SettledEntry& e) {
  const correlator::SettledJob& j = e.job;
  p.pack_array(11);
  pack_str(p, e.jid);
  p.pack(static_cast<std::uint8_t>(j.kind));
  p.pack(j.started_at);
  p.pack(j.settled_at);
  p.pack(j.grace_end);
  p.pack(j.load);
  p.pack(j.detail);
  p.pack(j.updates);
  p.pack(j.progress_events);
  p.pack_array(static_cast<std::uint32_t>(j.minions.size()));
  for (std::size_t i = 0; i < j.minions.size(); ++i) p.pack(j.minions[i]);  // id << 4 | flags
  p.pack(std::uint64_t{j.open_seq});  // its place in the opening order of all jobs
}

// Reading: any deviation from the documented shape throws Invalid.
struct Invalid : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const msgpack::object* array_of(const msgpack::object& o, std::string_view what, std::optional<std::size_t> size = {}) {
  if (o.type != msgpack::type::ARRAY) throw Invalid(fmt::format("{}: not an array", what));
  if (size && o.via.array.size != *size)
    throw Invalid(fmt::format("{}: {} items, expected {}", what, o.via.array.size, *size));
  return o.via.array.ptr;
}

std::size_t size_of(const msgpack::object& o) { return o.via.array.size; }

std::string read_str(const msgpack::object& o, std::string_view what) {
  if (o.type != msgpack::type::STR) throw Invalid(fmt::format("{}: not a string", what));
  return {o.via.str.ptr, o.via.str.size};
}

std::uint64_t read_uint(const msgpack::object& o, std::string_view what, std::uint64_t max) {
  if (o.type != msgpack::type::POSITIVE_INTEGER || o.via.u64 > max)
    throw Invalid(fmt::format("{}: not an integer in 0..{}", what, max));
  return o.via.u64;
}

std::int64_t read_int(const msgpack::object& o, std::string_view what) {
  if (o.type == msgpack::type::NEGATIVE_INTEGER) return o.via.i64;
  if (o.type == msgpack::type::POSITIVE_INTEGER && o.via.u64 <= std::numeric_limits<std::int64_t>::max())
    return static_cast<std::int64_t>(o.via.u64);
  throw Invalid(fmt::format("{}: not a 64-bit integer", what));
}

// Times: microseconds since the epoch, up to the end of year 9999 (what the
// clock and the index names can hold).
constexpr std::int64_t kMaxMicros = 253'402'300'799'999'999;
std::int64_t read_time(const msgpack::object& o, std::string_view what) {
  const std::int64_t t = read_int(o, what);
  if (t < 0 || t > kMaxMicros) throw Invalid(fmt::format("{}: not a time", what));
  return t;
}

bool read_bool(const msgpack::object& o, std::string_view what) {
  if (o.type != msgpack::type::BOOLEAN) throw Invalid(fmt::format("{}: not a boolean", what));
  return o.via.boolean;
}

MinionId minion(const msgpack::object& o, std::size_t names, std::string_view what) {
  if (names == 0) throw Invalid(fmt::format("{}: a minion id, but no minion names", what));
  return static_cast<MinionId>(read_uint(o, what, names - 1));
}

correlator::StateCounts read_states(const msgpack::object& o) {
  const msgpack::object* st = array_of(o, "job.states", 5);
  correlator::StateCounts s;
  s.total = read_uint(st[0], "job.states.total", UINT64_MAX);
  s.succeeded = read_uint(st[1], "job.states.succeeded", UINT64_MAX);
  s.failed = read_uint(st[2], "job.states.failed", UINT64_MAX);
  s.changed = read_uint(st[3], "job.states.changed", UINT64_MAX);
  s.would_change = read_uint(st[4], "job.states.would_change", UINT64_MAX);
  return s;
}

std::vector<std::pair<MinionId, correlator::FailedState>> read_failed_states(const msgpack::object& o,
                                                                             std::size_t names) {
  std::vector<std::pair<MinionId, correlator::FailedState>> out;
  const msgpack::object* fs = array_of(o, "job.failed_states");
  for (std::size_t i = 0; i < size_of(o); ++i) {
    const msgpack::object* s = array_of(fs[i], "job.failed_states[]", 6);
    correlator::FailedState state;
    state.id = read_str(s[1], "job.failed_states[].id");
    state.name = read_str(s[2], "job.failed_states[].name");
    state.function = read_str(s[3], "job.failed_states[].function");
    state.comment = read_str(s[4], "job.failed_states[].comment");
    state.run_num = read_int(s[5], "job.failed_states[].run_num");
    out.emplace_back(minion(s[0], names, "job.failed_states[].minion"), std::move(state));
  }
  return out;
}

std::vector<std::pair<MinionId, std::string>> read_failures(const msgpack::object& o, std::size_t names) {
  std::vector<std::pair<MinionId, std::string>> out;
  const msgpack::object* fl = array_of(o, "job.failures");
  for (std::size_t i = 0; i < size_of(o); ++i) {
    const msgpack::object* x = array_of(fl[i], "job.failures[]", 2);
    out.emplace_back(minion(x[0], names, "job.failures[].minion"), read_str(x[1], "job.failures[].reason"));
  }
  return out;
}

std::optional<bool> read_outcome(const msgpack::object& o) {
  if (o.type == msgpack::type::NIL) return std::nullopt;
  return read_bool(o, "job.outcome_success");
}

correlator::Risk read_risk(const msgpack::object& o) {
  const msgpack::object* risk = array_of(o, "job.risk", 2);
  correlator::Risk r;
  r.level = static_cast<correlator::RiskLevel>(
      read_uint(risk[0], "job.risk.level", static_cast<std::uint64_t>(correlator::RiskLevel::critical)));
  const msgpack::object* reasons = array_of(risk[1], "job.risk.reasons");
  for (std::size_t i = 0; i < size_of(risk[1]); ++i) r.reasons.push_back(read_str(reasons[i], "job.risk.reasons[]"));
  return r;
}

std::string read_args_json(const msgpack::object& o) {
  std::string args = read_str(o, "job.args_json");
  if (!args.empty()) {
    // Job summaries embed it as raw JSON: it must be strict JSON, as the correlator wrote it.
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(args.data(), args.size());
    if (doc.HasParseError()) throw Invalid("job.args_json: not JSON");
  }
  return args;
}

Job read_job(const msgpack::object& o, std::size_t names) {
  const msgpack::object* f = array_of(o, "job");
  const std::size_t fields = size_of(o);
  if (fields != kJobFields && fields != kJobFieldsFirst)
    throw Invalid(fmt::format("job: {} items, expected {} or {}", fields, kJobFieldsFirst, kJobFields));
  Job j;
  j.jid = read_str(f[0], "job.jid");
  if (j.jid.empty()) throw Invalid("job.jid: empty");
  j.kind = static_cast<correlator::JobKind>(
      read_uint(f[1], "job.kind", static_cast<std::uint64_t>(correlator::JobKind::orphan)));
  j.fun = read_str(f[2], "job.fun");
  j.user = read_str(f[3], "job.user");
  j.tgt = read_str(f[4], "job.tgt");
  j.tgt_type = read_str(f[5], "job.tgt_type");
  j.args_json = read_args_json(f[6]);
  j.started_at = read_time(f[7], "job.started_at");
  j.deadline = read_time(f[8], "job.deadline");
  j.settled_at = read_time(f[9], "job.settled_at");
  j.next_check = read_time(f[10], "job.next_check");

  const msgpack::object* ids = array_of(f[11], "job.minions");
  for (std::size_t i = 0; i < size_of(f[11]); ++i) {
    const MinionId m = minion(ids[i], names, "job.minions[]");
    if (!j.minions.empty() && m <= j.minions.back()) throw Invalid("job.minions: not sorted and unique");
    j.minions.push_back(m);
  }
  if (f[12].type != msgpack::type::BIN) throw Invalid("job.flags: not bytes");
  j.flags.assign(f[12].via.bin.ptr, f[12].via.bin.ptr + f[12].via.bin.size);
  if (j.flags.size() != j.minions.size()) throw Invalid("job.flags: not one per minion");
  for (std::uint8_t fl : j.flags)
    if (fl & ~(correlator::kOutcomeMask | correlator::kLate | correlator::kExpected))
      throw Invalid("job.flags: unknown bits");
  j.recount();

  const msgpack::object* ext = array_of(f[13], "job.extended");
  for (std::size_t i = 0; i < size_of(f[13]); ++i) {
    const msgpack::object* e = array_of(ext[i], "job.extended[]", 2);
    j.extended.emplace_back(minion(e[0], names, "job.extended[].minion"), read_time(e[1], "job.extended[].until"));
  }
  j.progress_events = read_uint(f[14], "job.progress_events", UINT64_MAX);
  j.state_run = read_bool(f[15], "job.state_run");
  j.states = read_states(f[16]);
  j.failed_states = read_failed_states(f[17], names);
  j.failures = read_failures(f[18], names);
  j.outcome_success = read_outcome(f[19]);
  j.outcome_reason = read_str(f[20], "job.outcome_reason");
  j.risk = read_risk(f[21]);
  j.settled = read_bool(f[22], "job.settled");
  j.updates = static_cast<std::uint32_t>(read_uint(f[23], "job.updates", UINT32_MAX));
  if (fields == kJobFields) {
    j.rerun_of = read_str(f[24], "job.rerun_of");
    j.args_redacted = read_bool(f[25], "job.args_redacted");
  } else {
    j.args_redacted = true;  // not known: never trusted for a re-run
  }
  return j;
}

correlator::JobLoad read_load(const msgpack::object& o) {
  const msgpack::object* f = array_of(o, "load", 8);
  correlator::JobLoad l;
  l.fun = read_str(f[0], "load.fun");
  l.user = read_str(f[1], "load.user");
  l.tgt = read_str(f[2], "load.tgt");
  l.tgt_type = read_str(f[3], "load.tgt_type");
  l.args_json = read_args_json(f[4]);
  l.rerun_of = read_str(f[5], "load.rerun_of");
  l.args_redacted = read_bool(f[6], "load.args_redacted");
  l.risk = read_risk(f[7]);
  return l;
}

correlator::JobDetail read_detail(const msgpack::object& o, std::size_t names) {
  const msgpack::object* f = array_of(o, "detail", 6);
  correlator::JobDetail d;
  d.state_run = read_bool(f[0], "detail.state_run");
  d.states = read_states(f[1]);
  d.failed_states = read_failed_states(f[2], names);
  d.failures = read_failures(f[3], names);
  d.outcome_success = read_outcome(f[4]);
  d.outcome_reason = read_str(f[5], "detail.outcome_reason");
  return d;
}

correlator::SettledEntry read_settled(const msgpack::object& o, std::size_t names, std::size_t loads,
                                      std::size_t details) {
  const msgpack::object* f = array_of(o, "settled", 11);
  correlator::SettledEntry e;
  e.jid = read_str(f[0], "settled.jid");
  if (!correlator::JidKey::of(e.jid)) throw Invalid("settled.jid: not a compact jid");
  correlator::SettledJob& j = e.job;
  j.kind = static_cast<correlator::JobKind>(
      read_uint(f[1], "settled.kind", static_cast<std::uint64_t>(correlator::JobKind::orphan)));
  j.started_at = read_time(f[2], "settled.started_at");
  j.settled_at = read_time(f[3], "settled.settled_at");
  j.grace_end = read_time(f[4], "settled.grace_end");
  j.load = static_cast<std::uint32_t>(read_uint(f[5], "settled.load", loads - 1));
  if (j.load == 0) throw Invalid("settled.load: 0");
  j.detail = static_cast<std::uint32_t>(read_uint(f[6], "settled.detail", details - 1));
  j.updates = static_cast<std::uint32_t>(read_uint(f[7], "settled.updates", UINT32_MAX));
  j.progress_events = static_cast<std::uint32_t>(read_uint(f[8], "settled.progress_events", UINT32_MAX));
  const msgpack::object* ms = array_of(f[9], "settled.minions");
  std::vector<std::uint32_t> packed;
  for (std::size_t i = 0; i < size_of(f[9]); ++i) {
    const auto p = static_cast<std::uint32_t>(read_uint(ms[i], "settled.minions[]", UINT32_MAX));
    if (names == 0 || correlator::PackedMinions::id(p) >= names)
      throw Invalid("settled.minions[]: a minion id outside the names");
    if (correlator::PackedMinions::flags(p) & ~(correlator::kOutcomeMask | correlator::kLate | correlator::kExpected))
      throw Invalid("settled.minions[]: unknown flag bits");
    if (!packed.empty() && correlator::PackedMinions::id(p) <= correlator::PackedMinions::id(packed.back()))
      throw Invalid("settled.minions: not sorted and unique");
    packed.push_back(p);
  }
  j.minions = correlator::PackedMinions(packed);
  j.open_seq = read_uint(f[10], "settled.place", correlator::SettledJob::kMaxSeq);
  return e;
}

CheckpointFailure failed(CheckpointError e, std::string why) { return {e, std::move(why)}; }

}  // namespace

std::string_view to_string(CheckpointError e) { return enumerator_name(e, "invalid"); }

std::string encode_checkpoint(const correlator::CorrelatorSnapshot& snapshot, Micros written_at) {
  msgpack::sbuffer payload;
  Packer p(payload);
  p.pack_array(6);
  p.pack(written_at);
  p.pack_array(static_cast<std::uint32_t>(snapshot.minions.size()));
  for (const auto& name : snapshot.minions) pack_str(p, name);
  p.pack_array(static_cast<std::uint32_t>(snapshot.jobs.size()));
  for (const Job& j : snapshot.jobs) pack_job(p, j);
  // Settled jobs, compact: their shared loads and details once each ([0] is none).
  const std::size_t loads = std::max<std::size_t>(snapshot.loads.size(), 1);
  const std::size_t details = std::max<std::size_t>(snapshot.details.size(), 1);
  p.pack_array(static_cast<std::uint32_t>(loads - 1));
  for (std::size_t i = 1; i < loads; ++i) pack_load(p, snapshot.loads[i]);
  p.pack_array(static_cast<std::uint32_t>(details - 1));
  for (std::size_t i = 1; i < details; ++i) pack_detail(p, snapshot.details[i]);
  p.pack_array(static_cast<std::uint32_t>(snapshot.settled.size()));
  for (const auto& e : snapshot.settled) pack_settled(p, e);

  const std::string_view body(payload.data(), payload.size());
  std::string out;
  out.reserve(kCheckpointHeaderBytes + body.size());
  out.append(kCheckpointMagic);
  put_u32(out, kCheckpointVersion);
  put_u32(out, static_cast<std::uint32_t>(body.size()));
  put_u32(out, crc32_of(body));
  out.append(body);
  return out;
}

Result<DecodedCheckpoint, CheckpointFailure> decode_checkpoint(std::string_view bytes) {
  if (bytes.size() < kCheckpointHeaderBytes)
    return failed(CheckpointError::truncated, fmt::format("{} bytes, shorter than the header", bytes.size()));
  if (bytes.substr(0, kCheckpointMagic.size()) != kCheckpointMagic)
    return failed(CheckpointError::bad_magic, "not a salttap checkpoint (magic)");
  const std::uint32_t version = get_u32(bytes, 8);
  if (version != kCheckpointVersion && version != kCheckpointVersionFirst)
    return failed(CheckpointError::unknown_version,
                  fmt::format("format version {}, this build reads {}", version, kCheckpointVersion));
  const std::uint32_t length = get_u32(bytes, 12);
  const std::string_view body = bytes.substr(kCheckpointHeaderBytes);
  if (body.size() < length)
    return failed(CheckpointError::truncated, fmt::format("payload of {} bytes, {} present", length, body.size()));
  if (body.size() > length)
    return failed(CheckpointError::invalid, fmt::format("{} bytes after the payload", body.size() - length));
  if (crc32_of(body) != get_u32(bytes, 16)) return failed(CheckpointError::bad_crc, "crc32 does not match");

  DecodedCheckpoint d;
  try {
    // No count in the payload can ask for more items than it has bytes.
    const std::size_t cap = std::max<std::size_t>(body.size(), 1);
    const msgpack::unpack_limit limit(cap, cap, cap, cap, cap, 16);
    std::size_t offset = 0;
    const msgpack::object_handle h = msgpack::unpack(body.data(), body.size(), offset, nullptr, nullptr, limit);
    if (offset != body.size()) throw Invalid("bytes after the snapshot");
    const msgpack::object* top = array_of(h.get(), "snapshot", version == kCheckpointVersionFirst ? 3 : 6);
    d.written_at = read_time(top[0], "written_at");
    const msgpack::object* names = array_of(top[1], "minions");
    for (std::size_t i = 0; i < size_of(top[1]); ++i) d.snapshot.minions.push_back(read_str(names[i], "minions[]"));
    const msgpack::object* jobs = array_of(top[2], "jobs");
    for (std::size_t i = 0; i < size_of(top[2]); ++i)
      d.snapshot.jobs.push_back(read_job(jobs[i], d.snapshot.minions.size()));
    if (version != kCheckpointVersionFirst) {
      const std::size_t known = d.snapshot.minions.size();
      d.snapshot.loads.emplace_back();
      const msgpack::object* loads = array_of(top[3], "loads");
      for (std::size_t i = 0; i < size_of(top[3]); ++i) d.snapshot.loads.push_back(read_load(loads[i]));
      d.snapshot.details.emplace_back();
      const msgpack::object* details = array_of(top[4], "details");
      for (std::size_t i = 0; i < size_of(top[4]); ++i) d.snapshot.details.push_back(read_detail(details[i], known));
      const msgpack::object* settled = array_of(top[5], "settled");
      for (std::size_t i = 0; i < size_of(top[5]); ++i)
        d.snapshot.settled.push_back(
            read_settled(settled[i], known, d.snapshot.loads.size(), d.snapshot.details.size()));
    }
  } catch (const Invalid& e) {
    return failed(CheckpointError::invalid, e.what());
  } catch (const msgpack::unpack_error& e) {
    return failed(CheckpointError::invalid, fmt::format("msgpack: {}", e.what()));
  } catch (const std::bad_alloc&) {
    return failed(CheckpointError::invalid, "msgpack: too large");
  } catch (const std::exception& e) {
    return failed(CheckpointError::invalid, fmt::format("msgpack: {}", e.what()));
  }
  return d;
}

}  // namespace salttap::recovery
