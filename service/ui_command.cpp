#include "service/ui_command.h"

#include <chrono>
#include <fstream>
#include <thread>

#include "common/log.h"
#include "common/metrics_server.h"
#include "common/version.h"
#include "indexer/curl_http_client.h"
#include "service/run_command.h"
#include "service/signals.h"
#include "tap/master_config.h"

namespace salttap::service {

UiAuth ui_auth(const UiConfig& config) {
  if (config.username.empty()) return {};
  std::string password = config.password;
  if (!config.password_file.empty()) {
    std::ifstream in(config.password_file);
    if (!in) throw ConfigError("ui.password_file: cannot read " + config.password_file.string());
    std::getline(in, password);
    if (!password.empty() && password.back() == '\r') password.pop_back();
    if (password.empty()) throw ConfigError("ui.password_file: " + config.password_file.string() + " is empty");
  }
  return {config.username, std::move(password)};
}

bool loopback_listen(const std::string& listen) {
  const std::string host = listen.substr(0, listen.rfind(':'));
  return host == "localhost" || host.starts_with("127.") || host == "[::1]" || host == "::1";
}

std::unique_ptr<UiService> make_ui_service(const indexer::IndexerConfig& indexer, const UiConfig& ui,
                                           const Clock& clock, bool root_redirect) {
  const indexer::HttpClientConfig http = indexer.http;
  return std::make_unique<UiService>([http] { return indexer::make_curl_client(http); }, indexer.documents.layout,
                                     ui_auth(ui), clock, root_redirect);
}

int run_ui(const UiOptions& options) {
  install_stop_signals();
  const std::string listen = options.listen.empty() ? options.config.ui.listen : options.listen;
  const indexer::IndexerConfig ix = effective_indexer_config(
      options.config, tap::load_master_config(options.master_config, options.master_config_given));
  const SystemClock clock;
  const auto service = make_ui_service(ix, options.config.ui, clock, true);
  if (!loopback_listen(listen))
    log::warn("ui: listening on {}, beyond this host{}", listen,
              options.config.ui.username.empty() ? ", without authentication (set ui.username and ui.password_file)"
                                                 : "; basic auth without TLS: put it behind a TLS proxy");
  Metrics metrics;
  const auto publish = [&] {
    publish_build_info(metrics);
    service->metrics().publish(metrics);
  };
  publish();
  service->publish_each_answer(metrics);
  const MetricsServer server(
      listen, metrics, [] { return true; }, service->handler());
  log::info("ui: the job browser is at http://{}/ui/ (engine {})",
            listen.substr(0, listen.rfind(':')) + ":" + std::to_string(server.port()), ix.source);
  while (!stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  log::info("ui: stopped");
  return 0;
}

}  // namespace salttap::service
