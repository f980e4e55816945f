// The tap journal (docs/tap-journal.md): its record format, segments on a
// real temp directory, limits, a failing disk (/dev/full), what a previous
// run left, corruption; then the queue and the reader in front of it: bus
// order kept across the spill, nothing dropped while the disk has room.

#include "tap/tap_journal.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "tap/event_queue.h"
#include "tap/event_source.h"
#include "tap/internal/event_decoder.h"
#include "tap/internal/journal_format.h"
#include "tap/internal/spill_gate.h"
#include "tests/support/bus_reader_fixtures.h"
#include "tests/support/fake_publisher.h"
#include "tests/support/msgpack_builders.h"

namespace salttap::tap {
namespace {

namespace fs = std::filesystem;
namespace jf = journal_format;
using namespace salttap::testing;
using namespace std::chrono_literals;

JournalConfig config_in(const fs::path& dir, std::uint64_t max_bytes = 1ull << 30,
                        std::uint64_t segment_bytes = 1ull << 20) {
  return JournalConfig{dir / "journal", max_bytes, segment_bytes, 128ull << 20};
}

// Everything the journal hands over now, as (kind, payload).
std::vector<std::string> drain_all(TapJournal& j) {
  std::vector<std::string> out;
  while (j.drain(1000, 1u << 20, [&](JournalRecordKind, std::string_view p) { out.emplace_back(p); }) > 0) {
  }
  return out;
}

std::vector<fs::path> segments_in(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (jf::parse_segment_file_name(e.path().filename().string())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void write_file(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(JournalFormat, ARecordRoundTripsAndItsDamageIsSeen) {
  std::string bytes;
  jf::append_record(bytes, JournalRecordKind::frame, "hello");
  ASSERT_EQ(bytes.size(), jf::kHeaderBytes + 5);
  auto r = jf::parse_record(bytes, 1000);
  ASSERT_EQ(r.status, jf::Parse::ok);
  EXPECT_EQ(r.payload, "hello");
  EXPECT_EQ(r.kind, JournalRecordKind::frame);
  EXPECT_EQ(r.record_bytes, bytes.size());

  EXPECT_EQ(jf::parse_record(bytes.substr(0, 10), 1000).status, jf::Parse::incomplete);
  EXPECT_EQ(jf::parse_record(bytes.substr(0, bytes.size() - 1), 1000).status, jf::Parse::incomplete);
  EXPECT_EQ(jf::parse_record(bytes, 4).status, jf::Parse::corrupt) << "longer than the limit";
  std::string flipped = bytes;
  flipped.back() ^= 1;
  EXPECT_EQ(jf::parse_record(flipped, 1000).status, jf::Parse::corrupt) << "CRC";
  EXPECT_EQ(jf::parse_record(flipped, 1000, false).status, jf::Parse::ok) << "headers only";
  std::string magic = bytes;
  magic[0] = 'X';
  EXPECT_EQ(jf::parse_record(magic.substr(0, 6), 1000).status, jf::Parse::corrupt) << "not even a header";
  std::string kind = bytes;
  kind[8] = 7;
  EXPECT_EQ(jf::parse_record(kind, 1000).status, jf::Parse::corrupt);

  EXPECT_EQ(jf::segment_file_name(42), "seg-00000000000000000042");
  EXPECT_EQ(jf::parse_segment_file_name("seg-00000000000000000042"), 42u);
  EXPECT_FALSE(jf::parse_segment_file_name("seg-42"));
  EXPECT_FALSE(jf::parse_segment_file_name("seg-0000000000000000004x"));
  EXPECT_FALSE(jf::parse_segment_file_name("lock"));
}

TEST(TapJournal, HandsRecordsBackInOrderAcrossSegmentsAndRemovesItsFiles) {
  TempDir tmp;
  TapJournal j(config_in(tmp.path(), 1ull << 30, 4096));
  EXPECT_FALSE(j.active());
  std::vector<std::string> written;
  for (int i = 0; i < 300; ++i) {
    written.push_back("frame-" + std::to_string(i) + std::string(static_cast<std::size_t>(i % 50), 'x'));
    ASSERT_EQ(j.append(JournalRecordKind::frame, written.back()), TapJournal::Append::ok);
    if (i % 7 == 0) j.flush();
  }
  EXPECT_TRUE(j.active());
  j.flush();
  const JournalStats before = j.stats();
  EXPECT_EQ(before.frames, 300u);
  EXPECT_EQ(before.spilled_frames, 300u);
  EXPECT_GT(before.segments, 3u) << "4 KiB segments";
  EXPECT_EQ(segments_in(j.config().dir).size(), before.segments);

  EXPECT_EQ(drain_all(j), written);
  const JournalStats after = j.stats();
  EXPECT_EQ(after.bytes, 0u);
  EXPECT_EQ(after.frames, 0u);
  EXPECT_EQ(after.drained_frames, 300u);
  EXPECT_EQ(segments_in(j.config().dir).size(), 1u) << "drained segments are deleted, the writer's stays";
  EXPECT_TRUE(j.active()) << "until the consumer says it is done";
  EXPECT_TRUE(j.finish_if_drained());
  EXPECT_FALSE(j.active());
  EXPECT_TRUE(segments_in(j.config().dir).empty());

  // The next spill starts a new segment.
  ASSERT_EQ(j.append(JournalRecordKind::body, "again"), TapJournal::Append::ok);
  j.flush();
  std::vector<std::pair<JournalRecordKind, std::string>> got;
  j.drain(10, 1u << 20, [&](JournalRecordKind k, std::string_view p) { got.emplace_back(k, p); });
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, JournalRecordKind::body);
  EXPECT_EQ(got[0].second, "again");
}

TEST(TapJournal, UnflushedRecordsKeepItActiveAndUnreadable) {
  TempDir tmp;
  TapJournal j(config_in(tmp.path()));
  ASSERT_EQ(j.append(JournalRecordKind::frame, "a"), TapJournal::Append::ok);
  EXPECT_FALSE(j.readable()) << "nothing flushed yet";
  EXPECT_FALSE(j.finish_if_drained()) << "a record is on its way";
  EXPECT_TRUE(j.active());
  j.flush();
  EXPECT_TRUE(j.readable());
  EXPECT_EQ(drain_all(j), std::vector<std::string>{"a"});
  EXPECT_TRUE(j.readable()) << "empty and active: for the consumer to finish";
  EXPECT_TRUE(j.finish_if_drained());
  EXPECT_FALSE(j.readable());
}

TEST(TapJournal, MaxBytesRefusesFramesUntilDrainedAndCountsOneEpisode) {
  TempDir tmp;
  const std::string payload(100, 'p');
  const std::uint64_t record = jf::kHeaderBytes + payload.size();
  TapJournal j(config_in(tmp.path(), record * 5, 4096));
  for (int i = 0; i < 5; ++i) ASSERT_EQ(j.append(JournalRecordKind::frame, payload), TapJournal::Append::ok);
  EXPECT_EQ(j.append(JournalRecordKind::frame, payload), TapJournal::Append::full);
  j.flush();
  EXPECT_EQ(j.append(JournalRecordKind::frame, payload), TapJournal::Append::full);
  JournalStats s = j.stats();
  EXPECT_EQ(s.dropped_full, 2u);
  EXPECT_EQ(s.dropped_bytes, 200u);
  EXPECT_EQ(s.refusal_episodes, 1u);
  EXPECT_TRUE(s.refusing);
  EXPECT_FALSE(s.refused_for_error);

  EXPECT_EQ(j.drain(2, 1u << 20, [](JournalRecordKind, std::string_view) {}), 2u);
  EXPECT_EQ(j.append(JournalRecordKind::frame, payload), TapJournal::Append::ok) << "room again";
  EXPECT_TRUE(j.stats().refusing) << "the episode lasts until the journal has drained";
  j.flush();
  EXPECT_EQ(drain_all(j).size(), 4u);
  EXPECT_TRUE(j.finish_if_drained());
  s = j.stats();
  EXPECT_FALSE(s.refusing);
  EXPECT_EQ(s.refusal_episodes, 1u);
}

TEST(TapJournal, AFailingDiskDropsCountedFramesAndTheJournalGoesOn) {
  TempDir tmp;
  TapJournal j(config_in(tmp.path()));
  // The first segment the writer creates is /dev/full: every write fails with ENOSPC.
  fs::create_symlink("/dev/full", j.config().dir / jf::segment_file_name(1));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(j.append(JournalRecordKind::frame, "lost"), TapJournal::Append::ok);
  EXPECT_EQ(j.flush(), 3u);
  JournalStats s = j.stats();
  EXPECT_EQ(s.dropped_error, 3u);
  EXPECT_EQ(s.write_errors, 1u);
  EXPECT_EQ(s.refusal_episodes, 1u);
  EXPECT_TRUE(s.refused_for_error);
  EXPECT_EQ(s.bytes, 0u);
  EXPECT_TRUE(drain_all(j).empty());
  EXPECT_TRUE(j.finish_if_drained());
  fs::remove(j.config().dir / jf::segment_file_name(1));

  ASSERT_EQ(j.append(JournalRecordKind::frame, "kept"), TapJournal::Append::ok);
  j.flush();
  EXPECT_EQ(drain_all(j), std::vector<std::string>{"kept"});
}

TEST(TapJournal, WhatAPreviousRunLeftIsDrainedFirst) {
  TempDir tmp;
  {
    TapJournal j(config_in(tmp.path(), 1ull << 30, 4096));
    for (int i = 0; i < 100; ++i) j.append(JournalRecordKind::frame, "old-" + std::to_string(i));
    j.flush();
    EXPECT_EQ(j.drain(10, 1u << 20, [](JournalRecordKind, std::string_view) {}), 10u);
  }  // stopped mid-drain: what was drained of the head segment comes again
  TapJournal j(config_in(tmp.path(), 1ull << 30, 4096));
  EXPECT_TRUE(j.active()) << "new frames must queue behind the old ones";
  const JournalStats s = j.stats();
  EXPECT_EQ(s.recovered_frames, 100u);
  j.append(JournalRecordKind::frame, "new");
  j.flush();
  const auto got = drain_all(j);
  ASSERT_EQ(got.size(), 101u);
  EXPECT_EQ(got.front(), "old-0");
  EXPECT_EQ(got[99], "old-99");
  EXPECT_EQ(got.back(), "new");
}

TEST(TapJournal, ACorruptRecordSkipsTheRestOfItsSegmentOnlyAndIsCounted) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "journal";
  fs::create_directories(dir);
  std::string first;
  std::string second;
  for (int i = 0; i < 4; ++i) jf::append_record(first, JournalRecordKind::frame, "a" + std::to_string(i));
  for (int i = 0; i < 2; ++i) jf::append_record(second, JournalRecordKind::frame, "b" + std::to_string(i));
  const std::size_t one = first.size() / 4;
  first[one + jf::kHeaderBytes] ^= 0x40;  // the second record's payload: its CRC fails
  write_file(dir / jf::segment_file_name(7), first);
  write_file(dir / jf::segment_file_name(9), second + second.substr(0, 5));  // and a torn tail
  write_file(dir / "unrelated", "left alone");

  TapJournal j(config_in(tmp.path()));
  EXPECT_EQ(drain_all(j), (std::vector<std::string>{"a0", "b0", "b1"}));
  const JournalStats s = j.stats();
  EXPECT_EQ(s.corrupt_records, 2u) << "the bad CRC, the torn tail";
  EXPECT_EQ(s.corrupt_bytes, 3 * one + 5);
  EXPECT_EQ(s.drained_frames, 3u);
  EXPECT_TRUE(j.finish_if_drained());
  EXPECT_EQ(j.stats().frames, 0u);
  EXPECT_EQ(read_file(dir / "unrelated"), "left alone");
  EXPECT_TRUE(segments_in(dir).empty());
  // The writer never reuses a name it found.
  j.append(JournalRecordKind::frame, "c");
  j.flush();
  EXPECT_EQ(segments_in(dir).front().filename().string(), jf::segment_file_name(10));
}

TEST(TapJournal, ARecordLargerThanTheReadWindowComesBackWhole) {
  TempDir tmp;
  TapJournal j(config_in(tmp.path(), 1ull << 30, 64ull << 20));
  const std::string big(9u << 20, 'B');
  j.append(JournalRecordKind::frame, "small");
  j.append(JournalRecordKind::frame, big);
  j.append(JournalRecordKind::frame, "after");
  j.flush();
  std::vector<std::size_t> sizes;
  while (j.drain(100, 64u << 20, [&](JournalRecordKind, std::string_view p) { sizes.push_back(p.size()); }) > 0) {
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{5, big.size(), 5}));
  EXPECT_EQ(j.stats().corrupt_records, 0u);
}

TEST(TapJournal, ASecondSalttapOnTheSameDirectoryIsRefused) {
  TempDir tmp;
  TapJournal j(config_in(tmp.path()));
  EXPECT_THROW(TapJournal second(config_in(tmp.path())), JournalError);
  write_file(tmp.path() / "file", "x");
  EXPECT_THROW(TapJournal(JournalConfig{tmp.path() / "file", 1 << 20, 4096, 1 << 20}), JournalError);
}

// ---- the queue and the gate in front of the journal ----

std::string tagged_frame(int i) { return frame(simple_body("e/" + std::to_string(i))); }

std::vector<std::string> expected_tags(int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i) out.push_back("e/" + std::to_string(i));
  return out;
}

// The frames `from` to `to` as a reader passes them through the gate: each
// one diverted to the journal, or decoded into `batch`. How many were diverted.
std::size_t pass_frames(SpillGate& gate, std::vector<Event>& batch, int from, int to) {
  EventDecoder decoder;
  std::size_t diverted = 0;
  for (int i = from; i < to; ++i) {
    const std::string f = tagged_frame(i);
    if (gate.divert(f, JournalRecordKind::frame, batch))
      ++diverted;
    else
      batch.push_back(*decoder.decode_frame(f));
  }
  return diverted;
}

TEST(SpillGate, FramesBeyondTheQueueGoToTheJournalAndComeBackInBusOrder) {
  TempDir tmp;
  TapJournal journal(config_in(tmp.path()));
  EventQueue queue({.max_events = 3, .max_bytes = 1u << 20});
  queue.attach_journal(journal);
  SpillGate gate(queue);
  std::vector<Event> batch;
  // One read of 10 frames: 3 fit in the queue, 7 go to the journal.
  gate.begin();
  EXPECT_EQ(pass_frames(gate, batch, 0, 10), 7u);
  EXPECT_EQ(gate.end(batch), 0u);
  EXPECT_EQ(queue.stats().depth, 3u);
  EXPECT_EQ(journal.stats().frames, 7u);
  // The queue has room again after a pop, but the journal is active: still spilled.
  std::vector<Event> out;
  queue.pop_all(out, 0ms);
  EXPECT_EQ(out.size(), 3u);
  gate.begin();
  EXPECT_EQ(pass_frames(gate, batch, 10, 11), 1u);
  gate.end(batch);

  auto tags = pop_tags(queue, 8);
  EXPECT_EQ(tags, expected_tags(3, 11));
  // Drained: the next pop finishes the journal, then frames queue again.
  out.clear();
  queue.pop_all(out, 0ms);
  EXPECT_FALSE(journal.active());
  gate.begin();
  EXPECT_EQ(pass_frames(gate, batch, 11, 12), 0u);
  const QueueStats s = queue.stats();
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.journal_events, 8u);
  ASSERT_TRUE(s.journal);
  EXPECT_EQ(s.journal->drained_frames, 8u);
}

TEST(SpillGate, WithoutAJournalTheQueueDropsAsItAlwaysDid) {
  EventQueue queue({.max_events = 2, .max_bytes = 1u << 20});
  SpillGate gate(queue);
  std::vector<Event> batch;
  gate.begin();
  EXPECT_EQ(pass_frames(gate, batch, 0, 5), 0u);
  EXPECT_EQ(gate.end(batch), 3u);
}

TEST(StreamBusReader, AStalledConsumerCostsDiskNotEventsWithAJournal) {
  TempDir tmp;
  FakePublisher pub((tmp.path() / "pub.ipc").string());
  TapJournal journal(config_in(tmp.path(), 1ull << 30, 64u << 10));
  EventQueue queue({.max_events = 100, .max_bytes = 1u << 20});
  queue.attach_journal(journal);
  auto reader = subscribed_reader(pub, Endpoint::unix_socket(pub.path()), queue);
  std::string many;
  for (int i = 0; i < 5000; ++i) many += tagged_frame(i);
  pub.publish(many);  // would block in send() if the reader stopped reading
  eventually([&] { return reader->stats().frames >= 5000; });
  ASSERT_EQ(reader->stats().frames.load(), 5000u) << "the reader read everything with nobody popping";
  EXPECT_EQ(queue.stats().depth, 100u);
  EXPECT_EQ(journal.stats().frames, 4900u);
  EXPECT_EQ(pop_tags(queue, 5000), expected_tags(0, 5000));
  EXPECT_EQ(reader->stats().queue_drops.load(), 0u);
  EXPECT_EQ(journal.stats().dropped_full + journal.stats().dropped_error, 0u);
  reader->stop();
}

TEST(StreamBusReader, ATooSmallJournalDropsAndCountsTheRest) {
  TempDir tmp;
  FakePublisher pub((tmp.path() / "pub.ipc").string());
  const std::uint64_t one = jf::kHeaderBytes + tagged_frame(1000).size();
  TapJournal journal(config_in(tmp.path(), one * 500, 4096));
  EventQueue queue({.max_events = 100, .max_bytes = 1u << 20});
  queue.attach_journal(journal);
  auto reader = subscribed_reader(pub, Endpoint::unix_socket(pub.path()), queue);
  std::string many;
  for (int i = 1000; i < 2000; ++i) many += tagged_frame(i);
  pub.publish(many);
  eventually([&] { return reader->stats().frames >= 1000; });
  ASSERT_EQ(reader->stats().frames.load(), 1000u);
  const JournalStats s = journal.stats();
  EXPECT_EQ(s.frames, 500u);
  EXPECT_EQ(s.dropped_full, 400u) << "100 queued, 500 journaled, the rest refused";
  EXPECT_EQ(s.refusal_episodes, 1u);
  EXPECT_TRUE(s.refusing);
  EXPECT_EQ(pop_tags(queue, 600), expected_tags(1000, 1600)) << "what was kept, in order";
  reader->stop();
}

}  // namespace
}  // namespace salttap::tap
