#include "fleet/fleet_keeper.h"

#include <cerrno>
#include <memory>

#include "common/log.h"
#include "fleet/fleet_state_format.h"
#include "fleet/internal/key_directory.h"

namespace salttap::fleet {
namespace {

constexpr Micros kRewriteEvery = 60 * kMicrosPerSecond;

void append(SweepOutcome& to, SweepOutcome&& from) {
  for (auto& a : from.notices) to.notices.push_back(std::move(a));
  for (auto& a : from.records) to.records.push_back(std::move(a));
  for (auto& e : from.entities) to.entities.push_back(std::move(e));
}

}  // namespace

FleetKeeper::FleetKeeper(FleetConfig config, std::filesystem::path keys_dir, std::filesystem::path state_path,
                         std::string master_id, const Clock& clock)
    : clock_(clock), keys_dir_(std::move(keys_dir)), state_(std::move(state_path)) {
  state_.remove_leftover_temp();
  const Micros now = clock_.now();
  const std::optional<FleetSnapshot> saved = read_state();
  // Blind from the previous run's last save until the tap connects: the
  // time salttap was down counts as silence for no minion.
  tracker_ =
      std::make_unique<FleetTracker>(std::move(config), std::move(master_id),
                                     saved ? std::min(saved->saved_at, now) : now, saved ? saved->blind_total : 0);
  if (saved) {
    tracker_->restore(*saved);
    log::info("fleet: {} minions restored from {}", saved->minions.size(), state_.path().string());
  }
  written_revision_ = tracker_->revision();
}

std::optional<FleetSnapshot> FleetKeeper::read_state() {
  auto bytes = state_.read(kMaxFleetStateBytes);
  if (!bytes) {
    if (bytes.error().error == ENOENT) return std::nullopt;
    ++stats_.state_errors;
    log::warn("fleet: the state file cannot be read ({}): every minion starts with a full window",
              bytes.error().text());
    return std::nullopt;
  }
  auto snapshot = decode_fleet_state(bytes.value());
  if (!snapshot) {
    ++stats_.state_errors;
    log::warn("fleet: {} is not a fleet state file salttap reads ({}): every minion starts with a full window",
              state_.path().string(), snapshot.error());
    return std::nullopt;
  }
  return std::move(snapshot).value();
}

void FleetKeeper::read_keys(Micros now, SweepOutcome& out) {
  auto keys = read_accepted_keys(keys_dir_);
  if (!keys) {
    if (!keys_warned_)
      log::warn("fleet: the accepted keys cannot be read ({}): the fleet is every minion heard within {} s",
                keys.error(), tracker_->config().forget_after / kMicrosPerSecond);
    keys_warned_ = true;
    append(out, tracker_->set_keys(std::nullopt, now));
  } else {
    if (keys_warned_) log::info("fleet: the accepted keys are readable again ({})", keys_dir_.string());
    keys_warned_ = false;
    append(out, tracker_->set_keys(keys.value(), now));
  }
  next_keys_ = now + tracker_->config().keys_rescan;
}

SweepOutcome FleetKeeper::tick(bool hearing) {
  SweepOutcome out;
  const Micros now = clock_.now();
  tracker_->observe_hearing(hearing, now);
  if (tracker_->take_keys_changed() || now >= next_keys_) read_keys(now, out);
  if (now < next_sweep_) return out;
  next_sweep_ = now + tracker_->config().sweep;
  append(out, tracker_->sweep(now));
  tracker_->collect_entities(now, out.entities);
  // Also when nothing changed, now and then: a restart counts the time since
  // the last save as blind, and that stretch should stay short.
  if (tracker_->revision() != written_revision_ || now - last_write_ >= kRewriteEvery) write_state();
  return out;
}

void FleetKeeper::reconfigure(FleetConfig config, std::filesystem::path keys_dir) {
  tracker_->reconfigure(std::move(config));
  keys_dir_ = std::move(keys_dir);
  next_keys_ = 0;
  next_sweep_ = 0;
}

void FleetKeeper::write_state() {
  const Micros now = clock_.now();
  if (auto r = state_.replace(encode_fleet_state(tracker_->snapshot(now))); !r) {
    ++stats_.state_errors;
    log::error("fleet: the state file was not written ({}): a restart would give every minion a full window",
               r.error().text());
    return;
  }
  ++stats_.state_writes;
  last_write_ = now;
  written_revision_ = tracker_->revision();
}

}  // namespace salttap::fleet
