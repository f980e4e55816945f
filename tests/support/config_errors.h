#pragma once
// A config section that must not be taken: its parser throws ConfigError, and
// the message names each of the given parts (the key, the value, what is wrong).

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "common/config_error.h"

namespace salttap::testing {

template <typename Parse>
void expect_config_error(Parse parse, const std::string& yaml, const std::vector<std::string>& parts) {
  try {
    parse(YAML::Load(yaml));
    ADD_FAILURE() << "no error for:\n" << yaml;
  } catch (const ConfigError& e) {
    for (const auto& p : parts) EXPECT_THAT(e.what(), ::testing::HasSubstr(p)) << yaml;
  }
}

}  // namespace salttap::testing
