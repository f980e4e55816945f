#include "fleet/internal/key_directory.h"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

namespace salttap::fleet {

Result<std::vector<std::string>, std::string> read_accepted_keys(const std::filesystem::path& dir) {
  std::error_code ec;
  std::vector<std::string> ids;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return fmt::format("{}: {}", dir.string(), ec.message());
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return fmt::format("{}: {}", dir.string(), ec.message());
    const std::string name = it->path().filename().string();
    if (name.empty() || name.front() == '.') continue;  // editors' and Salt's temporary files
    if (!it->is_regular_file(ec)) continue;
    ids.push_back(name);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace salttap::fleet
