#pragma once
// What kind of state run a job's function and arguments make: a dry run
// (test=True) and a full highstate (state.highstate, or state.apply with no
// mods: the whole top file). The fleet keeps each minion's last highstate
// by these, and return documents carry them so the engine can ask "when did
// this minion last converge" without parsing arguments.
//
// Arguments are Salt's arg / fun_args list: positional values, a kwargs map
// (marked `__kwarg__: true`; returns repeat the mark, and a map without it
// is a positional value) and "key=value" strings (CLI arguments a minion
// has not parsed yet).

#include <string_view>

#include <msgpack.hpp>

namespace salttap::correlator {

struct RunKind {
  bool test = false;       // test=True: nothing enforced
  bool highstate = false;  // the whole top file, in either mode (mods, exclude or mock=True make it partial)
  bool operator==(const RunKind&) const = default;
};

// `args` may be null (no arguments).
RunKind run_kind(std::string_view fun, const msgpack::object* args);
// A kwargs map: a map with `__kwarg__: true`.
bool is_kwargs(const msgpack::object& o);
// test=True in the arg list: a true `test` kwarg, or a positional "test=<true>".
bool has_test_true(const msgpack::object* args);

}  // namespace salttap::correlator
