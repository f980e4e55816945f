// Regression runner for the libFuzzer targets, built with any compiler:
// calls LLVMFuzzerTestOneInput once on every file under the given files or
// directories (recursively, in sorted order). A broken invariant traps and
// sanitizers abort, so each input runs in a child process: every failing
// input is listed, and the exit status is 1 if any failed.
//
//   <target>-fuzz-regression tests/fuzz/corpus/<target> [more dirs or files]
//
// SALTTAP_FUZZ_NO_FORK=1 runs the inputs in this process instead (debuggers).

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

namespace {

int run_input(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", f.c_str());
    return 2;
  }
  // Exactly `size` bytes on the heap, so ASan sees any read past the end.
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static std::uint8_t no_bytes = 0;  // libFuzzer never passes a null pointer
  LLVMFuzzerTestOneInput(bytes.empty() ? &no_bytes : bytes.data(), bytes.size());
  return 0;
}

// Runs one input in a child; returns a description of the failure, or "".
std::string run_isolated(const fs::path& f) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return std::string("fork failed: ") + std::strerror(errno);
  if (pid == 0) std::exit(run_input(f));  // exit, not _Exit: LeakSanitizer checks at exit
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return std::string("waitpid failed: ") + std::strerror(errno);
  }
  if (WIFSIGNALED(status)) return std::string("killed by signal ") + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) return "exit status " + std::to_string(WEXITSTATUS(status));
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      for (const auto& entry : fs::recursive_directory_iterator(arg, ec))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else if (fs::is_regular_file(arg, ec)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "no such file or directory: %s\n", argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE... (no inputs found)\n", argv[0]);
    return 2;
  }

  const char* no_fork = std::getenv("SALTTAP_FUZZ_NO_FORK");
  const bool isolate = no_fork == nullptr || *no_fork == '\0' || *no_fork == '0';
  std::vector<std::string> failures;
  for (const auto& f : files) {
    if (!isolate) {
      std::fprintf(stderr, "running %s\n", f.c_str());
      if (run_input(f) != 0) failures.push_back(f.string() + ": unreadable");
      continue;
    }
    if (std::string why = run_isolated(f); !why.empty()) {
      std::fprintf(stderr, "FAILED %s (%s)\n", f.c_str(), why.c_str());
      failures.push_back(f.string() + ": " + why);
    }
  }
  std::fprintf(stderr, "%zu inputs, %zu failed\n", files.size(), failures.size());
  for (const auto& line : failures) std::fprintf(stderr, "  failed: %s\n", line.c_str());
  return failures.empty() ? 0 : 1;
}
