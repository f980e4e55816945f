#pragma once
// Events from JSON for correlator tests: ev("salt/job/1/new", R"({"fun": ...})"),
// and the `new` and `ret` events of a job.

#include <stdexcept>
#include <string>

#include "tap/event_from_json.h"
#include "tap/internal/event_decoder.h"

namespace salttap::testing {

// Any JSON value as a msgpack tree (for auditor / redactor inputs).
inline msgpack::object_handle from_json(std::string_view json) {
  std::string error;
  const auto bytes = tap::msgpack_from_json(json, &error);
  if (!bytes) throw std::runtime_error(error);
  return msgpack::unpack(bytes->data(), bytes->size());
}

inline tap::Event ev(const std::string& tag, const std::string& data_json) {
  std::string error;
  auto body = tap::event_body_from_json(R"({"tag": ")" + tag + R"(", "data": )" + data_json + "}", &error);
  if (!body) throw std::runtime_error(error);
  tap::EventDecoder decoder;
  auto e = decoder.decode_body(*body);
  if (!e) throw std::runtime_error(decoder.last_error());
  return std::move(*e);
}

// A job's `new` event as the master publishes it, targeting "*" (glob) as
// root: `minions` and `arg` are JSON; `more` adds members (", \"k\": v").
inline tap::Event new_job_event(const std::string& jid, const std::string& fun, const std::string& minions,
                                const std::string& arg = "[]", const std::string& more = "") {
  return ev("salt/job/" + jid + "/new", R"({"jid": ")" + jid + R"(", "fun": ")" + fun + R"(", "arg": )" + arg +
                                            R"(, "tgt": "*", "tgt_type": "glob", "user": "root", "minions": )" +
                                            minions + more + "}");
}

// A minion's return of a job: `body` is what follows id, jid and fun.
inline const std::string kReturnedTrue = R"("return": true, "retcode": 0, "success": true)";
inline tap::Event return_event(const std::string& jid, const std::string& minion,
                               const std::string& body = kReturnedTrue, const std::string& fun = "test.ping") {
  return ev("salt/job/" + jid + "/ret/" + minion,
            R"({"id": ")" + minion + R"(", "jid": ")" + jid + R"(", "fun": ")" + fun + R"(", )" + body + "}");
}

}  // namespace salttap::testing
