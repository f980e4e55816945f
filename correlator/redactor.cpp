#include "correlator/redactor.h"

#include <cstring>
#include <stdexcept>

#include "common/text.h"
#include "common/yaml_fields.h"
#include "tap/event.h"

namespace salttap::correlator {
namespace {

constexpr std::string_view kBegin = "-----BEGIN";
constexpr std::string_view kEnd = "-----END";
constexpr std::string_view kDashes = "-----";
constexpr std::string_view kPrivateKey = "PRIVATE KEY";
constexpr std::size_t kMaxPemLabel = 64;

const char* find(const char* hay, std::size_t hay_len, std::string_view needle) {
  return static_cast<const char*>(::memmem(hay, hay_len, needle.data(), needle.size()));
}

// "-----BEGIN" in s? glibc's memmem has a fixed setup cost that dominates on
// the short strings most returns are made of; below 256 bytes a memchr for
// the first dash and a compare is cheaper.
bool may_hold_pem(std::string_view s) {
  if (s.size() < kBegin.size()) return false;
  if (s.size() >= 256) return find(s.data(), s.size(), kBegin) != nullptr;
  return s.find(kBegin) != std::string_view::npos;
}

// Length of the kwarg name when `s` starts with `name=` in Salt's syntax
// (`^([^\d\W][\w.-]*)=(?!=)`; bytes >= 0x80 count as word characters), else 0.
std::size_t kwarg_name_length(std::string_view s) {
  auto word = [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
  };
  if (s.empty() || !word(static_cast<unsigned char>(s[0])) || (s[0] >= '0' && s[0] <= '9')) return 0;
  std::size_t i = 1;
  while (i < s.size() && (word(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == '-')) ++i;
  if (i >= s.size() || s[i] != '=') return 0;
  if (i + 1 < s.size() && s[i + 1] == '=') return 0;
  return i;
}

struct Range {
  std::size_t begin, end;
};

// Appends the [begin, end) ranges of PEM private key blocks in `s` to `out`.
// Allocates only when a block is found.
void find_private_keys(std::string_view s, std::vector<Range>& out) {
  const char* const base = s.data();
  const std::size_t n = s.size();
  std::size_t pos = 0;
  while (pos < n) {
    const char* hit = find(base + pos, n - pos, kBegin);
    if (!hit) return;
    const auto begin = static_cast<std::size_t>(hit - base);
    std::size_t label_begin = begin + kBegin.size();
    while (label_begin < n && s[label_begin] == ' ') ++label_begin;
    const std::string_view rest = s.substr(label_begin, kMaxPemLabel + kDashes.size());
    const std::size_t label_len = rest.find(kDashes);
    if (label_len == std::string_view::npos) {
      pos = label_begin;
      continue;
    }
    const std::string_view label = rest.substr(0, label_len);
    const std::size_t header_end = label_begin + label_len + kDashes.size();
    if (label.find(kPrivateKey) == std::string_view::npos || label.find('\n') != std::string_view::npos) {
      pos = header_end;
      continue;
    }
    // The matching footer, "-----END <label>-----"; without one the block
    // runs to the end of the string (a trimmed or truncated return).
    std::string footer;
    footer.reserve(kEnd.size() + 1 + label.size() + kDashes.size());
    footer.append(kEnd).append(" ").append(label).append(kDashes);
    const char* f = find(base + header_end, n - header_end, footer);
    const std::size_t end = f ? static_cast<std::size_t>(f - base) + footer.size() : n;
    out.push_back({begin, end});
    pos = end;
  }
}

msgpack::object make_string(msgpack::type::object_type type, const char* ptr, std::size_t size) {
  msgpack::object o;
  o.type = type;
  if (type == msgpack::type::BIN) {
    o.via.bin.ptr = ptr;
    o.via.bin.size = static_cast<std::uint32_t>(size);
  } else {
    o.via.str.ptr = ptr;
    o.via.str.size = static_cast<std::uint32_t>(size);
  }
  return o;
}

template <typename T>
T* allocate_array(msgpack::zone& zone, std::size_t n) {
  return static_cast<T*>(zone.allocate_align(sizeof(T) * n, alignof(T)));
}

}  // namespace

std::vector<std::string> default_key_patterns() {
  return {
      "passw(or)?d", "passphrase",      "(^|[_-])pass$",      "secret",          "token",
      "api[_-]?key", "private[_-]?key", "encryption[_-]?key", "signing[_-]?key", "shared[_-]?key",
      "^key$",       "credential",      "(^|[_-])auth$",      "authorization",   "connection[_-]?string",
  };
}

std::vector<std::string> default_redact_return_funs() {
  return {
      "pillar.*", "config.get", "config.option", "config.items", "config.merge",  "config.dot_vals",
      "sdb.get",  "vault.*",    "gpg.decrypt",   "environ.get",  "environ.items", "runner.pillar.*",
  };
}

Redactor::Redactor(RedactionConfig config)
    : config_(std::move(config)), keys_(config_.key_patterns), whole_return_funs_(config_.redact_return_funs) {}

msgpack::object Redactor::marker() {
  return make_string(msgpack::type::STR, kRedactedMarker.data(), kRedactedMarker.size());
}

bool Redactor::redacts_whole_return(std::string_view fun) const { return whole_return_funs_.matches_any(fun); }

msgpack::object Redactor::redact(const msgpack::object& value, msgpack::zone& zone, std::size_t* count) const {
  std::size_t n = 0;
  msgpack::object out;
  const bool changed = redact_node(value, out, zone, n, 0);
  if (count) *count += n;
  return changed ? out : value;
}

bool Redactor::redact_string(const msgpack::object& in, msgpack::object& out, msgpack::zone& zone,
                             std::size_t& count) const {
  const std::string_view s = in.type == msgpack::type::BIN ? std::string_view(in.via.bin.ptr, in.via.bin.size)
                                                           : std::string_view(in.via.str.ptr, in.via.str.size);
  // name=value with a secret name: keep the name, drop the whole value.
  if (const std::size_t name_len = kwarg_name_length(s); name_len && keys_.search(s.substr(0, name_len))) {
    const std::size_t size = name_len + 1 + kRedactedMarker.size();
    char* p = static_cast<char*>(zone.allocate_no_align(size));
    std::memcpy(p, s.data(), name_len + 1);
    std::memcpy(p + name_len + 1, kRedactedMarker.data(), kRedactedMarker.size());
    out = make_string(in.type, p, size);
    ++count;
    return true;
  }
  if (!may_hold_pem(s)) return false;
  std::vector<Range> blocks;
  find_private_keys(s, blocks);
  if (blocks.empty()) return false;
  std::size_t size = s.size();
  for (const Range& r : blocks) size = size - (r.end - r.begin) + kRedactedMarker.size();
  char* p = static_cast<char*>(zone.allocate_no_align(size));
  char* w = p;
  std::size_t from = 0;
  for (const Range& r : blocks) {
    std::memcpy(w, s.data() + from, r.begin - from);
    w += r.begin - from;
    std::memcpy(w, kRedactedMarker.data(), kRedactedMarker.size());
    w += kRedactedMarker.size();
    from = r.end;
  }
  std::memcpy(w, s.data() + from, s.size() - from);
  out = make_string(in.type, p, size);
  count += blocks.size();
  return true;
}

bool Redactor::redact_node(const msgpack::object& in, msgpack::object& out, msgpack::zone& zone, std::size_t& count,
                           std::size_t depth) const {
  switch (in.type) {
    case msgpack::type::STR:
    case msgpack::type::BIN:
      return redact_string(in, out, zone, count);
    case msgpack::type::ARRAY: {
      if (depth >= kMaxRedactDepth) break;
      const msgpack::object_array& a = in.via.array;
      msgpack::object* copy = nullptr;
      for (std::uint32_t i = 0; i < a.size; ++i) {
        msgpack::object item;
        if (!redact_node(a.ptr[i], item, zone, count, depth + 1)) continue;
        if (!copy) {
          copy = allocate_array<msgpack::object>(zone, a.size);
          std::memcpy(static_cast<void*>(copy), a.ptr, sizeof(msgpack::object) * a.size);
        }
        copy[i] = item;
      }
      if (!copy) return false;
      out = in;
      out.via.array.ptr = copy;
      return true;
    }
    case msgpack::type::MAP: {
      if (depth >= kMaxRedactDepth) break;
      const msgpack::object_map& m = in.via.map;
      msgpack::object_kv* copy = nullptr;
      for (std::uint32_t i = 0; i < m.size; ++i) {
        msgpack::object val;
        const std::optional<std::string_view> key = tap::as_string(m.ptr[i].key);
        if (key && keys_.search(*key)) {
          val = marker();
          ++count;
        } else if (!redact_node(m.ptr[i].val, val, zone, count, depth + 1)) {
          continue;
        }
        if (!copy) {
          copy = allocate_array<msgpack::object_kv>(zone, m.size);
          std::memcpy(static_cast<void*>(copy), m.ptr, sizeof(msgpack::object_kv) * m.size);
        }
        copy[i].val = val;
      }
      if (!copy) return false;
      out = in;
      out.via.map.ptr = copy;
      return true;
    }
    default:
      return false;
  }
  // Too deep to inspect: fail closed.
  out = marker();
  ++count;
  return true;
}

namespace {

std::vector<std::string> string_list(const YAML::Node& node, const std::string& key, bool patterns) {
  const std::string where = "redaction config: " + key;
  std::vector<std::string> out = yaml::strings(node, where);
  if (patterns) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      try {
        detail::compile_pattern(out[i]);
      } catch (const std::invalid_argument& e) {
        throw ConfigError(fmt::format("{}[{}]: {}", where, i, e.what()));
      }
    }
  }
  return out;
}

}  // namespace

RedactionConfig parse_redaction_config(const YAML::Node& node) {
  RedactionConfig config;
  if (!node || node.IsNull()) return config;
  if (!node.IsMap()) throw ConfigError("redaction config: expected a mapping");
  for (const auto& kv : node) {
    const auto key = kv.first.as<std::string>("");
    if (key == "key_patterns")
      config.key_patterns = string_list(kv.second, key, true);
    else if (key == "redact_return_funs")
      config.redact_return_funs = string_list(kv.second, key, false);
    else
      throw ConfigError("redaction config: unknown key '" + key + "'");
  }
  return config;
}

}  // namespace salttap::correlator
