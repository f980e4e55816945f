#pragma once
// Test helper: what the log says while one lives. It sends the log to a
// temporary file, and back to stderr when it goes, so a test can assert on the
// lines a component wrote (a refused reload, a failed import).

#include <cstdio>
#include <string>

#include "common/log.h"
#include "tests/support/temp_output.h"

namespace salttap::testing {

class LogCapture {
 public:
  LogCapture() { log::set_output(out_.file()); }
  ~LogCapture() { log::set_output(stderr); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::string text() const { return out_.text(); }

 private:
  TempOutput out_;
};

}  // namespace salttap::testing
