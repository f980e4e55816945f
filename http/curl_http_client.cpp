#include "http/curl_http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <mutex>

#include <fmt/format.h>

#include "common/log.h"
#include "http/gzip.h"

namespace salttap::http {
namespace {

using Clock = std::chrono::steady_clock;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// libcurl's codes for a failed TLS handshake or certificate check (ours or the server's).
bool tls_failure(CURLcode rc) {
  switch (rc) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CLIENTCERT:
    case CURLE_USE_SSL_FAILED:
      return true;
    default:
      return false;
  }
}

bool host_failed(const HttpRequest& request, const HttpResponse& r) {
  if (r.status == 0) return true;
  return request.failover_on_unavailable && (r.status == 502 || r.status == 503 || r.status == 504);
}

struct Host {
  std::string base;      // "https://user:pw@es1:9200" as configured (scheme added), no trailing '/'
  std::string display;   // the same without user info: safe for logs and errors
  std::string userinfo;  // "user:pw" when the URL carries credentials (kept out of errors)
};

Host parse_host(std::string_view configured) {
  std::string base(configured);
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.find("://") == std::string::npos) base = "http://" + base;
  Host host{base, base, {}};
  const auto authority = base.find("://") + 3;
  const auto at = base.find('@', authority);
  if (at != std::string::npos && base.find('/', authority) > at) {
    host.userinfo = base.substr(authority, at - authority);
    host.display.erase(authority, at + 1 - authority);
  }
  return host;
}

// What each transfer collects (callbacks' user data).
struct Transfer {
  std::string body;
  std::string product;
  std::size_t max_body = 0;
  bool too_large = false;
  const std::atomic<bool>* aborted = nullptr;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  if (t.body.size() + bytes > t.max_body) {
    t.too_large = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  t.body.append(data, bytes);
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t bytes = size * n;
  constexpr std::string_view kName = "x-elastic-product:";
  std::string_view line(data, bytes);
  if (line.size() > kName.size() && std::equal(kName.begin(), kName.end(), line.begin(), [](char a, char b) {
        return a == std::tolower(static_cast<unsigned char>(b));
      })) {
    line.remove_prefix(kName.size());
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) line.remove_prefix(1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    t.product = std::string(line);
  }
  return bytes;
}

// libcurl calls this at least once a second during a transfer, connects included.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Transfer*>(user)->aborted->load() ? 1 : 0;
}

class CurlHttpClient final : public HttpClient {
 public:
  explicit CurlHttpClient(HttpClientConfig config) : config_(std::move(config)) {
    global_init();
    for (const auto& h : config_.hosts) hosts_.push_back(parse_host(h));
    if (hosts_.empty()) hosts_.push_back(parse_host("http://127.0.0.1:9200"));
    board_ = config_.board;
    if (!board_ || board_->size() != hosts_.size()) {
      std::vector<std::string> shown;
      for (const auto& h : hosts_) shown.push_back(h.display);
      board_ = std::make_shared<HostBoard>(std::move(shown));
    }
    curl_ = curl_easy_init();
    // One kept-alive connection per host (libcurl's cache holds 5 by default).
    if (curl_) curl_easy_setopt(curl_, CURLOPT_MAXCONNECTS, static_cast<long>(std::max<std::size_t>(5, hosts_.size())));
    for (const auto* secret : {&config_.auth.password, &config_.auth.api_key})
      if (!secret->empty()) secrets_.push_back(*secret);
    for (const auto& h : hosts_)
      if (!h.userinfo.empty()) secrets_.push_back(h.userinfo);
  }
  ~CurlHttpClient() override {
    if (curl_) curl_easy_cleanup(curl_);
  }
  CurlHttpClient(const CurlHttpClient&) = delete;
  CurlHttpClient& operator=(const CurlHttpClient&) = delete;

  HttpResponse send(const HttpRequest& request) override {
    std::string compressed;
    const std::string* body = &request.body;
    if (request.gzip && !request.body.empty()) {
      try {
        compressed = gzip_compress(request.body, config_.gzip_level);
      } catch (const GzipError& e) {
        return {0, {}, e.what(), hosts_[preferred_].display, {}, 0};
      }
      body = &compressed;
    }
    HttpResponse last;
    std::size_t sent = 0;
    for (const std::size_t i : host_order()) {
      if (aborted_) {
        last = {0, {}, "aborted: shutting down", hosts_[i].display, {}, 0};
        break;
      }
      HttpResponse r = perform(hosts_[i], request, *body);
      sent += r.bytes_sent;
      if (!host_failed(request, r)) {
        preferred_ = i;
        board_->answered(i);
        r.bytes_sent = sent;
        return r;
      }
      board_->failed(i, Clock::now() + config_.host_cooldown);
      if (hosts_.size() > 1 && !aborted_)
        log::warn("engine host failed: {}; skipping it for {} ms while another host answers",
                  r.status ? fmt::format("{}: HTTP {}", hosts_[i].display, r.status) : r.error,
                  config_.host_cooldown.count());
      last = std::move(r);
    }
    last.bytes_sent = sent;
    return last;
  }

  void abort() override { aborted_ = true; }

 private:
  // From the next host in turn (round_robin) or the last host that answered,
  // then the others in list order; hosts cooling down after a failure come
  // last (soonest available first), tried only when every other host failed
  // too. A request that fails on one host (a node killed mid-request) goes on
  // to the next within this send().
  std::vector<std::size_t> host_order() {
    return config_.round_robin ? board_->spread_order(Clock::now()) : board_->order(preferred_, Clock::now());
  }

  HttpResponse perform(const Host& host, const HttpRequest& request, const std::string& body) {
    HttpResponse r;
    r.host = host.display;
    if (!curl_) {
      r.error = "curl_easy_init failed";
      return r;
    }
    // reset keeps the connection cache (keep-alive), the DNS cache and TLS sessions.
    curl_easy_reset(curl_);
    Transfer t;
    t.max_body = config_.max_response_bytes;
    t.aborted = &aborted_;
    char error[CURL_ERROR_SIZE] = {};
    const std::string url = host.base + request.path;
    curl_easy_setopt(curl_, CURLOPT_URL, url.c_str());
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.connect_timeout.count()));
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, static_cast<long>(config_.request_timeout.count()));
    curl_easy_setopt(curl_, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(curl_, CURLOPT_ACCEPT_ENCODING, "");  // the engine may gzip its answers
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(curl_, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl_, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(curl_, CURLOPT_NOPROGRESS, 0L);

    curl_easy_setopt(curl_, CURLOPT_SSL_VERIFYPEER, config_.tls.verify ? 1L : 0L);
    curl_easy_setopt(curl_, CURLOPT_SSL_VERIFYHOST, config_.tls.verify ? 2L : 0L);
    if (!config_.tls.ca_file.empty()) curl_easy_setopt(curl_, CURLOPT_CAINFO, config_.tls.ca_file.c_str());
    if (!config_.tls.client_cert.empty()) curl_easy_setopt(curl_, CURLOPT_SSLCERT, config_.tls.client_cert.c_str());
    if (!config_.tls.client_key.empty()) curl_easy_setopt(curl_, CURLOPT_SSLKEY, config_.tls.client_key.c_str());
    if (!config_.auth.username.empty()) {
      curl_easy_setopt(curl_, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
      curl_easy_setopt(curl_, CURLOPT_USERNAME, config_.auth.username.c_str());
      curl_easy_setopt(curl_, CURLOPT_PASSWORD, config_.auth.password.c_str());
    }

    curl_slist* headers = nullptr;
    const bool has_body = !body.empty() || request.method == "POST" || request.method == "PUT";
    if (has_body) headers = curl_slist_append(headers, ("Content-Type: " + request.content_type).c_str());
    if (request.gzip && !request.body.empty()) headers = curl_slist_append(headers, "Content-Encoding: gzip");
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip before large bodies
    if (!config_.auth.api_key.empty())
      headers = curl_slist_append(headers, ("Authorization: ApiKey " + config_.auth.api_key).c_str());
    for (const auto& h : config_.headers) headers = curl_slist_append(headers, h.c_str());
    for (const auto& h : request.headers) headers = curl_slist_append(headers, h.c_str());
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);

    if (request.method == "HEAD") {
      curl_easy_setopt(curl_, CURLOPT_NOBODY, 1L);
    } else if (has_body) {
      curl_easy_setopt(curl_, CURLOPT_POST, 1L);
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
      if (request.method != "POST") curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    } else if (request.method != "GET") {
      curl_easy_setopt(curl_, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }

    const CURLcode rc = curl_easy_perform(curl_);
    curl_slist_free_all(headers);
    curl_off_t uploaded = 0;
    curl_easy_getinfo(curl_, CURLINFO_SIZE_UPLOAD_T, &uploaded);
    r.bytes_sent = static_cast<std::size_t>(uploaded);
    if (rc != CURLE_OK) {
      r.tls_failed = tls_failure(rc);
      if (t.too_large)
        r.error = fmt::format("{}: response larger than {} bytes", host.display, config_.max_response_bytes);
      else if (rc == CURLE_ABORTED_BY_CALLBACK)
        r.error = fmt::format("{}: aborted: shutting down", host.display);
      else
        r.error = scrub(fmt::format("{}: {}{}", host.display, r.tls_failed ? "TLS failed: " : "",
                                    error[0] ? error : curl_easy_strerror(rc)));
      return r;
    }
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &r.status);
    r.body = std::move(t.body);
    r.product = std::move(t.product);
    return r;
  }

  // libcurl's messages name hosts, not credentials; this is the belt to that pair of braces.
  std::string scrub(std::string text) const {
    for (const auto& s : secrets_) {
      for (auto at = text.find(s); at != std::string::npos; at = text.find(s, at + 3))
        text.replace(at, s.size(), "***");
    }
    return text;
  }

  HttpClientConfig config_;
  std::vector<Host> hosts_;
  std::vector<std::string> secrets_;
  std::shared_ptr<HostBoard> board_;
  std::size_t preferred_ = 0;
  CURL* curl_ = nullptr;
  std::atomic<bool> aborted_{false};
};

}  // namespace

std::unique_ptr<HttpClient> make_curl_client(const HttpClientConfig& config) {
  return std::make_unique<CurlHttpClient>(config);
}

}  // namespace salttap::http
