#include "web/auth.h"

#include <cctype>

#include "common/text.h"

namespace salttap::web {

bool constant_time_equal(std::string_view a, std::string_view b) {
  // Every byte of the longer one is looked at, whatever differs first.
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

UiAuth::UiAuth(std::string username, std::string password)
    : username_(std::move(username)), password_(std::move(password)) {}

bool UiAuth::allows(std::string_view authorization) const {
  if (!required()) return true;
  // The scheme is case-insensitive (RFC 7617).
  constexpr std::string_view kScheme = "basic ";
  if (authorization.size() <= kScheme.size()) return false;
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  const std::string pair = base64_decode(token);
  const auto colon = pair.find(':');
  if (colon == std::string::npos) return false;
  // Both compared, always: a wrong user name takes as long as a wrong password.
  const bool user_ok = constant_time_equal(std::string_view(pair).substr(0, colon), username_);
  const bool password_ok = constant_time_equal(std::string_view(pair).substr(colon + 1), password_);
  return user_ok && password_ok;
}

}  // namespace salttap::web
