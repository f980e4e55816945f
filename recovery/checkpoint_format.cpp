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
  p.pack_array(5);
  p.pack(j.states.total);
  p.pack(j.states.succeeded);
  p.pack(j.states.failed);
  p.pack(j.states.changed);
  p.pack(j.states.would_change);
  p.pack_array(static_cast<std::uint32_t>(j.failed_states.size()));
  for (const auto& [m, f] : j.failed_states) {
    p.pack_array(6);
    p.pack(m);
    pack_str(p, f.id);
    pack_str(p, f.name);
    pack_str(p, f.function);
    pack_str(p, f.comment);
    p.pack(f.run_num);
  }
  p.pack_array(static_cast<std::uint32_t>(j.failures.size()));
  for (const auto& [m, why] : j.failures) {
    p.pack_array(2);
    p.pack(m);
    pack_str(p, why);
  }
  if (j.outcome_success)
    p.pack(*j.outcome_success);
  else
    p.pack_nil();
  pack_str(p, j.outcome_reason);
  p.pack_array(2);
  p.pack(static_cast<std::uint8_t>(j.risk.level));
  p.pack_array(static_cast<std::uint32_t>(j.risk.reasons.size()));
  for (const auto& r : j.risk.reasons) pack_str(p, r);
  p.pack(j.settled);
  p.pack(j.updates);
  pack_str(p, j.rerun_of);
  p.pack(j.args_redacted);
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
  j.args_json = read_str(f[6], "job.args_json");
  if (!j.args_json.empty()) {
    // Job summaries embed it as raw JSON: it must be strict JSON, as the correlator wrote it.
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(j.args_json.data(),
                                                                                      j.args_json.size());
    if (doc.HasParseError()) throw Invalid("job.args_json: not JSON");
  }
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
  for (std::uint8_t fl : j.flags) {
    if (fl & ~(correlator::kOutcomeMask | correlator::kLate | correlator::kExpected))
      throw Invalid("job.flags: unknown bits");
    switch (fl & correlator::kOutcomeMask) {
      case correlator::kPending:
        ++j.pending;
        break;
      case correlator::kSucceeded:
        ++j.succeeded;
        break;
      case correlator::kFailed:
        ++j.failed;
        break;
      default:
        ++j.missing;
    }
    if (fl & correlator::kExpected) ++j.expected;
    if (fl & correlator::kLate) ++j.late;
  }

  const msgpack::object* ext = array_of(f[13], "job.extended");
  for (std::size_t i = 0; i < size_of(f[13]); ++i) {
    const msgpack::object* e = array_of(ext[i], "job.extended[]", 2);
    j.extended.emplace_back(minion(e[0], names, "job.extended[].minion"), read_time(e[1], "job.extended[].until"));
  }
  j.progress_events = read_uint(f[14], "job.progress_events", UINT64_MAX);
  j.state_run = read_bool(f[15], "job.state_run");
  const msgpack::object* st = array_of(f[16], "job.states", 5);
  j.states.total = read_uint(st[0], "job.states.total", UINT64_MAX);
  j.states.succeeded = read_uint(st[1], "job.states.succeeded", UINT64_MAX);
  j.states.failed = read_uint(st[2], "job.states.failed", UINT64_MAX);
  j.states.changed = read_uint(st[3], "job.states.changed", UINT64_MAX);
  j.states.would_change = read_uint(st[4], "job.states.would_change", UINT64_MAX);

  const msgpack::object* fs = array_of(f[17], "job.failed_states");
  for (std::size_t i = 0; i < size_of(f[17]); ++i) {
    const msgpack::object* s = array_of(fs[i], "job.failed_states[]", 6);
    correlator::FailedState state;
    state.id = read_str(s[1], "job.failed_states[].id");
    state.name = read_str(s[2], "job.failed_states[].name");
    state.function = read_str(s[3], "job.failed_states[].function");
    state.comment = read_str(s[4], "job.failed_states[].comment");
    state.run_num = read_int(s[5], "job.failed_states[].run_num");
    j.failed_states.emplace_back(minion(s[0], names, "job.failed_states[].minion"), std::move(state));
  }
  const msgpack::object* fl = array_of(f[18], "job.failures");
  for (std::size_t i = 0; i < size_of(f[18]); ++i) {
    const msgpack::object* x = array_of(fl[i], "job.failures[]", 2);
    j.failures.emplace_back(minion(x[0], names, "job.failures[].minion"), read_str(x[1], "job.failures[].reason"));
  }
  if (f[19].type != msgpack::type::NIL) j.outcome_success = read_bool(f[19], "job.outcome_success");
  j.outcome_reason = read_str(f[20], "job.outcome_reason");
  const msgpack::object* risk = array_of(f[21], "job.risk", 2);
  j.risk.level = static_cast<correlator::RiskLevel>(
      read_uint(risk[0], "job.risk.level", static_cast<std::uint64_t>(correlator::RiskLevel::critical)));
  const msgpack::object* reasons = array_of(risk[1], "job.risk.reasons");
  for (std::size_t i = 0; i < size_of(risk[1]); ++i)
    j.risk.reasons.push_back(read_str(reasons[i], "job.risk.reasons[]"));
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

CheckpointFailure failed(CheckpointError e, std::string why) { return {e, std::move(why)}; }

}  // namespace

std::string_view to_string(CheckpointError e) { return enumerator_name(e, "invalid"); }

std::string encode_checkpoint(const correlator::CorrelatorSnapshot& snapshot, Micros written_at) {
  msgpack::sbuffer payload;
  Packer p(payload);
  p.pack_array(3);
  p.pack(written_at);
  p.pack_array(static_cast<std::uint32_t>(snapshot.minions.size()));
  for (const auto& name : snapshot.minions) pack_str(p, name);
  p.pack_array(static_cast<std::uint32_t>(snapshot.jobs.size()));
  for (const Job& j : snapshot.jobs) pack_job(p, j);

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
  if (version != kCheckpointVersion)
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
    const msgpack::object* top = array_of(h.get(), "snapshot", 3);
    d.written_at = read_time(top[0], "written_at");
    const msgpack::object* names = array_of(top[1], "minions");
    for (std::size_t i = 0; i < size_of(top[1]); ++i) d.snapshot.minions.push_back(read_str(names[i], "minions[]"));
    const msgpack::object* jobs = array_of(top[2], "jobs");
    for (std::size_t i = 0; i < size_of(top[2]); ++i)
      d.snapshot.jobs.push_back(read_job(jobs[i], d.snapshot.minions.size()));
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
