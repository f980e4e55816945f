#include "common/metrics.h"

#include <fmt/format.h>

namespace salttap {

void Metrics::set(const std::string& name, Type type, double value, const std::string& help) {
  const std::string family = name.substr(0, name.find('{'));
  std::lock_guard lock(mutex_);
  Family& f = families_[family];
  f.type = type;
  if (!help.empty()) f.help = help;
  f.samples[name] = value;
}

std::string Metrics::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [name, f] : families_) {
    if (!f.help.empty()) out += fmt::format("# HELP {} {}\n", name, f.help);
    out += fmt::format("# TYPE {} {}\n", name, f.type == Type::counter ? "counter" : "gauge");
    for (const auto& [sample, value] : f.samples) out += fmt::format("{} {}\n", sample, value);
  }
  return out;
}

}  // namespace salttap
