#include "posix_util.hpp"

#include <fmt/format.h>

#include <cstring>
#include <random>

namespace cronwheel::executor {

std::string WriteFileAtomically(const std::filesystem::path& path, std::string_view data, mode_t mode) {
  const auto tmp = path.parent_path() / ("." + path.filename().string() + "." + RandomHex() + ".tmp");
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd.ok()) return fmt::format("cannot create {}: {}", tmp.string(), ErrnoText(errno));
  if (!WriteAll(fd.get(), data) || ::fsync(fd.get()) != 0) {
    const std::string err = ErrnoText(errno);
    ::unlink(tmp.c_str());
    return fmt::format("cannot write {}: {}", tmp.string(), err);
  }
  fd.Reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = ErrnoText(errno);
    ::unlink(tmp.c_str());
    return fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), err);
  }
  const Fd dir(::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.ok()) ::fsync(dir.get());
  return {};
}

bool ReadFile(const std::filesystem::path& path, std::string* out, std::string* error) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.ok()) {
    *error = ErrnoText(errno);
    return false;
  }
  out->clear();
  char buf[64 * 1024];
  while (true) {
    const auto n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = ErrnoText(errno);
      return false;
    }
    if (n == 0) return true;
    out->append(buf, static_cast<std::size_t>(n));
  }
}

void MakePrivateDir(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace);
}

std::string RandomHex() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}", rng());
}

}  // namespace cronwheel::executor
