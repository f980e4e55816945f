#include "common/metrics.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

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
  set(id, MetricType::counter, labels, {.value = static_cast<double>(value), .count = 0, .buckets = {}});
}

void Metrics::gauge(MetricId id, LabelValues labels, double value) {
  set(id, MetricType::gauge, labels, {.value = value, .count = 0, .buckets = {}});
}

void Metrics::summary(MetricId id, double sum, std::uint64_t count) {
  set(id, MetricType::summary, {}, {.value = sum, .count = count, .buckets = {}});
}

void Metrics::histogram(MetricId id, LabelValues labels, std::span<const std::uint64_t> buckets, double sum,
                        std::uint64_t count) {
  const MetricSpec& spec = metric_spec(id);
  if (buckets.size() != spec.buckets.size())
    throw std::logic_error(fmt::format("metric {}: {} bucket counts given, {} bounds declared", spec.name,
                                       buckets.size(), spec.buckets.size()));
  set(id, MetricType::histogram, labels,
      {.value = sum, .count = count, .buckets = std::vector<std::uint64_t>(buckets.begin(), buckets.end())});
}

void Metrics::set(MetricId id, MetricType type, LabelValues labels, Sample sample) {
  const MetricSpec& spec = metric_spec(id);
  if (spec.type != type)
    throw std::logic_error(
        fmt::format("metric {} is a {}, not a {}", spec.name, to_string(spec.type), to_string(type)));
  std::string key = render_labels(spec, labels);
  std::lock_guard lock(mutex_);
  families_[id][std::move(key)] = std::move(sample);
}

void Metrics::samples(MetricId id, std::string_view lines) {
  const MetricSpec& spec = metric_spec(id);
  if (std::ranges::none_of(spec.labels, [](const MetricLabel& l) { return l.open; }))
    throw std::logic_error(fmt::format("metric {} has no open label: publish it with counter() or gauge()", spec.name));
  std::lock_guard lock(mutex_);
  lines_[id].assign(lines);
}

void Metrics::remove(MetricId id) {
  std::lock_guard lock(mutex_);
  families_.erase(id);
  lines_.erase(id);
}

std::string Metrics::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  std::size_t reserve = 0;
  for (const auto& [id, lines] : lines_) reserve += lines.size() + 256;
  out.reserve(reserve + std::size_t{32} * 1024);  // the fixed families take some 20 kB
  for (const MetricSpec& spec : metric_catalog()) {
    if (const auto open = lines_.find(spec.id); open != lines_.end()) {
      if (open->second.empty()) continue;
      fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", spec.name, spec.help, spec.name,
                     to_string(spec.type));
      out += open->second;
      continue;
    }
    const auto family = families_.find(spec.id);
    if (family == families_.end()) continue;
    const auto& samples = family->second;
    fmt::format_to(std::back_inserter(out), "# HELP {} {}\n# TYPE {} {}\n", spec.name, spec.help, spec.name,
                   to_string(spec.type));
    for (const auto& [labels, s] : samples) {
      if (spec.type == MetricType::histogram) {
        // le goes last among the labels: `{route="x",le="0.5"}`.
        const std::string open = labels.empty() ? "{" : labels.substr(0, labels.size() - 1) + ",";
        for (std::size_t i = 0; i < spec.buckets.size(); ++i)
          fmt::format_to(std::back_inserter(out), "{}_bucket{}le=\"{}\"}} {}\n", spec.name, open, spec.buckets[i],
                         s.buckets[i]);
        fmt::format_to(std::back_inserter(out), "{}_bucket{}le=\"+Inf\"}} {}\n", spec.name, open, s.count);
        fmt::format_to(std::back_inserter(out), "{}_sum{} {}\n", spec.name, labels, s.value);
        fmt::format_to(std::back_inserter(out), "{}_count{} {}\n", spec.name, labels, s.count);
      } else if (spec.type == MetricType::summary) {
        fmt::format_to(std::back_inserter(out), "{}_sum{} {}\n", spec.name, labels, s.value);
        fmt::format_to(std::back_inserter(out), "{}_count{} {}\n", spec.name, labels, s.count);
      } else {
        fmt::format_to(std::back_inserter(out), "{}{} {}\n", spec.name, labels, s.value);
      }
    }
  }
  return out;
}

}  // namespace salttap
