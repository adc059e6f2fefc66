#include "posix_util.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

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

bool RaiseListenBacklog(int port, int backlog) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (const std::exception&) {
      continue;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    int accepting = 0;
    socklen_t len = sizeof(accepting);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || accepting == 0) continue;
    sockaddr_storage addr{};
    socklen_t addr_len = sizeof(addr);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &addr_len) != 0) continue;
    int bound = -1;
    if (addr.ss_family == AF_INET) bound = ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6) bound = ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
    if (bound == port) return ::listen(fd, backlog) == 0;
  }
  return false;
}

}  // namespace cronwheel::executor
