// libFuzzer target: one file of Salt's job cache (jobcache/).
//
// Input: [kind][bytes]. The bytes are decoded as a salt.payload file
// (decode_cache_file, with production and tiny limits), then become one file
// of an otherwise well-formed job, by kind % 4:
//   0 .load.p    1 minion-a/return.p    2 .minions.p    3 minion-a/out.p
// and the job is read (JobReader) and its events made (CachedJob), over an
// in-memory CacheFilesystem. Its contract: an outcome for every input, never
// an exception or a crash; a failure names its file; every event salttap
// makes from the cache decodes as a bus event and prints as strict JSON,
// linear in the input; the heap a decode takes stays linear in the input.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jobcache/internal/cache_file.h"
#include "jobcache/job_reader.h"
#include "tap/event_to_json.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/tiny_limits.h"

namespace {

namespace fs = std::filesystem;
using namespace salttap::jobcache;

constexpr std::string_view kDir = "/c/jobs/6f/d1ce66038c00ea6b8e681b4aac74c52c98ec617f8f9dd563bf931365d6202f";
constexpr std::string_view kJid = "20261129192428536894";

// Well-formed files of a publish job to minion-a (msgpack, as Salt 3006 writes them).
std::string load_p() {
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> pk(b);
  pk.pack_map(6);
  pk.pack(std::string_view("fun")), pk.pack(std::string_view("test.ping"));
  pk.pack(std::string_view("arg")), pk.pack_array(0);
  pk.pack(std::string_view("tgt")), pk.pack(std::string_view("*"));
  pk.pack(std::string_view("tgt_type")), pk.pack(std::string_view("glob"));
  pk.pack(std::string_view("jid")), pk.pack(kJid);
  pk.pack(std::string_view("user")), pk.pack(std::string_view("root"));
  return {b.data(), b.size()};
}
template <std::size_t N>
std::string bytes_of(const char (&literal)[N]) {
  return std::string(literal, N - 1);  // NUL bytes included
}
std::string minions_p() { return bytes_of("\x91\xa8minion-a"); }
std::string return_p() { return bytes_of("\x83\xa6return\xc3\xa7retcode\x00\xa7success\xc3"); }

// Files and directories in memory: a directory is any prefix of a file's path.
class MemoryFilesystem final : public CacheFilesystem {
 public:
  std::map<std::string, std::string> files;

  std::unique_ptr<DirStream> open_dir(const fs::path& dir, int& error) override {
    std::map<std::string, bool> entries;  // name -> is_dir
    const std::string prefix = dir.string() + "/";
    for (const auto& [path, bytes] : files) {
      if (!path.starts_with(prefix)) continue;
      const std::string rest = path.substr(prefix.size());
      const auto slash = rest.find('/');
      entries[rest.substr(0, slash)] = slash != std::string::npos;
    }
    if (entries.empty()) {
      error = ENOENT;
      return nullptr;
    }
    error = 0;
    return std::make_unique<Stream>(std::vector<std::pair<std::string, bool>>(entries.begin(), entries.end()));
  }
  int stat(const fs::path& path, CacheStat& out) override {
    out = {};
    out.mtime = 1'795'980'269'000'000;
    if (files.count(path.string())) return 0;
    for (const auto& [p, bytes] : files)
      if (p.starts_with(path.string() + "/")) {
        out.is_dir = true;
        return 0;
      }
    return ENOENT;
  }
  using CacheFilesystem::read_file;
  int read_file(const fs::path& path, std::uint64_t max_bytes, std::string& out, salttap::Micros* mtime) override {
    const auto it = files.find(path.string());
    if (it == files.end()) return ENOENT;
    if (it->second.size() > max_bytes) return EFBIG;
    out = it->second;
    if (mtime != nullptr) *mtime = 1'795'980'269'000'000;
    return 0;
  }

 private:
  class Stream final : public DirStream {
   public:
    explicit Stream(std::vector<std::pair<std::string, bool>> entries) : entries_(std::move(entries)) {}
    bool next(std::string& name, bool& is_dir, int& error) override {
      error = 0;
      if (i_ >= entries_.size()) return false;
      name = entries_[i_].first;
      is_dir = entries_[i_].second;
      ++i_;
      return true;
    }

   private:
    std::vector<std::pair<std::string, bool>> entries_;
    std::size_t i_ = 0;
  };
};

void decode_alone(std::string_view bytes, const salttap::tap::DecodeLimits& limits) {
  msgpack::zone zone;
  msgpack::object value;
  const salttap::fuzz::HeapPeak heap;
  const CacheFileResult r = decode_cache_file(zone, bytes, limits, value);
  FUZZ_CHECK(salttap::fuzz::is_linear_heap(heap.growth(), bytes.size(), "a cache file"));
  FUZZ_CHECK(!r.describe().empty());
  if (!r.ok()) {
    FUZZ_CHECK(r.at <= bytes.size());
    return;
  }
  FUZZ_CHECK(r.at == bytes.size());
  std::string json;
  salttap::tap::append_msgpack_json(json, value);
  FUZZ_CHECK(salttap::fuzz::is_linear_size(json, bytes.size()));
  FUZZ_CHECK(salttap::fuzz::is_strict_json(json));
}

void read_job(const std::string& file, std::string_view bytes, const salttap::tap::DecodeLimits& limits) {
  MemoryFilesystem fs;
  const std::string dir(kDir);
  fs.files[dir + "/jid"] = std::string(kJid);
  fs.files[dir + "/.load.p"] = load_p();
  fs.files[dir + "/.minions.p"] = minions_p();
  fs.files[dir + "/minion-a/return.p"] = return_p();
  fs.files[dir + "/" + file] = std::string(bytes);
  JobReaderOptions options;
  options.limits = limits;
  JobRead r = JobReader(options, fs).read(dir);
  if (r.outcome != JobOutcome::ready) {
    FUZZ_CHECK(r.outcome == JobOutcome::noise || r.outcome == JobOutcome::nocache || !r.error.empty());
    return;
  }
  FUZZ_CHECK(r.job != nullptr);
  salttap::tap::Event event;
  std::string error;
  std::size_t events = 0;
  while (true) {
    const auto next = r.job->next_event(event, error);
    if (next == CachedJob::Next::end) break;
    if (next == CachedJob::Next::failed) {
      FUZZ_CHECK(!error.empty());
      break;
    }
    ++events;
    FUZZ_CHECK(events <= 1 + r.job->returns().size());
    FUZZ_CHECK(event.tag().starts_with("salt/"));
    std::string json;
    salttap::tap::append_event_json(json, event);
    FUZZ_CHECK(salttap::fuzz::is_linear_size(json, event.wire_bytes()));
    FUZZ_CHECK(salttap::fuzz::is_strict_json(json));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const char* const kFiles[] = {".load.p", "minion-a/return.p", ".minions.p", "minion-a/out.p"};
  const std::string file = kFiles[data[0] % 4];
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  decode_alone(bytes, {});
  decode_alone(bytes, salttap::fuzz::kTinyLimits);
  read_job(file, bytes, {});
  read_job(file, bytes, salttap::fuzz::kTinyLimits);
  return 0;
}
