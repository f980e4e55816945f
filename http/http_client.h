#pragma once
// HTTP to the engine: several hosts with failover, keep-alive, TLS (CA file,
// client certificate, verification on by default), basic auth or API key.
// Credentials come from the config, an env var or a file and are never
// logged. HttpClient is the seam the shipper, the setup code and the alert
// webhook talk to; make_curl_client (curl_http_client.h) makes the real one,
// tests use fakes.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "http/host_board.h"

namespace salttap::http {

struct HttpRequest {
  std::string method = "GET";  // GET, PUT, POST, DELETE, HEAD
  std::string path;            // "/_bulk?filter_path=...", starts with '/'
  std::string body;
  std::string content_type = "application/json";
  bool gzip = false;                 // compress the body (Content-Encoding: gzip)
  std::vector<std::string> headers;  // "Name: value", this request's own (e.g. Kibana's kbn-xsrf)
  // 502/503/504 send the request on to the next host; off: they are the
  // answer (a cluster-state query whose 503 means "no cluster-manager").
  bool failover_on_unavailable = true;
};

struct HttpResponse {
  long status = 0;  // 0: no response (connection refused, timeout, TLS error)
  std::string body;
  std::string error;           // transport error text when status == 0
  std::string host;            // the base URL that answered (or failed last)
  std::string product;         // X-Elastic-Product header, if any
  std::size_t bytes_sent = 0;  // request body bytes put on the wire, over every host tried (after gzip)
  // No response because TLS failed: the handshake, the server's certificate
  // (unknown CA, wrong host name, expired) or our own client certificate.
  bool tls_failed = false;
};

struct TlsConfig {
  bool verify = true;       // peer and host name
  std::string ca_file;      // PEM bundle; empty: the system's
  std::string client_cert;  // PEM
  std::string client_key;   // PEM
  bool operator==(const TlsConfig&) const = default;
};

struct AuthConfig {
  std::string username;  // basic auth
  std::string password;  // resolved secret (see service config: value, env or file)
  std::string api_key;   // "Authorization: ApiKey <api_key>" (base64 id:key, as Elastic issues it)
};

struct HttpClientConfig {
  std::vector<std::string> hosts = {"http://127.0.0.1:9200"};  // base URLs; "host:port" means http://
  TlsConfig tls;
  AuthConfig auth;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{60000};
  int gzip_level = 1;
  // A host that failed (no response, 502/503/504) is skipped for this long
  // while another host is up.
  std::chrono::milliseconds host_cooldown{5000};
  // A longer response is cut off and reported as no response (status 0): a
  // bulk response with filter_path is a few bytes per item.
  std::size_t max_response_bytes = 256u << 20;
  std::vector<std::string> headers;  // "Name: value", sent with every request (a webhook's own)
  // Spread requests over the healthy hosts, each request starting at the next
  // host (the shipper's bulk posts); off: stay with the host that answered
  // last (setup, searches, webhooks).
  bool round_robin = false;
  // Shared with the other clients of the same hosts (the shipper's workers):
  // cooldowns, the round-robin cursor and per-host counts. Must list the same
  // hosts; none: the client keeps its own.
  std::shared_ptr<HostBoard> board;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // Sends to a healthy host, failing over to the next on a transport error
  // or 502/503/504; returns the last answer when every host failed.
  [[nodiscard]] virtual HttpResponse send(const HttpRequest& request) = 0;
  // From any thread: the send() in progress (if any) and every later one
  // return at once with status 0. For a prompt shutdown; there is no undo.
  virtual void abort() {}
};

}  // namespace salttap::http
