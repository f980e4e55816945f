// The index contract on a real engine: templates install (twice, the same
// requests), what the engine lacks degrades with one line each, every sample
// document indexes with its fields typed as the templates say, and 5,000
// distinct return shapes go into the returns index without a rejection and
// without adding a single field to its mapping.
//
// Run by tests/engines/test_setup_engines.py, which starts OpenSearch 2.19
// and Elasticsearch 7.17 and sets SALTTAP_ENGINE_URL; skipped without it.
// Lines starting with "[figures]" are printed by the pytest.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidjson/document.h>

#include "common/json_value.h"
#include "http/curl_http_client.h"
#include "indexer/index_setup.h"
#include "indexer/internal/embedded_mappings.h"

namespace salttap::indexer {
namespace {

using rapidjson::Document;
using rapidjson::Value;

std::string engine_url() {
  const char* url = std::getenv("SALTTAP_ENGINE_URL");
  return url ? url : "";
}

// A run's own prefix: a second run against the same engine starts clean.
const IndexLayout& layout() {
  static const IndexLayout l = [] {
    IndexLayout out;
    out.prefix = fmt::format("setup{}", std::random_device{}() % 1'000'000);
    return out;
  }();
  return l;
}

TemplateSettings settings() {
  TemplateSettings s;
  s.retention_days = 30;
  s.refresh_interval = "250ms";
  return s;
}

// Sends through the real client and keeps what was sent.
class Recording : public http::HttpClient {
 public:
  explicit Recording(http::HttpClient& inner) : inner_(inner) {}
  http::HttpResponse send(const http::HttpRequest& request) override {
    sent.push_back(request.method + " " + request.path + "\n" + request.body);
    return inner_.send(request);
  }
  std::vector<std::string> sent;

 private:
  http::HttpClient& inner_;
};

std::size_t count_fields(const Value& properties) {
  std::size_t n = 0;
  for (const auto& m : properties.GetObject()) {
    ++n;
    if (m.value.IsObject() && m.value.HasMember("properties")) n += count_fields(m.value["properties"]);
  }
  return n;
}

void collect_types(const Value& properties, const std::string& prefix, std::map<std::string, std::string>& out) {
  for (const auto& m : properties.GetObject()) {
    const std::string path = prefix + m.name.GetString();
    if (m.value.HasMember("properties")) {
      collect_types(m.value["properties"], path + ".", out);
      continue;
    }
    out[path] = m.value.HasMember("type") ? m.value["type"].GetString() : "object";
  }
}

class SetupEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (engine_url().empty()) return;
    http::HttpClientConfig config;
    config.hosts = {engine_url()};
    client_ = http::make_curl_client(config).release();
    report_ = new IndexSetupReport(install_index_setup(*client_, layout(), settings(), true));
  }
  static void TearDownTestSuite() {
    delete report_;
    delete client_;
    report_ = nullptr;
    client_ = nullptr;
  }
  void SetUp() override {
    ASSERT_FALSE(engine_url().empty()) << "SALTTAP_ENGINE_URL is not set (tests/engines/test_setup_engines.py sets it)";
    ASSERT_TRUE(report_->ok) << report_->error;
  }

  std::pair<long, Document> call(const std::string& method, const std::string& path, std::string body = {},
                                 const char* content_type = "application/json") {
    http::HttpRequest q;
    q.method = method;
    q.path = path;
    q.body = std::move(body);
    q.content_type = content_type;
    const http::HttpResponse r = client_->send(q);
    EXPECT_NE(r.status, 0) << method << " " << path << ": " << r.error;
    Document d;
    d.Parse(r.body.data(), r.body.size());
    return {r.status, std::move(d)};
  }

  // POST /_bulk; returns the failed items' descriptions.
  std::vector<std::string> bulk(const std::string& ndjson, bool refresh) {
    auto [status, body] = call("POST", refresh ? "/_bulk?refresh=wait_for" : "/_bulk", ndjson, "application/x-ndjson");
    EXPECT_EQ(status, 200) << json::to_text(body).substr(0, 2000);
    std::vector<std::string> failed;
    if (!body.IsObject() || !body.HasMember("items")) return {"no items in the bulk response"};
    for (const auto& item : body["items"].GetArray()) {
      const Value& result = item.MemberBegin()->value;
      const int s = result["status"].GetInt();
      if (s < 200 || s > 299) failed.push_back(json::to_text(result));
    }
    return failed;
  }

  Document live_mapping(const std::string& index) {
    auto [status, body] = call("GET", "/" + index + "/_mapping");
    EXPECT_EQ(status, 200) << index;
    Document out;
    if (status == 200 && body.HasMember(index.c_str()))
      out.CopyFrom(body[index.c_str()]["mappings"], out.GetAllocator());
    return out;
  }

  static http::HttpClient* client_;
  static IndexSetupReport* report_;
};

http::HttpClient* SetupEngineTest::client_ = nullptr;
IndexSetupReport* SetupEngineTest::report_ = nullptr;

TEST_F(SetupEngineTest, InstallsEveryTemplateTwiceWithTheSameRequests) {
  Recording first(*client_), second(*client_);
  const auto a = install_index_setup(first, layout(), settings(), true);
  const auto b = install_index_setup(second, layout(), settings(), true);
  ASSERT_TRUE(a.ok && b.ok) << a.error << b.error;
  EXPECT_EQ(first.sent, second.sent);
  EXPECT_EQ(a.installed, b.installed);
  EXPECT_EQ(a.degraded, b.degraded);
  EXPECT_EQ(a.installed, report_->installed);

  const bool opensearch = report_->server.flavor == Flavor::opensearch;
  EXPECT_EQ(report_->template_api, TemplateApi::composable);
  EXPECT_EQ(report_->installed.size(), std::size(kIndexKinds) + std::size(kEntityKinds));  // no lifecycle policy
  for (const auto kind : kIndexKinds) {
    const auto [status, body] = call("GET", "/_index_template/" + template_name(layout(), kind));
    EXPECT_EQ(status, 200) << kind;
  }

  // The test engines have neither ILM nor ISM: exactly one line says so.
  const std::string lifecycle = opensearch ? "ISM is not available" : "ILM is not available";
  std::size_t lifecycle_lines = 0, flat_lines = 0;
  for (const auto& line : report_->degraded) {
    lifecycle_lines += line.find(lifecycle) != std::string::npos;
    flat_lines += line.find("return_flat is left out") != std::string::npos;
    std::printf("[figures] %s degrade: %s\n", opensearch ? "opensearch" : "elasticsearch", line.c_str());
  }
  EXPECT_EQ(lifecycle_lines, 1u);
  EXPECT_EQ(report_->lifecycle, LifecycleApi::none);
  // A refused flat type shows as exactly one line, and then nothing asks for it.
  EXPECT_EQ(flat_lines, report_->flat_type.empty() ? 1u : 0u);
  EXPECT_EQ(report_->degraded.size(), lifecycle_lines + flat_lines);
  std::printf("[figures] %s: %zu templates (%s), return_flat %s\n", report_->server.describe().c_str(),
              report_->installed.size(), report_->template_api == TemplateApi::composable ? "composable" : "legacy",
              report_->flat_type.empty() ? "refused: not mapped" : report_->flat_type.c_str());
}

// Rewrites samples.ndjson's "salt-<kind>-<day>" into this run's prefix and
// drops return_flat when the server has no flat type (as the builder does).
std::string samples_for(const IndexLayout& l, bool with_flat, std::set<std::string>& indices) {
  std::ifstream in(std::string(SALTTAP_SOURCE_DIR) + "/tests/golden/ndjson/samples.ndjson");
  std::string line, out;
  bool action = true;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Document d;
    d.Parse(line.c_str());
    if (action) {
      Value& meta = d.MemberBegin()->value;
      const std::string index = meta["_index"].GetString();
      const std::string renamed = l.prefix + index.substr(index.find('-'));
      meta["_index"].SetString(renamed.c_str(), d.GetAllocator());
      indices.insert(renamed);
    } else if (!with_flat) {
      d.RemoveMember("return_flat");
    }
    out += json::to_text(d) + "\n";
    action = !action;
  }
  return out;
}

TEST_F(SetupEngineTest, AnIndexCreatedAfterSetupTakesTheRefreshInterval) {
  const std::string index = fmt::format("{}-jobs-2026.12.03", layout().prefix);
  EXPECT_EQ(call("PUT", "/" + index).first, 200);
  auto [status, body] = call("GET", "/" + index + "/_settings?flat_settings=true");
  ASSERT_EQ(status, 200) << json::to_text(body);
  const Value& got = body[index.c_str()]["settings"];
  ASSERT_TRUE(got.HasMember("index.refresh_interval")) << json::to_text(got);
  EXPECT_STREQ(got["index.refresh_interval"].GetString(), "250ms");
  call("DELETE", "/" + index);
}

TEST_F(SetupEngineTest, EverySampleDocumentIndexesWithItsFieldsTyped) {
  std::set<std::string> indices;
  const std::string ndjson = samples_for(layout(), return_flat_enabled(*report_), indices);
  ASSERT_FALSE(ndjson.empty());
  const auto failed = bulk(ndjson, true);
  EXPECT_TRUE(failed.empty()) << fmt::format("{}", fmt::join(failed, "\n"));
  ASSERT_EQ(indices.size(), std::size(kIndexKinds) + std::size(kEntityKinds));

  for (const auto& index : indices) {
    SCOPED_TRACE(index);
    const std::string kind = index.substr(layout().prefix.size() + 1, index.rfind('-') - layout().prefix.size() - 1);
    const Document live = live_mapping(index);
    ASSERT_TRUE(live.IsObject() && live.HasMember("properties"));
    EXPECT_TRUE(live.HasMember("dynamic"));
    std::map<std::string, std::string> live_types, contract_types;
    collect_types(live["properties"], "", live_types);
    Document contract;
    contract.Parse(
        template_body(kind, layout(), settings(), {TemplateApi::composable, report_->flat_type, ""}).c_str());
    collect_types(contract["template"]["mappings"]["properties"], "", contract_types);
    EXPECT_EQ(live_types, contract_types);  // nothing added by the documents, nothing lost
    if (kind == "returns" && !report_->flat_type.empty()) {
      EXPECT_EQ(live_types["return_flat"], report_->flat_type);
    }
  }
  std::printf("[figures] %zu sample documents into %zu indices, typed as the templates say\n",
              static_cast<std::size_t>(std::count(ndjson.begin(), ndjson.end(), '\n') / 2), indices.size());
}

// ---- 5,000 return shapes -------------------------------------------------

class ShapeMaker {
 public:
  explicit ShapeMaker(unsigned seed) : rng_(seed) {}

  // Shape i: scalars, lists, nested maps 1-30 deep, maps keyed by state IDs.
  void make(std::size_t i, Value& out, Document::AllocatorType& a) {
    switch (i % 6) {
      case 0:
        scalar(i, out, a);
        break;
      case 1:
        list(i, 1 + pick(6), out, a);
        break;
      case 2:
        nested(i, 1 + static_cast<int>(i / 6 % 30), out, a);
        break;
      case 3:
        state_run(i, out, a);
        break;
      case 4:
        wide_map(i, out, a);
        break;
      default:
        mixed(i, out, a);
        break;
    }
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
  std::string word() {
    static const char* words[] = {"nginx", "sshd", "/etc/hosts", "pkg.installed", "a.b.c", "über", "with space",
                                  "UPPER", "x",    "-dash",      "__run_num__",   "1234",  "日本", "tab\there"};
    return words[pick(std::size(words))];
  }
  std::string state_id() {
    static const char* mods[] = {"file", "pkg", "service", "cmd", "user", "git"};
    static const char* funs[] = {"managed", "installed", "running", "run", "present", "latest"};
    const std::string id = fmt::format("{}_{:x}", word(), rng_());
    return fmt::format("{}_|-{}_|-/srv/{}.conf_|-{}", mods[pick(6)], id, id, funs[pick(6)]);
  }
  void scalar(std::size_t i, Value& out, Document::AllocatorType& a) {
    switch (i / 6 % 6) {
      case 0:
        out.SetString(fmt::format("output line {} {}", i, word()).c_str(), a);
        break;
      case 1:
        out.SetInt64(static_cast<std::int64_t>(i) * 7919 - 100000);
        break;
      case 2:
        out.SetDouble(static_cast<double>(i) / 7.0);
        break;
      case 3:
        out.SetBool(i % 4 == 0);
        break;
      case 4:
        out.SetNull();
        break;
      default:
        out.SetString(std::string(2000 + i % 500, 'x').c_str(), a);
        break;
    }
  }
  void list(std::size_t i, std::size_t n, Value& out, Document::AllocatorType& a) {
    out.SetArray();
    for (std::size_t k = 0; k < n; ++k) {
      Value v;
      if (k % 3 == 2) {
        v.SetObject();
        v.AddMember(Value(word().c_str(), a), Value(static_cast<std::int64_t>(i + k)), a);
      } else {
        scalar(i + k * 6, v, a);
      }
      out.PushBack(v, a);
    }
  }
  void nested(std::size_t i, int depth, Value& out, Document::AllocatorType& a) {
    out.SetObject();
    Value* cur = &out;
    for (int d = 0; d < depth; ++d) {
      Value leaf(static_cast<std::int64_t>(i));
      cur->AddMember(Value(fmt::format("leaf{}", d).c_str(), a), leaf, a);
      if (d + 1 < depth) {
        cur->AddMember(Value(fmt::format("{}_{}", word(), d).c_str(), a), Value(rapidjson::kObjectType), a);
        cur = &(cur->MemberEnd() - 1)->value;
      }
    }
  }
  void state_run(std::size_t i, Value& out, Document::AllocatorType& a) {
    out.SetObject();
    const std::size_t n = 1 + pick(8);
    for (std::size_t k = 0; k < n; ++k) {
      Value st(rapidjson::kObjectType);
      st.AddMember("result", k % 5 != 0, a);
      st.AddMember("comment", Value(fmt::format("state {} of run {}", k, i).c_str(), a), a);
      st.AddMember("__run_num__", static_cast<int>(k), a);
      st.AddMember("duration", 0.5 * static_cast<double>(k), a);
      Value changes(rapidjson::kObjectType);
      if (k % 2) {
        Value diff(rapidjson::kObjectType);
        diff.AddMember("old", Value(word().c_str(), a), a);
        diff.AddMember("new", Value(fmt::format("{}", i).c_str(), a), a);
        changes.AddMember(Value(word().c_str(), a), diff, a);
      }
      st.AddMember("changes", changes, a);
      out.AddMember(Value(state_id().c_str(), a), st, a);
    }
  }
  void wide_map(std::size_t i, Value& out, Document::AllocatorType& a) {
    out.SetObject();
    const std::size_t n = 20 + pick(80);  // e.g. grains.items: many keys, one per minion fact
    for (std::size_t k = 0; k < n; ++k) {
      Value v;
      scalar(i * 31 + k, v, a);
      out.AddMember(Value(fmt::format("{}_{}_{}", word(), i, k).c_str(), a), v, a);
    }
  }
  void mixed(std::size_t i, Value& out, Document::AllocatorType& a) {
    out.SetObject();
    Value l;
    list(i, 1 + pick(4), l, a);
    out.AddMember(Value(fmt::format("list_{}", i).c_str(), a), l, a);
    Value n;
    nested(i, 1 + static_cast<int>(pick(5)), n, a);
    out.AddMember("nested", n, a);
    out.AddMember("", Value(static_cast<std::int64_t>(i)), a);                // Salt has empty keys now and then
    out.AddMember("retcode", Value(fmt::format("{}", i % 3).c_str(), a), a);  // a string where a number is usual
  }

  std::mt19937 rng_;
};

int depth_of(const Value& v) {
  int deepest = 0;
  if (v.IsObject())
    for (const auto& m : v.GetObject()) deepest = std::max(deepest, depth_of(m.value));
  else if (v.IsArray())
    for (const auto& e : v.GetArray()) deepest = std::max(deepest, depth_of(e));
  else
    return 0;
  return deepest + 1;
}

TEST_F(SetupEngineTest, FiveThousandReturnShapesNeitherRejectNorGrowTheMapping) {
  constexpr std::size_t kShapes = 5000, kBatch = 250, kTextCap = 32 * 1024;
  const std::string index = layout().index_name("returns", 1'800'000'000'000'000);  // not the samples' day
  // The first document creates the index from the template.
  Document first;
  first.Parse(R"({"@timestamp":"2026-12-01T00:00:00Z","jid":"1","minion":"m","status":"succeeded","return":true})");
  ASSERT_TRUE(
      bulk(fmt::format("{{\"index\":{{\"_index\":\"{}\",\"_id\":\"seed\"}}}}\n{}\n", index, json::to_text(first)), true)
          .empty());
  const Document before = live_mapping(index);
  ASSERT_TRUE(before.IsObject() && before.HasMember("properties"));
  const std::size_t fields_before = count_fields(before["properties"]);

  ShapeMaker maker(20261129);
  std::set<std::string> distinct;
  std::size_t flat_docs = 0, deep = 0;
  std::vector<std::string> failed;
  std::string batch;
  // Candidates until kShapes distinct ones (a bool or a null comes up more than once).
  for (std::size_t i = 0, candidate = 0; i < kShapes; ++candidate) {
    Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    Value ret;
    maker.make(candidate, ret, a);
    const std::string text = json::to_text(ret);
    if (!distinct.insert(text).second) continue;
    doc.AddMember("@timestamp", "2026-12-01T00:00:00.000001Z", a);
    doc.AddMember("jid", Value(fmt::format("202612010000000{:05}", i).c_str(), a), a);
    doc.AddMember("minion", Value(fmt::format("minion-{}", i % 97).c_str(), a), a);
    doc.AddMember("fun", "state.apply", a);
    doc.AddMember("status", "succeeded", a);
    doc.AddMember("return_text", Value(text.substr(0, kTextCap).c_str(), a), a);
    doc.AddMember("return_truncated", text.size() > kTextCap, a);
    // The builder's rule (docs/documents.md, "Field reference"): an object of depth <= 20 whose JSON fits text_cap.
    const int depth = depth_of(ret);
    deep += depth > 20;
    if (return_flat_enabled(*report_) && ret.IsObject() && depth <= 20 && text.size() <= kTextCap) {
      Value flat;
      flat.CopyFrom(ret, a);
      doc.AddMember("return_flat", flat, a);
      ++flat_docs;
    }
    doc.AddMember("return", ret, a);
    batch +=
        fmt::format("{{\"index\":{{\"_index\":\"{}\",\"_id\":\"shape-{}\"}}}}\n{}\n", index, i, json::to_text(doc));
    if ((i + 1) % kBatch == 0 || i + 1 == kShapes) {
      const auto f = bulk(batch, i + 1 == kShapes);
      failed.insert(failed.end(), f.begin(), f.end());
      batch.clear();
    }
    ++i;
  }
  EXPECT_EQ(distinct.size(), kShapes);
  EXPECT_TRUE(failed.empty()) << failed.size() << " rejected, first: " << (failed.empty() ? "" : failed.front());

  auto [status, count] = call("GET", "/" + index + "/_count");
  EXPECT_EQ(count["count"].GetInt64(), static_cast<std::int64_t>(kShapes + 1));
  const Document after = live_mapping(index);
  const std::size_t fields_after = count_fields(after["properties"]);
  EXPECT_EQ(fields_after, fields_before);
  EXPECT_EQ(json::to_text(after), json::to_text(before));
  std::printf(
      "[figures] %zu distinct return shapes (%zu deeper than 20, %zu with return_flat): %zu rejected, "
      "mapping fields %zu before, %zu after\n",
      distinct.size(), deep, flat_docs, failed.size(), fields_before, fields_after);
}

}  // namespace
}  // namespace salttap::indexer
