// The disk spool: round trips, acks, segments, the full-spool policy, fsync
// policies, concurrency, and every recovery case of docs/spool.md with
// the damaged files written byte by byte.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "indexer/internal/spool_format.h"
#include "indexer/spool.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/spool_fixtures.h"
#include "tests/support/unprivileged.h"

namespace salttap::indexer {
namespace {

namespace fs = std::filesystem;
namespace sf = spool_format;
using std::chrono::milliseconds;

using namespace salttap::testing;  // the spool fixtures, fake time

BulkDoc doc(DocClass cls, const std::string& text) { return spool_doc(cls, text); }
BulkDoc event(const std::string& text) { return doc(DocClass::event, text); }
BulkDoc job(const std::string& text) { return doc(DocClass::job, text); }

std::vector<BulkDoc> events(int n, const std::string& prefix = "e") {
  std::vector<BulkDoc> out;
  for (int i = 0; i < n; ++i) out.push_back(event(prefix + std::to_string(i)));
  return out;
}

std::string record(std::uint64_t id, const BulkDoc& d) { return spool_record(id, d); }

void write_ledger(const fs::path& dir, std::uint64_t acked_id, std::uint64_t next_id) {
  const auto b = sf::encode_ledger(sf::Ledger{acked_id, next_id});
  write_file(dir / "ledger", std::string(reinterpret_cast<const char*>(b.data()), b.size()));
}

sf::Ledger ledger_on_disk(const fs::path& dir) {
  const std::string bytes = read_file(dir / "ledger");
  const auto ledger = sf::decode_ledger(std::span(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
  if (!ledger) throw std::runtime_error("no valid ledger on disk");
  return *ledger;
}

// ---------------------------------------------------------------------------
// Format

TEST(SpoolFormat, RecordRoundTripsAndDetectsDamage) {
  const BulkDoc d = job("j1");
  const std::string r = record(7, d);
  ASSERT_EQ(r.size(), sf::kHeaderBytes + d.ndjson.size());
  EXPECT_EQ(r.substr(0, 4), "STP1");
  std::array<unsigned char, sf::kHeaderBytes> h;
  std::memcpy(h.data(), r.data(), h.size());
  const auto parsed = sf::parse_header(h);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->id, 7u);
  EXPECT_EQ(parsed->cls, DocClass::job);
  EXPECT_EQ(parsed->payload_bytes, d.ndjson.size());
  EXPECT_EQ(parsed->crc, sf::record_crc(h, d.ndjson));
  EXPECT_NE(parsed->crc, sf::record_crc(h, d.ndjson + "x"));

  auto bad = h;
  bad[16] = 9;  // no such class
  EXPECT_FALSE(sf::parse_header(bad));
  bad = h;
  bad[18] = 1;  // reserved
  EXPECT_FALSE(sf::parse_header(bad));
  bad = h;
  bad[0] = 'X';
  EXPECT_FALSE(sf::parse_header(bad));
}

TEST(SpoolFormat, LedgerRoundTripsAndRejectsDamage) {
  const auto b = sf::encode_ledger(sf::Ledger{41, 42});
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data()), 4), "STPL");
  const auto back = sf::decode_ledger(b);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->acked_id, 41u);
  EXPECT_EQ(back->writer_next_id, 42u);
  auto flipped = b;
  flipped[12] ^= 1;
  EXPECT_FALSE(sf::decode_ledger(flipped));
  EXPECT_FALSE(sf::decode_ledger(std::span(b.data(), 63)));
}

TEST(SpoolFormat, SegmentNamesSortByIdAndParseStrictly) {
  EXPECT_EQ(sf::segment_file_name(42), "seg-00000000000000000042");
  EXPECT_EQ(sf::parse_segment_file_name("seg-00000000000000000042"), 42u);
  EXPECT_EQ(sf::parse_segment_file_name("seg-18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(sf::parse_segment_file_name("seg-18446744073709551616"));  // overflows
  EXPECT_FALSE(sf::parse_segment_file_name("seg-42"));
  EXPECT_FALSE(sf::parse_segment_file_name("seg-0000000000000000004x"));
  EXPECT_FALSE(sf::parse_segment_file_name("ledger"));
}

// ---------------------------------------------------------------------------
// Round trips and acks

TEST(Spool, AppendTakeAckRoundTrip) {
  TempDir tmp;
  Spool spool(spool_config(tmp.path()));
  const std::vector<BulkDoc> docs = {job("j"), doc(DocClass::ret, "r"), event("e")};
  const auto result = spool.append(docs);
  EXPECT_EQ(result.spooled, 3u);
  EXPECT_EQ(result.dropped, 0u);

  const auto got = spool.take(10, 1u << 20, milliseconds(0));
  ASSERT_EQ(got.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].id, i + 1);
    EXPECT_EQ(got[i].cls, docs[i].cls);
    EXPECT_EQ(got[i].payload, docs[i].ndjson);
  }
  EXPECT_TRUE(spool.take(10, 1u << 20, milliseconds(0)).empty()) << "never handed out twice";
  EXPECT_EQ(spool.stats().pending_records, 3u);

  ack_all(spool, got);
  const auto st = spool.stats();
  EXPECT_EQ(st.pending_records, 0u);
  EXPECT_EQ(st.acked_records, 3u);
  EXPECT_EQ(st.acked_id, 3u);
  EXPECT_EQ(spool.dead_letter_dir(), tmp.path() / "dead");
  EXPECT_TRUE(fs::is_directory(spool.dead_letter_dir()));
}

TEST(Spool, TakeHonoursMaxRecordsAndMaxBytesButHandsOutAtLeastOne) {
  TempDir tmp;
  Spool spool(spool_config(tmp.path()));
  append_all(spool, events(10));
  EXPECT_EQ(spool.take(4, 1u << 20, milliseconds(0)).size(), 4u);
  const auto one = spool.take(10, 1, milliseconds(0));  // smaller than any payload
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].id, 5u);
  const std::size_t two_payloads = 2 * one[0].payload.size();
  const auto two = spool.take(10, two_payloads, milliseconds(0));
  EXPECT_EQ(ids_of(two), (std::vector<std::uint64_t>{6, 7}));
}

TEST(Spool, ReopenAfterDestructionResumesWithUnackedRecordsOnly) {
  TempDir tmp;
  {
    Spool spool(spool_config(tmp.path()));
    append_all(spool, events(5));
    const auto got = take_all(spool);
    ASSERT_EQ(got.size(), 5u);
    const std::vector<std::uint64_t> acked = {1, 2, 4};  // 4 is above the gap at 3: memory only
    spool.ack(acked);
    EXPECT_EQ(spool.stats().acked_id, 2u);
  }
  Spool spool(spool_config(tmp.path()));
  EXPECT_EQ(spool.recovery().pending_records, 3u);
  EXPECT_FALSE(spool.recovery().ledger_rebuilt);
  const auto again = take_all(spool);
  EXPECT_EQ(ids_of(again), (std::vector<std::uint64_t>{3, 4, 5}));
  EXPECT_EQ(again[0].payload, event("e2").ndjson);
  append_all(spool, events(1, "new"));
  EXPECT_EQ(ids_of(take_all(spool)), (std::vector<std::uint64_t>{6})) << "ids keep increasing";
}

TEST(Spool, OutOfOrderAcksAdvanceOnlyOverTheContiguousPrefix) {
  TempDir tmp;
  Spool spool(spool_config(tmp.path()));
  append_all(spool, events(5));
  take_all(spool);
  const auto ack = [&](std::vector<std::uint64_t> ids) {
    spool.ack(ids);
    return spool.stats().acked_id;
  };
  EXPECT_EQ(ack({3, 5}), 0u);
  EXPECT_EQ(ack({1}), 1u);
  EXPECT_EQ(ack({2}), 3u);
  EXPECT_EQ(spool.stats().pending_records, 1u);
  EXPECT_EQ(ack({4}), 5u);
  EXPECT_EQ(spool.stats().pending_records, 0u);
}

TEST(Spool, DuplicateAndUnknownAcksAreCountedAndIgnored) {
  TempDir tmp;
  Spool spool(spool_config(tmp.path()));
  append_all(spool, events(3));
  spool.take(1, 1u << 20, milliseconds(0));
  const std::vector<std::uint64_t> ids = {1, 1, 2, 99};  // 2 was never handed out
  spool.ack(ids);
  const auto st = spool.stats();
  EXPECT_EQ(st.acked_records, 1u);
  EXPECT_EQ(st.unknown_acks, 3u);
  EXPECT_EQ(st.acked_id, 1u);
  EXPECT_EQ(st.pending_records, 2u);
}

// A spool on fake time, and takes on threads of their own: only the test
// moves the clock, so a take ends by an append, a wake, close() or its
// deadline, never by how long a thread takes.
struct SpoolOnFakeTime {
  // `tune` changes the spool's config (spool_config of a temporary directory) first.
  explicit SpoolOnFakeTime(const std::function<void(SpoolConfig&)>& tune = {}) : spool(tuned(tmp.path(), tune), time) {}

  // A take of up to 10 records that waits up to `wait`, once it waits.
  std::future<std::vector<SpoolRecord>> waiting_take(milliseconds wait) {
    auto taken = std::async(std::launch::async, [this, wait] { return spool.take(10, 1u << 20, wait); });
    time.await_waiters(1);
    return taken;
  }
  // An append that waits up to `wait` for room, once it waits.
  std::future<AppendResult> waiting_append(std::vector<BulkDoc> docs, milliseconds wait) {
    auto appended =
        std::async(std::launch::async, [this, docs = std::move(docs), wait] { return spool.append(docs, wait); });
    time.await_waiters(1);
    return appended;
  }

  TempDir tmp;
  FakeSteadyTime time;
  Spool spool;

 private:
  static SpoolConfig tuned(const fs::path& dir, const std::function<void(SpoolConfig&)>& tune) {
    SpoolConfig c = spool_config(dir);
    if (tune) tune(c);
    return c;
  }
};

// Time never moves in these: only close() or an append can end the waits.
TEST(Spool, CloseWakesTakersAndLaterTakesDoNotWait) {
  SpoolOnFakeTime s;
  auto taken = s.waiting_take(milliseconds(3'600'000));
  s.spool.close();
  EXPECT_TRUE(taken.get().empty());  // returns: close() woke it
  append_all(s.spool, events(2));    // appending after close still works (shutdown drains)
  EXPECT_EQ(s.spool.take(10, 1u << 20, milliseconds(3'600'000)).size(), 2u);
  EXPECT_TRUE(s.spool.take(10, 1u << 20, milliseconds(3'600'000)).empty());
}

TEST(Spool, AWakeWithNoTakeWaitingCountsForTheNextTakeOnly) {
  // The shipper's stop() may wake the takers just before its preparer's take
  // begins: that take must not sit out its wait.
  SpoolOnFakeTime s;
  s.spool.wake_takers();
  const auto before = s.time.now();
  auto first = std::async(std::launch::async, [&] { return s.spool.take(10, 1u << 20, milliseconds(3'600'000)); });
  const bool at_once = first.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  if (!at_once) s.spool.wake_takers();  // so that the test fails instead of hanging
  ASSERT_TRUE(at_once) << "it waited for the clock";
  EXPECT_TRUE(first.get().empty());
  EXPECT_EQ(s.time.now(), before);
  // The wake is spent: the next take waits until records come.
  auto second = s.waiting_take(milliseconds(3'600'000));
  append_all(s.spool, events(1));
  EXPECT_EQ(ids_of(second.get()), (std::vector<std::uint64_t>{1}));
}

TEST(Spool, TakeWaitsForAnAppend) {
  SpoolOnFakeTime s;
  auto taken = s.waiting_take(milliseconds(60'000));
  append_all(s.spool, events(1));
  EXPECT_EQ(ids_of(taken.get()), (std::vector<std::uint64_t>{1}));
}

TEST(Spool, TakeReturnsEmptyWhenItsWaitRunsOut) {
  SpoolOnFakeTime s;
  auto taken = s.waiting_take(milliseconds(5'000));
  s.time.advance(milliseconds(4'999));
  EXPECT_EQ(s.time.waiters(), 1u) << "still waiting one millisecond before its deadline";
  s.time.advance(milliseconds(1));
  EXPECT_TRUE(taken.get().empty());
}

TEST(Spool, TakeReadsFromTheSegmentFilesNotMemory) {
  TempDir tmp;
  Spool spool(spool_config(tmp.path()));
  append_all(spool, events(3));
  // Damage record 2 on disk after it was appended: take() must notice.
  const auto seg = segment_files(tmp.path()).at(0);
  std::string bytes = read_file(seg);
  const std::size_t rec = record(1, event("e0")).size();
  bytes[rec + sf::kHeaderBytes + 3] ^= 0x20;
  write_file(seg, bytes);
  const auto got = take_all(spool);
  EXPECT_EQ(ids_of(got), (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(spool.stats().read_corrupt_records, 1u);
  EXPECT_EQ(spool.stats().read_corrupt_bytes, rec);
  EXPECT_EQ(spool_metric(spool, "salttap_spool_corrupt_records_total{found=\"read\"}"), 1);
  EXPECT_EQ(spool_metric(spool, "salttap_spool_corrupt_records_total{found=\"recovery\"}"), 0);
}

TEST(Spool, ASegmentRemovedByHandIsCountedAsLostNotWaitedFor) {
  TempDir tmp;
  SpoolConfig c = spool_config(tmp.path());
  c.segment_bytes = 2 * record(1, event("e0")).size();
  Spool spool(c);
  append_all(spool, events(4));  // [1, 2] [3, 4]
  fs::remove(segment_files(tmp.path()).at(0));
  const auto got = take_all(spool);
  EXPECT_EQ(ids_of(got), (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(spool.stats().read_corrupt_records, 2u);
  EXPECT_EQ(spool.stats().pending_records, 2u) << "the lost ones are not pending";
}

// ---------------------------------------------------------------------------
// Segments

TEST(Spool, SegmentsRotateAtSegmentBytesAndAreDeletedOnceAcked) {
  TempDir tmp;
  SpoolConfig c = spool_config(tmp.path());
  const std::size_t rec = record(1, event("e0")).size();
  c.segment_bytes = 3 * rec;  // three records per segment
  Spool spool(c);
  append_all(spool, events(10));
  auto files = segment_files(tmp.path());
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].filename(), "seg-00000000000000000001");
  EXPECT_EQ(files[1].filename(), "seg-00000000000000000004");
  EXPECT_EQ(files[3].filename(), "seg-00000000000000000010");
  EXPECT_EQ(fs::file_size(files[0]), 3 * rec);
  EXPECT_EQ(spool.stats().segments, 4u);
  EXPECT_EQ(spool.stats().bytes, 10 * rec);

  const auto got = take_all(spool);
  ASSERT_EQ(got.size(), 10u);
  const std::vector<std::uint64_t> first_two = {2, 1};
  spool.ack(first_two);
  EXPECT_EQ(segment_files(tmp.path()).size(), 4u) << "record 3 still pending";
  const std::vector<std::uint64_t> third = {3};
  spool.ack(third);
  files = segment_files(tmp.path());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].filename(), "seg-00000000000000000004");
  EXPECT_EQ(spool.stats().bytes, 7 * rec);

  ack_all(spool, got);
  files = segment_files(tmp.path());
  ASSERT_EQ(files.size(), 1u) << "the writer keeps its segment until its room is needed";
  EXPECT_EQ(files[0].filename(), "seg-00000000000000000010");
  spool.close();  // ...or until close()
  EXPECT_TRUE(segment_files(tmp.path()).empty());
  EXPECT_EQ(spool.stats().bytes, 0u);
  EXPECT_EQ(spool.stats().segments, 0u);
  append_all(spool, events(1, "after"));
  EXPECT_EQ(segment_files(tmp.path()).at(0).filename(), "seg-00000000000000000011");
}

TEST(Spool, TheWritersFullyAckedSegmentIsDeletedWhenItsRoomIsNeeded) {
  TempDir tmp;
  SpoolConfig c = spool_config(tmp.path());
  const std::size_t rec = record(1, job("j0")).size();
  c.max_bytes = 3 * rec;  // smaller than one segment
  Spool spool(c);
  append_all(spool, std::vector<BulkDoc>{job("j0"), job("j1"), job("j2")});
  ack_all(spool, take_all(spool));
  EXPECT_EQ(spool.stats().bytes, 3 * rec);
  const auto r = spool.append(std::vector<BulkDoc>{job("j3")});
  EXPECT_EQ(r.spooled, 1u);
  EXPECT_EQ(spool.stats().bytes, rec);
  const auto files = segment_files(tmp.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename(), "seg-00000000000000000004");
}

TEST(Spool, ARecordLargerThanASegmentGetsASegmentOfItsOwn) {
  TempDir tmp;
  SpoolConfig c = spool_config(tmp.path());
  c.segment_bytes = 200;
  Spool spool(c);
  const std::vector<BulkDoc> docs = {event("a"), event(std::string(500, 'x')), event("b")};
  append_all(spool, docs);
  const auto files = segment_files(tmp.path());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(fs::file_size(files[1]), record(2, docs[1]).size());
  EXPECT_EQ(ids_of(take_all(spool)), (std::vector<std::uint64_t>{1, 2, 3}));
}

// ---------------------------------------------------------------------------
// Full-spool policy

TEST(Spool, FullSpoolRefusesEventsThenStatesAndJobsWaitThenTimeOut) {
  TempDir tmp;
  SpoolConfig c = spool_config(tmp.path());
  const std::size_t rec = record(1, event("e0")).size();  // every doc below is this size
  c.max_bytes = 10 * rec;
  c.events_limit = 0.5;  // events up to 5 records
  c.states_limit = 0.7;  // states up to 7
  Spool spool(c);

  auto r = spool.append(events(8));
  EXPECT_EQ(r.spooled, 5u);
  EXPECT_EQ(r.dropped, 3u);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(spool.stats().full);

  std::vector<BulkDoc> states;
  for (int i = 0; i < 4; ++i) states.push_back(doc(DocClass::state, "s" + std::to_string(i)));
  r = spool.append(states);
  EXPECT_EQ(r.spooled, 2u);
  EXPECT_EQ(r.dropped, 2u);

  std::vector<BulkDoc> jobs = {job("j0"), doc(DocClass::ret, "r0"), doc(DocClass::alert, "a0"), job("j1")};
  r = spool.append(jobs, milliseconds(0));
  EXPECT_EQ(r.spooled, 3u);  // up to max_bytes
  EXPECT_EQ(r.dropped, 1u);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.timed_out_docs, (std::vector<std::size_t>{3})) << "the caller may offer exactly j1 again";

  const auto st = spool.stats();
  EXPECT_EQ(st.bytes, 10 * rec);
  EXPECT_EQ(st.dropped[static_cast<int>(DocClass::event)], 3u);
  EXPECT_EQ(st.dropped[static_cast<int>(DocClass::state)], 2u);
  EXPECT_EQ(st.dropped[static_cast<int>(DocClass::job)], 1u);
  EXPECT_EQ(st.dropped[static_cast<int>(DocClass::ret)], 0u);
  EXPECT_EQ(st.dropped_by_reason[static_cast<int>(DropReason::full)][static_cast<int>(DocClass::event)], 3u);
  EXPECT_EQ(st.dropped_by_reason[static_cast<int>(DropReason::full)][static_cast<int>(DocClass::state)], 2u);
  EXPECT_EQ(st.dropped_by_reason[static_cast<int>(DropReason::timed_out)][static_cast<int>(DocClass::job)], 1u);
  EXPECT_EQ(st.full_episodes, 1u);
  EXPECT_TRUE(st.full);

  // Acks free the space: events are accepted again and the episode ends.
  ack_all(spool, take_all(spool));
  EXPECT_EQ(spool.append(events(1, "later")).spooled, 1u);
  EXPECT_FALSE(spool.stats().full);
  EXPECT_EQ(spool.stats().full_episodes, 1u);
}

TEST(Spool, ADocumentThatCanNeverFitIsDroppedAsTooLarge) {
  TempDir tmp;
  SpoolConfig c = spool_config(tmp.path());
  c.max_bytes = 1000;
  Spool spool(c);
  const std::vector<BulkDoc> docs = {job(std::string(2000, 'x'))};
  const auto r = spool.append(docs, milliseconds(60'000));  // no point waiting
  EXPECT_EQ(r.dropped, 1u);
  EXPECT_EQ(spool.stats().dropped_by_reason[static_cast<int>(DropReason::too_large)][0], 1u);
}

TEST(Spool, BackPressureWaitIsReleasedByAnAckFromAnotherThread) {
  const std::size_t rec = record(1, job("j0")).size();
  SpoolOnFakeTime s([rec](SpoolConfig& c) {
    c.max_bytes = 4 * rec;
    c.segment_bytes = 2 * rec;
  });
  std::vector<BulkDoc> four = {job("j0"), job("j1"), job("j2"), job("j3")};
  ASSERT_EQ(s.spool.append(four).spooled, 4u);

  auto waiting = s.waiting_append({job("j4")}, milliseconds(600'000));  // the writer waits for room
  EXPECT_TRUE(s.spool.stats().full) << "raised as the writer starts to wait";
  const auto got = s.spool.take(2, 1u << 20, milliseconds(0));
  ack_all(s.spool, got);  // frees the first segment
  const AppendResult blocked = waiting.get();
  EXPECT_EQ(blocked.spooled, 1u);
  EXPECT_FALSE(blocked.timed_out);
  EXPECT_EQ(ids_of(take_all(s.spool)), (std::vector<std::uint64_t>{3, 4, 5}));
}

// A spool with room for one record.
void room_for_one_record(SpoolConfig& c) { c.max_bytes = record(1, job("j0")).size(); }

TEST(Spool, BackPressureWaitEndsAtClose) {
  SpoolOnFakeTime s(room_for_one_record);
  append_all(s.spool, {job("j0")});
  auto waiting = s.waiting_append({job("j1")}, milliseconds(600'000));
  s.spool.close();
  EXPECT_TRUE(waiting.get().timed_out);
  EXPECT_EQ(s.spool.stats().dropped_by_reason[static_cast<int>(DropReason::timed_out)][0], 1u);
}

TEST(Spool, BackPressureWaitTimesOutAtItsDeadline) {
  SpoolOnFakeTime s(room_for_one_record);
  append_all(s.spool, {job("j0")});
  auto waiting = s.waiting_append({job("j1")}, milliseconds(30'000));
  s.time.advance(milliseconds(29'999));
  EXPECT_EQ(s.time.waiters(), 1u) << "still waiting one millisecond before its deadline";
  s.time.advance(milliseconds(1));
  const AppendResult blocked = waiting.get();
  EXPECT_TRUE(blocked.timed_out);
  EXPECT_EQ(blocked.spooled, 0u);
  EXPECT_EQ(blocked.timed_out_docs, (std::vector<std::size_t>{0}));
  EXPECT_EQ(s.spool.stats().dropped_by_reason[static_cast<int>(DropReason::timed_out)][0], 1u);
}

// ---------------------------------------------------------------------------
// Concurrency

TEST(Spool, FourConcurrentTakersNeverGetTheSameRecordTwice) {
  TempDir tmp;
  FakeSteadyTime time;  // never moves: takers wait until records come, or close()
  SpoolConfig c = spool_config(tmp.path());
  c.segment_bytes = 16 << 10;  // many rotations and deletions along the way
  Spool spool(c, time);
  constexpr int kRecords = 20000;
  std::thread writer([&] {
    for (int i = 0; i < kRecords; i += 100) append_all(spool, events(100, "w" + std::to_string(i) + "-"));
  });
  std::mutex mu;
  std::vector<std::uint64_t> all;
  std::atomic<int> taken{0};
  std::vector<std::thread> takers;
  for (int t = 0; t < 4; ++t) {
    takers.emplace_back([&] {
      std::uint64_t last = 0;
      while (taken.load() < kRecords) {
        const auto got = spool.take(7, 1u << 20, milliseconds(20));
        for (const auto& r : got) {
          EXPECT_GT(r.id, last) << "each taker sees increasing ids";
          last = r.id;
        }
        const auto ids = ids_of(got);
        spool.ack(ids);
        {
          std::lock_guard lock(mu);
          all.insert(all.end(), ids.begin(), ids.end());
        }
        // The last record is in: release the takers still waiting for more.
        if ((taken += static_cast<int>(got.size())) == kRecords) spool.close();
      }
    });
  }
  writer.join();
  for (auto& t : takers) t.join();
  ASSERT_EQ(all.size(), static_cast<std::size_t>(kRecords));
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "a record was handed out twice";
  EXPECT_EQ(all.front(), 1u);
  EXPECT_EQ(all.back(), static_cast<std::uint64_t>(kRecords));
  const auto st = spool.stats();
  EXPECT_EQ(st.pending_records, 0u);
  EXPECT_EQ(st.acked_id, static_cast<std::uint64_t>(kRecords));
  EXPECT_LE(st.segments, 1u);
}

// ---------------------------------------------------------------------------
// fsync policies and stats

// Five appends, `between` apart on fake time.
std::uint64_t fsyncs_after(FsyncPolicy policy, milliseconds interval, milliseconds between, bool close) {
  TempDir tmp;
  FakeSteadyTime time;
  SpoolConfig c = spool_config(tmp.path());
  c.fsync = policy;
  c.fsync_interval = interval;
  Spool spool(c, time);
  for (int i = 0; i < 5; ++i) {
    time.advance(between);
    append_all(spool, events(2, std::to_string(i)));
  }
  if (close) spool.close();
  return spool.stats().fsyncs;
}

TEST(Spool, FsyncPoliciesAreCounted) {
  const milliseconds second(1'000), none(0);
  EXPECT_EQ(fsyncs_after(FsyncPolicy::every_batch, second, none, false), 5u);
  EXPECT_EQ(fsyncs_after(FsyncPolicy::never, second, second, true), 0u);
  EXPECT_EQ(fsyncs_after(FsyncPolicy::interval, second, none, false), 0u) << "the interval never passed";
  EXPECT_EQ(fsyncs_after(FsyncPolicy::interval, second, none, true), 1u) << "close syncs";
  EXPECT_EQ(fsyncs_after(FsyncPolicy::interval, second, second, false), 5u) << "each append a second later";
  EXPECT_EQ(fsyncs_after(FsyncPolicy::interval, second, milliseconds(500), false), 2u) << "at 1 s and at 2 s";
  EXPECT_EQ(fsyncs_after(FsyncPolicy::interval, none, none, false), 5u);
}

TEST(Spool, StatsDescribeWhatIsOnDisk) {
  TempDir tmp;
  SpoolConfig c = spool_config(tmp.path());
  c.segment_bytes = 10 * record(1, event("e0")).size();  // e0..e9 fill the first segment
  Spool spool(c);
  append_all(spool, events(30));
  auto st = spool.stats();
  std::uint64_t on_disk = 0;
  for (const auto& f : segment_files(tmp.path())) on_disk += fs::file_size(f);
  EXPECT_EQ(st.bytes, on_disk);
  EXPECT_EQ(st.segments, segment_files(tmp.path()).size());
  EXPECT_EQ(st.appended_records, 30u);
  EXPECT_EQ(st.appended_bytes, on_disk);
  EXPECT_EQ(st.pending_records, 30u);
  EXPECT_EQ(st.acked_records, 0u);
  EXPECT_EQ(st.ledger_writes, 1u) << "written once at start";
  EXPECT_FALSE(st.full);

  ack_all(spool, spool.take(10, 1u << 20, milliseconds(0)));
  st = spool.stats();
  EXPECT_EQ(st.acked_records, 10u);
  EXPECT_EQ(st.acked_id, 10u);
  EXPECT_EQ(st.pending_records, 20u);
  EXPECT_GE(st.ledger_writes, 2u) << "a segment was deleted";
  EXPECT_LT(st.bytes, on_disk);
}

// ---------------------------------------------------------------------------
// Directory handling

TEST(SpoolRecovery, EmptyDirectoryStartsClean) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "new" / "spool";  // created
  Spool spool(spool_config(dir));
  const auto& r = spool.recovery();
  EXPECT_EQ(r.pending_records, 0u);
  EXPECT_EQ(r.torn_tails, 0u);
  EXPECT_EQ(r.corrupt_records, 0u);
  EXPECT_FALSE(r.ledger_rebuilt);
  EXPECT_FALSE(r.ledger_clamped);
  EXPECT_TRUE(fs::is_directory(dir / "dead"));
  EXPECT_TRUE(fs::exists(dir / "lock"));
  EXPECT_EQ(fs::file_size(dir / "ledger"), sf::kLedgerBytes);
  EXPECT_TRUE(take_all(spool).empty());
}

TEST(SpoolRecovery, APathThatIsAFileIsRefusedClearly) {
  TempDir tmp;
  write_file(tmp.path() / "file", "x");
  try {
    Spool spool(spool_config(tmp.path() / "file"));
    FAIL() << "no SpoolError";
  } catch (const SpoolError& e) {
    EXPECT_NE(std::string(e.what()).find("is not a directory"), std::string::npos) << e.what();
  }
  try {
    Spool spool(spool_config(tmp.path() / "file" / "spool"));
    FAIL() << "no SpoolError";
  } catch (const SpoolError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create the spool directory"), std::string::npos) << e.what();
  }
}

// Root writes anywhere: as root, this runs as user nobody.
TEST(SpoolRecovery, ADirectoryThatIsNotWritableIsRefusedClearly) {
  testing::run_unprivileged([] {
    TempDir tmp;
    fs::create_directory(tmp.path() / "ro");
    fs::permissions(tmp.path() / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    try {
      Spool spool(spool_config(tmp.path() / "ro"));
      ADD_FAILURE() << "no SpoolError";
    } catch (const SpoolError& e) {
      EXPECT_NE(std::string(e.what()).find("cannot write to the spool directory"), std::string::npos) << e.what();
    }
    fs::permissions(tmp.path() / "ro", fs::perms::owner_all);
  });
}

TEST(SpoolRecovery, AReadOnlyFilesystemIsRefusedClearly) {
  // Works as root too: /proc refuses new directories to everyone.
  try {
    Spool spool(spool_config("/proc/salttap-spool-test"));
    FAIL() << "no SpoolError";
  } catch (const SpoolError& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/salttap-spool-test"), std::string::npos) << e.what();
  }
}

TEST(SpoolRecovery, TwoSpoolsCannotShareADirectory) {
  TempDir tmp;
  Spool first(spool_config(tmp.path()));
  try {
    Spool second(spool_config(tmp.path()));
    FAIL() << "no SpoolError";
  } catch (const SpoolError& e) {
    EXPECT_NE(std::string(e.what()).find("in use by another salttap (pid " + std::to_string(::getpid())),
              std::string::npos)
        << e.what();
  }
}

TEST(SpoolRecovery, TheLockIsReleasedWithTheSpool) {
  TempDir tmp;
  { Spool first(spool_config(tmp.path())); }
  EXPECT_NO_THROW(Spool second(spool_config(tmp.path())));
}

TEST(SpoolRecovery, StrayFilesAreIgnoredAndLeftAlone) {
  TempDir tmp;
  {
    Spool spool(spool_config(tmp.path()));
    append_all(spool, events(2));
  }
  write_file(tmp.path() / "README", "operator notes");
  write_file(tmp.path() / "seg-42", "not a segment name");
  write_file(tmp.path() / "seg-0000000000000000004x", "nor this");
  write_file(tmp.path() / "ledger.tmp", "half a ledger");
  fs::create_directory(tmp.path() / "old");
  Spool spool(spool_config(tmp.path()));
  EXPECT_EQ(spool.recovery().pending_records, 2u);
  EXPECT_EQ(spool.recovery().corrupt_records, 0u);
  EXPECT_EQ(read_file(tmp.path() / "README"), "operator notes");
  EXPECT_TRUE(fs::exists(tmp.path() / "seg-42"));
  EXPECT_TRUE(fs::exists(tmp.path() / "old"));
  EXPECT_EQ(take_all(spool).size(), 2u);
}

// ---------------------------------------------------------------------------
// Recovery: one test per case of docs/spool.md's table

TEST(SpoolRecovery, TornTailIsTruncatedToTheLastWholeRecord) {
  TempDir tmp;
  const std::string r1 = record(1, job("j1")), r2 = record(2, job("j2")), r3 = record(3, job("j3"));
  const fs::path seg = tmp.path() / sf::segment_file_name(1);
  write_file(seg, r1 + r2 + r3.substr(0, r3.size() - 5));  // the crash cut the last write short
  write_ledger(tmp.path(), 0, 1);

  Spool spool(spool_config(tmp.path()));
  EXPECT_EQ(spool.recovery().torn_tails, 1u);
  EXPECT_EQ(spool_metric(spool, "salttap_spool_torn_tails_total"), 1);
  EXPECT_EQ(spool.recovery().torn_bytes, r3.size() - 5);
  EXPECT_EQ(spool.recovery().corrupt_records, 0u);
  EXPECT_EQ(spool.recovery().pending_records, 2u);
  EXPECT_EQ(fs::file_size(seg), r1.size() + r2.size());
  EXPECT_EQ(ids_of(take_all(spool)), (std::vector<std::uint64_t>{1, 2}));
  append_all(spool, std::vector<BulkDoc>{job("j4")});
  EXPECT_EQ(ids_of(take_all(spool)), (std::vector<std::uint64_t>{3}));
}

TEST(SpoolRecovery, TornHeaderAndAnEmptyNewSegmentAreTornTails) {
  TempDir tmp;
  const std::string r1 = record(1, job("j1")), r2 = record(2, job("j2"));
  write_file(tmp.path() / sf::segment_file_name(1), r1 + r2.substr(0, 10));  // half a header
  Spool spool(spool_config(tmp.path()));
  EXPECT_EQ(spool.recovery().torn_tails, 1u);
  EXPECT_EQ(spool.recovery().pending_records, 1u);

  TempDir tmp2;
  write_file(tmp2.path() / sf::segment_file_name(1), r1);
  write_file(tmp2.path() / sf::segment_file_name(2), std::string(40, '\0'));  // created, data never reached disk
  Spool spool2(spool_config(tmp2.path()));
  EXPECT_EQ(spool2.recovery().torn_tails, 1u);
  EXPECT_EQ(spool2.recovery().corrupt_records, 0u);
  EXPECT_FALSE(fs::exists(tmp2.path() / sf::segment_file_name(2))) << "nothing valid left in it";
  EXPECT_EQ(ids_of(take_all(spool2)), (std::vector<std::uint64_t>{1}));
}

TEST(SpoolRecovery, BadCrcMidSegmentSkipsToTheNextValidRecordAndLogsAnError) {
  TempDir tmp;
  std::string bytes;
  std::vector<std::string> recs;
  for (std::uint64_t id = 1; id <= 5; ++id) recs.push_back(record(id, job("j" + std::to_string(id))));
  for (const auto& r : recs) bytes += r;
  bytes[recs[0].size() + sf::kHeaderBytes + 2] ^= 0x01;  // one bit of record 2's payload
  write_file(tmp.path() / sf::segment_file_name(1), bytes);
  write_ledger(tmp.path(), 0, 6);

  ::testing::internal::CaptureStderr();
  auto spool = std::make_unique<Spool>(spool_config(tmp.path()));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("ERROR"), std::string::npos) << log;
  EXPECT_NE(log.find("corrupt data"), std::string::npos) << log;
  const auto& r = spool->recovery();
  EXPECT_EQ(r.corrupt_records, 1u);
  EXPECT_EQ(spool_metric(*spool, "salttap_spool_corrupt_records_total{found=\"recovery\"}"), 1);
  EXPECT_EQ(r.corrupt_bytes, recs[1].size());
  EXPECT_EQ(r.torn_tails, 0u);
  EXPECT_EQ(r.pending_records, 4u);
  const auto got = take_all(*spool);
  EXPECT_EQ(ids_of(got), (std::vector<std::uint64_t>{1, 3, 4, 5}));
  EXPECT_EQ(got[1].payload, job("j3").ndjson);
  ack_all(*spool, got);
  spool.reset();
  Spool again(spool_config(tmp.path()));
  EXPECT_EQ(again.recovery().corrupt_records, 0u) << "the damaged segment was deleted once all of it was acked";
  EXPECT_EQ(again.recovery().pending_records, 0u);
}

TEST(SpoolRecovery, ACorruptLengthMidSegmentIsSkippedNotTakenForATornTail) {
  TempDir tmp;
  const std::string r1 = record(1, job("j1")), r3 = record(3, job("j3"));
  std::string r2 = record(2, job("j2"));
  r2[5] = '\x01';  // the length now runs past the end of the file
  write_file(tmp.path() / sf::segment_file_name(1), r1 + r2 + r3);
  Spool spool(spool_config(tmp.path()));
  EXPECT_EQ(spool.recovery().torn_tails, 0u);
  EXPECT_EQ(spool.recovery().corrupt_records, 1u);
  EXPECT_EQ(spool.recovery().corrupt_bytes, r2.size());
  EXPECT_EQ(ids_of(take_all(spool)), (std::vector<std::uint64_t>{1, 3}));
}

TEST(SpoolRecovery, GarbageAtTheEndOfAnOlderSegmentIsCorruptionAndIsCut) {
  TempDir tmp;
  const std::string r1 = record(1, job("j1")), r2 = record(2, job("j2")), r3 = record(3, job("j3"));
  const fs::path first = tmp.path() / sf::segment_file_name(1);
  std::string bad = r2;
  bad[30] ^= 0x40;
  write_file(first, r1 + bad);  // not the writer's last segment: the record was complete once
  write_file(tmp.path() / sf::segment_file_name(3), r3);
  Spool spool(spool_config(tmp.path()));
  EXPECT_EQ(spool.recovery().torn_tails, 0u);
  EXPECT_EQ(spool.recovery().corrupt_records, 1u);  // ids 1 -> 3: one lost
  EXPECT_EQ(fs::file_size(first), r1.size());
  EXPECT_EQ(ids_of(take_all(spool)), (std::vector<std::uint64_t>{1, 3}));
}

TEST(SpoolRecovery, LedgerAheadOfTheDataIsClampedWithAWarning) {
  TempDir tmp;
  write_file(tmp.path() / sf::segment_file_name(1), record(1, job("j1")) + record(2, job("j2")));
  write_ledger(tmp.path(), 10, 11);  // e.g. later segments removed by hand

  ::testing::internal::CaptureStderr();
  Spool spool(spool_config(tmp.path()));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("WARN"), std::string::npos) << log;
  EXPECT_TRUE(spool.recovery().ledger_clamped);
  EXPECT_FALSE(spool.recovery().ledger_rebuilt);
  EXPECT_EQ(spool.stats().acked_id, 2u);
  EXPECT_EQ(spool.recovery().pending_records, 0u);
  append_all(spool, std::vector<BulkDoc>{job("j11")});
  EXPECT_EQ(ids_of(take_all(spool)), (std::vector<std::uint64_t>{11})) << "ids never go back";
}

TEST(SpoolRecovery, MissingLedgerIsRebuiltAndEverythingIsResent) {
  TempDir tmp;
  {
    Spool spool(spool_config(tmp.path()));
    append_all(spool, events(3));
    ack_all(spool, spool.take(2, 1u << 20, milliseconds(0)));
  }
  ASSERT_TRUE(fs::remove(tmp.path() / "ledger"));
  Spool spool(spool_config(tmp.path()));
  EXPECT_TRUE(spool.recovery().ledger_rebuilt);
  EXPECT_EQ(spool.recovery().pending_records, 3u);
  EXPECT_EQ(ids_of(take_all(spool)), (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(ledger_on_disk(tmp.path()).acked_id, 0u) << "the rebuilt ledger is written at once";
}

TEST(SpoolRecovery, LedgerWithABadCrcIsRebuilt) {
  TempDir tmp;
  {
    Spool spool(spool_config(tmp.path()));
    append_all(spool, events(3));
    ack_all(spool, spool.take(2, 1u << 20, milliseconds(0)));
  }
  std::string ledger = read_file(tmp.path() / "ledger");
  ASSERT_EQ(ledger.size(), sf::kLedgerBytes);
  ledger[15] ^= 0x04;  // acked_id, so the CRC no longer matches
  write_file(tmp.path() / "ledger", ledger);
  Spool spool(spool_config(tmp.path()));
  EXPECT_TRUE(spool.recovery().ledger_rebuilt);
  EXPECT_EQ(spool.recovery().pending_records, 3u);
}

TEST(SpoolRecovery, RecordIdsNotIncreasingAreCorruption) {
  TempDir tmp;
  // A verified record whose id goes back (2 after 3), within a segment...
  write_file(tmp.path() / sf::segment_file_name(1), record(1, job("j1")) + record(2, job("j2")) + record(3, job("j3")) +
                                                        record(2, job("again")) + record(4, job("j4")));
  // ...and a whole later segment whose ids go back.
  write_file(tmp.path() / sf::segment_file_name(9), record(3, job("old3")) + record(4, job("old4")));
  write_file(tmp.path() / sf::segment_file_name(10), record(5, job("j5")));
  Spool spool(spool_config(tmp.path()));
  EXPECT_EQ(spool.recovery().corrupt_records, 2u);  // the stray 2, and the run 3..4 of seg 9
  EXPECT_EQ(spool.recovery().torn_tails, 0u);
  EXPECT_FALSE(fs::exists(tmp.path() / sf::segment_file_name(9)));
  const auto got = take_all(spool);
  EXPECT_EQ(ids_of(got), (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(got[3].payload, job("j4").ndjson);
}

TEST(SpoolRecovery, FullyAckedSegmentsAreDeletedAtStart) {
  TempDir tmp;
  write_file(tmp.path() / sf::segment_file_name(1), record(1, job("j1")) + record(2, job("j2")));
  write_file(tmp.path() / sf::segment_file_name(3), record(3, job("j3")));
  write_ledger(tmp.path(), 2, 4);
  Spool spool(spool_config(tmp.path()));
  EXPECT_FALSE(fs::exists(tmp.path() / sf::segment_file_name(1)));
  EXPECT_EQ(spool.recovery().pending_records, 1u);
  EXPECT_EQ(ids_of(take_all(spool)), (std::vector<std::uint64_t>{3}));
}

TEST(SpoolRecovery, AStraddlingSegmentResumesAfterTheAckedId) {
  TempDir tmp;
  SpoolConfig c = spool_config(tmp.path());
  c.segment_bytes = 1 << 20;
  {
    Spool spool(c);
    append_all(spool, events(6));
    ack_all(spool, spool.take(4, 1u << 20, milliseconds(0)));
  }
  Spool spool(c);
  EXPECT_EQ(spool.recovery().pending_records, 2u);
  EXPECT_EQ(ids_of(take_all(spool)), (std::vector<std::uint64_t>{5, 6}));
}

}  // namespace
}  // namespace salttap::indexer
