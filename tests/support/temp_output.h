#pragma once
// Test helper: a temporary FILE* for a component to write to (a command's
// output, the log) and, after, the text it holds. The file goes with it.

#include <cstddef>
#include <cstdio>
#include <string>

namespace salttap::testing {

class TempOutput {
 public:
  TempOutput() : file_(std::tmpfile()) {}
  ~TempOutput() { std::fclose(file_); }
  TempOutput(const TempOutput&) = delete;
  TempOutput& operator=(const TempOutput&) = delete;

  std::FILE* file() const { return file_; }

  // Everything written so far.
  std::string text() const {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) out.append(buf, n);
    return out;
  }

 private:
  std::FILE* file_;
};

}  // namespace salttap::testing
