#include "fleet/fleet_tracker.h"

#include <algorithm>

#include "common/log.h"
#include "correlator/return_analysis.h"
#include "correlator/run_kind.h"
#include "fleet/internal/fleet_notices.h"
#include "tap/tag.h"

namespace salttap::fleet {
namespace {

constexpr std::size_t kStormListCap = 50;

// The event's own time (_stamp), never later than its arrival.
Micros event_time(const tap::Event& e, Micros arrival) {
  const auto stamp = e.string_field("_stamp");
  const auto t = stamp ? parse_salt_stamp(*stamp) : std::nullopt;
  return t ? std::min(*t, arrival) : arrival;
}

}  // namespace

FleetTracker::FleetTracker(FleetConfig config, std::string master_id, Micros blind_since, Micros blind_total)
    : config_(std::move(config)), master_id_(std::move(master_id)), blind_(blind_total, blind_since) {}

MinionEntity& FleetTracker::entity(std::string_view minion) {
  return minions_[absl::string_view(minion.data(), minion.size())];
}

const MinionEntity* FleetTracker::find(std::string_view minion) const {
  auto it = minions_.find(absl::string_view(minion.data(), minion.size()));
  return it == minions_.end() ? nullptr : &it->second;
}

void FleetTracker::heard(std::string_view minion, Micros at, HeardVia via) {
  if (minion.empty()) return;
  MinionEntity& m = entity(minion);
  if (at < m.last_heard) return;  // an older event drained late says nothing new
  m.last_heard = at;
  m.blind_at_heard = blind_.total(at);
  m.via = via;
  ++revision_;
}

void FleetTracker::highstate_return(std::string_view minion, std::string_view jid, const tap::Event& e, Micros at) {
  if (minion.empty()) return;
  const correlator::RunKind kind = correlator::run_kind(e.string_field("fun").value_or(""), e.find("fun_args"));
  if (!kind.highstate) return;
  // Only highstates pay for the analysis; the correlator's own is not at hand here.
  const correlator::ReturnAnalysis analysis = correlator::analyze_return(e.data(), 0);
  const bool succeeded = !analysis.failed;
  MinionEntity& m = entity(minion);
  const HighstateRun run{at, std::string(jid), succeeded, kind.test};
  bool changed = false;
  if (at >= m.last_highstate.at) {
    m.last_highstate = run;
    changed = true;
  }
  if (!kind.test && at >= m.enforced_at) {
    m.enforced_at = at;
    // A failure without a failed state (a render error, a retcode) counts one: 0 is success.
    m.enforced_failed_states =
        succeeded ? 0 : static_cast<std::uint32_t>(std::clamp<std::uint64_t>(analysis.states.failed, 1, UINT32_MAX));
    changed = true;
  }
  if (succeeded && !kind.test && at >= m.last_successful_highstate.at) {
    m.last_successful_highstate = run;
    m.blind_at_success = blind_.total(at);
    changed = true;
  }
  if (changed) ++revision_;
}

void FleetTracker::on_event(const tap::Event& e, Micros arrival) {
  const std::string_view tag = e.tag();
  const Micros at = event_time(e, arrival);
  if (tag.starts_with("salt/job/")) {
    const std::string_view what = tap::tag_part(tag, 3);
    if (what != "ret" && what != "prog") return;
    std::string_view minion = tap::tag_part(tag, 4);
    if (minion.empty()) minion = e.string_field("id").value_or("");
    const bool find_job = e.string_field("fun").value_or("") == "saltutil.find_job";
    heard(minion, at, what == "prog" ? HeardVia::progress : find_job ? HeardVia::find_job : HeardVia::ret);
    if (what == "ret") highstate_return(minion, tap::tag_part(tag, 2), e, at);
  } else if (tag.starts_with("salt/minion/") && tag.ends_with("/start")) {
    heard(tap::tag_part(tag, 2), at, HeardVia::start);
  } else if (tag == "minion_start") {
    heard(e.string_field("id").value_or(""), at, HeardVia::start);
  } else if (tag == "salt/auth") {
    if (e.string_field("act").value_or("") == "accept") heard(e.string_field("id").value_or(""), at, HeardVia::auth);
  } else if (tag.starts_with("salt/beacon/")) {
    heard(tap::tag_part(tag, 2), at, HeardVia::beacon);
  } else if (tag.starts_with("minion/refresh/")) {
    heard(tap::tag_part(tag, 2), at, HeardVia::refresh);
  } else if (tag == "salt/presence/present" || tag == "salt/presence/change") {
    presence(e, at);
  } else if (tag == "salt/key") {
    key_event(e, at);
  }
}

// `present` and `new` list minions the master has connected: heard about,
// not from. `lost` clears connected and moves no time.
void FleetTracker::presence(const tap::Event& e, Micros at) {
  for (const char* key : {"present", "new", "lost"}) {
    const msgpack::object* list = e.find(key);
    if (!list || list->type != msgpack::type::ARRAY) continue;
    const bool lost = std::string_view(key) == "lost";
    for (std::uint32_t i = 0; i < list->via.array.size; ++i) {
      const auto id = tap::as_string(list->via.array.ptr[i]);
      if (!id || id->empty()) continue;
      MinionEntity& m = entity(*id);
      m.connected = !lost;
      if (!lost && at >= m.last_connected) {
        m.last_connected = at;
        m.blind_at_connected = blind_.total(at);
      }
      ++revision_;
    }
  }
}

void FleetTracker::key_event(const tap::Event& e, Micros at) {
  keys_changed_ = true;
  const std::string act(e.string_field("act").value_or(""));
  const std::string id(e.string_field("id").value_or(""));
  if (id.empty() || !keys_known_) return;
  if (act == "accept") {
    MinionEntity& m = entity(id);
    if (!m.expected) {
      m.expected = true;
      m.expected_since = at;
      m.blind_at_expected = blind_.total(at);
      ++revision_;
    }
  } else if (act == "delete" || act == "reject") {
    auto it = minions_.find(id);
    if (it == minions_.end()) return;
    close(id, it->second, at, "key_deleted", &pending_);
    write_deleted(id, it->second, at, pending_);
    minions_.erase(it);
    ++revision_;
  }
}

void FleetTracker::write_deleted(std::string_view name, MinionEntity& m, Micros at, SweepOutcome& out) {
  m.connected = false;
  m.expected = false;
  const auto version = std::max<std::int64_t>(m.indexed_version + 1, at);
  out.entities.push_back(entity_document(master_id_, name, m, "deleted", version, at));
}

namespace {

EntityMark mark_of(const MinionEntity& m, bool keys_known) {
  return {.written = true,
          .connected = m.connected,
          .expected = m.expected,
          .keys_known = keys_known,
          .liveness = static_cast<std::uint8_t>(m.liveness),
          .last_heard = m.last_heard,
          .silent_since = m.silent_since,
          .highstate_at = m.last_highstate.at,
          .successful_highstate_at = m.last_successful_highstate.at,
          .freshness = static_cast<std::uint8_t>(m.freshness),
          .stale_since = m.stale_since};
}

}  // namespace

void FleetTracker::collect_entities(Micros now, std::vector<EntityDoc>& out) {
  for (auto& [name, m] : minions_) {
    const EntityMark mark = mark_of(m, keys_known_);
    if (mark == m.indexed) continue;
    EntityMark heard_only = m.indexed;
    heard_only.last_heard = mark.last_heard;
    // Only last_heard moved: a heartbeat, written at most every index_interval.
    if (heard_only == mark && mark.last_heard - m.indexed.last_heard < config_.index_interval) continue;
    // The version is the newest event time the document carries (the same on
    // an HA twin that heard the same events), and grows past the last one.
    const Micros changed = std::max({m.last_heard, m.last_connected, m.silent_since, m.detected_at, m.last_highstate.at,
                                     m.expected_since, m.stale_detected_at});
    const auto version = std::max<std::int64_t>({m.indexed_version + 1, changed, 1});
    out.push_back(
        entity_document(master_id_, name, m, key_state(m, keys_known_), version, changed > 0 ? changed : now));
    m.indexed = mark;
    m.indexed_version = version;
    ++revision_;
  }
}

bool FleetTracker::take_keys_changed() { return std::exchange(keys_changed_, false); }

SweepOutcome FleetTracker::set_keys(const std::optional<std::vector<std::string>>& keys, Micros now) {
  SweepOutcome out;
  keys_known_ = keys.has_value();
  if (!keys) return out;
  absl::flat_hash_map<std::string, bool> accepted;
  for (const auto& k : *keys) accepted.emplace(k, true);
  for (auto it = minions_.begin(); it != minions_.end();) {
    if (!accepted.contains(it->first)) {
      close(it->first, it->second, now, "key_deleted", &out);
      write_deleted(it->first, it->second, now, out);
      minions_.erase(it++);
      ++revision_;
    } else {
      ++it;
    }
  }
  for (const auto& k : *keys) {
    MinionEntity& m = entity(k);
    if (m.expected) continue;
    m.expected = true;
    m.expected_since = now;
    m.blind_at_expected = blind_.total(now);
    ++revision_;
  }
  return out;
}

void FleetTracker::close(std::string_view name, MinionEntity& m, Micros at, std::string_view resolution,
                         SweepOutcome* out) {
  close_silence(name, m, at, resolution, out);
  close_stale(name, m, at, resolution, out);
}

void FleetTracker::close_silence(std::string_view name, MinionEntity& m, Micros at, std::string_view resolution,
                                 SweepOutcome* out) {
  if (m.silent_since == 0) return;
  const EpisodeFacts facts{master_id_, name, rule_glob(name), m};
  if (resolution == "heard")
    out->notices.push_back(minion_recovered_alert(facts, at));
  else
    out->records.push_back(closed_episode_record(facts, at, resolution));
  log::info("fleet: {} silence episode closed ({})", name, resolution);
  m.silent_since = 0;
  m.detected_at = 0;
  m.window = 0;
  ++counts_.episodes_closed;
  ++revision_;
}

void FleetTracker::close_stale(std::string_view name, MinionEntity& m, Micros at, std::string_view resolution,
                               SweepOutcome* out) {
  if (m.stale_since == 0) return;
  const EpisodeFacts facts{master_id_, name, highstate_glob(name), m};
  if (resolution == "highstate_ok")
    out->notices.push_back(highstate_fresh_alert(facts, at));
  else
    out->records.push_back(closed_stale_record(facts, at, resolution));
  log::info("fleet: {} stale highstate episode closed ({})", name, resolution);
  m.stale_since = 0;
  m.stale_detected_at = 0;
  m.stale_window = 0;
  ++counts_.stale_closed;
  ++revision_;
}

bool FleetTracker::expected_now(const MinionEntity& m, Micros now) const {
  if (keys_known_) return m.expected;
  // No key list: the fleet is every minion heard within forget_after.
  const Micros last = std::max(m.last_heard, config_.count_presence ? m.last_connected : 0);
  return last > 0 && now - last <= config_.forget_after;
}

Micros FleetTracker::activity_effective(const MinionEntity& m) const {
  Micros best = m.expected_since > 0 ? m.expected_since - m.blind_at_expected : 0;
  if (m.last_heard > 0) best = std::max(best, m.last_heard - m.blind_at_heard);
  if (config_.count_presence && m.last_connected > 0) best = std::max(best, m.last_connected - m.blind_at_connected);
  return best;
}

std::string_view FleetTracker::rule_glob(std::string_view minion) const {
  const int r = config_.rule_for(minion);
  return r < 0 ? std::string_view("") : std::string_view(config_.silence[static_cast<std::size_t>(r)].match);
}

std::string_view FleetTracker::highstate_glob(std::string_view minion) const {
  const int r = config_.highstate_rule_for(minion);
  return r < 0 ? std::string_view("") : std::string_view(config_.highstate[static_cast<std::size_t>(r)].match);
}

void FleetTracker::sweep_highstate(Micros now, Micros blind_now, std::size_t storm, SweepOutcome& out) {
  const Micros effective_now = now - blind_now;
  counts_.freshness = {};
  std::vector<std::string> opened;
  std::vector<std::string> refreshed;
  Micros oldest_opened = 0;
  for (auto& [name, m] : minions_) {
    if (!expected_now(m, now)) continue;  // its episodes closed as forgotten by the silence half
    const int r = config_.highstate_rule_for(name);
    const Micros window = r < 0 ? 0 : config_.highstate[static_cast<std::size_t>(r)].stale_after;
    Freshness freshness = Freshness::unwatched;
    if (window == 0) {
      close_stale(name, m, now, "rule_changed", &out);  // a reload stopped watching it
      if (m.watched_since != 0) ++revision_;
      m.watched_since = 0;
      m.blind_at_watched = 0;
    } else {
      // A minion never successful gets one window from when a rule began watching it.
      if (m.watched_since == 0) {
        m.watched_since = now;
        m.blind_at_watched = blind_now;
        ++revision_;
      }
      const HighstateRun& ok = m.last_successful_highstate;
      const Micros base = ok.at > 0 ? ok.at - m.blind_at_success : m.watched_since - m.blind_at_watched;
      const bool stale = effective_now - base > window && (ok.at > 0 || config_.highstate_alert_never);
      freshness = stale ? Freshness::stale : ok.at > 0 ? Freshness::fresh : Freshness::never;
      if (m.stale_since != 0 && !stale) {
        // A successful enforcing highstate after the episode began closes it;
        // anything else that makes it not stale is a reload's new rule.
        if (ok.at > m.stale_since)
          refreshed.push_back(name);
        else
          close_stale(name, m, now, "rule_changed", &out);
      } else if (m.stale_since == 0 && stale && m.liveness != Liveness::silent && !blind_.blind()) {
        m.stale_since = ok.at > 0 ? ok.at : m.watched_since;
        m.stale_detected_at = now;
        m.stale_window = window;
        ++counts_.stale_opened;
        ++revision_;
        opened.push_back(name);
        oldest_opened = oldest_opened == 0 ? m.stale_since : std::min(oldest_opened, m.stale_since);
        log::info("fleet: {} highstate stale: the last successful one {} (window {} s)", name,
                  ok.at > 0 ? format_utc(ok.at) : std::string("never"), window / kMicrosPerSecond);
      }
    }
    if (m.freshness != freshness) ++revision_;
    m.freshness = freshness;
    ++counts_.freshness[static_cast<std::size_t>(freshness)];
  }

  const bool open_storm = opened.size() >= storm;
  for (const auto& name : opened) {
    const MinionEntity& m = minions_.find(name)->second;
    auto alert = highstate_stale_alert({master_id_, name, highstate_glob(name), m});
    (open_storm ? out.records : out.notices).push_back(std::move(alert));
  }
  if (open_storm) {
    std::sort(opened.begin(), opened.end());
    out.notices.push_back(fleet_storm_alert(correlator::AlertKind::fleet_highstate_stale, master_id_, opened,
                                            oldest_opened, now, kStormListCap));
    log::warn("fleet: {} minions' highstates went stale at once (one fleet_highstate_stale alert)", opened.size());
  }
  const bool close_storm = refreshed.size() >= storm;
  Micros oldest_refreshed = 0;
  for (const auto& name : refreshed) {
    MinionEntity& m = minions_.find(name)->second;
    oldest_refreshed = oldest_refreshed == 0 ? m.stale_since : std::min(oldest_refreshed, m.stale_since);
    SweepOutcome one;
    close_stale(name, m, m.last_successful_highstate.at, "highstate_ok", &one);
    for (auto& a : one.notices) (close_storm ? out.records : out.notices).push_back(std::move(a));
  }
  if (close_storm) {
    std::sort(refreshed.begin(), refreshed.end());
    out.notices.push_back(fleet_storm_alert(correlator::AlertKind::fleet_highstate_fresh, master_id_, refreshed,
                                            oldest_refreshed, now, kStormListCap));
  }
}

SweepOutcome FleetTracker::sweep(Micros now) {
  SweepOutcome out = std::exchange(pending_, {});
  const Micros blind_now = blind_.total(now);
  const Micros effective_now = now - blind_now;
  std::vector<std::string> opened;
  std::vector<std::string> recovered;
  Micros oldest_since = 0;
  counts_.liveness = {};
  std::size_t fleet_size = 0;
  for (auto& [name, m] : minions_)
    if (expected_now(m, now)) ++fleet_size;

  for (auto& [name, m] : minions_) {
    if (!expected_now(m, now)) {
      close(name, m, now, "forgotten", &out);
      continue;
    }
    const int r = config_.rule_for(name);
    if (r < 0 || config_.silence[static_cast<std::size_t>(r)].ignore) {
      close_silence(name, m, now, "rule_changed", &out);
      m.liveness = Liveness::ignored;
      ++counts_.liveness[static_cast<std::size_t>(m.liveness)];
      continue;
    }
    const Micros window = config_.silence[static_cast<std::size_t>(r)].after;
    const Micros silence = std::max<Micros>(0, effective_now - activity_effective(m));
    const Micros spoke = std::max(m.last_heard, config_.count_presence ? m.last_connected : 0);
    if (m.silent_since != 0) {
      if (spoke > m.silent_since) {
        recovered.push_back(name);
      } else if (silence <= window) {
        close_silence(name, m, now, "rule_changed", &out);  // a reload gave it a longer window
      }
    } else if (silence > window && !blind_.blind()) {
      m.silent_since = spoke > 0 ? spoke : m.expected_since;
      m.detected_at = now;
      m.window = window;
      ++counts_.episodes_opened;
      ++revision_;
      opened.push_back(name);
      oldest_since = oldest_since == 0 ? m.silent_since : std::min(oldest_since, m.silent_since);
      log::info("fleet: {} silent for {} s (window {} s)", name, silence / kMicrosPerSecond, window / kMicrosPerSecond);
    }
    m.liveness = m.silent_since != 0 ? Liveness::silent : spoke > 0 ? Liveness::ok : Liveness::never_heard;
    ++counts_.liveness[static_cast<std::size_t>(m.liveness)];
  }

  const std::size_t storm = config_.storm.threshold(fleet_size);
  const bool open_storm = opened.size() >= storm;
  for (const auto& name : opened) {
    const MinionEntity& m = minions_.find(name)->second;
    auto alert = minion_silent_alert({master_id_, name, rule_glob(name), m});
    (open_storm ? out.records : out.notices).push_back(std::move(alert));
  }
  if (open_storm) {
    std::sort(opened.begin(), opened.end());
    out.notices.push_back(
        fleet_storm_alert(correlator::AlertKind::fleet_silent, master_id_, opened, oldest_since, now, kStormListCap));
    log::warn("fleet: {} minions went silent at once (a storm: one fleet_silent alert)", opened.size());
  }

  const bool close_storm = recovered.size() >= storm;
  Micros oldest_recovered = 0;
  for (const auto& name : recovered) {
    MinionEntity& m = minions_.find(name)->second;
    oldest_recovered = oldest_recovered == 0 ? m.silent_since : std::min(oldest_recovered, m.silent_since);
    const Micros at = std::max(m.last_heard, config_.count_presence ? m.last_connected : 0);
    SweepOutcome one;
    close_silence(name, m, at, "heard", &one);
    for (auto& a : one.notices) (close_storm ? out.records : out.notices).push_back(std::move(a));
    m.liveness = Liveness::ok;
    --counts_.liveness[static_cast<std::size_t>(Liveness::silent)];
    ++counts_.liveness[static_cast<std::size_t>(Liveness::ok)];
  }
  if (close_storm) {
    std::sort(recovered.begin(), recovered.end());
    out.notices.push_back(fleet_storm_alert(correlator::AlertKind::fleet_recovered, master_id_, recovered,
                                            oldest_recovered, now, kStormListCap));
  }
  sweep_highstate(now, blind_now, storm, out);
  counts_.last_sweep = now;
  return out;
}

FleetSnapshot FleetTracker::snapshot(Micros now) const {
  FleetSnapshot s;
  s.saved_at = now;
  s.blind_total = blind_.total(now);
  s.keys_known = keys_known_;
  s.minions.reserve(minions_.size());
  for (const auto& [name, m] : minions_) s.minions.emplace_back(name, m);
  std::sort(s.minions.begin(), s.minions.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return s;
}

void FleetTracker::restore(const FleetSnapshot& snapshot) {
  keys_known_ = snapshot.keys_known;
  for (const auto& [name, m] : snapshot.minions) minions_[name] = m;
  ++revision_;
}

}  // namespace salttap::fleet
