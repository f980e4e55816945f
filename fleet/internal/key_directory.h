#pragma once
// The master's accepted keys: the file names in <pki_dir>/minions, one per
// accepted minion. Read at start, on a salt/key event, on SIGHUP and
// periodically; salttap needs read access to the directory (Salt's group).

#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace salttap::fleet {

// The minion ids, sorted; or why the directory could not be listed.
[[nodiscard]] Result<std::vector<std::string>, std::string> read_accepted_keys(const std::filesystem::path& dir);

}  // namespace salttap::fleet
