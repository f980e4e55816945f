// The `listener:` section: its defaults, every key read, and every value out
// of range a clear error naming the key.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/config_error.h"
#include "config/config.h"

namespace salttap {
namespace {

class ListenerSection : public ::testing::Test {
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
  void TearDown() override { std::filesystem::remove(path_); }
  std::filesystem::path path_ = std::filesystem::temp_directory_path() / "salttap-listener-config-test.yaml";
};

TEST_F(ListenerSection, SafeDefaults) {
  const ListenerLimits l = load("master_id: m\n").listener;
  EXPECT_EQ(l.header_timeout, std::chrono::seconds(10));
  EXPECT_EQ(l.idle_timeout, std::chrono::seconds(30));
  EXPECT_EQ(l.request_timeout, std::chrono::seconds(60));
  EXPECT_EQ(l.max_connections, 64u);
  EXPECT_EQ(l.max_header_bytes, 16384u);
  EXPECT_EQ(l.max_target_bytes, 8192u);
  EXPECT_TRUE(l.allowed_hosts.empty());
}

TEST_F(ListenerSection, ReadsEveryKey) {
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

TEST_F(ListenerSection, OutOfRangeIsAnErrorNamingTheKey) {
  EXPECT_NE(error_of("listener: {header_timeout_ms: 0}\n").find("listener.header_timeout_ms"), std::string::npos);
  EXPECT_NE(error_of("listener: {max_connections: 0}\n").find("listener.max_connections"), std::string::npos);
  EXPECT_NE(error_of("listener: {max_header_bytes: 100}\n").find("listener.max_header_bytes"), std::string::npos);
  EXPECT_NE(error_of("listener: {max_target_bytes: 20000}\n").find("listener.max_target_bytes"), std::string::npos);
  EXPECT_NE(error_of("listener: {allowed_hosts: [\"a.example:80\"]}\n").find("listener.allowed_hosts"),
            std::string::npos);
  EXPECT_NE(error_of("listener: {max_conections: 3}\n").find("max_conections"), std::string::npos);
}

}  // namespace
}  // namespace salttap
