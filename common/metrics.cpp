#include "common/metrics.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace salttap {
namespace {

// `{name="value",...}` for the catalog's labels of `spec`; throws on a value
// count or a value the catalog does not declare.
std::string render_labels(const MetricSpec& spec, Metrics::LabelValues values) {
  if (values.size() != spec.labels.size())
    throw std::logic_error(
        fmt::format("metric {}: {} label values given, {} declared", spec.name, values.size(), spec.labels.size()));
  if (values.size() == 0) return {};
  std::string out = "{";
  const auto* value = values.begin();
  for (const MetricLabel& label : spec.labels) {
    if (std::ranges::find(label.values, *value) == label.values.end())
      throw std::logic_error(fmt::format("metric {}: {}=\"{}\" is not in the catalog", spec.name, label.name, *value));
    if (out.size() > 1) out += ',';
    out += fmt::format("{}=\"{}\"", label.name, *value);
    ++value;
  }
  return out + "}";
}

}  // namespace

void Metrics::counter(MetricId id, LabelValues labels, std::uint64_t value) {
  set(id, MetricType::counter, labels, {.value = static_cast<double>(value)});
}

void Metrics::gauge(MetricId id, LabelValues labels, double value) {
  set(id, MetricType::gauge, labels, {.value = value});
}

void Metrics::summary(MetricId id, double sum, std::uint64_t count) {
  set(id, MetricType::summary, {}, {.value = sum, .count = count});
}

void Metrics::set(MetricId id, MetricType type, LabelValues labels, Sample sample) {
  const MetricSpec& spec = metric_spec(id);
  if (spec.type != type)
    throw std::logic_error(
        fmt::format("metric {} is a {}, not a {}", spec.name, to_string(spec.type), to_string(type)));
  std::string key = render_labels(spec, labels);
  std::lock_guard lock(mutex_);
  families_[id][std::move(key)] = sample;
}

std::string Metrics::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [id, samples] : families_) {
    const MetricSpec& spec = metric_spec(id);
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", spec.name, spec.help, spec.name, to_string(spec.type));
    for (const auto& [labels, s] : samples) {
      if (spec.type == MetricType::summary) {
        out += fmt::format("{}_sum{} {}\n", spec.name, labels, s.value);
        out += fmt::format("{}_count{} {}\n", spec.name, labels, s.count);
      } else {
        out += fmt::format("{}{} {}\n", spec.name, labels, s.value);
      }
    }
  }
  return out;
}

}  // namespace salttap
