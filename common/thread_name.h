#pragma once
// Names the calling thread, so `top -H`, `perf`, `gdb` and /proc/<pid>/task
// tell salttap's threads apart (the tap reader, the shipper's preparer and
// workers, the metrics server...). Linux keeps 15 characters; longer names
// are cut, never refused.

#include <string_view>

namespace salttap {

void name_this_thread(std::string_view name);

}  // namespace salttap
