// libFuzzer target: the salt-master config reader.
//
// The input is written to <tmp>/salttap-master-config-fuzz-<pid>/master and
// loaded with load_master_config(path, required=true). Its contract: a
// MasterBus, or ConfigError for anything wrong in the files. Any other
// exception escaping (yaml-cpp's own, std::filesystem's) is a bug: it is not
// caught here, so libFuzzer reports it as a crash (uncaught exception).
//
// `include`/`default_include` patterns are globbed relative to the config's
// folder, which holds only the config itself ("include: '*'" reloads it).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

#include "tap/master_config.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDirPrefix = "salttap-master-config-fuzz-";

const fs::path& config_path() {
  static const salttap::fuzz::ProcessScratchDir tmp(kDirPrefix, fs::temp_directory_path());
  static const fs::path path = tmp.path() / "master";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& path = config_path();
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    FUZZ_CHECK(f != nullptr);
    FUZZ_CHECK(std::fwrite(data, 1, size, f) == size);
    std::fclose(f);
  }
  try {
    const salttap::tap::MasterBus bus = salttap::tap::load_master_config(path.string(), true);
    FUZZ_CHECK(bus.config_path == path.string());
    // The AF_UNIX fallback: sock_dir is never much longer than cachedir.
    FUZZ_CHECK(bus.sock_dir.size() <= bus.cachedir.size() + 11);
    (void)bus.pub();
    (void)bus.pull();
  } catch (const salttap::ConfigError&) {
  }  // anything else escaping is a bug: the regression runner aborts on it
  return 0;
}
