// The disk spool when the disk fails: one test per fault (ENOSPC, short
// writes, failed fdatasync, ledger writes, unlinks, and the directory at
// start), made by FaultyStateFilesystem over a real temporary directory.
//
// What every test proves, beyond the fault's own outcome (spool.h, "What
// spooled promises"): the failure is an ERROR naming the path and the errno,
// the documents not spooled are counted by class as io_error, the spool keeps
// working once the fault is gone, and a spool reopened afterwards hands out
// every document append() reported spooled, exactly once, in order.

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "common/errno_text.h"
#include "indexer/internal/spool_format.h"
#include "indexer/spool.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/faulty_state_filesystem.h"
#include "tests/support/spool_fixtures.h"

namespace salttap::indexer {
namespace {

namespace fs = std::filesystem;
namespace sf = spool_format;
using std::chrono::milliseconds;
using testing::FakeSteadyTime;
using testing::FaultyStateFilesystem;
using testing::FsFault;
using testing::FsOp;
using testing::ids_of;
using testing::payloads_of;
using testing::take_all;

// `n` documents named <name>-<i>, cycling through every class.
std::vector<BulkDoc> batch(const std::string& name, int n) {
  constexpr DocClass kClasses[] = {DocClass::job, DocClass::ret, DocClass::state, DocClass::event, DocClass::alert};
  std::vector<BulkDoc> out;
  for (int i = 0; i < n; ++i) out.push_back(testing::spool_doc(kClasses[i % 5], name + "-" + std::to_string(i)));
  return out;
}

std::vector<std::string> payloads(const std::vector<BulkDoc>& docs) {
  std::vector<std::string> out;
  for (const auto& d : docs) out.push_back(d.ndjson);
  return out;
}

std::uint64_t record_bytes(const BulkDoc& d) { return sf::kHeaderBytes + d.ndjson.size(); }

std::uint64_t io_error_drops(const SpoolStats& st, DocClass cls) {
  return st.dropped_by_reason[static_cast<std::size_t>(DropReason::io_error)][static_cast<std::size_t>(cls)];
}

class SpoolFaults : public ::testing::Test {
 protected:
  fs::path dir() const { return tmp_.path() / "spool"; }
  std::string segment(std::uint64_t name_id) const { return (dir() / sf::segment_file_name(name_id)).string(); }

  SpoolConfig config(FsyncPolicy policy) const {
    SpoolConfig c;
    c.dir = dir();
    c.fsync = policy;
    c.fsync_interval = std::chrono::seconds(1);
    return c;
  }

  std::unique_ptr<Spool> open(const SpoolConfig& c) { return std::make_unique<Spool>(c, time_, files_); }

  // Appends `docs`; every document the spool reports spooled joins
  // `acknowledged_` (the test says which ones: those of `spooled`).
  AppendResult append(Spool& spool, const std::vector<BulkDoc>& docs, const std::vector<BulkDoc>& spooled) {
    const AppendResult r = spool.append(docs);
    EXPECT_EQ(r.spooled, spooled.size());
    EXPECT_EQ(r.dropped, docs.size() - spooled.size());
    for (const auto& p : payloads(spooled)) acknowledged_.push_back(p);
    return r;
  }
  AppendResult append_all(Spool& spool, const std::vector<BulkDoc>& docs) { return append(spool, docs, docs); }

  // A new spool on the real filesystem hands out exactly `expected`, in order, once.
  void expect_reopened_spool_delivers(const SpoolConfig& c, const std::vector<std::string>& expected) {
    FakeSteadyTime time;
    Spool again(c, time);
    const auto got = take_all(again);
    EXPECT_EQ(payloads_of(got), expected);
    const auto ids = ids_of(got);
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()) && std::adjacent_find(ids.begin(), ids.end()) == ids.end())
        << "ids increase";
    EXPECT_TRUE(again.take(10, 1u << 20, milliseconds(0)).empty()) << "nothing is handed out twice";
  }
  void expect_reopened_spool_delivers_what_was_acknowledged(const SpoolConfig& c) {
    expect_reopened_spool_delivers(c, acknowledged_);
  }
  // What a new spool on the real filesystem finds and repairs in what `c` left (its log set aside).
  static RecoveryReport recovery_at_restart(const SpoolConfig& c) {
    FakeSteadyTime time;
    ::testing::internal::CaptureStderr();
    const Spool again(c, time);
    ::testing::internal::GetCapturedStderr();
    return again.recovery();
  }

  // The ERROR line for a failed call on `path` with `error`.
  static void expect_error_log(const std::string& log, const std::string& path, int error) {
    EXPECT_NE(log.find("ERROR"), std::string::npos) << log;
    EXPECT_NE(log.find(path), std::string::npos) << "names the path: " << log;
    EXPECT_NE(log.find(errno_text(error)), std::string::npos) << "names the errno: " << log;
  }

  testing::TempDir tmp_;
  FakeSteadyTime time_;
  FaultyStateFilesystem files_;
  std::vector<std::string> acknowledged_;
};

// ---------------------------------------------------------------------------
// ENOSPC on append

TEST_F(SpoolFaults, EnospcOnAWholeBatchDropsItAsIoErrorAndTheSpoolStaysUsable) {
  for (const FsyncPolicy policy : {FsyncPolicy::every_batch, FsyncPolicy::interval, FsyncPolicy::never}) {
    SCOPED_TRACE(static_cast<int>(policy));
    fs::remove_all(dir());
    acknowledged_.clear();
    files_.clear_faults();
    const SpoolConfig c = config(policy);
    {
      auto spool = open(c);
      const auto before = batch("before", 3);
      append_all(*spool, before);
      const auto seg_bytes = fs::file_size(segment(1));

      files_.inject({.op = FsOp::write, .file = "seg-", .error = ENOSPC});
      const auto lost = batch("lost", 5);  // one document of each class
      ::testing::internal::CaptureStderr();
      append(*spool, lost, {});
      const std::string log = ::testing::internal::GetCapturedStderr();
      expect_error_log(log, segment(1), ENOSPC);
      EXPECT_NE(log.find("5 documents dropped (io_error)"), std::string::npos) << log;

      const auto st = spool->stats();
      for (const DocClass cls : {DocClass::job, DocClass::ret, DocClass::state, DocClass::event, DocClass::alert})
        EXPECT_EQ(io_error_drops(st, cls), 1u) << to_string(cls);
      EXPECT_EQ(st.io_errors, 1u);
      EXPECT_EQ(testing::spool_metric(*spool, "salttap_spool_io_errors_total"), 1);
      EXPECT_EQ(
          testing::spool_metric(*spool, "salttap_spool_dropped_documents_total{class=\"job\",reason=\"io_error\"}"), 1);
      EXPECT_EQ(st.appended_records, 3u);
      EXPECT_EQ(fs::file_size(segment(1)), seg_bytes) << "nothing of the failed write is left";

      files_.clear_faults();  // space came back
      append_all(*spool, batch("after", 3));
      EXPECT_EQ(payloads_of(take_all(*spool)), acknowledged_);
    }
    expect_reopened_spool_delivers_what_was_acknowledged(c);
  }
}

TEST_F(SpoolFaults, EnospcCreatingASegmentDropsTheBatch) {
  const SpoolConfig c = config(FsyncPolicy::every_batch);
  {
    auto spool = open(c);
    files_.inject({.op = FsOp::open, .file = "seg-", .error = ENOSPC, .times = 1});
    ::testing::internal::CaptureStderr();
    append(*spool, batch("lost", 2), {});
    expect_error_log(::testing::internal::GetCapturedStderr(), segment(1), ENOSPC);
    EXPECT_EQ(io_error_drops(spool->stats(), DocClass::job), 1u);
    EXPECT_EQ(io_error_drops(spool->stats(), DocClass::ret), 1u);
    append_all(*spool, batch("after", 2));
  }
  expect_reopened_spool_delivers_what_was_acknowledged(c);
}

TEST_F(SpoolFaults, EnospcMidBatchKeepsWhatWasWrittenBeforeAndAfterIt) {
  // Two records per segment: six documents are three segment writes, and
  // the second fails. Each write stands alone: the first and third spool.
  SpoolConfig c = config(FsyncPolicy::every_batch);
  const auto docs = batch("d", 6);
  c.segment_bytes = 2 * record_bytes(docs[0]);
  {
    auto spool = open(c);
    files_.inject({.op = FsOp::write, .file = "seg-", .error = ENOSPC, .after = 1, .times = 1});
    ::testing::internal::CaptureStderr();
    append(*spool, docs, {docs[0], docs[1], docs[4], docs[5]});
    const std::string log = ::testing::internal::GetCapturedStderr();
    expect_error_log(log, segment(3), ENOSPC);
    EXPECT_NE(log.find("2 documents dropped (io_error)"), std::string::npos) << log;
    const auto st = spool->stats();
    EXPECT_EQ(io_error_drops(st, DocClass::state), 1u);  // d-2
    EXPECT_EQ(io_error_drops(st, DocClass::event), 1u);  // d-3
    EXPECT_EQ(st.dropped[static_cast<std::size_t>(DocClass::job)], 0u);
    EXPECT_EQ(fs::file_size(segment(3)), 0u) << "the failed write's segment holds nothing";
    EXPECT_EQ(payloads_of(take_all(*spool)), acknowledged_);
  }
  expect_reopened_spool_delivers_what_was_acknowledged(c);
}

TEST_F(SpoolFaults, AShortWriteThenEnospcIsCutOffTheSegment) {
  const SpoolConfig c = config(FsyncPolicy::interval);
  {
    auto spool = open(c);
    append_all(*spool, batch("before", 3));
    const auto seg_bytes = fs::file_size(segment(1));
    // 30 bytes: a whole header and part of a payload reach the file.
    files_.inject({.op = FsOp::write, .file = "seg-", .error = ENOSPC, .times = 1, .short_write = 30});
    ::testing::internal::CaptureStderr();
    append(*spool, batch("lost", 3), {});
    expect_error_log(::testing::internal::GetCapturedStderr(), segment(1), ENOSPC);
    EXPECT_EQ(fs::file_size(segment(1)), seg_bytes) << "the 30 bytes were cut off";
    EXPECT_EQ(spool->stats().dropped[static_cast<std::size_t>(DocClass::job)], 1u);
    append_all(*spool, batch("after", 3));
  }
  const RecoveryReport recovery = recovery_at_restart(c);
  EXPECT_EQ(recovery.torn_tails, 0u);
  EXPECT_EQ(recovery.corrupt_records, 0u);
  expect_reopened_spool_delivers_what_was_acknowledged(c);
}

TEST_F(SpoolFaults, AShortWriteWhoseCutFailsContinuesInANewSegment) {
  const SpoolConfig c = config(FsyncPolicy::interval);
  {
    auto spool = open(c);
    append_all(*spool, batch("before", 3));
    files_.inject({.op = FsOp::write, .file = "seg-", .error = ENOSPC, .times = 1, .short_write = 30});
    files_.inject({.op = FsOp::truncate, .file = "seg-", .times = 1});
    ::testing::internal::CaptureStderr();
    append(*spool, batch("lost", 3), {});
    const std::string log = ::testing::internal::GetCapturedStderr();
    expect_error_log(log, segment(1), ENOSPC);
    EXPECT_NE(log.find("cannot cut " + segment(1)), std::string::npos) << log;
    EXPECT_EQ(spool->stats().io_errors, 2u);
    append_all(*spool, batch("after", 3));  // ids 7..9: the lost ones' ids are not reused
    EXPECT_TRUE(fs::exists(segment(7)));
    EXPECT_EQ(payloads_of(take_all(*spool)), acknowledged_) << "the reader never reads the partial tail";
  }
  // At a restart the tail is corruption at the end of an older segment:
  // reported and cut, and nothing acknowledged goes with it.
  EXPECT_EQ(recovery_at_restart(c).corrupt_bytes, 30u);
  expect_reopened_spool_delivers_what_was_acknowledged(c);
}

// ---------------------------------------------------------------------------
// Failed fdatasync

TEST_F(SpoolFaults, FailedFdatasyncUnderEveryBatchSpoolsNothingOfThatBatch) {
  const SpoolConfig c = config(FsyncPolicy::every_batch);
  {
    auto spool = open(c);
    append_all(*spool, batch("before", 3));
    const auto seg_bytes = fs::file_size(segment(1));
    files_.inject({.op = FsOp::sync_data, .file = "seg-", .error = EIO, .times = 1});
    ::testing::internal::CaptureStderr();
    append(*spool, batch("lost", 4), {});  // not on disk: not spooled
    const std::string log = ::testing::internal::GetCapturedStderr();
    expect_error_log(log, segment(1), EIO);
    EXPECT_NE(log.find("fdatasync"), std::string::npos) << log;
    const auto st = spool->stats();
    EXPECT_EQ(io_error_drops(st, DocClass::job), 1u);
    EXPECT_EQ(io_error_drops(st, DocClass::event), 1u);
    EXPECT_EQ(st.io_errors, 1u);
    EXPECT_EQ(st.fsyncs, 1u) << "only the first batch's";
    EXPECT_EQ(fs::file_size(segment(1)), seg_bytes) << "the unsynced batch was cut off";
    EXPECT_EQ(payloads_of(take_all(*spool)), acknowledged_) << "take() never saw the batch";
    append_all(*spool, batch("after", 2));
    EXPECT_EQ(spool->stats().fsyncs, 2u);
  }
  expect_reopened_spool_delivers_what_was_acknowledged(c);
}

TEST_F(SpoolFaults, FailedDirectorySyncOfANewSegmentUnderEveryBatchSpoolsNothingOfItsFirstBatch) {
  const SpoolConfig c = config(FsyncPolicy::every_batch);
  {
    auto spool = open(c);  // its ledger write at start synced the directory already
    files_.inject({.op = FsOp::sync, .file = "spool", .error = EIO, .times = 1});
    ::testing::internal::CaptureStderr();
    append(*spool, batch("lost", 2), {});  // the segment's name may not be on disk
    expect_error_log(::testing::internal::GetCapturedStderr(), dir().string(), EIO);
    append_all(*spool, batch("after", 2));  // the directory sync is tried again
  }
  expect_reopened_spool_delivers_what_was_acknowledged(c);
}

TEST_F(SpoolFaults, FailedFdatasyncUnderIntervalKeepsTheRecordsAndRetries) {
  const SpoolConfig c = config(FsyncPolicy::interval);
  {
    auto spool = open(c);
    append_all(*spool, batch("first", 3));  // no sync: the interval has not passed
    time_.advance(std::chrono::seconds(1));
    files_.inject({.op = FsOp::sync_data, .file = "seg-", .error = EIO, .times = 1});
    ::testing::internal::CaptureStderr();
    append_all(*spool, batch("second", 3));  // written, so spooled; the sync after it fails
    const std::string log = ::testing::internal::GetCapturedStderr();
    expect_error_log(log, segment(1), EIO);
    EXPECT_NE(log.find("not on disk yet"), std::string::npos) << log;
    auto st = spool->stats();
    EXPECT_EQ(st.io_errors, 1u);
    EXPECT_EQ(st.fsyncs, 0u);
    EXPECT_EQ(st.dropped[static_cast<std::size_t>(DocClass::job)], 0u) << "nothing is dropped";
    EXPECT_EQ(payloads_of(take_all(*spool)), acknowledged_);

    append_all(*spool, batch("third", 1));  // retries pace at the interval too
    EXPECT_EQ(files_.calls(FsOp::sync_data, "seg-"), 1u);
    time_.advance(std::chrono::seconds(1));
    append_all(*spool, batch("fourth", 1));
    EXPECT_EQ(spool->stats().fsyncs, 1u) << "the retry syncs every record since";
  }
  expect_reopened_spool_delivers_what_was_acknowledged(c);
}

// ---------------------------------------------------------------------------
// The ledger on ack

TEST_F(SpoolFaults, FailedLedgerWriteOnAckOnlyMeansResendsAfterARestart) {
  SpoolConfig c = config(FsyncPolicy::every_batch);
  const auto docs = batch("d", 8);
  c.segment_bytes = 4 * record_bytes(docs[0]);  // [1 2 3 4] [5 6 7 8]
  {
    auto spool = open(c);
    append_all(*spool, docs);
    ASSERT_EQ(take_all(*spool).size(), 8u);
    files_.inject({.op = FsOp::write, .file = "ledger.tmp", .error = ENOSPC});
    ::testing::internal::CaptureStderr();
    spool->ack(std::vector<std::uint64_t>{1, 2, 3, 4});  // deletes the first segment, then writes the ledger
    std::string log = ::testing::internal::GetCapturedStderr();
    expect_error_log(log, (dir() / "ledger.tmp").string(), ENOSPC);
    EXPECT_FALSE(fs::exists(segment(1)));
    EXPECT_EQ(spool->stats().io_errors, 1u);

    // Retries come at the ledger's pace, and fail quietly.
    const auto attempts = files_.calls(FsOp::open, "ledger.tmp");
    ::testing::internal::CaptureStderr();
    spool->ack(std::vector<std::uint64_t>{5});
    EXPECT_EQ(files_.calls(FsOp::open, "ledger.tmp"), attempts) << "not retried at once";
    time_.advance(milliseconds(100));
    spool->ack(std::vector<std::uint64_t>{6});
    log = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(files_.calls(FsOp::open, "ledger.tmp"), attempts + 1);
    EXPECT_EQ(log.find("ERROR"), std::string::npos) << "logged once: " << log;
    EXPECT_EQ(spool->stats().io_errors, 1u);
    // The spool goes on; it stops here with the ledger still failing (its
    // last attempt at close fails too), like a crash would.
    ::testing::internal::CaptureStderr();
    spool.reset();
    ::testing::internal::GetCapturedStderr();
  }
  // The ledger on disk is the one written at start (nothing acked); records
  // 1..4 went with their segment, 5 and 6 were acked but come again (the
  // engine answers 409), 7 and 8 were never acked.
  expect_reopened_spool_delivers(c, payloads({docs[4], docs[5], docs[6], docs[7]}));
}

TEST_F(SpoolFaults, FailedLedgerRenameOnAckIsRetriedUntilItSucceeds) {
  SpoolConfig c = config(FsyncPolicy::every_batch);
  const auto docs = batch("d", 6);
  c.segment_bytes = 2 * record_bytes(docs[0]);
  {
    auto spool = open(c);
    append_all(*spool, docs);
    take_all(*spool);
    files_.inject({.op = FsOp::rename, .file = "ledger.tmp", .error = EIO, .times = 1});
    ::testing::internal::CaptureStderr();
    spool->ack(std::vector<std::uint64_t>{1, 2});
    expect_error_log(::testing::internal::GetCapturedStderr(), (dir() / "ledger.tmp").string(), EIO);
    time_.advance(milliseconds(100));
    ::testing::internal::CaptureStderr();
    spool->ack(std::vector<std::uint64_t>{3});
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(log.find("ledger written again"), std::string::npos) << log;
    const std::string bytes = testing::read_file(dir() / "ledger");
    const auto ledger =
        sf::decode_ledger(std::span(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
    ASSERT_TRUE(ledger);
    EXPECT_EQ(ledger->acked_id, 3u);
  }
  expect_reopened_spool_delivers(c, payloads({docs[3], docs[4], docs[5]}));
}

// ---------------------------------------------------------------------------
// Segment removal after ack

TEST_F(SpoolFaults, FailedSegmentUnlinkAfterAckKeepsItsBytesAndIsRetried) {
  SpoolConfig c = config(FsyncPolicy::every_batch);
  const auto docs = batch("d", 6);
  const std::uint64_t rec = record_bytes(docs[0]);
  c.segment_bytes = 2 * rec;  // [1 2] [3 4] [5 6]
  {
    auto spool = open(c);
    append_all(*spool, docs);
    take_all(*spool);
    const auto total = spool->stats().bytes;
    files_.inject({.op = FsOp::remove, .file = "seg-", .error = EIO, .times = 1});
    ::testing::internal::CaptureStderr();
    spool->ack(std::vector<std::uint64_t>{1, 2});
    expect_error_log(::testing::internal::GetCapturedStderr(), segment(1), EIO);
    EXPECT_TRUE(fs::exists(segment(1)));
    auto st = spool->stats();
    EXPECT_EQ(st.bytes, total) << "its bytes are still on disk";
    EXPECT_EQ(st.segments, 3u);
    EXPECT_EQ(st.io_errors, 1u);
    EXPECT_EQ(st.acked_id, 2u);

    spool->ack(std::vector<std::uint64_t>{3, 4});  // removes [3 4], and [1 2] at last
    EXPECT_FALSE(fs::exists(segment(1)));
    EXPECT_FALSE(fs::exists(segment(3)));
    st = spool->stats();
    EXPECT_EQ(st.bytes, total - 4 * rec);
    EXPECT_EQ(st.segments, 1u);
  }
  expect_reopened_spool_delivers(c, payloads({docs[4], docs[5]}));
}

TEST_F(SpoolFaults, ASegmentThatCannotBeUnlinkedIsRemovedAtTheNextStart) {
  SpoolConfig c = config(FsyncPolicy::every_batch);
  const auto docs = batch("d", 4);
  c.segment_bytes = 2 * record_bytes(docs[0]);  // [1 2] [3 4]
  {
    auto spool = open(c);
    append_all(*spool, docs);
    take_all(*spool);
    files_.inject({.op = FsOp::remove, .file = "seg-", .error = EACCES});
    ::testing::internal::CaptureStderr();
    spool->ack(std::vector<std::uint64_t>{1, 2});
    spool->ack(std::vector<std::uint64_t>{3});
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(spool->stats().io_errors, 1u) << "retried at each ack, reported once: " << log;
    EXPECT_TRUE(fs::exists(segment(1)));
  }
  // The ledger (written at close) says 1..3 are acked: the old segment goes.
  expect_reopened_spool_delivers(c, payloads({docs[3]}));
  EXPECT_FALSE(fs::exists(segment(1)));
}

// ---------------------------------------------------------------------------
// The directory at start: a SpoolError naming the path

std::string start_error(const SpoolConfig& c, FaultyStateFilesystem& files) {
  FakeSteadyTime time;
  try {
    Spool spool(c, time, files);
  } catch (const SpoolError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no SpoolError";
  return {};
}

TEST_F(SpoolFaults, FailedMkdirAtStartIsASpoolErrorNamingThePath) {
  const SpoolConfig c = config(FsyncPolicy::every_batch);
  files_.inject({.op = FsOp::create_directories, .file = "spool", .error = EACCES});
  std::string what = start_error(c, files_);
  EXPECT_NE(what.find("cannot create the spool directory " + dir().string()), std::string::npos) << what;
  EXPECT_NE(what.find(errno_text(EACCES)), std::string::npos) << what;

  files_.clear_faults();
  files_.inject({.op = FsOp::create_directories, .file = "dead", .error = ENOSPC});
  what = start_error(c, files_);
  EXPECT_NE(what.find("cannot create " + (dir() / "dead").string()), std::string::npos) << what;
  EXPECT_NE(what.find(errno_text(ENOSPC)), std::string::npos) << what;
}

TEST_F(SpoolFaults, FailedOpenAtStartIsASpoolErrorNamingThePath) {
  const SpoolConfig c = config(FsyncPolicy::every_batch);
  files_.inject({.op = FsOp::open, .file = "lock", .error = EMFILE});
  std::string what = start_error(c, files_);
  EXPECT_NE(what.find("cannot open spool lock " + (dir() / "lock").string()), std::string::npos) << what;
  EXPECT_NE(what.find(errno_text(EMFILE)), std::string::npos) << what;

  files_.clear_faults();
  { testing::append_all(*open(c), batch("d", 2)); }  // a segment to recover
  files_.inject({.op = FsOp::open, .file = "seg-", .error = EIO});
  what = start_error(c, files_);
  EXPECT_NE(what.find("cannot open " + segment(1)), std::string::npos) << what;
  EXPECT_NE(what.find(errno_text(EIO)), std::string::npos) << what;

  files_.clear_faults();
  files_.inject({.op = FsOp::read_at, .file = "seg-", .error = EIO});
  what = start_error(c, files_);
  EXPECT_NE(what.find("cannot read " + segment(1)), std::string::npos) << what;

  files_.clear_faults();
  files_.inject({.op = FsOp::list_directory, .file = "spool", .error = EIO});
  what = start_error(c, files_);
  EXPECT_NE(what.find("cannot list spool directory " + dir().string()), std::string::npos) << what;
}

TEST_F(SpoolFaults, AFailedLedgerWriteAtStartIsNotFatal) {
  const SpoolConfig c = config(FsyncPolicy::every_batch);
  files_.inject({.op = FsOp::open, .file = "ledger.tmp", .error = EROFS, .times = 1});
  ::testing::internal::CaptureStderr();
  auto spool = open(c);
  expect_error_log(::testing::internal::GetCapturedStderr(), (dir() / "ledger.tmp").string(), EROFS);
  append_all(*spool, batch("d", 2));
  spool.reset();  // close() writes the ledger
  expect_reopened_spool_delivers_what_was_acknowledged(c);
}

}  // namespace
}  // namespace salttap::indexer
