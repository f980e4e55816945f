// Writes the seeds of tests/fuzz/corpus/checkpoint with the real checkpoint
// writer (testing::checkpoint_fuzz_seeds), for when the format changes:
//   build/dev/tests/fuzz/write-checkpoint-seeds [DIR]   (default: that folder)
// The unit test CheckpointSeeds checks the committed seeds; it never writes them.

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>

#include "tests/support/checkpoint_seeds.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc > 2) {
    std::fprintf(stderr, "usage: write-checkpoint-seeds [DIR]\n");
    return 2;
  }
  const fs::path dir = argc == 2 ? fs::path(argv[1]) : fs::path(SALTTAP_SOURCE_DIR) / "tests/fuzz/corpus/checkpoint";
  try {
    fs::create_directories(dir);
    for (const auto& [name, bytes] : salttap::testing::checkpoint_fuzz_seeds()) {
      std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
      out << bytes;
      if (!out.flush()) {
        std::fprintf(stderr, "write-checkpoint-seeds: cannot write %s\n", (dir / name).c_str());
        return 1;
      }
      std::printf("%s (%zu bytes)\n", (dir / name).c_str(), bytes.size());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "write-checkpoint-seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
