// Finding the bus from the master's own config, as Salt resolves it.

#include <gtest/gtest.h>

#include <fstream>

#include "tap/master_config.h"
#include "tests/support/fake_publisher.h"

namespace salttap::tap {
namespace {

using salttap::testing::TempDir;

// A master's config directory: `master` and the files it includes.
class MasterConfDir {
 public:
  // Writes `name` (a path under the directory) with `text`.
  void write(const std::filesystem::path& name, const std::string& text) const {
    const auto p = dir_.path() / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  MasterBus load() const { return load_master_config((dir_.path() / "master").string()); }

 private:
  TempDir dir_;
};

TEST(MasterConfig, NoFileMeansSaltDefaults) {
  const MasterBus bus = load_master_config("/nonexistent/salt/master");
  EXPECT_EQ(bus.pub().describe(), "unix:/var/run/salt/master/master_event_pub.ipc");
  EXPECT_EQ(bus.pull().describe(), "unix:/var/run/salt/master/master_event_pull.ipc");
  EXPECT_THROW(load_master_config("/nonexistent/salt/master", /*required=*/true), ConfigError);
}

TEST(MasterConfig, TheJobCacheSettingsForBackfill) {
  const MasterBus defaults = load_master_config("/nonexistent/salt/master");
  EXPECT_EQ(defaults.cachedir, "/var/cache/salt/master");
  EXPECT_EQ(defaults.hash_type, "sha256");
  EXPECT_TRUE(defaults.job_cache);
  EXPECT_EQ(defaults.master_job_cache, "local_cache");
  EXPECT_EQ(defaults.ext_job_cache, "");
  MasterConfDir dir;
  dir.write("master",
            "root_dir: /r\ncachedir: /cache\nhash_type: md5\njob_cache: False\nmaster_job_cache: redis\n"
            "ext_job_cache: mysql\n");
  const MasterBus bus = dir.load();
  EXPECT_EQ(bus.cachedir, "/r/cache");
  EXPECT_EQ(bus.hash_type, "md5");
  EXPECT_FALSE(bus.job_cache);
  EXPECT_EQ(bus.master_job_cache, "redis");
  EXPECT_EQ(bus.ext_job_cache, "mysql");
}

TEST(MasterConfig, AMasterOfMasters) {
  EXPECT_FALSE(load_master_config("/nonexistent/salt/master").order_masters);
  MasterConfDir dir;
  dir.write("master", "order_masters: True\n");
  EXPECT_TRUE(dir.load().order_masters);
}

TEST(MasterConfig, RootDirIsPrependedLikeSaltDoes) {
  EXPECT_EQ(prepend_root_dir("/srv/salt-root", "/var/run/salt/master"), "/srv/salt-root/var/run/salt/master");
  EXPECT_EQ(prepend_root_dir("/srv/salt-root/", "/srv/salt-root/sock"), "/srv/salt-root/sock");
  EXPECT_EQ(prepend_root_dir("/", "/var/run/salt/master"), "/var/run/salt/master");
  MasterConfDir dir;
  dir.write("master", "root_dir: /tmp/r\n");
  EXPECT_EQ(dir.load().sock_dir, "/tmp/r/var/run/salt/master");
}

TEST(MasterConfigTest, MasterDFilesOverrideTheMainFile) {
  MasterConfDir dir;
  dir.write("master", "sock_dir: /a\nuser: salt\n");
  dir.write("master.d/10-sock.conf", "sock_dir: /b\n");
  dir.write("master.d/20-sock.conf", "sock_dir: /c\n");
  dir.write("master.d/ignored.txt", "sock_dir: /d\n");
  const MasterBus bus = dir.load();
  EXPECT_EQ(bus.sock_dir, "/c");
  EXPECT_EQ(bus.user, "salt");
}

TEST(MasterConfigTest, TheReturnerBlockFromMasterDIsKeptForTheIndexer) {
  MasterConfDir dir;
  dir.write("master", "user: salt\n");
  dir.write("master.d/es.conf", "elasticsearch:\n  hosts: ['10.0.0.1:9200']\n  index_date: true\n");
  const MasterBus bus = dir.load();
  EXPECT_NE(bus.elasticsearch_yaml.find("10.0.0.1:9200"), std::string::npos) << bus.elasticsearch_yaml;
  EXPECT_NE(bus.elasticsearch_yaml.find("index_date: true"), std::string::npos);
  dir.write("master.d/es.conf", "");
  EXPECT_EQ(dir.load().elasticsearch_yaml, "");
}

TEST(MasterConfigTest, IncludeAndCustomDefaultInclude) {
  MasterConfDir dir;
  dir.write("master", "default_include: conf.d/*.yaml\ninclude: extra.conf\nsock_dir: /a\n");
  dir.write("conf.d/x.yaml", "sock_dir: /b\n");
  dir.write("extra.conf", "tcp_master_pub_port: 5512\n");
  const MasterBus bus = dir.load();
  EXPECT_EQ(bus.sock_dir, "/b");
  EXPECT_EQ(bus.tcp_pub_port, 5512);
}

TEST(MasterConfigTest, IpcModeTcpUsesTheTcpPorts) {
  MasterConfDir dir;
  dir.write("master", "ipc_mode: tcp\ntcp_master_pub_port: 6512\ntcp_master_pull_port: 6513\n");
  const MasterBus bus = dir.load();
  EXPECT_EQ(bus.pub().describe(), "tcp:127.0.0.1:6512");
  EXPECT_EQ(bus.pull().describe(), "tcp:127.0.0.1:6513");
}

TEST(MasterConfigTest, ALongSockDirMovesUnderCachedir) {
  MasterConfDir dir;
  dir.write("master", "cachedir: /c\nsock_dir: /a/very/long/socket/directory/path\n");
  EXPECT_EQ(dir.load().sock_dir, "/c/.salt-unix");
}

TEST(MasterConfigTest, BadYamlIsAClearError) {
  MasterConfDir dir;
  dir.write("master", "sock_dir: [unclosed\n");
  try {
    dir.load();
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("master"), std::string::npos);
  }
  dir.write("master", "tcp_master_pub_port: not-a-port\n");
  EXPECT_THROW(dir.load(), ConfigError);
}

}  // namespace
}  // namespace salttap::tap
