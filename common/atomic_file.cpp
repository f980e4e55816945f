#include "common/atomic_file.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <span>

#include <fmt/format.h>

#include "common/errno_text.h"

namespace salttap {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kReadChunk = std::size_t{64} * 1024;

FileError failure(int error, std::string_view step, const fs::path& path) { return FileError{error, step, path}; }

}  // namespace

std::string FileError::text() const { return fmt::format("{} {}: {}", step, path.string(), errno_text(error)); }

AtomicFile::AtomicFile(fs::path path, StateFilesystem& fs, AtomicFileOptions options)
    : path_(std::move(path)), temp_(path_.string() + ".tmp"), fs_(fs), options_(options) {}

Result<void, FileError> AtomicFile::write_temp(std::string_view bytes) {
  int fd = -1;
  if (const int e = fs_.open(temp_, O_WRONLY | O_CREAT | O_TRUNC, fd, options_.mode); e != 0)
    return failure(e, "open", temp_);
  std::span<const char> rest(bytes.data(), bytes.size());
  int error = 0;
  std::string_view step;
  while (!rest.empty()) {
    std::size_t written = 0;
    error = fs_.write(fd, rest, written);
    if (error == 0 && written == 0) error = EIO;  // a regular file never does this; do not spin on it
    if (error != 0) {
      step = "write";
      break;
    }
    rest = rest.subspan(std::min(written, rest.size()));
  }
  if (error == 0 && options_.sync && (error = fs_.sync_data(fd)) != 0) step = "fdatasync";
  // A close that fails may have lost data written back late (NFS): the file is not trusted.
  if (const int e = fs_.close(fd); e != 0 && error == 0) {
    error = e;
    step = "close";
  }
  if (error != 0) return failure(error, step, temp_);
  return success();
}

Result<void, FileError> AtomicFile::replace(std::string_view bytes) {
  auto written = write_temp(bytes);
  if (written) {
    if (const int e = fs_.rename(temp_, path_); e != 0) written = failure(e, "rename", temp_);
  }
  if (!written) {
    fs_.remove(temp_);  // best effort: the next replace() truncates it anyway
    return written;
  }
  if (!options_.sync) return success();
  // The rename survives a power cut only once the directory is synced.
  const fs::path dir = path_.parent_path().empty() ? fs::path(".") : path_.parent_path();
  int fd = -1;
  if (const int e = fs_.open(dir, O_RDONLY | O_DIRECTORY, fd); e != 0) return failure(e, "fsync (directory)", dir);
  const int e = fs_.sync(fd);
  fs_.close(fd);
  if (e != 0) return failure(e, "fsync (directory)", dir);
  return success();
}

Result<std::string, FileError> AtomicFile::read(std::size_t max_bytes) const {
  int fd = -1;
  if (const int e = fs_.open(path_, O_RDONLY, fd); e != 0) return failure(e, "open", path_);
  std::string out;
  int error = 0;
  for (;;) {
    // One byte past the limit is asked for: a file that has it is too large.
    const std::size_t room = max_bytes - out.size();  // out.size() <= max_bytes here
    const std::size_t want = room >= kReadChunk ? kReadChunk : room + 1;
    const std::size_t at = out.size();
    out.resize(at + want);
    std::size_t n = 0;
    error = fs_.read_at(fd, at, std::span(reinterpret_cast<unsigned char*>(out.data()) + at, want), n);
    out.resize(at + (error == 0 ? n : 0));
    if (error != 0 || n == 0) break;
    if (out.size() > max_bytes) {
      error = EFBIG;
      break;
    }
  }
  fs_.close(fd);
  if (error != 0) return failure(error, "read", path_);
  return out;
}

bool AtomicFile::remove_leftover_temp() { return fs_.remove(temp_) == 0; }

}  // namespace salttap
