#pragma once
// Which Salt release line is on the other end, as far as the pub stream can
// tell (docs/salt-event-bus.md §1.2). Used for the operator's log line and
// to pick the framing for firing into master_event_pull.ipc.

#include <string>
#include <string_view>

#include "tap/event.h"
#include "tap/framing.h"

namespace salttap::tap {

class SaltEraDetector {
 public:
  void set_framing(Framing f) { framing_ = f; }
  void observe(const Event& event);
  std::string_view describe() const;  // a literal: cheap to call per event

 private:
  Framing framing_ = Framing::unknown;
  bool tz_stamp_ = false;        // _stamp ends with +00:00: 3008.0+
  bool naive_stamp_ = false;     // no timezone: <= 3007.x
  bool publish_event_ = false;   // salt/job/<jid>/publish: 3007.0+
  bool bare_jid_event_ = false;  // <jid> tag: <= 3007.x
};

}  // namespace salttap::tap
