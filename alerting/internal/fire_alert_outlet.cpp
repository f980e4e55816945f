#include "alerting/internal/fire_alert_outlet.h"

#include <fmt/format.h>

#include "tap/event_firer.h"
#include "tap/event_from_json.h"
#include "tap/pull_framing_probe.h"

namespace salttap::alerting {

FireAlertOutlet::FireAlertOutlet(tap::Endpoint pub, tap::Endpoint pull, tap::Framing pull_framing, RetryPolicy retry,
                                 SteadyTime& time, UnitRandom random)
    : AsyncAlertOutlet("fire", retry, time, std::move(random)),
      pub_(std::move(pub)),
      pull_(std::move(pull)),
      framing_(pull_framing) {
  start();
}

FireAlertOutlet::~FireAlertOutlet() { stop(std::chrono::milliseconds(0)); }

std::string FireAlertOutlet::deliver(const correlator::Alert& alert) {
  if (framing_ == tap::Framing::unknown) {
    framing_ = tap::probe_pull_framing({pub_, pull_});
    if (framing_ == tap::Framing::unknown) return "pull-socket framing unknown (probe not seen on the bus)";
  }
  std::string error;
  auto packed = tap::msgpack_from_json(alert.json, &error);
  if (!packed) return error;
  const msgpack::object_handle data = msgpack::unpack(packed->data(), packed->size());
  try {
    tap::EventFirer firer(pull_);
    const auto kind = correlator::to_string(alert.kind);
    const std::string tag = alert.jid.empty() ? fmt::format("{}alert/{}", tap::kFireTagPrefix, kind)
                                              : fmt::format("{}alert/{}/{}", tap::kFireTagPrefix, kind, alert.jid);
    firer.fire(tag, data.get(), framing_);
  } catch (const tap::FireError& e) {
    return e.what();
  }
  return {};
}

}  // namespace salttap::alerting
