#pragma once
// The real event-bus captures in tests/captures (never edited).

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace salttap::testing {

inline std::filesystem::path captures_dir() { return SALTTAP_CAPTURES_DIR; }

// Every <scenario>.raw of every Salt version folder, sorted.
inline std::vector<std::filesystem::path> capture_raw_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& dir : std::filesystem::directory_iterator(captures_dir())) {
    if (!dir.is_directory()) continue;
    for (const auto& f : std::filesystem::directory_iterator(dir.path()))
      if (f.path().extension() == ".raw") out.push_back(f.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string capture_name(const std::filesystem::path& raw) {
  return raw.parent_path().filename().string() + "/" + raw.stem().string();
}

// A capture's or a release folder's name as a gtest test name: letters and
// digits kept, anything else '_' (salt-3006.25/test_ping: salt_3006_25_test_ping).
inline std::string gtest_name(std::string n) {
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

// The names of INSTANTIATE_TEST_SUITE_P over capture_raw_files() ...
struct CaptureTestName {
  template <typename ParamInfo>
  std::string operator()(const ParamInfo& info) const {
    return gtest_name(capture_name(info.param));
  }
};

// ... and over release folders ("salt-3006.25").
struct ReleaseTestName {
  template <typename ParamInfo>
  std::string operator()(const ParamInfo& info) const {
    return gtest_name(info.param);
  }
};

}  // namespace salttap::testing
