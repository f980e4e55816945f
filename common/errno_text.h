#pragma once
// What an errno value means, for a log line or an error message: "No space
// left on device". One spelling everywhere, so a test can look for the same
// text the daemon wrote, and no strerror(3) (not thread-safe) anywhere.

#include <string>

namespace salttap {

std::string errno_text(int error);

}  // namespace salttap
