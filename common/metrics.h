#pragma once
// Prometheus metrics: a registry of samples, published by the pipeline's own
// thread, rendered in the text exposition format by the HTTP thread. Only the
// metrics of the catalog (common/metric_catalog.h) can be published: by id,
// with the declared type, and label values the catalog lists.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/metric_catalog.h"

namespace salttap {

class Metrics {
 public:
  // Label values, in the order of the catalog's labels for that metric.
  using LabelValues = std::initializer_list<std::string_view>;

  // Each throws std::logic_error when `id` is not of that type or a label
  // value is not in the catalog: a programming error, caught by the tests
  // that publish every metric.
  void counter(MetricId id, std::uint64_t value) { counter(id, {}, value); }
  void counter(MetricId id, LabelValues labels, std::uint64_t value);
  void gauge(MetricId id, double value) { gauge(id, {}, value); }
  void gauge(MetricId id, LabelValues labels, double value);
  // A summary without quantiles: <name>_sum and <name>_count.
  void summary(MetricId id, double sum, std::uint64_t count);
  // A histogram: `buckets[i]` observations at or below the catalog's i-th
  // bound (cumulative, one per declared bound; +Inf is `count`).
  void histogram(MetricId id, LabelValues labels, std::span<const std::uint64_t> buckets, double sum,
                 std::uint64_t count);

  // The sample lines of a family whose label is open (metric_catalog.h): one
  // series per minion, rendered by the publisher, who bounds them. Replaces
  // the family's previous lines (series gone from `lines` are gone); the
  // text is copied into storage kept from the last call, so a publisher that
  // reuses its buffer allocates nothing once the sizes settle. Throws
  // std::logic_error when `id` has no open label.
  void samples(MetricId id, std::string_view lines);
  // The family is no longer exported (e.g. switched off by a reload).
  void remove(MetricId id);

  std::string render() const;  // text format 0.0.4, in catalog order

 private:
  struct Sample {
    double value = 0;
    std::uint64_t count = 0;             // summaries and histograms
    std::vector<std::uint64_t> buckets;  // histograms only
  };
  void set(MetricId id, MetricType type, LabelValues labels, Sample sample);

  mutable std::mutex mutex_;
  std::map<MetricId, std::map<std::string, Sample>> families_;  // id -> rendered labels ("" or "{k=\"v\"}") -> sample
  std::map<MetricId, std::string> lines_;                       // families of open labels: their sample lines
};

}  // namespace salttap
