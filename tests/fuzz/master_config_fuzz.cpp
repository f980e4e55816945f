// libFuzzer target: the salt-master config reader.
//
// The input is written to <tmp>/salttap-master-config-fuzz-<pid>/master and
// loaded with load_master_config(path, required=true). Its contract: a
// MasterBus, or MasterConfigError for anything wrong in the files. Any other
// exception escaping (yaml-cpp's own, std::filesystem's) is a bug: it is not
// caught here, so libFuzzer reports it as a crash (uncaught exception).
//
// `include`/`default_include` patterns are globbed relative to the config's
// folder, which holds only the config itself ("include: '*'" reloads it).

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <ios>
#include <string>

#include <yaml-cpp/exceptions.h>

#include "tap/master_config.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

namespace fs = std::filesystem;

const fs::path& config_path() {
  static const fs::path path = [] {
    const fs::path dir = fs::temp_directory_path() / ("salttap-master-config-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    return dir / "master";
  }();
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
  } catch (const salttap::tap::MasterConfigError&) {
  }  // anything else escaping is a bug: the regression runner aborts on it
  return 0;
}
