#include "common/thread_name.h"

#include <pthread.h>

#include <algorithm>
#include <array>

namespace salttap {

void name_this_thread(std::string_view name) {
  std::array<char, 16> buf{};  // the kernel's TASK_COMM_LEN, with its terminating zero
  const std::size_t n = std::min(name.size(), buf.size() - 1);
  std::copy_n(name.data(), n, buf.data());
  pthread_setname_np(pthread_self(), buf.data());  // fails only for a name over 15 characters
}

}  // namespace salttap
