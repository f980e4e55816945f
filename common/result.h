#pragma once
// The outcome of a runtime operation that can fail in a way the caller must
// handle: a value, or an error that says why. Config parsing throws
// ConfigError instead (a bad config stops the start or the reload); decoders
// on the hot path report per-reason statuses that are counted (TreeStatus,
// DecodeError) and keep their own lean result structs.
//
// Result is Boost.Outcome's basic_result: [[nodiscard]], no exceptions of
// its own, and a wrong access (value() of an error, error() of a value)
// terminates instead of reading garbage. The error type is the operation's
// own (an enum, or a struct with the message for the operator), so callers
// switch on what went wrong rather than parse text.
//
//   Result<Snapshot, CheckpointFailure> decode(...);
//   if (!r) count(r.error().kind); else use(r.value());
//   Result<void, CacheAccessError> open();   return success(); / return CacheAccessError{...};

#include <boost/outcome/basic_result.hpp>
#include <boost/outcome/policy/terminate.hpp>
#include <boost/outcome/success_failure.hpp>

namespace salttap {

template <typename T, typename E>
using Result = boost::outcome_v2::basic_result<T, E, boost::outcome_v2::policy::terminate>;

using boost::outcome_v2::success;

}  // namespace salttap
