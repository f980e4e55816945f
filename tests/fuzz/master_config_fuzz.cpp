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

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

#include "tap/master_config.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kDirPrefix = "salttap-master-config-fuzz-";

// One folder per process, removed at exit; a crashing input leaves its folder
// behind, so the folders of processes that are gone are removed at start.
struct TempDir {
  fs::path dir = fs::temp_directory_path() / (std::string(kDirPrefix) + std::to_string(::getpid()));
  TempDir() {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path(), ec)) {
      const std::string name = e.path().filename().string();
      if (name.rfind(kDirPrefix, 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + kDirPrefix.size(), nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) fs::remove_all(e.path(), ec);
    }
    fs::create_directories(dir);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const fs::path& config_path() {
  static const TempDir tmp;
  static const fs::path path = tmp.dir / "master";
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
