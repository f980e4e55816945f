#include "correlator/run_kind.h"

#include <algorithm>

#include "tap/event.h"

namespace salttap::correlator {
namespace {

bool ieq(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           auto l = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
           return l(x) == l(y);
         });
}

bool truthy_text(std::string_view v) { return ieq(v, "true") || ieq(v, "yes") || ieq(v, "on") || v == "1"; }

bool truthy(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::BOOLEAN:
      return o.via.boolean;
    case msgpack::type::POSITIVE_INTEGER:
      return o.via.u64 != 0;
    case msgpack::type::NEGATIVE_INTEGER:
      return true;
    case msgpack::type::STR:
    case msgpack::type::BIN:
      return truthy_text(*tap::as_string(o));
    default:
      return false;
  }
}

// Calls fn(key, value-or-null, text value) for each keyword argument.
template <typename Fn>
void each_kwarg(const msgpack::object* args, Fn fn) {
  if (!args || args->type != msgpack::type::ARRAY) return;
  for (std::uint32_t i = 0; i < args->via.array.size; ++i) {
    const msgpack::object& a = args->via.array.ptr[i];
    if (is_kwargs(a)) {
      for (std::uint32_t k = 0; k < a.via.map.size; ++k) {
        const auto key = tap::as_string(a.via.map.ptr[k].key);
        if (key && *key != "__kwarg__") fn(*key, &a.via.map.ptr[k].val, std::string_view{});
      }
    } else if (const auto s = tap::as_string(a); s && s->find('=') != std::string_view::npos) {
      const std::size_t eq = s->find('=');
      fn(s->substr(0, eq), nullptr, s->substr(eq + 1));
    }
  }
}

bool kwarg_true(const msgpack::object* value, std::string_view text) {
  return value ? truthy(*value) : truthy_text(text);
}

// A positional argument: anything but a kwargs map or a "key=value" string
// (a dict without the kwargs mark is a positional value).
bool has_positional(const msgpack::object* args) {
  if (!args || args->type != msgpack::type::ARRAY) return false;
  return std::any_of(args->via.array.ptr, args->via.array.ptr + args->via.array.size, [](const msgpack::object& a) {
    if (is_kwargs(a)) return false;
    const auto s = tap::as_string(a);
    return !s || s->find('=') == std::string_view::npos;
  });
}

}  // namespace

bool is_kwargs(const msgpack::object& o) {
  if (o.type != msgpack::type::MAP) return false;
  const msgpack::object* flag = tap::map_find(o, "__kwarg__");
  return flag && flag->type == msgpack::type::BOOLEAN && flag->via.boolean;
}

bool has_test_true(const msgpack::object* args) {
  bool test = false;
  each_kwarg(args, [&](std::string_view key, const msgpack::object* v, std::string_view text) {
    if (key == "test" && kwarg_true(v, text)) test = true;
  });
  return test;
}

RunKind run_kind(std::string_view fun, const msgpack::object* args) {
  RunKind kind;
  kind.test = has_test_true(args);
  if (fun != "state.highstate" && fun != "state.apply") return kind;
  // state.highstate takes no mods; state.apply with mods runs only them.
  bool partial = fun == "state.apply" && has_positional(args);
  each_kwarg(args, [&](std::string_view key, const msgpack::object* v, std::string_view text) {
    if (key == "mods" || key == "exclude") partial = true;
    if (key == "mock" && kwarg_true(v, text)) partial = true;
  });
  kind.highstate = !partial;
  return kind;
}

}  // namespace salttap::correlator
