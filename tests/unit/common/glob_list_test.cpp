#include "common/glob_list.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/text.h"

namespace salttap {
namespace {

using namespace std::string_literals;

const std::vector<std::string> kPatterns = {"*",
                                            "",
                                            "salt/job/*/new",
                                            "salt/job/*/ret/*",
                                            "salt/auth",
                                            "state.*",
                                            "test.ping",
                                            "minion-?",
                                            "a*b*c",
                                            "[ab]*",
                                            "salt/\\*",
                                            "a\\b",
                                            "pillar.*",
                                            "*.items",
                                            "x",
                                            "saltutil.find_job"};
const std::vector<std::string> kTexts = {"", "salt/job/20261203150000000000/new", "salt/job/1/ret/minion-a",
                                         "salt/auth", "salt/*", "state.apply", "test.ping", "minion-a", "axbyc", "ab",
                                         "a\\b", "pillar.items", "grains.items", "x", "saltutil.find_job",
                                         // fnmatch reads up to the NUL: glob_match's answer is kept
                                         "test.ping\0x"s, "state.apply\0"s, "\0salt/auth"s};

bool any_glob_match(const std::vector<std::string>& globs, std::string_view text) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob_match(g, text); });
}

TEST(GlobList, AgreesWithGlobMatchOnEveryPairAndTripleOfGlobs) {
  std::size_t matched = 0;
  for (std::size_t a = 0; a < kPatterns.size(); ++a)
    for (std::size_t b = a; b < kPatterns.size(); ++b)
      for (std::size_t c = b; c < kPatterns.size(); c += 3) {
        const std::vector<std::string> globs = {kPatterns[a], kPatterns[b], kPatterns[c]};
        const GlobList list(globs);
        for (const std::string& t : kTexts) {
          const bool want = any_glob_match(globs, t);
          EXPECT_EQ(list.matches_any(t), want) << globs[0] << " | " << globs[1] << " | " << globs[2] << " on " << t;
          matched += want ? 1 : 0;
        }
      }
  EXPECT_GT(matched, 0u);  // the table exercises both answers
}

TEST(GlobList, EachGlobAloneAgreesWithGlobMatch) {
  for (const std::string& p : kPatterns) {
    const GlobList list({p});
    for (const std::string& t : kTexts) EXPECT_EQ(list.matches_any(t), glob_match(p, t)) << p << " on " << t;
  }
}

TEST(GlobList, EmptyListMatchesNothingAndKeepsTheGlobsAsGiven) {
  EXPECT_FALSE(GlobList().matches_any(""));
  EXPECT_FALSE(GlobList(std::vector<std::string>{}).matches_any("anything"));
  EXPECT_TRUE(GlobList().empty());
  const GlobList list({"state.*", "test.ping", "[ab]"});
  EXPECT_FALSE(list.empty());
  EXPECT_EQ(list.globs(), (std::vector<std::string>{"state.*", "test.ping", "[ab]"}));
}

TEST(GlobList, ExactNamesAreComparedWhole) {
  const GlobList list({"test.ping", "saltutil.running"});
  EXPECT_TRUE(list.matches_any("test.ping"));
  EXPECT_TRUE(list.matches_any("saltutil.running"));
  EXPECT_FALSE(list.matches_any("test.pin"));
  EXPECT_FALSE(list.matches_any("test.pingx"));
  EXPECT_FALSE(list.matches_any("xtest.ping"));
}

}  // namespace
}  // namespace salttap
