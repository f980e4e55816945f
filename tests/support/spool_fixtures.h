#pragma once
// What the spool tests share: a temporary spool directory, documents, and
// reading back what a spool hands out or holds on disk.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "common/metrics.h"
#include "indexer/internal/spool_format.h"
#include "indexer/internal/spool_metrics.h"
#include "indexer/spool.h"
#include "tests/support/temp_dir.h"

namespace salttap::testing {

// A spool in `dir` that never fsyncs: the tests read its files back, they do
// not test the disk.
inline indexer::SpoolConfig spool_config(const std::filesystem::path& dir) {
  indexer::SpoolConfig c;
  c.dir = dir;
  c.fsync = indexer::FsyncPolicy::never;
  return c;
}

inline indexer::BulkDoc spool_doc(indexer::DocClass cls, const std::string& text) {
  return indexer::BulkDoc{
      cls, "{\"create\":{\"_index\":\"salt-test\",\"_id\":\"" + text + "\"}}\n{\"n\":\"" + text + "\"}\n"};
}

// Everything take() hands out now, without waiting.
inline std::vector<indexer::SpoolRecord> take_all(indexer::Spool& spool) {
  std::vector<indexer::SpoolRecord> all;
  for (;;) {
    auto got = spool.take(1000, 1u << 30, std::chrono::milliseconds(0));
    if (got.empty()) return all;
    std::move(got.begin(), got.end(), std::back_inserter(all));
  }
}

inline std::vector<std::uint64_t> ids_of(const std::vector<indexer::SpoolRecord>& records) {
  std::vector<std::uint64_t> ids;
  for (const auto& r : records) ids.push_back(r.id);
  return ids;
}

inline std::vector<std::string> payloads_of(const std::vector<indexer::SpoolRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) out.push_back(r.payload);
  return out;
}

// Appends documents the test expects the spool to take whole: any other
// outcome fails the test where it happens, not later in a count.
inline void append_all(indexer::Spool& spool, const std::vector<indexer::BulkDoc>& docs) {
  const indexer::AppendResult r = spool.append(docs);
  EXPECT_EQ(r.spooled, docs.size()) << r.dropped << " documents not spooled";
}

inline void ack_all(indexer::Spool& spool, const std::vector<indexer::SpoolRecord>& records) {
  const auto ids = ids_of(records);
  spool.ack(ids);
}

inline std::vector<std::filesystem::path> segment_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (indexer::spool_format::parse_segment_file_name(e.path().filename().string())) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// One encoded record, as the writer lays it down.
inline std::string spool_record(std::uint64_t id, const indexer::BulkDoc& d) {
  std::string out;
  indexer::spool_format::append_record(out, id, d.cls, d.ndjson);
  return out;
}

// One sample of the spool's metrics, e.g. `salttap_spool_io_errors_total`
// or `salttap_spool_corrupt_records_total{found="read"}`; throws when absent.
inline double spool_metric(const indexer::Spool& spool, const std::string& sample) {
  Metrics metrics;
  indexer::publish_spool_metrics(metrics, spool, std::array<std::uint64_t, indexer::kDocClasses>{}, 0);
  const std::string text = metrics.render();
  const auto at = text.find("\n" + sample + " ");
  if (at == std::string::npos) throw std::runtime_error("no sample " + sample + " in\n" + text);
  return std::stod(text.substr(at + sample.size() + 2));
}

}  // namespace salttap::testing
