#pragma once
// Small POSIX helpers shared by the executor's sources. Internal.

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace cronwheel::executor {

// Owns a file descriptor; closes it on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(o.Release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = o.Release();
    }
    return *this;
  }
  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool ok() const { return fd_ >= 0; }
  int Release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// strerror(err), thread-safe.
inline std::string ErrnoText(int err) {
  return std::generic_category().message(err);
}

// write() until all of `data` is written; false (errno set) on error.
inline bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const auto n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Writes `data` to `path` atomically and durably: a temporary file in the same directory, fsync, rename,
// fsync of the directory. OK, or an error (cronwheel::ErrnoError: the code follows errno) naming the step and
// the file, e.g.
//   "cannot create /spool/.callback-1.json.0123456789abcdef.tmp: Permission denied".
absl::Status WriteFileAtomically(const std::filesystem::path& path, std::string_view data, mode_t mode);

// The whole file, or an error (cronwheel::ErrnoError) whose message is the system's text alone ("No such file
// or directory", code NotFound): the caller names the file.
absl::StatusOr<std::string> ReadFile(const std::filesystem::path& path);

// The modes of what the executor writes (issue 21: job logs were world-readable): its user's only, whatever
// the umask (a umask can only take bits away from these).
inline constexpr mode_t kPrivateFileMode = 0600;
inline constexpr mode_t kPrivateDirMode = 0700;

// Creates `dir` and each missing parent with mode 0700 (exactly: chmod after mkdir, so a umask cannot widen
// or narrow it); folders that exist keep their mode. `ec` is set on failure.
void MakePrivateDirs(const std::filesystem::path& dir, std::error_code& ec);
// MakePrivateDirs, then sets `dir` itself to 0700 even if it existed; throws
// std::filesystem::filesystem_error on failure.
void MakePrivateDir(const std::filesystem::path& dir);

// 16 random hex characters (std::random_device).
std::string RandomHex();

}  // namespace cronwheel::executor
