// The real job caches of both captured Salt releases
// (tests/captures/<salt>/jobcache), backfilled, against the live replay of
// the same releases' captures: what the engine keeps must be the same
// documents under the same _ids, but for what the cache cannot know:
//
//   jobs      started_at and @timestamp: the jid's time (live: the `new`
//             event's _stamp, a few ms later); settled_at and duration_ms:
//             the last return's time (live: when salttap took that return in,
//             which can be later when events interleave), the deadline itself
//             for a job with missing minions (live: when the next event or
//             the end of the replay found it passed), the return +
//             orphan_settle for a minion return job; progress_events (the
//             cache keeps no prog events); a runner's arguments as they were
//             when it returned (event.send adds `_stamp` to its data)
//   returns   job_started_at (as the job's started_at); a missing minion's
//             @timestamp (when its job settled)
//   states    job_started_at
//   alerts    started_at, settled_at and @timestamp (the job's)
//   minion lists in a job document: the same names, maybe in another order
//
// Each return.p gets the modification time the master's return event had on
// the bus (a copy of a cache in git keeps no times); the backfill's `now` is
// long after every deadline. Those erased fields are then asserted one by
// one against their own rule.

#include <gtest/gtest.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "cli/internal/replay_command.h"
#include "config/config.h"
#include "jobcache/job_cache_source.h"
#include "recovery/cache_indexer.h"
#include "tap/tag.h"
#include "tests/support/capture_events.h"
#include "tests/support/captures.h"
#include "tests/support/job_cache_fixtures.h"
#include "tests/support/replay_output.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;
using salttap::testing::CacheDir;

const fs::path kSource(SALTTAP_SOURCE_DIR);

struct Kept {
  std::string op, index, id;
  std::int64_t version = 0;
  std::string source;
};

// What the engine keeps of a stream of bulk actions: per _id the highest
// external version (`index`), or the first (`create`). Raw events are left
// out: the cache has none.
std::map<std::string, Kept> engine_view(const std::string& ndjson) {
  std::map<std::string, Kept> kept;
  std::size_t pos = 0;
  while (pos < ndjson.size()) {
    const std::size_t a_end = ndjson.find('\n', pos);
    const std::size_t s_end = ndjson.find('\n', a_end + 1);
    rapidjson::Document action;
    action.Parse(ndjson.data() + pos, a_end - pos);
    EXPECT_FALSE(action.HasParseError());
    const auto& op = *action.MemberBegin();
    Kept k{op.name.GetString(), op.value["_index"].GetString(), op.value["_id"].GetString(), 0,
           ndjson.substr(a_end + 1, s_end - a_end - 1)};
    if (op.value.HasMember("version")) k.version = op.value["version"].GetInt64();
    pos = s_end + 1;
    if (k.index.find("-events-") != std::string::npos) continue;
    const std::string key = k.index + " " + k.id;
    auto it = kept.find(key);
    if (it == kept.end())
      kept.emplace(key, std::move(k));
    else if (k.op == "index" && k.version > it->second.version)
      it->second = std::move(k);
  }
  return kept;
}

class CollectSink final : public pipeline::DocumentSink {
 public:
  void put(std::span<const indexer::BulkDoc> docs, const std::function<bool()>&) override {
    for (const auto& d : docs) ndjson += d.ndjson;
  }
  std::string ndjson;
};

std::string text(const rapidjson::Value& v) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  v.Accept(w);
  return b.GetString();
}

void erase(rapidjson::Document& d, std::initializer_list<const char*> keys) {
  for (const char* k : keys) d.EraseMember(k);
}

void sort_minion_lists(rapidjson::Document& d) {
  if (!d.HasMember("minions")) return;
  for (auto& list : d["minions"].GetObject()) {
    auto a = list.value.GetArray();
    std::sort(a.begin(), a.end(), [](const rapidjson::Value& x, const rapidjson::Value& y) {
      return std::string_view(x.GetString()) < y.GetString();
    });
  }
}

class BackfillCaptures : public ::testing::TestWithParam<std::string> {
 protected:
  config::Config config() const { return config::load_config((kSource / "tests/golden/documents.yaml").string()); }

  // The live documents of every capture of the release, one replay each (as the golden files).
  std::string live_documents() const {
    std::string all;
    for (const auto& raw : salttap::testing::capture_raw_files()) {
      if (raw.parent_path().filename() != GetParam()) continue;
      cli::ReplayOptions options;
      options.files = {raw.string()};
      options.output = "documents";
      options.config = config();
      all += salttap::testing::replay_output(options);
    }
    return all;
  }

  // Return stamps on the bus, (jid, minion) -> _stamp ("" for a runner's own return).
  std::map<std::pair<std::string, std::string>, Micros> bus_return_stamps() const {
    std::map<std::pair<std::string, std::string>, Micros> out;
    for (const auto& raw : salttap::testing::capture_raw_files()) {
      if (raw.parent_path().filename() != GetParam()) continue;
      for (const auto& e : salttap::testing::capture_events(GetParam() + "/" + raw.filename().string())) {
        const std::string_view tag = e.tag();
        const bool job_ret = tag.starts_with("salt/job/") && tap::tag_part(tag, 3) == "ret";
        const bool runner_ret =
            (tag.starts_with("salt/run/") || tag.starts_with("salt/wheel/")) && tap::tag_part(tag, 3) == "ret";
        if (!job_ret && !runner_ret) continue;
        const auto stamp = parse_salt_stamp(e.string_field("_stamp").value_or(""));
        if (!stamp) continue;
        out.emplace(std::pair{std::string(tap::tag_part(tag, 2)), std::string(job_ret ? tap::tag_part(tag, 4) : "")},
                    *stamp);
      }
    }
    return out;
  }

  // The captured cache, copied, each return.p stamped with its bus time.
  void copy_cache(const CacheDir& cache) const {
    fs::remove_all(cache.jobs());
    fs::copy(salttap::testing::captures_dir() / GetParam() / "jobcache", cache.jobs(), fs::copy_options::recursive);
    const auto stamps = bus_return_stamps();
    for (const auto& bucket : fs::directory_iterator(cache.jobs()))
      for (const auto& job : fs::directory_iterator(bucket.path())) {
        const std::string jid = salttap::testing::read_file(job.path() / "jid");
        for (const auto& m : fs::directory_iterator(job.path())) {
          if (!m.is_directory()) continue;
          const std::string minion = m.path().filename().string();
          auto it = stamps.find({jid, minion});
          if (it == stamps.end()) it = stamps.find({jid, ""});
          ASSERT_NE(it, stamps.end()) << jid << " " << minion << ": no return on the bus";
          CacheDir::set_mtime(m.path() / "return.p", it->second);
        }
      }
  }
};

TEST_P(BackfillCaptures, GivesTheLiveDocumentsButWhatTheCacheCannotKnow) {
  CacheDir cache;
  copy_cache(cache);
  const config::Config cfg = config();
  jobcache::JobCacheSource source(cache.jobs(), {{}, cfg.correlator.noise_funs, {}, "sha256"});
  ASSERT_TRUE(source.open());
  ManualClock now(*parse_salt_stamp("2027-01-01T00:00:00"));
  CollectSink sink;
  recovery::CacheIndexer job(cfg, source, sink, now);
  while (job.step(10)) {
  }
  EXPECT_EQ(source.stats().job_dirs, 70u);
  EXPECT_EQ(source.stats().read, 70u);
  EXPECT_EQ(source.stats().count(jobcache::JobOutcome::noise), 2u);  // the two saltutil.find_job jobs
  EXPECT_EQ(source.stats().misnamed, 0u);                            // every directory named under sha256
  EXPECT_EQ(job.counts().jobs_indexed, 68u);
  EXPECT_EQ(job.counts().jobs_running, 0u);

  const auto live = engine_view(live_documents());
  const auto cached = engine_view(sink.ndjson);
  std::vector<std::string> only_live, only_cache;
  for (const auto& [key, doc] : live)
    if (!cached.count(key)) only_live.push_back(key);
  for (const auto& [key, doc] : cached)
    if (!live.count(key)) only_cache.push_back(key);
  EXPECT_EQ(only_live, std::vector<std::string>{}) << "documents the backfill does not make";
  EXPECT_EQ(only_cache, std::vector<std::string>{}) << "documents the live replay does not make";

  std::map<std::string, std::string> job_started;  // jid -> the backfill's started_at
  std::map<std::string, Micros> last_return;       // jid -> its last return's time
  for (const auto& [key, b] : cached) {
    rapidjson::Document d;
    d.Parse(b.source.c_str());
    if (b.index.find("-jobs-") != std::string::npos) job_started[d["jid"].GetString()] = d["started_at"].GetString();
    if (b.index.find("-returns-") != std::string::npos && std::string_view(d["status"].GetString()) != "missing") {
      Micros& last = last_return[d["jid"].GetString()];
      last = std::max(last, *parse_salt_stamp(d["@timestamp"].GetString()));
    }
  }

  std::size_t compared = 0;
  for (const auto& [key, b] : cached) {
    const auto it = live.find(key);
    if (it == live.end()) continue;
    const Kept& l = it->second;
    SCOPED_TRACE(key);
    EXPECT_EQ(b.op, l.op);
    rapidjson::Document bd, ld;
    bd.Parse(b.source.c_str());
    ld.Parse(l.source.c_str());
    const std::string jid = bd["jid"].GetString();
    const Micros jid_time = *parse_jid_time(jid);
    if (b.index.find("-jobs-") != std::string::npos) {
      // A lower version than any the live stream gave the job: the live document stays.
      EXPECT_EQ(b.version, jid_time * 4 + 3);
      EXPECT_LT(b.version, l.version);
      const std::string kind = bd["kind"].GetString();
      const std::string status = bd["status"].GetString();
      if (kind == "job") {
        EXPECT_EQ(bd["started_at"].GetString(), format_utc(jid_time));
      } else {
        EXPECT_STREQ(bd["started_at"].GetString(), ld["started_at"].GetString());
      }
      const Micros started = *parse_salt_stamp(bd["started_at"].GetString());
      const Micros settled = *parse_salt_stamp(bd["settled_at"].GetString());
      if (status == "missing") {
        EXPECT_EQ(settled, started + cfg.correlator.deadline_for(bd["fun"].GetString()));
      } else if (kind == "scheduled" || kind == "orphan") {
        EXPECT_EQ(settled, last_return[jid] + cfg.correlator.orphan_settle);
      } else {
        if (kind == "job") {
          EXPECT_EQ(settled, last_return[jid]);
        }
        EXPECT_LE(settled, *parse_salt_stamp(ld["settled_at"].GetString()));
      }
      EXPECT_STREQ(bd["@timestamp"].GetString(), bd["started_at"].GetString());
      EXPECT_FALSE(bd.HasMember("progress_events"));  // written only when not 0
      for (auto* d : {&bd, &ld}) {
        erase(*d, {"@timestamp", "started_at", "settled_at", "duration_ms", "progress_events"});
        sort_minion_lists(*d);
        if (kind == "runner") {
          erase(*d, {"args_text"});
          for (auto& arg : (*d)["args"].GetArray())
            if (arg.IsObject()) arg.EraseMember("_stamp");
        }
      }
    } else if (b.index.find("-returns-") != std::string::npos) {
      EXPECT_EQ(b.version, l.version);  // 2: a return; 1: missing
      EXPECT_EQ(bd["job_started_at"].GetString(), job_started[jid]);
      erase(bd, {"job_started_at"});
      erase(ld, {"job_started_at"});
      if (std::string_view(bd["status"].GetString()) == "missing") {
        erase(bd, {"@timestamp"});
        erase(ld, {"@timestamp"});
      }
    } else if (b.index.find("-states-") != std::string::npos) {
      EXPECT_EQ(bd["job_started_at"].GetString(), job_started[jid]);
      erase(bd, {"job_started_at"});
      erase(ld, {"job_started_at"});
    } else if (b.index.find("-alerts-") != std::string::npos) {
      EXPECT_EQ(bd["started_at"].GetString(), job_started[jid]);
      erase(bd, {"@timestamp", "started_at", "settled_at"});
      erase(ld, {"@timestamp", "started_at", "settled_at"});
    }
    EXPECT_TRUE(bd == ld) << "backfill: " << text(bd) << "\nlive:     " << text(ld);  // members in any order
    ++compared;
  }
  EXPECT_EQ(compared, cached.size());
  EXPECT_EQ(cached.size(), live.size());
}

INSTANTIATE_TEST_SUITE_P(BothReleases, BackfillCaptures, ::testing::Values("salt-3006.25", "salt-3006.26"),
                         salttap::testing::ReleaseTestName());

}  // namespace
}  // namespace salttap
