#pragma once
// Test helpers: a directory removed with all it holds when the object goes
// (even where a test took its owner's permissions away), and a private
// temporary one.

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

namespace salttap::testing {

class OwnedDir {
 public:
  explicit OwnedDir(std::filesystem::path path) : path_(std::move(path)) {}
  ~OwnedDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  OwnedDir(const OwnedDir&) = delete;
  OwnedDir& operator=(const OwnedDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// <temp>/<prefix>-XXXXXX: the prefix says which test left it, should one be left.
class TempDir : public OwnedDir {
 public:
  explicit TempDir(std::string_view prefix = "salttap-test") : OwnedDir(make(prefix)) {}

 private:
  static std::filesystem::path make(std::string_view prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp");
    return tmpl;
  }
};

}  // namespace salttap::testing
