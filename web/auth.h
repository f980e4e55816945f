#pragma once
// The job browser's optional HTTP basic auth (config `ui: {username,
// password | password_file}`). The credentials are compared in constant
// time, so the answer's timing says nothing about how much of a guess was
// right. No username configured: every request is let in.

#include <string>
#include <string_view>

namespace salttap::web {

// Equal, in time that depends on the lengths only.
bool constant_time_equal(std::string_view a, std::string_view b);

class UiAuth {
 public:
  UiAuth() = default;  // open
  UiAuth(std::string username, std::string password);

  bool required() const { return !username_.empty(); }
  // `authorization`: the request's Authorization header ("Basic <base64>"), or empty.
  bool allows(std::string_view authorization) const;
  // The WWW-Authenticate header of a 401.
  static constexpr std::string_view kChallenge = R"(Basic realm="salttap", charset="UTF-8")";

 private:
  std::string username_, password_;
};

}  // namespace salttap::web
