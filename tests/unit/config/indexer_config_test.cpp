// The indexer's configuration: salttap's own `indexer:` section, and Salt's
// returner block (`elasticsearch:`) accepted as an operator already has it.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>

#include "config/config.h"
#include "config/resolve.h"

namespace salttap {
namespace {

using indexer::IndexerConfig;

class ConfigFile : public ::testing::Test {
 protected:
  config::Config load(const std::string& yaml) {
    std::ofstream(path_) << yaml;
    return config::load_config(path_.string());
  }
  std::string error_of(const std::string& yaml) {
    try {
      load(yaml);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  }
  // Each YAML is refused with an error that says the given part.
  void expect_errors(std::initializer_list<std::pair<std::string, std::string>> cases) {
    for (const auto& [yaml, part] : cases) EXPECT_NE(error_of(yaml).find(part), std::string::npos) << yaml;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_ =
      std::filesystem::temp_directory_path() / ("salttap-indexer-config-" + std::to_string(::getpid()) + ".yaml");
};

TEST_F(ConfigFile, NoIndexerSectionMeansNoIndexer) { EXPECT_FALSE(load("master_id: m\n").indexer.enabled); }

// The example from salt/returners/elasticsearch_return.py's docstring, unchanged.
TEST_F(ConfigFile, SaltsReturnerBlockIsAcceptedAsIs) {
  const config::Config c = load(R"(
elasticsearch:
  hosts:
    - "10.10.10.10:9200"
    - "10.10.10.11:9200"
  index_date: True
  number_of_shards: 5
  number_of_replicas: 1
  debug_returner_payload: True
  states_count: True
  states_order_output: True
  states_single_index: True
  functions_blacklist:
    - test.ping
    - saltutil.find_job
)");
  const IndexerConfig& ix = c.indexer;
  EXPECT_TRUE(ix.enabled);
  EXPECT_EQ(ix.http.hosts, (std::vector<std::string>{"10.10.10.10:9200", "10.10.10.11:9200"}));
  EXPECT_TRUE(ix.documents.layout.index_date);
  EXPECT_EQ(ix.templates.number_of_shards, 5);
  EXPECT_EQ(ix.templates.number_of_replicas, 1);
  EXPECT_TRUE(ix.documents.states);
  EXPECT_EQ(ix.documents.functions_blacklist, (std::vector<std::string>{"test.ping", "saltutil.find_job"}));
  // debug_returner_payload, states_count, states_order_output: accepted, each noted once.
  EXPECT_EQ(ix.notes.size(), 3u);
}

TEST_F(ConfigFile, ReturnerConnectionKeysMapToTlsAndAuth) {
  const config::Config c = load(R"(
elasticsearch:
  hosts: ["es:9200"]
  use_ssl: true
  verify_certs: false
  ca_certs: /etc/ssl/es.pem
  username: salt
  password: pw
  index_date: false
)");
  EXPECT_EQ(c.indexer.http.hosts, (std::vector<std::string>{"https://es:9200"}));
  EXPECT_FALSE(c.indexer.http.tls.verify);
  EXPECT_EQ(c.indexer.http.tls.ca_file, "/etc/ssl/es.pem");
  EXPECT_FALSE(c.indexer.documents.layout.index_date);
  IndexerConfig ix = c.indexer;
  config::resolve_secrets(ix);
  EXPECT_EQ(ix.http.auth.username, "salt");
  EXPECT_EQ(ix.http.auth.password, "pw");
}

TEST_F(ConfigFile, IndexerSectionRefinesTheReturnerBlock) {
  const config::Config c = load(R"(
elasticsearch: {hosts: ["a:9200"], number_of_shards: 3}
indexer:
  hosts: ["http://b:9200"]
  index_prefix: fleet
  retention_days: 14
  refresh_interval: 200ms
  events: {exclude: ["salt/auth"]}
  bulk: {max_docs: 500, in_flight: 4, gzip: false}
  spool: {dir: /tmp/sp, max_bytes: 1048576, segment_bytes: 65536, fsync: every_batch}
)");
  const IndexerConfig& ix = c.indexer;
  EXPECT_EQ(ix.http.hosts, (std::vector<std::string>{"http://b:9200"}));
  EXPECT_EQ(ix.templates.number_of_shards, 3);
  EXPECT_EQ(ix.documents.layout.prefix, "fleet");
  EXPECT_EQ(ix.templates.retention_days, 14);
  EXPECT_EQ(ix.templates.refresh_interval, "200ms");
  EXPECT_FALSE(ix.templates.jobs_refresh_interval.has_value());
  EXPECT_EQ(ix.documents.events_exclude, (std::vector<std::string>{"salt/auth"}));
  EXPECT_EQ(ix.shipper.batch.max_docs, 500u);
  EXPECT_EQ(ix.shipper.in_flight, 4u);
  EXPECT_FALSE(ix.shipper.gzip);
  EXPECT_EQ(ix.spool.dir, "/tmp/sp");
  EXPECT_EQ(ix.spool.fsync, indexer::FsyncPolicy::every_batch);
}

TEST_F(ConfigFile, SecretsComeFromEnvOrFileAndAreReadOnlyWhenTheIndexerStarts) {
  const config::Config c =
      load("indexer: {auth: {username: u, password_env: SALTTAP_TEST_PW}}\n");  // not set yet: fine
  IndexerConfig ix = c.indexer;
  ::unsetenv("SALTTAP_TEST_PW");
  try {
    config::resolve_secrets(ix);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("SALTTAP_TEST_PW is not set"), std::string::npos) << e.what();
  }
  ::setenv("SALTTAP_TEST_PW", "from-env", 1);
  config::resolve_secrets(ix);
  EXPECT_EQ(ix.http.auth.password, "from-env");

  const auto key_file = std::filesystem::temp_directory_path() / "salttap-test-api-key";
  std::ofstream(key_file) << "aWQ6a2V5\n";
  IndexerConfig k = load("indexer: {auth: {api_key_file: " + key_file.string() + "}}\n").indexer;
  config::resolve_secrets(k);
  EXPECT_EQ(k.http.auth.api_key, "aWQ6a2V5");  // trailing newline dropped
  std::filesystem::remove(key_file);
}

TEST_F(ConfigFile, WithoutAnIndexerSectionTheMastersReturnerBlockIsUsed) {
  tap::MasterBus master;
  master.config_path = "/etc/salt/master";
  master.elasticsearch_yaml = "hosts: ['10.0.0.9:9200']\nnumber_of_replicas: 2\n";
  const IndexerConfig ix = config::effective_indexer_config(load("master_id: m\n"), master);
  EXPECT_EQ(ix.http.hosts, (std::vector<std::string>{"10.0.0.9:9200"}));
  EXPECT_EQ(ix.templates.number_of_replicas, 2);
  EXPECT_NE(ix.source.find("/etc/salt/master"), std::string::npos);
  // salttap's own section wins over the master's block.
  EXPECT_EQ(config::effective_indexer_config(load("indexer: {hosts: ['http://own:9200']}\n"), master).http.hosts,
            (std::vector<std::string>{"http://own:9200"}));
  EXPECT_THROW(config::effective_indexer_config(load("master_id: m\n"), tap::MasterBus{}), ConfigError);
}

// Every command that correlates (run, backfill, watch --jobs) takes the
// master id and order_masters from here, so none can judge differently.
TEST_F(ConfigFile, CorrelatingCommandsTakeTheMasterIdAndOrderMastersFromTheMastersConfig) {
  tap::MasterBus master;
  master.id = "salt-01";
  master.order_masters = true;
  const config::Config from_master = config::correlating_config(load("alerts: {log: true}\n"), master);
  EXPECT_EQ(from_master.master_id, "salt-01");
  EXPECT_TRUE(from_master.correlator.order_masters);
  // salttap's own master_id wins; order_masters is the master's alone.
  const config::Config own = config::correlating_config(load("master_id: mine\n"), master);
  EXPECT_EQ(own.master_id, "mine");
  EXPECT_TRUE(own.correlator.order_masters);
  // Neither names one: the host's, as Salt names a master by default.
  const config::Config host = config::correlating_config(load("alerts: {log: true}\n"), tap::MasterBus{});
  EXPECT_TRUE(host.master_id.ends_with("_master") || host.master_id == "master") << host.master_id;
  EXPECT_FALSE(host.correlator.order_masters);
  // run_config is the same plus the engine.
  master.elasticsearch_yaml = "hosts: ['10.0.0.9:9200']\n";
  const config::Config run = config::run_config(load("alerts: {log: true}\n"), master);
  EXPECT_EQ(run.master_id, "salt-01");
  EXPECT_TRUE(run.correlator.order_masters);
  EXPECT_EQ(run.indexer.http.hosts, (std::vector<std::string>{"10.0.0.9:9200"}));
}

TEST_F(ConfigFile, AFlagNamesTheMasterConfigBeforeSalttapsConfigDoes) {
  const config::Config named = load("master_config: /srv/salt/master\n");
  std::string path = "/etc/salt/master";
  bool given = false;
  config::choose_master_config(named, path, given);
  EXPECT_EQ(path, "/srv/salt/master");
  EXPECT_TRUE(given);
  path = "/from/flag";
  config::choose_master_config(named, path, given);  // given by a flag: kept
  EXPECT_EQ(path, "/from/flag");
  std::string plain = "/etc/salt/master";
  bool plain_given = false;
  config::choose_master_config(load("alerts: {log: true}\n"), plain, plain_given);
  EXPECT_EQ(plain, "/etc/salt/master");
  EXPECT_FALSE(plain_given);
}

TEST_F(ConfigFile, TheJobBrowsersPasswordIsReadOnlyWhenAUsernameAsksForIt) {
  config::UiConfig ui;
  ui.password_file = "/nonexistent/salttap-ui-password";
  EXPECT_EQ(config::ui_password(ui), "");  // no username: an open browser, no file read
  ui.username = "admin";
  EXPECT_THROW((void)config::ui_password(ui), ConfigError);
  ui.password_file.clear();
  ui.password = "inline";
  EXPECT_EQ(config::ui_password(ui), "inline");
}

TEST_F(ConfigFile, MistakesAreNamed) {
  expect_errors({
      {"indexer: {hostz: [a]}\n", "unknown key 'hostz'"},
      {"indexer: {index_prefix: Salt}\n", "index_prefix"},
      {"indexer: {hosts: []}\n", "at least one host"},
      {"indexer: {spool: {fsync: sometimes}}\n", "every_batch, interval or never"},
      {"indexer: {bulk: {max_bytes: 209715200}}\n", "90 MiB"},
      {"indexer: {auth: {password: a, password_env: B}}\n", "give one of"},
      {"indexer: {auth: {username: u, api_key: k}}\n", "not both"},
      {"indexer: {tls: {client_cert: c}}\n", "go together"},
      {"indexer: {retention_days: 0}\n", "at least 1"},
      {"indexer: {refresh_interval: fast}\n", "not a time like"},
      {"indexer: {refresh_interval: 5}\n", "not a time like"},
      {"indexer: {jobs_refresh_interval: soon}\n", "jobs_refresh_interval: 'soon' is not a time"},
      {"elasticsearch: {number_of_shards: many}\n", "wrong type"},
  });
  EXPECT_EQ(load("indexer: {jobs_refresh_interval: 200ms}\n").indexer.templates.jobs_refresh_interval, "200ms");
  EXPECT_EQ(load("indexer: {jobs_refresh_interval: null}\n").indexer.templates.jobs_refresh_interval, "");
}

// Every file `run` keeps state in follows from one config, so a moved spool
// takes the checkpoint, the tap journal and the reconcile record with it.
TEST_F(ConfigFile, EveryStatePathFollowsTheSpoolUnlessNamed) {
  const config::Config c = load("indexer: {hosts: ['http://e:9200'], spool: {dir: /srv/st/spool}}\n");
  EXPECT_EQ(config::checkpoint_path(c), std::filesystem::path("/srv/st/correlator.checkpoint"));
  EXPECT_EQ(config::tap_journal_dir(c), std::filesystem::path("/srv/st/tap-journal"));
  EXPECT_EQ(config::reconcile_state_path(c), std::filesystem::path("/srv/st/spool/reconcile.state"));
  const config::Config named = load(
      "indexer: {hosts: ['http://e:9200'], spool: {dir: /srv/st/spool}}\n"
      "checkpoint: {path: /srv/cp}\n"
      "tap: {journal: {dir: /srv/j}}\n");
  EXPECT_EQ(config::checkpoint_path(named), std::filesystem::path("/srv/cp"));
  EXPECT_EQ(config::tap_journal_dir(named), std::filesystem::path("/srv/j"));
  EXPECT_EQ(config::reconcile_state_path(named), std::filesystem::path("/srv/st/spool/reconcile.state"));
}

// The `listener:` section: safe defaults, every key, each value out of range an error naming the key.
TEST_F(ConfigFile, ListenerSafeDefaults) {
  const ListenerLimits l = load("master_id: m\n").listener;
  EXPECT_EQ(l.header_timeout, std::chrono::seconds(10));
  EXPECT_EQ(l.idle_timeout, std::chrono::seconds(30));
  EXPECT_EQ(l.request_timeout, std::chrono::seconds(60));
  EXPECT_EQ(l.max_connections, 64u);
  EXPECT_EQ(l.max_header_bytes, 16384u);
  EXPECT_EQ(l.max_target_bytes, 8192u);
  EXPECT_TRUE(l.allowed_hosts.empty());
}

TEST_F(ConfigFile, ListenerReadsEveryKey) {
  const ListenerLimits l = load(
                               "listener: {header_timeout_ms: 500, idle_timeout_ms: 700, request_timeout_ms: 900, "
                               "max_connections: 10, max_header_bytes: 4096, max_target_bytes: 1024, "
                               "allowed_hosts: [salt.example, ui.example]}\n")
                               .listener;
  EXPECT_EQ(l.header_timeout, std::chrono::milliseconds(500));
  EXPECT_EQ(l.idle_timeout, std::chrono::milliseconds(700));
  EXPECT_EQ(l.request_timeout, std::chrono::milliseconds(900));
  EXPECT_EQ(l.max_connections, 10u);
  EXPECT_EQ(l.max_header_bytes, 4096u);
  EXPECT_EQ(l.max_target_bytes, 1024u);
  EXPECT_EQ(l.allowed_hosts, (std::vector<std::string>{"salt.example", "ui.example"}));
}

TEST_F(ConfigFile, ListenerOutOfRangeIsAnErrorNamingTheKey) {
  expect_errors({
      {"listener: {header_timeout_ms: 0}\n", "listener.header_timeout_ms"},
      {"listener: {max_connections: 0}\n", "listener.max_connections"},
      {"listener: {max_header_bytes: 100}\n", "listener.max_header_bytes"},
      {"listener: {max_target_bytes: 20000}\n", "listener.max_target_bytes"},
      {"listener: {allowed_hosts: [\"a.example:80\"]}\n", "listener.allowed_hosts"},
      {"listener: {max_conections: 3}\n", "max_conections"},
  });
}

}  // namespace
}  // namespace salttap
