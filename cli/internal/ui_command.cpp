#include "cli/internal/ui_command.h"

#include <CLI/CLI.hpp>
#include <memory>
#include "cli/internal/engine_flags.h"

#include <chrono>
#include <thread>

#include "common/log.h"
#include "common/metrics_server.h"
#include "common/version.h"
#include "config/resolve.h"
#include "daemon/signals.h"
#include "tap/master_config.h"
#include "web/job_browser.h"

namespace salttap::cli {

int run_ui(const UiOptions& options) {
  daemon::install_stop_signals();
  const std::string listen = options.listen.empty() ? options.config.ui.listen : options.listen;
  const indexer::IndexerConfig ix = config::effective_indexer_config(
      options.config, tap::load_master_config(options.master_config, options.master_config_given));
  const SystemClock clock;
  const auto service = web::make_ui_service(
      ix.http, ix.documents.layout, web::UiAuth(options.config.ui.username, config::ui_password(options.config.ui)),
      clock, true);
  if (!web::loopback_listen(listen))
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
  while (!daemon::stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  log::info("ui: stopped");
  return 0;
}

Command add_ui_command(CLI::App& app, std::string& config_path) {
  struct Flags {
    std::string listen;
    EngineFlags engine;
  };
  auto f = std::make_shared<Flags>();
  auto* cmd = app.add_subcommand(
      "ui", "The job browser: jobs, a job's minions, minions, alerts, from Elasticsearch / OpenSearch (docs/ui.md)");
  cmd->add_option("--listen", f->listen, "HOST:PORT to serve /ui/ on (default: ui.listen, 127.0.0.1:9109)");
  add_engine_flags(*cmd, config_path, f->engine,
                   "salttap config file (YAML): its indexer: section (else the master config's elasticsearch: "
                   "block) and ui: section");
  return {cmd, [f](Invocation& call) {
            UiOptions options{f->listen, call.config(), f->engine.master_config, f->engine.master_config_given};
            config::choose_master_config(options.config, options.master_config, options.master_config_given);
            return run_ui(options);
          }};
}

}  // namespace salttap::cli
