#pragma once
// The one error every config parser throws: salttap's own file, its
// sections (correlator, audit rules, redaction, alerts, indexer), Salt's
// returner block and the master config. The message names the file or
// section and the key, so `salttap check-config` and a failed start say
// exactly what to fix. Runtime operations never throw it.

#include <stdexcept>

namespace salttap {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace salttap
