// The bulk NDJSON the indexer spools for every real capture, against files
// checked by hand once (tests/golden/ndjson/<salt>/<scenario>.ndjson;
// regenerate with tests/golden/update-documents.sh and review the diff). The
// mapping contract test checks every field of these files against mappings/.

#include <gtest/gtest.h>

#include <cstdio>

#include "cli/internal/replay_command.h"
#include "tests/support/captures.h"
#include "tests/support/replay_output.h"

namespace salttap {
namespace {

using salttap::testing::capture_raw_files;
using salttap::testing::CaptureTestName;
using salttap::testing::read_file;

const std::filesystem::path kSource(SALTTAP_SOURCE_DIR);

std::string replay_documents(const std::filesystem::path& raw) {
  cli::ReplayOptions options;
  options.files = {raw.string()};
  options.output = "documents";
  options.config = config::load_config((kSource / "tests/golden/documents.yaml").string());
  return salttap::testing::replay_output(options);
}

class GoldenDocuments : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(GoldenDocuments, MatchTheCheckedNdjson) {
  const auto& raw = GetParam();
  const auto golden =
      kSource / "tests/golden/ndjson" / raw.parent_path().filename() / (raw.stem().string() + ".ndjson");
  const std::string docs = replay_documents(raw);
  if (raw.stem() == "large_return") {
    // 2 MB of output: not kept as a file. Its return is cut to text_cap and
    // keeps no flat copy.
    EXPECT_NE(docs.find("\"return_truncated\":true"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(golden));
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden;
  EXPECT_EQ(docs, read_file(golden));
}

INSTANTIATE_TEST_SUITE_P(AllCaptures, GoldenDocuments, ::testing::ValuesIn(capture_raw_files()), CaptureTestName());

}  // namespace
}  // namespace salttap
