// The three log formats: plain (time, level, message), journal (the <N>
// syslog priority journald reads, no time of our own, one entry per message)
// and json (one object per line, valid even for bytes that are not UTF-8);
// the journal detected only when JOURNAL_STREAM names the file stderr is
// really open on.

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <rapidjson/document.h>

#include "common/log.h"

namespace salttap::log {
namespace {

using namespace std::chrono_literals;

// 2026-11-30T19:25:35.529749Z
const std::chrono::system_clock::time_point kTime = std::chrono::system_clock::time_point{} + 1'796'066'735'529'749us;

rapidjson::Document parse_json(const std::string& line) {
  EXPECT_TRUE(line.ends_with("\n"));
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
  rapidjson::Document doc;
  doc.Parse(line.c_str());
  EXPECT_FALSE(doc.HasParseError()) << line;
  return doc;
}

TEST(LogFormat, PlainHasTimeLevelAndMessage) {
  EXPECT_EQ(format_line(Format::plain, Level::warn, kTime, "indexer: spool full"),
            "2026-11-30T19:25:35Z salttap WARN indexer: spool full\n");
}

TEST(LogFormat, JournalHasTheSyslogPriorityAndNoTime) {
  EXPECT_EQ(format_line(Format::journal, Level::debug, kTime, "m"), "<7>DEBUG m\n");
  EXPECT_EQ(format_line(Format::journal, Level::info, kTime, "run: stopped"), "<6>INFO run: stopped\n");
  EXPECT_EQ(format_line(Format::journal, Level::warn, kTime, "m"), "<4>WARN m\n");
  EXPECT_EQ(format_line(Format::journal, Level::error, kTime, "m"), "<3>ERROR m\n");
  EXPECT_EQ(format_line(Format::journal, Level::error, kTime, "two\nlines"), "<3>ERROR two\\nlines\n")
      << "journald would make two entries, the second without priority";
}

TEST(LogFormat, JsonIsOneObjectPerLine) {
  const auto doc = parse_json(format_line(Format::json, Level::warn, kTime, "indexer: spool \"full\"\nagain"));
  ASSERT_TRUE(doc.IsObject());
  EXPECT_STREQ(doc["time"].GetString(), "2026-11-30T19:25:35.529749Z");
  EXPECT_STREQ(doc["level"].GetString(), "warning");
  EXPECT_STREQ(doc["message"].GetString(), "indexer: spool \"full\"\nagain");
  ASSERT_TRUE(doc["fields"].IsObject());
  EXPECT_STREQ(doc["fields"]["program"].GetString(), "salttap");
  EXPECT_STREQ(doc["fields"]["component"].GetString(), "indexer");
  EXPECT_EQ(doc.MemberCount(), 4u);
}

TEST(LogFormat, JsonNamesAComponentOnlyWhenTheMessageStartsWithOne) {
  EXPECT_FALSE(
      parse_json(format_line(Format::json, Level::info, kTime, "no component here"))["fields"].HasMember("component"));
  EXPECT_FALSE(
      parse_json(format_line(Format::json, Level::info, kTime, "Not A Word: x"))["fields"].HasMember("component"));
  EXPECT_STREQ(parse_json(format_line(Format::json, Level::error, kTime, "check-config: bad"))["fields"]["component"]
                   .GetString(),
               "check-config");
}

TEST(LogFormat, JsonStaysValidForBytesThatAreNotUtf8) {
  const auto doc = parse_json(format_line(Format::json, Level::error, kTime, std::string("tap: bad \xff\xfe tag")));
  EXPECT_STREQ(doc["message"].GetString(), "tap: bad \xEF\xBF\xBD\xEF\xBF\xBD tag");
}

TEST(LogFormat, ParsesTheNamesTheCommandLineTakes) {
  EXPECT_EQ(parse_format("plain"), Format::plain);
  EXPECT_EQ(parse_format("journal"), Format::journal);
  EXPECT_EQ(parse_format("json"), Format::json);
  EXPECT_EQ(parse_format("auto"), std::nullopt);
  EXPECT_EQ(parse_format("JSON"), std::nullopt);
}

class LogFile : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = std::tmpfile();
    ASSERT_NE(file_, nullptr);
    struct stat st {};
    ASSERT_EQ(::fstat(::fileno(file_), &st), 0);
    dev_ino_ = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  }
  void TearDown() override {
    set_output(nullptr);
    set_format(Format::plain);
    std::fclose(file_);
  }
  std::string contents() {
    std::fflush(file_);
    std::rewind(file_);
    std::string text;
    char buf[512];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), file_)) > 0;) text.append(buf, n);
    return text;
  }
  std::FILE* file_ = nullptr;
  std::string dev_ino_;
};

TEST_F(LogFile, TheJournalIsDetectedOnlyWhenJournalStreamNamesThisFile) {
  const int fd = ::fileno(file_);
  EXPECT_EQ(detect_format(dev_ino_.c_str(), fd), Format::journal);
  EXPECT_EQ(detect_format(nullptr, fd), Format::plain);
  EXPECT_EQ(detect_format("", fd), Format::plain);
  EXPECT_EQ(detect_format("garbage", fd), Format::plain);
  EXPECT_EQ(detect_format((dev_ino_ + "x").c_str(), fd), Format::plain);
  std::FILE* other = std::tmpfile();
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(detect_format(dev_ino_.c_str(), ::fileno(other)), Format::plain)
      << "stderr redirected elsewhere since systemd set JOURNAL_STREAM";
  std::fclose(other);
}

TEST_F(LogFile, WritesInTheFormatSet) {
  set_output(file_);
  set_format(Format::json);
  info("run: {} documents", 3);
  set_format(Format::journal);
  warn("indexer: {}", "slow");
  const std::string text = contents();
  const auto newline = text.find('\n');
  ASSERT_NE(newline, std::string::npos);
  const auto doc = parse_json(text.substr(0, newline + 1));
  EXPECT_STREQ(doc["message"].GetString(), "run: 3 documents");
  EXPECT_EQ(text.substr(newline + 1), "<4>WARN indexer: slow\n");
}

}  // namespace
}  // namespace salttap::log
