#include "fleet/minion_metrics.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

namespace salttap::fleet {
namespace {

constexpr std::array<MetricId, kMinionMetrics> kFamilies = {MetricId::minion_last_heard_timestamp_seconds,
                                                            MetricId::minion_last_highstate_success_timestamp_seconds,
                                                            MetricId::minion_last_highstate_failed_states};

int rank_of(const MinionEntity& m) {
  if (m.liveness == Liveness::silent) return 0;
  if (m.freshness == Freshness::stale) return 1;
  if (m.enforced_failed_states > 0) return 2;
  return 3;
}

// A label value as the text format wants it: \, " and newlines escaped.
void append_label_value(std::string& out, std::string_view value) {
  for (const char c : value) {
    if (c == '\n') {
      out.append("\\n");
      continue;
    }
    if (c == '\\' || c == '"') out.push_back('\\');
    out.push_back(c);
  }
}

void append_sample(std::string& out, MetricId id, std::string_view minion, double value) {
  out.append(metric_spec(id).name);
  out.append("{minion=\"");
  append_label_value(out, minion);
  out.append("\"} ");
  fmt::format_to(std::back_inserter(out), "{}\n", value);
}

double seconds(Micros t) { return static_cast<double>(t) / kMicrosPerSecond; }

}  // namespace

void MinionMetricsExporter::publish(Metrics& metrics, const FleetTracker& tracker) {
  const MinionMetricsConfig& config = tracker.config().minion_metrics;
  if (!config.enabled) {
    if (published_) {
      for (const MetricId id : kFamilies) metrics.remove(id);
      metrics.remove(MetricId::minion_metrics_truncated);
      metrics.remove(MetricId::minion_metrics_minions);
      published_ = false;
      counts_ = {};
    }
    published_sweep_ = -1;
    return;
  }
  const Micros sweep = tracker.counts().last_sweep;
  if (published_ && sweep == published_sweep_) return;

  candidates_.clear();
  for (const auto& [name, m] : tracker.minions()) {
    if (!tracker.expected_now(m, sweep)) continue;  // deleted keys leave the table, forgotten minions the fleet
    if (!config.match.matches_any(name) || config.exclude.matches_any(name)) continue;
    candidates_.push_back({rank_of(m), &name, &m});
  }
  const auto by_interest = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank < b.rank : *a.name < *b.name;
  };
  counts_.dropped = 0;
  if (candidates_.size() > config.max_minions) {
    const auto keep = candidates_.begin() + static_cast<std::ptrdiff_t>(config.max_minions);
    std::nth_element(candidates_.begin(), keep, candidates_.end(), by_interest);
    counts_.dropped = candidates_.size() - config.max_minions;
    candidates_.erase(keep, candidates_.end());
  }
  counts_.exported = candidates_.size();
  // Series in name order, whatever made them interesting.
  std::sort(candidates_.begin(), candidates_.end(),
            [](const Candidate& a, const Candidate& b) { return *a.name < *b.name; });

  for (std::size_t i = 0; i < kMinionMetrics; ++i) {
    std::string& out = lines_[i];
    out.clear();
    if (!config.metrics[i]) {
      metrics.remove(kFamilies[i]);
      continue;
    }
    for (const Candidate& c : candidates_) {
      const MinionEntity& m = *c.entity;
      double value = 0;
      switch (static_cast<MinionMetric>(i)) {
        case MinionMetric::last_heard:
          value = seconds(m.last_heard);
          break;
        case MinionMetric::last_highstate_success:
          value = seconds(m.last_successful_highstate.at);
          break;
        case MinionMetric::last_highstate_failed_states:
          value = m.enforced_failed_states;
          break;
      }
      append_sample(out, kFamilies[i], *c.name, value);
    }
    metrics.samples(kFamilies[i], out);
  }
  metrics.gauge(MetricId::minion_metrics_truncated, counts_.dropped > 0 ? 1 : 0);
  metrics.gauge(MetricId::minion_metrics_minions, {"exported"}, static_cast<double>(counts_.exported));
  metrics.gauge(MetricId::minion_metrics_minions, {"dropped"}, static_cast<double>(counts_.dropped));
  published_ = true;
  published_sweep_ = sweep;
}

}  // namespace salttap::fleet
