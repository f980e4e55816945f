// Regression runner for the libFuzzer targets, built with any compiler:
// calls LLVMFuzzerTestOneInput once on every file under the given files or
// directories (recursively, in sorted order). A broken invariant traps, so a
// failing input shows up as a crashed test; ASan/UBSan builds catch the rest.
//
//   <target>-fuzz-regression tests/fuzz/corpus/<target> [more dirs or files]

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

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
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "cannot read %s\n", f.c_str());
      return 2;
    }
    // Name the input first so a crash is attributable without a debugger.
    std::fprintf(stderr, "running %s (%zu bytes)\n", f.c_str(), bytes.size());
    // A copy of exactly `size` bytes, so ASan sees reads past the end.
    std::vector<std::uint8_t> exact(bytes.begin(), bytes.end());
    static std::uint8_t no_bytes = 0;  // libFuzzer never passes a null pointer
    LLVMFuzzerTestOneInput(exact.empty() ? &no_bytes : exact.data(), exact.size());
  }
  std::fprintf(stderr, "%zu inputs ok\n", files.size());
  return 0;
}
