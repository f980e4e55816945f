#pragma once
// What an errno value means, for a log line or an error message: "No space
// left on device". One spelling everywhere, so a test can look for the same
// text the daemon wrote; thread-safe, unlike strerror(3).

#include <string>

namespace salttap {

std::string errno_text(int error);

}  // namespace salttap
