#include "posix_util.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstring>
#include <random>

#include "cronwheel/status.hpp"

namespace cronwheel::executor {

absl::Status WriteFileAtomically(const std::filesystem::path& path, std::string_view data, mode_t mode) {
  const auto tmp = path.parent_path() / ("." + path.filename().string() + "." + RandomHex() + ".tmp");
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd.ok()) {
    const int err = errno;
    return cronwheel::ErrnoError(err, fmt::format("cannot create {}: {}", tmp.string(), ErrnoText(err)));
  }
  if (!WriteAll(fd.get(), data) || ::fsync(fd.get()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return cronwheel::ErrnoError(err, fmt::format("cannot write {}: {}", tmp.string(), ErrnoText(err)));
  }
  fd.Reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return cronwheel::ErrnoError(
        err, fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), ErrnoText(err)));
  }
  const Fd dir(::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.ok()) ::fsync(dir.get());
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.ok()) {
    const int err = errno;
    return cronwheel::ErrnoError(err, ErrnoText(err));
  }
  std::string out;
  char buf[64 * 1024];
  while (true) {
    const auto n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      return cronwheel::ErrnoError(err, ErrnoText(err));
    }
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

void MakePrivateDirs(const std::filesystem::path& dir, std::error_code& ec) {
  ec.clear();
  if (dir.empty() || std::filesystem::is_directory(dir, ec)) return;
  ec.clear();
  // The parents first (a path of a few levels: recursion is bounded by it).
  if (const auto parent = dir.parent_path(); !parent.empty() && parent != dir) {
    MakePrivateDirs(parent, ec);
    if (ec) return;
  }
  if (::mkdir(dir.c_str(), kPrivateDirMode) != 0) {
    if (errno == EEXIST && std::filesystem::is_directory(dir, ec)) return;  // made meanwhile by another
    ec = std::error_code(errno, std::generic_category());
    return;
  }
  if (::chmod(dir.c_str(), kPrivateDirMode) != 0) ec = std::error_code(errno, std::generic_category());
}

void MakePrivateDir(const std::filesystem::path& dir) {
  std::error_code ec;
  MakePrivateDirs(dir, ec);
  if (ec) throw std::filesystem::filesystem_error("cannot create the folder", dir, ec);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace);
}

std::string RandomHex() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}", rng());
}

}  // namespace cronwheel::executor
