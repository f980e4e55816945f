// `salttap watch` filters, on real captured events.

#include <gtest/gtest.h>

#include "cli/internal/event_filter.h"
#include "tap/tag.h"
#include "tests/support/capture_events.h"

namespace salttap {
namespace {

using salttap::testing::capture_events;

std::vector<std::string> tags_matching(const std::vector<tap::Event>& events, const cli::EventFilter& f) {
  std::vector<std::string> out;
  for (const auto& e : events)
    if (f.matches(e)) out.emplace_back(e.tag());
  return out;
}

using tap::jid_from_tag;
using tap::minion_from_tag;

TEST(EventFilter, TagParts) {
  EXPECT_EQ(jid_from_tag("salt/job/20261129192428536894/ret/minion-a"), "20261129192428536894");
  EXPECT_EQ(jid_from_tag("salt/run/20261129192428536894/new"), "20261129192428536894");
  EXPECT_EQ(jid_from_tag("20261129192428536894"), "20261129192428536894");
  EXPECT_EQ(jid_from_tag("salt/auth"), "");
  EXPECT_EQ(minion_from_tag("salt/job/1/ret/minion-a"), "minion-a");
  EXPECT_EQ(minion_from_tag("salt/job/1/prog/minion-b/3"), "minion-b");
  EXPECT_EQ(minion_from_tag("salt/job/1/new"), "");
}

TEST(EventFilter, EmptyMatchesEverything) {
  const auto events = capture_events("salt-3006.25/test_ping.raw");
  EXPECT_EQ(tags_matching(events, {}).size(), events.size());
}

TEST(EventFilter, MinionAndFunCombine) {
  const auto events = capture_events("salt-3006.25/test_ping.raw");
  cli::EventFilter f;
  f.minions = {"minion-b"};
  const auto b = tags_matching(events, f);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_TRUE(b[0].ends_with("/ret/minion-b"));
  f.funs = {"cmd.*"};
  EXPECT_TRUE(tags_matching(events, f).empty());
  f.funs = {"cmd.*", "test.*"};  // repeated options: any
  EXPECT_EQ(tags_matching(events, f).size(), 1u);
}

TEST(EventFilter, TagJidAndUser) {
  const auto events = capture_events("salt-3006.25/test_ping.raw");
  const std::string jid(tap::map_find(events[1].data(), "jid") ? *events[1].string_field("jid") : "");
  cli::EventFilter f;
  f.jids = {jid};
  EXPECT_EQ(tags_matching(events, f).size(), 4u);  // bare jid, new, two rets
  f.tags = {"salt/job/*/ret/*"};
  EXPECT_EQ(tags_matching(events, f).size(), 2u);
  f.users = {"nobody"};
  EXPECT_TRUE(tags_matching(events, f).empty());
  f.users = {"ro*"};
  EXPECT_EQ(tags_matching(events, f).size(), 2u);
}

}  // namespace
}  // namespace salttap
