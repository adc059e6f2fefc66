#pragma once
// An optional record of every /run (and /trigger) the executor receives: one line per request,
//   <logId> <jobId> <received epoch ms> <started epoch ms>
// written when a worker starts the fire, or when the fire ends without starting (refused at /run, a
// redelivery of a fire already run, killed or replaced while queued) with 0 as its start. Appended to a
// file through a large buffer (flushed when full and when the trace is destroyed). For diagnosing lateness
// and for the benchmarks, which measure from the scheduled instant to each of the two moments. Off unless
// a path is configured (setting run_trace_file). A request whose body is not a valid trigger has no line.
//
// Thread-safety: Record() may be called from any thread.

#include <cstdint>
#include <cstdio>
#include <filesystem>

#include "cronwheel/mutex.hpp"

namespace cronwheel::executor {

class RunTrace {
 public:
  // Opens `path` for appending; throws std::runtime_error if it cannot.
  explicit RunTrace(const std::filesystem::path& path);
  ~RunTrace();
  RunTrace(const RunTrace&) = delete;
  RunTrace& operator=(const RunTrace&) = delete;

  void Record(std::int64_t log_id, int job_id, std::int64_t received_ms, std::int64_t started_ms);
  void Flush();

 private:
  cronwheel::Mutex mu_;
  std::FILE* file_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace cronwheel::executor
