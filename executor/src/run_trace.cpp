#include "run_trace.hpp"

#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <system_error>

#include "cronwheel/mutex.hpp"
#include "posix_util.hpp"

namespace cronwheel::executor {

RunTrace::RunTrace(const std::filesystem::path& path) {
  if (path.has_parent_path()) {
    std::error_code ec;
    MakePrivateDirs(path.parent_path(), ec);
  }
  // The executor user's only, like its job logs (posix_util.hpp).
  Fd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, kPrivateFileMode));
  if (fd.ok()) {
    file_ = ::fdopen(fd.get(), "a");
    if (file_ != nullptr) fd.Release();
  }
  if (file_ == nullptr) {
    throw std::runtime_error("cannot open the run trace file " + path.string() + ": " +
                             std::generic_category().message(errno));
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
}

RunTrace::~RunTrace() {
  if (file_ != nullptr) std::fclose(file_);
}

void RunTrace::Record(std::int64_t log_id, int job_id, std::int64_t received_ms, std::int64_t started_ms) {
  cronwheel::MutexLock lock(mu_);
  std::fprintf(file_, "%lld %d %lld %lld\n", static_cast<long long>(log_id), job_id,
               static_cast<long long>(received_ms), static_cast<long long>(started_ms));
}

void RunTrace::Flush() {
  cronwheel::MutexLock lock(mu_);
  std::fflush(file_);
}

}  // namespace cronwheel::executor
