#pragma once
// An optional record of every /run (and /trigger) the executor receives: one line per request,
//   <logId> <jobId> <received epoch ms>
// appended to a file through a large buffer (flushed when full and when the trace is destroyed). For
// diagnosing lateness and for the fire-lag benchmark, which measures from the scheduled instant to this
// moment. Off unless a path is configured (setting run_trace_file).
//
// Thread-safety: Record() may be called from any thread.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>

namespace cronwheel::executor {

class RunTrace {
 public:
  // Opens `path` for appending; throws std::runtime_error if it cannot.
  explicit RunTrace(const std::filesystem::path& path);
  ~RunTrace();
  RunTrace(const RunTrace&) = delete;
  RunTrace& operator=(const RunTrace&) = delete;

  void Record(std::int64_t log_id, int job_id, std::int64_t received_ms);
  void Flush();

 private:
  std::mutex mu_;
  std::FILE* file_ = nullptr;
};

}  // namespace cronwheel::executor
