// jobcache/: Salt's job cache read as the bus would have told it. The
// captured caches of both releases, and hand-made caches for every fault a
// real one can have (a file caught mid-write, a missing file, a directory
// the master keeps private, a corrupt list).

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include <cerrno>
#include <future>
#include <optional>
#include <set>
#include <thread>

#include "common/time_bound.h"
#include "jobcache/internal/cache_file.h"
#include "jobcache/internal/job_dir.h"
#include "jobcache/job_cache_source.h"
#include "jobcache/time_window.h"
#include "tap/event_to_json.h"
#include "tests/support/captures.h"
#include "tests/support/fake_steady_time.h"
#include "tests/support/job_cache_fixtures.h"

namespace salttap::jobcache {
namespace {

namespace fs = std::filesystem;
using salttap::testing::CacheDir;
using salttap::testing::CacheOp;
using salttap::testing::FaultyCacheFilesystem;

constexpr const char* kJid = "20261129192428536894";

Micros at(const char* stamp) { return *parse_salt_stamp(stamp); }

// Every event of a ready job, as JSON lines.
std::vector<std::string> events_of(CachedJob& job) {
  std::vector<std::string> out;
  tap::Event e;
  std::string error;
  while (true) {
    const auto n = job.next_event(e, error);
    if (n == CachedJob::Next::end) break;
    EXPECT_EQ(n, CachedJob::Next::event) << error;
    if (n != CachedJob::Next::event) break;
    out.emplace_back();
    tap::append_event_json(out.back(), e);
  }
  return out;
}

// ---- one file ---------------------------------------------------------------

TEST(CacheFile, OneMsgpackValueAndNothingElse) {
  msgpack::zone zone;
  msgpack::object o;
  const std::string list = CacheDir::msgpack(R"(["minion-a", "minion-b"])");
  EXPECT_TRUE(decode_cache_file(zone, list, {}, o).ok());
  EXPECT_EQ(o.type, msgpack::type::ARRAY);

  EXPECT_EQ(decode_cache_file(zone, "", {}, o).status, CacheFileStatus::empty);
  const auto cut = decode_cache_file(zone, std::string_view(list).substr(0, list.size() - 3), {}, o);
  EXPECT_EQ(cut.status, CacheFileStatus::truncated);
  EXPECT_TRUE(cut.may_be_mid_write());
  EXPECT_EQ(decode_cache_file(zone, "\xc1", {}, o).status, CacheFileStatus::invalid);
  const auto extra = decode_cache_file(zone, list + "\x01", {}, o);
  EXPECT_EQ(extra.status, CacheFileStatus::trailing_bytes);
  EXPECT_EQ(extra.describe(), "trailing bytes after the value, from byte " + std::to_string(list.size()));
  tap::DecodeLimits shallow;
  shallow.max_depth = 1;
  const auto deep = decode_cache_file(zone, CacheDir::msgpack(R"([[1]])"), shallow, o);
  EXPECT_EQ(deep.status, CacheFileStatus::over_limit);
  EXPECT_FALSE(deep.may_be_mid_write());
}

// ---- where a job lives ------------------------------------------------------

TEST(JobDir, NamedAsSaltNamesIt) {
  // The captured caches list each job's directory (jobcache_index.json).
  for (const char* release : {"salt-3006.25", "salt-3006.26"}) {
    rapidjson::Document index;
    index.Parse(
        salttap::testing::read_file(salttap::testing::captures_dir() / release / "jobcache_index.json").c_str());
    ASSERT_TRUE(index.IsArray());
    for (const auto& job : index.GetArray())
      EXPECT_EQ(job_dir("/c/jobs", job["jid"].GetString(), "sha256"), fs::path("/c/jobs") / job["dir"].GetString());
  }
  // md5 up to 2016.3, any hashlib name since.
  EXPECT_EQ(jid_digest(kJid, "md5"), "6acd825c68a4089986cf2c112a52e36c");
  EXPECT_EQ(jid_digest(kJid, "sha512")->substr(0, 10), "6d26587985");
  EXPECT_EQ(job_dir("/c/jobs", kJid, "md5"), fs::path("/c/jobs/6a/cd825c68a4089986cf2c112a52e36c"));
  EXPECT_EQ(job_dir("/c/jobs", kJid, "no-such-hash"), std::nullopt);
}

// ---- --since / --until -----------------------------------------------------

TEST(TimeWindow, DurationsBeforeNowAndUtcTimes) {
  const Micros now = at("2026-11-29T20:00:00");
  std::string error;
  EXPECT_EQ(parse_time_bound("2h", now, error), at("2026-11-29T18:00:00"));
  EXPECT_EQ(parse_time_bound("1h30m", now, error), at("2026-11-29T18:30:00"));
  EXPECT_EQ(parse_time_bound("90s", now, error), at("2026-11-29T19:58:30"));
  EXPECT_EQ(parse_time_bound("7d", now, error), at("2026-11-22T20:00:00"));
  EXPECT_EQ(parse_time_bound("1w", now, error), at("2026-11-22T20:00:00"));
  EXPECT_EQ(parse_time_bound("2026-11-29", now, error), at("2026-11-29T00:00:00"));
  EXPECT_EQ(parse_time_bound("2026-11-29T19:04", now, error), at("2026-11-29T19:04:00"));
  EXPECT_EQ(parse_time_bound("2026-11-29 19:04:50", now, error), at("2026-11-29T19:04:50"));
  EXPECT_EQ(parse_time_bound("2026-11-29T19:04:50.25Z", now, error), at("2026-11-29T19:04:50.250000"));
  EXPECT_EQ(parse_time_bound("2026-11-29T21:04+02:00", now, error), at("2026-11-29T19:04:00"));
  for (const char* bad : {"", "2", "h", "2x", "-2h", "2026-13-01", "yesterday", "2026-11-29T25:00"}) {
    error.clear();
    EXPECT_EQ(parse_time_bound(bad, now, error), std::nullopt) << bad;
    EXPECT_NE(error.find("neither a duration"), std::string::npos) << bad;
  }
  const TimeWindow w{at("2026-11-29T19:00:00"), at("2026-11-29T20:00:00")};
  EXPECT_TRUE(w.contains(at("2026-11-29T19:00:00")));
  EXPECT_FALSE(w.contains(at("2026-11-29T20:00:00")));
  EXPECT_FALSE(w.contains(at("2026-11-29T18:59:59.999999")));
  EXPECT_TRUE(TimeWindow{}.contains(0));
}

// ---- the captured caches ----------------------------------------------------

class CapturedCache : public ::testing::TestWithParam<std::string> {};

TEST_P(CapturedCache, EveryJobReadsAsSaltStoredIt) {
  const fs::path jobs = salttap::testing::captures_dir() / GetParam() / "jobcache";
  rapidjson::Document index;
  index.Parse(salttap::testing::read_file(jobs.parent_path() / "jobcache_index.json").c_str());
  const JobReader reader({});
  std::map<JobShape, int> shapes;
  for (const auto& entry : index.GetArray()) {
    const std::string jid = entry["jid"].GetString();
    SCOPED_TRACE(jid);
    JobRead r = reader.read(jobs / entry["dir"].GetString());
    const std::string fun = entry["fun"].GetString();
    if (fun == "saltutil.find_job") {
      EXPECT_EQ(r.outcome, JobOutcome::noise);
      continue;
    }
    ASSERT_EQ(r.outcome, JobOutcome::ready) << r.error;
    CachedJob& job = *r.job;
    ++shapes[job.shape()];
    EXPECT_EQ(job.jid(), jid);
    EXPECT_EQ(job.fun(), fun);
    EXPECT_EQ(job.started_at(), *parse_jid_time(jid));
    std::set<std::string> returned;
    for (const auto& m : entry["returns"].GetObject()) returned.insert(m.name.GetString());
    std::set<std::string> got;
    for (const auto& ret : job.returns()) got.insert(ret.minion);
    EXPECT_EQ(got, returned);
    std::vector<std::string> expected;
    for (const auto& m : entry["minions"].GetArray()) expected.emplace_back(m.GetString());
    if (job.shape() == JobShape::publish) {
      EXPECT_EQ(job.expected(), expected);
    }
    const auto events = events_of(job);
    switch (job.shape()) {
      case JobShape::publish:
        ASSERT_EQ(events.size(), 1 + returned.size());
        EXPECT_NE(events[0].find(R"({"tag":"salt/job/)" + jid + R"(/new")"), std::string::npos) << events[0];
        for (std::size_t i = 1; i < events.size(); ++i)
          EXPECT_NE(events[i].find(R"({"tag":"salt/job/)" + jid + "/ret/"), std::string::npos) << events[i];
        break;
      case JobShape::runner:
      case JobShape::wheel: {
        const std::string kind = job.shape() == JobShape::runner ? "run" : "wheel";
        ASSERT_EQ(events.size(), 2u);
        EXPECT_TRUE(events[0].starts_with(R"({"tag":"salt/)" + kind + "/" + jid + R"(/new")")) << events[0];
        EXPECT_TRUE(events[1].starts_with(R"({"tag":"salt/)" + kind + "/" + jid + R"(/ret")")) << events[1];
        EXPECT_NE(events[1].find(R"("success":true)"), std::string::npos) << events[1];
        break;
      }
      case JobShape::minion_return:
        ASSERT_EQ(events.size(), 1u);
        EXPECT_TRUE(events[0].starts_with(R"({"tag":"salt/job/)" + jid + R"(/ret/minion-a")")) << events[0];
        EXPECT_NE(events[0].find(R"("schedule":"sched_echo")"), std::string::npos) << events[0];
        break;
    }
  }
  EXPECT_EQ(shapes[JobShape::runner], 4);  // jobs.lookup_jid, manage.up, state.orchestrate, event.send
  EXPECT_EQ(shapes[JobShape::wheel], 1);
  EXPECT_EQ(shapes[JobShape::minion_return], 2);  // the minion schedule's two runs
  EXPECT_EQ(shapes[JobShape::publish], 61);
}

INSTANTIATE_TEST_SUITE_P(BothReleases, CapturedCache, ::testing::Values("salt-3006.25", "salt-3006.26"),
                         salttap::testing::ReleaseTestName());

// ---- one job, made by hand ---------------------------------------------------

TEST(JobReader, APublishJobsEventsAreTheBusOnes) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "cmd.run", {"minion-b", "minion-a"}, R"(["false"])");
  cache.ret(dir, "minion-b", R"("")", 1, at("2026-11-29T19:24:29.5"));
  cache.ret(dir, "minion-a", R"("hi")", 0, at("2026-11-29T19:24:29.1"));
  CacheDir::write_json(dir / "minion-a" / "out.p", R"("nested")");
  JobRead r = JobReader({}).read(dir);
  ASSERT_EQ(r.outcome, JobOutcome::ready) << r.error;
  EXPECT_EQ(r.job->expected(), (std::vector<std::string>{"minion-a", "minion-b"}));
  EXPECT_TRUE(r.job->complete());
  EXPECT_EQ(r.job->last_event_time(), at("2026-11-29T19:24:29.5"));
  EXPECT_EQ(events_of(*r.job),
            (std::vector<std::string>{
                R"({"tag":"salt/job/20261129192428536894/new","data":{"jid":"20261129192428536894","tgt_type":"glob",)"
                R"("tgt":"*","user":"root","fun":"cmd.run","arg":["false"],"minions":["minion-a","minion-b"],)"
                R"("_stamp":"2026-11-29T19:24:28.536894Z"}})",
                // by the time the master stored them
                R"({"tag":"salt/job/20261129192428536894/ret/minion-a","data":{"cmd":"_return","id":"minion-a",)"
                R"("success":true,"return":"hi","retcode":0,"jid":"20261129192428536894","fun":"cmd.run",)"
                R"("fun_args":["false"],"user":"root","out":"nested","_stamp":"2026-11-29T19:24:29.100000Z"}})",
                R"({"tag":"salt/job/20261129192428536894/ret/minion-b","data":{"cmd":"_return","id":"minion-b",)"
                R"("success":false,"return":"","retcode":1,"jid":"20261129192428536894","fun":"cmd.run",)"
                R"("fun_args":["false"],"user":"root","_stamp":"2026-11-29T19:24:29.500000Z"}})"}));
}

// The load keeps the publish's kwargs: its `metadata` goes into `new`, so a
// re-run whose minions never answered is still linked to its job.
TEST(JobReader, APublishsMetadataIsInItsNewEvent) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.arg", {"minion-a"}, R"(["x"])");
  CacheDir::write_json(dir / ".load.p", R"({"cmd": "publish", "tgt": ["minion-a"], "fun": "test.arg", "arg": ["x"],)"
                                        R"( "tgt_type": "list", "ret": "", "jid": ")" +
                                            std::string(kJid) +
                                            R"(", "user": "root", "kwargs": {"show_jid": false,)"
                                            R"( "metadata": {"salttap_rerun_of": "20261129190000000001"}}})");
  JobRead r = JobReader({}).read(dir);
  ASSERT_EQ(r.outcome, JobOutcome::ready) << r.error;
  const auto events = events_of(*r.job);
  ASSERT_FALSE(events.empty());
  EXPECT_NE(events[0].find(R"("arg":["x"],"metadata":{"salttap_rerun_of":"20261129190000000001"},"minions")"),
            std::string::npos)
      << events[0];
}

TEST(JobReader, ABareReturnFromBefore2018IsTheReturnItself) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.echo", {"minion-a", "minion-b"});
  fs::create_directories(dir / "minion-a");
  CacheDir::write_json(dir / "minion-a" / "return.p", R"({"id": 7})");  // a map without `return`
  CacheDir::set_mtime(dir / "minion-a" / "return.p", at("2026-11-29T19:24:29"));
  fs::create_directories(dir / "minion-b");
  CacheDir::write_json(dir / "minion-b" / "return.p", R"({"return": "wrapped", "retcode": 0})");
  CacheDir::set_mtime(dir / "minion-b" / "return.p", at("2026-11-29T19:24:30"));
  JobRead r = JobReader({}).read(dir);
  ASSERT_EQ(r.outcome, JobOutcome::ready) << r.error;
  const auto events = events_of(*r.job);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_NE(events[1].find(R"("id":"minion-a","return":{"id":7},"jid")"), std::string::npos) << events[1];
  EXPECT_EQ(events[1].find("retcode"), std::string::npos) << events[1];
  EXPECT_NE(events[2].find(R"("return":"wrapped","retcode":0)"), std::string::npos) << events[2];
}

TEST(JobReader, SyndicListsAddExpectedMinionsAndAnEmptyReturnDirIsNoReturn) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"minion-a"});
  CacheDir::write_json(dir / ".minions.syndic-1.p", R"(["far-1", "minion-a"])");
  CacheDir::write_json(dir / ".minions.syndic-2.p", "null");
  fs::create_directories(dir / "far-1");  // made, return.p not (yet) renamed into place
  cache.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  JobRead r = JobReader({}).read(dir);
  ASSERT_EQ(r.outcome, JobOutcome::ready) << r.error;
  EXPECT_EQ(r.job->expected(), (std::vector<std::string>{"far-1", "minion-a"}));
  EXPECT_EQ(r.job->pending_return_dirs(), 1u);
  EXPECT_EQ(r.job->returns().size(), 1u);
  EXPECT_FALSE(r.job->complete());
}

// A master of masters lists each syndic among its minions in .minions.p; the
// syndic never returns for itself, its minions do.
TEST(JobReader, ASyndicIsNotAnExpectedMinion) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"lower-syndic"});
  CacheDir::write_json(dir / ".minions.lower-syndic.p", R"(["minion-s"])");
  cache.ret(dir, "minion-s", "true", 0, at("2026-11-29T19:24:29"));
  JobRead r = JobReader({}).read(dir);
  ASSERT_EQ(r.outcome, JobOutcome::ready) << r.error;
  EXPECT_EQ(r.job->expected(), std::vector<std::string>{"minion-s"});
  EXPECT_TRUE(r.job->complete());
}

TEST(JobReader, SkipsWhatTheLivePathSkipsAndSaysWhy) {
  CacheDir cache;
  // saltutil.find_job: noise; only the load is read.
  EXPECT_EQ(JobReader({}).read(cache.publish("20261129192609725286", "saltutil.find_job", {"minion-a"})).outcome,
            JobOutcome::noise);
  // A runner is never noise, whatever its function (the correlator checks salt/job events only).
  JobReaderOptions runners_too;
  runners_too.noise_funs = {"*"};
  const auto runner = cache.job("20261129192609725285");
  CacheDir::write_json(runner / ".load.p", R"({"id": "m", "fun": "runner.jobs.active", "return": {"fun":
      "runner.jobs.active", "return": {}, "success": true}})");
  EXPECT_EQ(JobReader(runners_too).read(runner).outcome, JobOutcome::ready);
  // nocache: the master stored no returns, so no verdict can be known.
  const auto nocache = cache.publish("20261129192609725287", "test.ping", {"minion-a"});
  CacheDir::write_bytes(nocache / "nocache", "");
  EXPECT_EQ(JobReader({}).read(nocache).outcome, JobOutcome::nocache);
  // Outside the window: by the jid's time, only the jid file read.
  JobReaderOptions window;
  window.window.since = at("2026-11-29T19:25:00");
  FaultyCacheFilesystem fs;
  const auto early = cache.publish(kJid, "test.ping", {"minion-a"});
  EXPECT_EQ(JobReader(window, fs).read(early).outcome, JobOutcome::outside_window);
  EXPECT_EQ(fs.calls(CacheOp::read, "/.load.p"), 0u);
  // A jid with no time (passed with --jid): the jid file's time stands in.
  const auto passed = cache.publish("my-own-jid", "test.ping", {"minion-a"});
  CacheDir::set_mtime(passed / "jid", at("2026-11-29T19:30:00"));
  JobRead r = JobReader(window).read(passed);
  ASSERT_EQ(r.outcome, JobOutcome::ready) << r.error;
  EXPECT_EQ(r.job->started_at(), at("2026-11-29T19:30:00"));
  CacheDir::set_mtime(passed / "jid", at("2026-11-29T19:20:00"));
  EXPECT_EQ(JobReader(window).read(passed).outcome, JobOutcome::outside_window);
}

TEST(JobReader, ADirectoryNotNamedUnderHashTypeIsReadAndMarked) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"minion-a"});  // named under sha256
  JobReaderOptions sha256, md5;
  sha256.hash_type = "sha256";
  md5.hash_type = "md5";
  EXPECT_FALSE(JobReader(sha256).read(dir).misnamed);
  const JobRead r = JobReader(md5).read(dir);
  EXPECT_EQ(r.outcome, JobOutcome::ready);
  EXPECT_TRUE(r.misnamed);
  JobCacheSource source(cache.jobs(), md5);
  ASSERT_TRUE(source.open());
  JobRead got;
  ASSERT_TRUE(source.next(got));
  EXPECT_EQ(source.stats().misnamed, 1u);
}

TEST(JobReader, AUniqueJidKeepsItsTimeForTheWindow) {
  CacheDir cache;  // unique_jid: True adds "_<pid>"
  const auto dir = cache.publish("20261129192428536894_4242", "test.ping", {"minion-a"});
  JobReaderOptions window;
  window.window = {at("2026-11-29T19:24:00"), at("2026-11-29T19:25:00")};
  JobRead r = JobReader(window).read(dir);
  ASSERT_EQ(r.outcome, JobOutcome::ready) << r.error;
  EXPECT_EQ(r.job->jid(), "20261129192428536894_4242");
  EXPECT_EQ(r.job->started_at(), at("2026-11-29T19:24:28.536894"));
  window.window.since = at("2026-11-29T19:24:29");
  EXPECT_EQ(JobReader(window).read(dir).outcome, JobOutcome::outside_window);
}

TEST(JobReader, MissingFilesAreIncomplete) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"minion-a"});
  fs::remove(dir / ".minions.p");
  JobRead r = JobReader({}).read(dir);
  EXPECT_EQ(r.outcome, JobOutcome::incomplete);
  EXPECT_EQ(r.error, (dir / ".minions.p").string() + ": missing (written right after .load.p)");
  fs::remove(dir / ".load.p");
  r = JobReader({}).read(dir);
  EXPECT_EQ(r.outcome, JobOutcome::incomplete);
  EXPECT_EQ(r.error, (dir / ".load.p").string() + ": No such file or directory");
  fs::remove(dir / "jid");
  EXPECT_EQ(JobReader({}).read(dir).outcome, JobOutcome::incomplete);
  CacheDir::write_bytes(dir / "jid", "\n");
  EXPECT_EQ(JobReader({}).read(dir).outcome, JobOutcome::incomplete);
}

TEST(JobReader, BadFilesAreUndecodableAndNamed) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"minion-a"});
  const std::string load = salttap::testing::read_file(dir / ".load.p");
  CacheDir::write_bytes(dir / ".load.p", load.substr(0, load.size() / 2));  // mid-write
  JobRead r = JobReader({}).read(dir);
  EXPECT_EQ(r.outcome, JobOutcome::undecodable);
  EXPECT_TRUE(r.error.starts_with((dir / ".load.p").string() + ": truncated at byte ")) << r.error;
  CacheDir::write_json(dir / ".load.p", R"(["not", "a", "load"])");
  EXPECT_EQ(JobReader({}).read(dir).error, (dir / ".load.p").string() + ": not a map, so not a job's load");
  CacheDir::write_bytes(dir / ".load.p", load);
  CacheDir::write_json(dir / ".minions.p", R"({"minion-a": 1})");
  r = JobReader({}).read(dir);
  EXPECT_EQ(r.outcome, JobOutcome::undecodable);
  EXPECT_EQ(r.error, (dir / ".minions.p").string() + ": not a list of minion ids");
  CacheDir::write_bytes(dir / ".minions.p", "\xc1");
  EXPECT_EQ(JobReader({}).read(dir).outcome, JobOutcome::undecodable);
}

TEST(JobReader, IoErrorsAreUnreadable) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"minion-a"});
  cache.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  FaultyCacheFilesystem fs;
  fs.fail(CacheOp::read, "/.load.p", EACCES);
  JobRead r = JobReader({}, fs).read(dir);
  EXPECT_EQ(r.outcome, JobOutcome::unreadable);
  EXPECT_EQ(r.error, (dir / ".load.p").string() + ": Permission denied");
  fs.clear();
  fs.fail(CacheOp::stat, "/minion-a/return.p", EIO);
  EXPECT_EQ(JobReader({}, fs).read(dir).outcome, JobOutcome::unreadable);
  fs.clear();
  fs.fail(CacheOp::open_dir, dir.filename().string(), EACCES);
  EXPECT_EQ(JobReader({}, fs).read(dir).outcome, JobOutcome::unreadable);
}

TEST(CachedJob, AReturnFileThatDoesNotDecodeFailsItsEventNamingIt) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"minion-a"});
  const auto file = cache.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  JobRead r = JobReader({}).read(dir);
  ASSERT_EQ(r.outcome, JobOutcome::ready);
  CacheDir::write_bytes(file, "\x83");  // a map of three entries, and nothing more
  tap::Event e;
  std::string error;
  EXPECT_EQ(r.job->next_event(e, error), CachedJob::Next::event);  // the new
  EXPECT_EQ(r.job->next_event(e, error), CachedJob::Next::failed);
  EXPECT_EQ(error, file.string() + ": truncated at byte 1");
}

// ---- the walk ---------------------------------------------------------------

TEST(JobCacheSource, WalksEveryJobOnceAndCountsEachOutcome) {
  CacheDir cache;
  for (int i = 0; i < 5; ++i) {
    const auto dir = cache.publish("2026112919242853689" + std::to_string(i), "test.ping", {"minion-a"});
    cache.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  }
  cache.publish("20261129192428536899", "saltutil.find_job", {"minion-a"});
  fs::create_directories(cache.jobs() / ".hidden" / "x");  // not a bucket
  CacheDir::write_bytes(cache.jobs() / "stray-file", "");
  JobCacheSource source(cache.jobs(), {});
  ASSERT_TRUE(source.open());
  EXPECT_EQ(source.stats().job_dirs, 6u);
  std::set<std::string> jids;
  JobRead r;
  while (source.next(r))
    if (r.outcome == JobOutcome::ready) jids.insert(r.job->jid());
  EXPECT_EQ(jids.size(), 5u);
  EXPECT_EQ(source.stats().read, 6u);
  EXPECT_EQ(source.stats().count(JobOutcome::ready), 5u);
  EXPECT_EQ(source.stats().count(JobOutcome::noise), 1u);
  EXPECT_EQ(source.stats().retries, 0u);
}

// A walk of `cache` that reads a job again 500 ms later on fake time, up to
// `attempts` reads in all.
struct Retrying {
  Retrying(const CacheDir& cache, unsigned attempts)
      : source(cache.jobs(), {}, {.attempts = attempts, .delay = std::chrono::milliseconds(500)},
               jobcache::posix_cache_filesystem(), time) {}
  // next() on a thread of its own: it waits on the fake clock for a retry that is due later.
  std::future<std::optional<JobRead>> next_later() {
    return std::async(std::launch::async, [this]() -> std::optional<JobRead> {
      JobRead r;
      if (!source.next(r)) return std::nullopt;
      return r;
    });
  }
  salttap::testing::FakeSteadyTime time;
  JobCacheSource source;
};

TEST(JobCacheSource, AJobCaughtMidWriteIsReadAgainLater) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"minion-a"});
  const std::string load = salttap::testing::read_file(dir / ".load.p");
  CacheDir::write_bytes(dir / ".load.p", load.substr(0, 5));  // the master is writing it
  Retrying retrying(cache, 3);
  auto& [time, source] = retrying;
  ASSERT_TRUE(source.open());
  auto read = retrying.next_later();
  time.await_waiters(1);                         // every other directory read: waiting for the retry
  CacheDir::write_bytes(dir / ".load.p", load);  // the write completed
  time.advance(std::chrono::milliseconds(500));
  const std::optional<JobRead> r = read.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->outcome, JobOutcome::ready) << r->error;
  EXPECT_EQ(r->attempt, 2u);
  EXPECT_EQ(source.stats().retries, 1u);
  JobRead none;
  EXPECT_FALSE(source.next(none));
  EXPECT_EQ(source.stats().count(JobOutcome::ready), 1u);
  EXPECT_EQ(source.stats().count(JobOutcome::undecodable), 0u);
}

TEST(JobCacheSource, AJobThatStaysBrokenIsCountedAfterItsLastRead) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"minion-a"});
  CacheDir::write_bytes(dir / ".load.p", "\x82\xa3");
  Retrying retrying(cache, 3);
  auto& [time, source] = retrying;
  ASSERT_TRUE(source.open());
  auto read = retrying.next_later();
  time.advance_until([&] { return source.stats().read == 1; });
  const std::optional<JobRead> r = read.get();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->outcome, JobOutcome::undecodable);
  EXPECT_EQ(r->attempt, 3u);
  EXPECT_EQ(source.stats().retries, 2u);
  EXPECT_EQ(source.stats().count(JobOutcome::undecodable), 1u);
}

TEST(JobCacheSource, ARetryLaterForAJobWhoseReturnBrokeMidJob) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"minion-a"});
  cache.ret(dir, "minion-a", "true", 0, at("2026-11-29T19:24:29"));
  Retrying retrying(cache, 2);
  auto& [time, source] = retrying;
  ASSERT_TRUE(source.open());
  JobRead r;
  ASSERT_TRUE(source.next(r));
  EXPECT_TRUE(source.retry_later(std::move(r)));  // attempt 1 of 2: queued
  EXPECT_EQ(source.stats().read, 0u);
  std::thread reader([&] { EXPECT_TRUE(source.next(r)); });
  time.advance_until([&] { return source.stats().read == 1; });
  reader.join();
  EXPECT_EQ(r.attempt, 2u);
  EXPECT_FALSE(source.retry_later(std::move(r)));  // out of attempts: counted
  EXPECT_EQ(source.stats().count(JobOutcome::undecodable), 1u);
  EXPECT_EQ(source.stats().count(JobOutcome::ready), 0u);
  EXPECT_EQ(source.stats().read, 1u);
}

TEST(JobCacheSource, ABucketThatCannotBeListedIsCountedAndNamed) {
  CacheDir cache;
  const auto dir = cache.publish(kJid, "test.ping", {"minion-a"});
  const std::string bucket = dir.parent_path().filename().string();
  FaultyCacheFilesystem fs;
  fs.fail(CacheOp::list, "/jobs/" + bucket, EIO);
  JobCacheSource source(cache.jobs(), {}, {}, fs);
  ASSERT_TRUE(source.open());
  JobRead r;
  EXPECT_FALSE(source.next(r));
  EXPECT_EQ(source.stats().unreadable_buckets, 1u);
  const auto errors = source.take_bucket_errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "cannot read the job cache at " + (cache.jobs() / bucket).string() + ": Input/output error");
}

TEST(JobCacheSource, AnUnreadableCacheIsExplained) {
  CacheDir cache;
  FaultyCacheFilesystem fs;
  fs.fail(CacheOp::open_dir, "/jobs", EACCES);
  JobCacheSource source(cache.jobs(), {}, {}, fs);
  const auto opened = source.open();
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().error, EACCES);
  // The path, its owner and group, who salttap runs as, and what to change.
  const std::string& m = opened.error().message;
  EXPECT_TRUE(m.starts_with("cannot read the job cache at " + cache.jobs().string() + ": Permission denied. " +
                            cache.jobs().string() + " belongs to user "))
      << m;
  EXPECT_NE(m.find(", group "), std::string::npos) << m;
  EXPECT_NE(m.find("salttap runs as user "), std::string::npos) << m;
  EXPECT_NE(m.find(", or run salttap as user "), std::string::npos) << m;
  // The group to join, or (the group is root's) an ACL to set.
  EXPECT_TRUE(m.find("and let the group read it (chmod -R g+rX " + cache.jobs().string() + ")") != std::string::npos ||
              m.find("read access with an ACL (setfacl -R -m u:") != std::string::npos)
      << m;

  // A cachedir that shuts its jobs directory: the parent is named.
  FaultyCacheFilesystem shut;
  shut.fail(CacheOp::stat, "/jobs", EACCES);
  const auto closed = JobCacheSource(cache.jobs(), {}, {}, shut).open();
  ASSERT_FALSE(closed);
  EXPECT_NE(closed.error().message.find(". " + cache.cachedir().string() + " belongs to user "), std::string::npos)
      << closed.error().message;

  fs::remove_all(cache.jobs());
  const auto none = JobCacheSource(cache.jobs(), {}).open();
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().error, ENOENT);
  EXPECT_TRUE(none.error().message.starts_with("no job cache at " + cache.jobs().string())) << none.error().message;
}

}  // namespace
}  // namespace salttap::jobcache
