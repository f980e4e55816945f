#pragma once
// What `salttap replay` prints for `options`, as a string (golden tests).

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "cli/internal/replay_command.h"

namespace salttap::testing {

inline std::string replay_output(const cli::ReplayOptions& options) {
  char* buf = nullptr;
  std::size_t size = 0;
  std::FILE* out = ::open_memstream(&buf, &size);
  EXPECT_EQ(cli::run_replay(options, out), 0);
  std::fclose(out);
  std::string text(buf, size);
  std::free(buf);
  return text;
}

}  // namespace salttap::testing
