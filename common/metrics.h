#pragma once
// Prometheus metrics: a registry of samples, published by the pipeline's own
// thread (set_*), rendered in the text exposition format by the HTTP thread.
// Names follow salttap_<component>_<what>[_<unit>]_total; labels are bounded
// (kind, reason, outlet), never raw messages.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace salttap {

class Metrics {
 public:
  enum class Type { counter, gauge };

  // `name` may carry labels: salttap_tap_skipped_frames_total{reason="oversize"}.
  void set(const std::string& name, Type type, double value, const std::string& help = {});
  void counter(const std::string& name, std::uint64_t value, const std::string& help = {}) {
    set(name, Type::counter, static_cast<double>(value), help);
  }
  void gauge(const std::string& name, double value, const std::string& help = {}) {
    set(name, Type::gauge, value, help);
  }

  std::string render() const;  // text format 0.0.4

 private:
  struct Family {
    Type type;
    std::string help;
    std::map<std::string, double> samples;  // full sample name (with labels) -> value
  };
  mutable std::mutex mutex_;
  std::map<std::string, Family> families_;
};

}  // namespace salttap
