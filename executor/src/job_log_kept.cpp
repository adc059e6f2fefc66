// The copy of a fire's job log that goes with its callback, for the admin's archive of fire output
// (executor/src/job_log.hpp, "The copy for the callback"; docs/operations.md, "The fire output archive").
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "cronwheel/mutex.hpp"
#include "job_log.hpp"
#include "posix_util.hpp"

namespace cronwheel::executor {
namespace {

constexpr std::size_t kChunk = std::size_t{64} * 1024;

// Appends `n` bytes of `fd` from `offset` to `keep` (fewer if the file is shorter).
void KeepBytes(int fd, std::uint64_t offset, std::uint64_t n, HeadAndTail& keep) {
  std::array<char, kChunk> buf{};
  while (n > 0) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, n));
    const auto got = ::pread(fd, buf.data(), want, static_cast<off_t>(offset));
    if (got <= 0) return;
    keep.Append(std::string_view(buf.data(), static_cast<std::size_t>(got)));
    offset += static_cast<std::uint64_t>(got);
    n -= static_cast<std::uint64_t>(got);
  }
}

// The head and tail of an open log file within `cap`: only those bytes are read.
KeptText KeepFile(int fd, std::size_t cap) {
  HeadAndTail keep(cap);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return keep.Take();
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size <= keep.cap()) {
    KeepBytes(fd, 0, size, keep);
  } else {
    KeepBytes(fd, 0, keep.head_cap(), keep);
    keep.Skip(size - keep.head_cap() - keep.tail_cap());
    KeepBytes(fd, size - keep.tail_cap(), keep.tail_cap(), keep);
  }
  return keep.Take();
}

}  // namespace

std::optional<KeptText> JobLogFiles::Kept(std::int64_t log_date_ms, std::int64_t log_id) {
  if (settings_.callback_log_bytes == 0) return std::nullopt;
  const auto path = PathFor(log_date_ms, log_id);
  if (const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)); fd.ok())
    return KeepFile(fd.get(), settings_.callback_log_bytes);
  return KeepHeadAndTail(segments_.Read(UtcDay(log_date_ms), log_id).value_or(""),
                         settings_.callback_log_bytes);
}

std::optional<KeptText> JobLogFile::Kept() {
  cronwheel::MutexLock lock(mu_);
  if (!kept_) return std::nullopt;
  // With its own file, the file is the log (the lines before it was made, and a script's output since).
  if (fd_ >= 0) return KeepFile(fd_, kept_->cap());
  return kept_->Take();
}

}  // namespace cronwheel::executor
