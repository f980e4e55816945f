#include "indexer/bulk_shipper.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "common/errno_text.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "http/gzip.h"
#include "indexer/index_layout.h"
#include "indexer/internal/bulk_result.h"
#include "indexer/internal/dead_letter.h"
#include "indexer/latency_trace.h"

namespace salttap::indexer {

std::string_view to_string(RequestFailure f) {
  switch (f) {
    case RequestFailure::transport:
      return "transport";
    case RequestFailure::http_429:
      return "http_429";
    case RequestFailure::http_5xx:
      return "http_5xx";
    case RequestFailure::http_413:
      return "http_413";
    case RequestFailure::http_auth:
      return "http_auth";
    case RequestFailure::http_4xx:
      return "http_4xx";
    case RequestFailure::http_other:
      return "http_other";
    case RequestFailure::bad_response:
      return "bad_response";
    case RequestFailure::tls:
      return "tls";
  }
  return "unknown";
}

namespace {

using std::chrono::milliseconds;

// How long a worker waits in take() at a time, so stop() is seen promptly.
constexpr milliseconds kTakeSlice{100};
// Holding a partial batch while every worker is busy, the preparer looks for
// more records this often (it waits for a free worker meanwhile).
constexpr milliseconds kHoldSlice{10};

// Batches prepared ahead of the workers: one is enough to keep a worker from
// waiting on the spool and gzip; more would only hold records taken early.
constexpr std::size_t kReadyBatches = 1;

// One document on its way: the spool record, or the dead letter that replaced it.
struct Item {
  std::uint64_t spool_id = 0;
  DocClass cls = DocClass::event;
  std::string payload;                    // "<action>\n<source>\n" as sent
  std::optional<DeadLetter> dead_letter;  // set: payload is this record's dead-letter document
};

// A body compressed beforehand goes with this header and HttpRequest::gzip off.
constexpr const char* kGzipHeader = "Content-Encoding: gzip";

// A batch and its request body, built (and gzipped) before a worker takes it.
struct Prepared {
  std::vector<Item> items;
  std::string body;
  bool gzipped = false;
};

std::optional<RequestFailure> failure_of(const http::HttpResponse& response, const BulkOutcome& outcome) {
  const long status = response.status;
  if (status == 0) return response.tls_failed ? RequestFailure::tls : RequestFailure::transport;
  if (status == 429) return RequestFailure::http_429;
  if (status >= 500) return RequestFailure::http_5xx;
  if (status == 413) return RequestFailure::http_413;
  if (status == 401 || status == 403) return RequestFailure::http_auth;
  if (status >= 400) return RequestFailure::http_4xx;
  if (status < 200 || status > 299) return RequestFailure::http_other;
  if (outcome.whole_request) return RequestFailure::bad_response;
  return std::nullopt;
}

// "<index>/<id>" for logs; a record whose action line did not parse has neither.
std::string name(const DeadLetter& d) {
  if (d.index.empty() && d.doc_id.empty()) return "a malformed record";
  return d.index + "/" + (d.doc_id.empty() ? "(no _id)" : d.doc_id);
}

// Appends `line` to `path` and fsyncs it before the record is acknowledged
// (the spool forgets the record once acked). Returns the error text, empty on success.
std::string append_durably(const std::filesystem::path& path, const std::string& line) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return fmt::format("cannot create {}: {}", path.parent_path().string(), ec.message());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) return fmt::format("cannot open {}: {}", path.string(), errno_text(errno));
  std::string error;
  for (std::size_t done = 0; done < line.size() && error.empty();) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      error = fmt::format("cannot write {}: {}", path.string(), errno_text(errno));
    else
      done += static_cast<std::size_t>(n);
  }
  if (error.empty() && ::fsync(fd) != 0) error = fmt::format("cannot fsync {}: {}", path.string(), errno_text(errno));
  ::close(fd);
  return error;
}

}  // namespace

struct BulkShipper::Impl {
  Impl(ShipperConfig c, RecordSource& s, ClientFactory f)
      : config(std::move(c)),
        source(s),
        make_client(std::move(f)),
        clock(config.clock ? *config.clock : system_clock),
        time(config.steady_time ? *config.steady_time : real_steady_time()),
        unit_random(config.unit_random ? config.unit_random : system_unit_random()),
        dead_letters{config.dead_letter_prefix, true} {
    config.in_flight = std::max<std::size_t>(1, config.in_flight);
    config.batch.max_docs = std::max<std::size_t>(1, config.batch.max_docs);
    config.batch.max_bytes = std::max<std::size_t>(1, config.batch.max_bytes);
    bulk_path = "/_bulk?filter_path=errors,items.*.status,items.*.error";
    if (config.refresh_wait_for) bulk_path += "&refresh=wait_for";
  }

  ShipperConfig config;
  RecordSource& source;
  ClientFactory make_client;
  SystemClock system_clock;
  const Clock& clock;
  SteadyTime& time;
  UnitRandom unit_random;  // shared by the workers' backoffs
  IndexLayout dead_letters;
  std::string bulk_path;

  std::mutex mutex;  // guards everything below; `wake` interrupts backoff sleeps
  std::condition_variable wake;
  bool started = false, stopping = false, hard_stop = false;
  std::size_t running = 0;     // the preparer and the workers, until each exits
  std::deque<Prepared> ready;  // prepared by the preparer, not yet picked up by a worker
  bool preparer_done = false;
  bool preparer_holding = false;  // collecting a batch that has records
  std::size_t idle_workers = 0;   // waiting for a prepared batch
  std::thread preparer;
  ShipperStats stats;
  std::atomic<bool> reachable{false};
  std::mutex file_mutex;  // one dead-letter file writer at a time

  struct Worker {
    std::unique_ptr<http::HttpClient> client;
    std::thread thread;
  };
  std::vector<Worker> workers;

  bool is_stopping() {
    std::lock_guard lock(mutex);
    return stopping;
  }
  bool is_hard_stopped() {
    std::lock_guard lock(mutex);
    return hard_stop;
  }

  // The preparer: takes the next batch from the source and builds (and
  // gzips) its body while the workers' requests are in flight, so a worker
  // that gets its answer sends the next request at once instead of spending
  // that time reading the spool and compressing.
  void prepare() {
    std::deque<SpoolRecord> carry;  // taken, did not fit the last batch
    for (;;) {
      {
        // Room first, then take: records are taken only for a batch that can
        // be handed on, so at most in_flight + kReadyBatches batches are held.
        std::unique_lock lock(mutex);
        time.wait_until(lock, wake, forever(), [&] { return ready.size() < kReadyBatches || hard_stop; });
        if (hard_stop) break;
      }
      std::vector<Item> batch = collect(carry);
      if (batch.empty()) {
        if (is_stopping()) break;
        continue;
      }
      Prepared next{std::move(batch), {}, false};
      build_body(next);
      std::lock_guard lock(mutex);
      if (hard_stop) break;
      ready.push_back(std::move(next));  // only this thread adds: the room is still there
      wake.notify_all();
    }
    std::lock_guard lock(mutex);
    preparer_done = true;
    --running;
    wake.notify_all();
  }

  void run(http::HttpClient& client) {
    for (;;) {
      Prepared next;
      {
        std::unique_lock lock(mutex);
        ++idle_workers;
        wake.notify_all();  // a preparer holding a partial batch sends it now
        time.wait_until(lock, wake, forever(), [&] { return !ready.empty() || preparer_done || hard_stop; });
        --idle_workers;
        if (hard_stop || ready.empty()) break;  // hard stop, or stopping with nothing left to ship
        next = std::move(ready.front());
        ready.pop_front();
        wake.notify_all();  // room for the preparer's next batch
      }
      ship(client, std::move(next));
      if (is_hard_stopped()) break;
    }
    std::lock_guard lock(mutex);
    --running;
    wake.notify_all();
  }

  // The preparer holds a partial batch (`held`); true when a worker waits
  // for one, so the batch should go now.
  bool holding(bool held) {
    std::lock_guard lock(mutex);
    preparer_holding = held;
    return idle_workers > 0 && ready.empty();
  }

  // "As long as it takes": waits that end only when notified.
  SteadyTime::time_point forever() const { return time.now() + std::chrono::hours(24 * 365); }

  void build_body(Prepared& p) const {
    std::size_t size = 0;
    for (const auto& item : p.items) size += item.payload.size();
    p.body.reserve(size);
    for (const auto& item : p.items) p.body += item.payload;
    if (!config.gzip || p.body.empty()) return;
    try {
      p.body = http::gzip_compress(p.body, config.gzip_level);
      p.gzipped = true;
    } catch (const http::GzipError&) {
      // The client compresses it again at send() and reports the failure there.
    }
  }

  // A batch: up to max_docs records and max_bytes of payload, or what came
  // within max_wait of its first record. Empty when stopping with nothing held.
  std::vector<Item> collect(std::deque<SpoolRecord>& carry) {
    const auto& limits = config.batch;
    std::vector<Item> batch;
    std::size_t bytes = 0;
    bool full = false;
    // Takes a record unless the batch is full; a record alone may exceed max_bytes.
    auto add = [&](SpoolRecord& r) {
      if (full ||
          (!batch.empty() && (batch.size() >= limits.max_docs || bytes + r.payload.size() > limits.max_bytes))) {
        full = true;
        return false;
      }
      if (r.payload.empty() || r.payload.back() != '\n') r.payload.push_back('\n');
      bytes += r.payload.size();
      batch.push_back(Item{r.id, r.cls, std::move(r.payload), std::nullopt});
      full = batch.size() >= limits.max_docs || bytes >= limits.max_bytes;
      return true;
    };
    while (!carry.empty() && add(carry.front())) carry.pop_front();
    auto deadline = time.now() + limits.max_wait;
    while (!full && !is_stopping()) {
      const auto now = time.now();
      if (!batch.empty() && now >= deadline) break;
      // A worker is free: what is there goes now (after one look for more
      // that is already spooled), instead of waiting for company.
      const bool go_now = !batch.empty() && limits.ship_when_idle && holding(true);
      const bool was_empty = batch.empty();
      auto records = source.take(limits.max_docs - batch.size(), limits.max_bytes - std::min(bytes, limits.max_bytes),
                                 was_empty ? kTakeSlice : milliseconds(0));
      for (auto& r : records)
        if (!add(r)) carry.push_back(std::move(r));
      if (was_empty && !batch.empty()) deadline = time.now() + limits.max_wait;
      if (go_now) break;
      if (was_empty || full) continue;
      // Holding a partial batch while every worker is busy: wait for a free
      // worker (run() notifies), the window's end, or the next look for records.
      std::unique_lock lock(mutex);
      preparer_holding = true;
      time.wait_until(lock, wake, std::min(time.now() + kHoldSlice, deadline), [&] {
        return stopping || hard_stop || (limits.ship_when_idle && idle_workers > 0 && ready.empty());
      });
    }
    holding(false);
    return batch;
  }

  void ship(http::HttpClient& client, Prepared prepared) {
    adjust_in_flight(+1);
    std::deque<std::vector<Item>> work;
    work.push_back(std::move(prepared.items));
    // The first request sends the prepared body; splits and retries build their own.
    std::optional<Prepared> first = Prepared{{}, std::move(prepared.body), prepared.gzipped};
    Backoff backoff(config.backoff, unit_random);  // its failures: consecutive rounds with items to retry
    while (!work.empty() && !is_hard_stopped()) {
      std::vector<Item> chunk = std::move(work.front());
      work.pop_front();
      const BulkOutcome outcome = post(client, chunk, first ? &*first : nullptr);
      first.reset();
      // 413: too large. 400 on the whole request: one malformed document
      // spoils it. Either way, halves until the culprit stands alone.
      if (outcome.whole_request && chunk.size() > 1 && (outcome.split_batch || outcome.reject > 0)) {
        std::vector<Item> second(std::make_move_iterator(chunk.begin() + static_cast<std::ptrdiff_t>(chunk.size() / 2)),
                                 std::make_move_iterator(chunk.end()));
        chunk.resize(chunk.size() / 2);
        work.push_front(std::move(second));
        work.push_front(std::move(chunk));
        continue;
      }
      std::vector<std::uint64_t> acks;
      std::vector<Item> again;
      bool back_off = false;
      for (std::size_t i = 0; i < chunk.size(); ++i) {
        Item& item = chunk[i];
        ItemResult result = outcome.items[i];
        if (result.outcome == ItemOutcome::retry && outcome.split_batch) {  // alone and still too large
          result.outcome = ItemOutcome::reject;
          result.reason = "HTTP 413: the document alone is larger than the engine accepts (http.max_content_length)";
        }
        switch (result.outcome) {
          case ItemOutcome::delivered:
            if (item.cls == DocClass::job && !item.dead_letter) trace_payload(TraceStage::acked, item.payload);
            acks.push_back(item.spool_id);
            count_delivered(item, result);
            break;
          case ItemOutcome::retry:
            again.push_back(std::move(item));
            back_off = true;
            add_stat(&ShipperStats::docs_retried);
            break;
          case ItemOutcome::reject:
            if (!item.dead_letter) {
              to_dead_letter(item, result);
              again.push_back(std::move(item));  // sent with the next request
            } else if (write_dead_letter_file(item, result.reason)) {
              acks.push_back(item.spool_id);
            } else {
              again.push_back(std::move(item));
              back_off = true;
            }
            break;
        }
      }
      if (!acks.empty()) source.ack(acks);
      if (!again.empty()) work.push_front(std::move(again));
      if (!back_off) {
        backoff.reset();
      } else if (!sleep(backoff.next())) {
        break;
      }
    }
    adjust_in_flight(-1);
  }

  // `prepared`: the chunk's body built beforehand (moved from), or nullptr.
  BulkOutcome post(http::HttpClient& client, const std::vector<Item>& chunk, Prepared* prepared) {
    http::HttpRequest request;
    request.method = "POST";
    request.path = bulk_path;
    request.content_type = "application/x-ndjson";
    request.gzip = config.gzip;
    if (prepared) {
      request.body = std::move(prepared->body);
      if (prepared->gzipped) {  // compressed already: the client sends it as it is
        request.gzip = false;
        request.headers.emplace_back(kGzipHeader);
      }
    } else {
      std::size_t size = 0;
      for (const auto& item : chunk) size += item.payload.size();
      request.body.reserve(size);
      for (const auto& item : chunk) request.body += item.payload;
    }

    if (latency_trace_on())
      for (const auto& item : chunk)
        if (item.cls == DocClass::job && !item.dead_letter) trace_payload(TraceStage::sent, item.payload);
    const auto t0 = time.now();
    const http::HttpResponse response = client.send(request);
    const double seconds = std::chrono::duration<double>(time.now() - t0).count();
    BulkOutcome outcome = classify_bulk_response(response.status, response.body, chunk.size());
    const auto failure = failure_of(response, outcome);
    {
      std::lock_guard lock(mutex);
      ++stats.requests;
      stats.bytes_sent += response.bytes_sent;
      stats.last_bulk_seconds = seconds;
      stats.bulk_seconds_sum += seconds;
      if (failure) {
        ++stats.request_failures;
        ++stats.failures[static_cast<std::size_t>(*failure)];
      }
    }
    const bool answered = response.status != 0;
    if (answered && !reachable.exchange(true) && stats_requests() > 1)
      log::info("engine {} answers again", response.host);
    if (!answered) reachable = false;

    if (failure) {
      std::string why = response.error;  // transport errors: libcurl's text
      if (answered)
        why = outcome.items.empty() ? fmt::format("HTTP {}", response.status) : outcome.items.front().reason;
      if (outcome.needs_operator)
        log::error("bulk of {} documents to {}: {} (check the indexer's credentials, privileges and URL; retrying)",
                   chunk.size(), response.host, why);
      else
        log::warn("bulk of {} documents to {} failed: {}", chunk.size(), response.host, why);
    } else if (outcome.retry > 0) {
      const auto first = std::find_if(outcome.items.begin(), outcome.items.end(),
                                      [](const ItemResult& r) { return r.outcome == ItemOutcome::retry; });
      log::warn("bulk: {} of {} documents to retry ({})", outcome.retry, chunk.size(), first->reason);
    }
    return outcome;
  }

  void count_delivered(const Item& item, const ItemResult& result) {
    std::lock_guard lock(mutex);
    if (item.dead_letter) {
      ++stats.docs_dead_lettered;
      return;
    }
    ++stats.docs_shipped;
    if (result.status == 409) ++stats.docs_conflict;
  }

  // Replaces the item's payload with its dead-letter document.
  void to_dead_letter(Item& item, const ItemResult& result) {
    DeadLetter d = make_dead_letter(item.payload, result, clock.now());
    const std::string index = dead_letters.index_name("deadletter", d.rejected_at);
    log::warn("dead letter: {} rejected by the engine (HTTP {}): {}; indexing it into {}", name(d), d.status, d.reason,
              index);
    item.payload = dead_letter_ndjson(d, index);
    item.dead_letter = std::move(d);
  }

  // The dead-letter index refused the dead letter too: keep it on local disk.
  bool write_dead_letter_file(const Item& item, const std::string& refused) {
    const DeadLetter& d = *item.dead_letter;
    const auto path = source.dead_letter_dir() / dead_letter_file_name(d.rejected_at);
    std::string error;
    {
      std::lock_guard lock(file_mutex);
      error = append_durably(path, dead_letter_file_line(d, refused));
    }
    if (!error.empty()) {
      log::error("dead letter {}: the dead-letter index refused it ({}) and {}; keeping it and retrying", name(d),
                 refused, error);
      add_stat(&ShipperStats::dead_letter_file_errors);
      return false;
    }
    log::warn("dead letter {}: the dead-letter index refused it ({}); written to {}", name(d), refused, path.string());
    add_stat(&ShipperStats::docs_dead_letter_file);
    return true;
  }

  // False when stop() ran out of drain time meanwhile.
  bool sleep(milliseconds delay) {
    std::unique_lock lock(mutex);
    return !time.wait_for(lock, wake, delay, [&] { return hard_stop; });
  }

  void add_stat(std::uint64_t ShipperStats::*field) {
    std::lock_guard lock(mutex);
    ++(stats.*field);
  }
  void adjust_in_flight(int delta) {
    std::lock_guard lock(mutex);
    stats.in_flight_batches += static_cast<std::uint64_t>(static_cast<std::int64_t>(delta));
  }
  std::uint64_t stats_requests() {
    std::lock_guard lock(mutex);
    return stats.requests;
  }
};

BulkShipper::BulkShipper(ShipperConfig config, RecordSource& source, ClientFactory make_client)
    : impl_(std::make_unique<Impl>(std::move(config), source, std::move(make_client))) {}

BulkShipper::~BulkShipper() { stop(std::chrono::milliseconds(0)); }

void BulkShipper::start() {
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->started) return;
    impl_->started = true;
  }
  for (std::size_t i = 0; i < impl_->config.in_flight; ++i) impl_->workers.push_back({impl_->make_client(), {}});
  std::lock_guard lock(impl_->mutex);
  ++impl_->running;
  impl_->preparer = std::thread([this] {
    name_this_thread("ship-prepare");
    impl_->prepare();
  });
  for (std::size_t i = 0; i < impl_->workers.size(); ++i) {
    ++impl_->running;
    impl_->workers[i].thread = std::thread([this, i, client = impl_->workers[i].client.get()] {
      name_this_thread(fmt::format("ship-worker-{}", i + 1));
      impl_->run(*client);
    });
  }
}

void BulkShipper::stop(std::chrono::milliseconds drain) {
  {
    std::unique_lock lock(impl_->mutex);
    impl_->stopping = true;
    impl_->wake.notify_all();
  }
  // The preparer stops waiting for records and hands on what it holds.
  impl_->source.wake_takers();
  {
    std::unique_lock lock(impl_->mutex);
    // It exits at once (unless a batch waits for a worker): the drain below
    // then counts only the workers' time.
    impl_->wake.wait(lock,
                     [&] { return impl_->preparer_done || !impl_->ready.empty() || !impl_->preparer.joinable(); });
    // Workers ship what they hold, then exit; past the drain time they give up.
    impl_->time.wait_for(lock, impl_->wake, drain, [&] { return impl_->running == 0; });
    impl_->hard_stop = true;
    impl_->wake.notify_all();
  }
  impl_->source.wake_takers();  // a preparer still waiting for records sees the stop at once
  for (auto& w : impl_->workers)
    if (w.client) w.client->abort();  // a request in progress returns at once
  if (impl_->preparer.joinable()) impl_->preparer.join();
  for (auto& w : impl_->workers)
    if (w.thread.joinable()) w.thread.join();
}

ShipperStats BulkShipper::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

bool BulkShipper::engine_reachable() const { return impl_->reachable; }

void BulkShipper::publish(Metrics& m) const {
  using enum MetricId;
  const ShipperStats s = stats();
  m.counter(indexer_bulk_requests, s.requests);
  for (std::size_t i = 0; i < kRequestFailures; ++i)
    m.counter(indexer_bulk_request_failures, {to_string(static_cast<RequestFailure>(i))}, s.failures[i]);
  m.counter(indexer_bulk_request_bytes, s.bytes_sent);
  m.summary(indexer_bulk_request_duration_seconds, s.bulk_seconds_sum, s.requests);
  m.gauge(indexer_bulk_request_last_duration_seconds, s.last_bulk_seconds);
  m.counter(indexer_documents_shipped, s.docs_shipped);
  m.counter(indexer_document_conflicts, s.docs_conflict);
  m.counter(indexer_document_retries, s.docs_retried);
  m.counter(indexer_documents_dead_lettered, {"index"}, s.docs_dead_lettered);
  m.counter(indexer_documents_dead_lettered, {"file"}, s.docs_dead_letter_file);
  m.counter(indexer_dead_letter_file_errors, s.dead_letter_file_errors);
  m.gauge(indexer_in_flight_batches, static_cast<double>(s.in_flight_batches));
  m.gauge(indexer_engine_reachable, engine_reachable() ? 1 : 0);
}

}  // namespace salttap::indexer
