#include "common/errno_text.h"

#include <system_error>

namespace salttap {

// std::generic_category() asks strerror_r(3): thread-safe, and the same text
// strerror(3) gives.
std::string errno_text(int error) { return std::generic_category().message(error); }

}  // namespace salttap
