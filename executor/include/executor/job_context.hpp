#pragma once
// What a job handler sees of one fire: the trigger's parameters, a log sink writing to the fire's job log,
// a stop token, the executor's clock, and the result it reports.
//
// A handler is a plain function, registered by name on an Executor (executor.hpp):
//   executor.Register("myJob", [](JobContext& ctx) {
//     ctx.Log("param {} shard {}/{}", ctx.param(), ctx.shard_index(), ctx.shard_total());
//     if (!ctx.SleepFor(std::chrono::seconds(5))) return;  // stopped (timeout, kill, cover early)
//     ctx.Fail("no data");                                  // or ctx.Succeed("done"); or just return
//   });
// Result rules (docs/xxl-job-protocol.md §9, with C++ in place of Java's handler contract):
//  * returning without setting a result reports handle code 200 (XXL-JOB reports "job handle result lost."
//    for a forgotten result; cronwheel treats a normal return as success);
//  * an exception escaping the handler reports 500 with its what();
//  * Succeed()/Fail()/SetResult() set the result; the last call wins;
//  * handle messages longer than 50,000 characters are cut there and end in "...", as XXL-JOB does.
// Stopping is cooperative: on a timeout (handle code 502 "job execute timeout"), a /kill, a COVER_EARLY
// trigger or executor shutdown the stop token is requested, the fire has already been reported to the
// admin, and whatever the handler sets afterwards is discarded. A handler that ignores the token keeps
// its job thread busy until it returns (C++ code cannot be interrupted safely); use SleepFor() or
// stop_token() in loops.
//
// Thread-safety: one JobContext belongs to one running fire; its handler may call Log() from several
// threads (the sink serialises writes). Lifetime: valid only during the handler call.

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "ringwheel/clock.hpp"

namespace cronwheel::executor {

// Where a fire's log lines go. The executor's implementation appends timestamped lines to the day's log
// segments under <log dir>/<yyyy-mm-dd>/, or to the fire's own file <logId>.log there once Path() was
// asked for (docs/operations.md, "Executor job logs"). Implementations are thread-safe.
class JobLogSink {
 public:
  virtual ~JobLogSink() = default;
  // Appends `text` as one log entry (a trailing newline is added when missing).
  virtual void Write(std::string_view text) = 0;
  // A file of the fire's own that the entries go to from now on (script jobs append their raw stdout and
  // stderr here); empty if none can be made.
  [[nodiscard]] virtual std::filesystem::path Path() const = 0;

 protected:
  JobLogSink() = default;
  JobLogSink(const JobLogSink&) = default;
  JobLogSink& operator=(const JobLogSink&) = default;
};

// A handle code and message, as sent in the callback (handleCode, handleMsg).
struct JobResult {
  int code = 200;
  std::string msg;
};

// The fire as the admin triggered it (docs/xxl-job-protocol.md §2 TriggerParam).
struct FireInfo {
  int job_id = 0;                     // jobId
  std::int64_t log_id = 0;            // logId
  std::int64_t log_date_time_ms = 0;  // logDateTime: epoch ms of the fire
  std::string param;                  // executorParams
  int shard_index = 0;                // broadcastIndex
  int shard_total = 0;                // broadcastTotal (0 or 1 = not sharded)
  int timeout_s = 0;                  // executorTimeout: seconds, 0 = none
};

class JobContext final {
 public:
  JobContext(FireInfo info, JobLogSink& log, std::stop_token stop, ringwheel::Clock& clock)
      : info_(std::move(info)), log_(&log), stop_(std::move(stop)), clock_(&clock) {}

  [[nodiscard]] int job_id() const { return info_.job_id; }
  [[nodiscard]] std::int64_t log_id() const { return info_.log_id; }
  [[nodiscard]] std::int64_t log_date_time_ms() const { return info_.log_date_time_ms; }
  [[nodiscard]] const std::string& param() const { return info_.param; }
  [[nodiscard]] int shard_index() const { return info_.shard_index; }
  [[nodiscard]] int shard_total() const { return info_.shard_total; }
  [[nodiscard]] const FireInfo& fire() const { return info_; }

  // Requested when the fire must stop (timeout, kill, cover early, shutdown).
  [[nodiscard]] std::stop_token stop_token() const { return stop_; }
  [[nodiscard]] bool stop_requested() const { return stop_.stop_requested(); }
  // The executor's clock. Handlers that wait should use SleepFor(), never std::this_thread::sleep_for.
  [[nodiscard]] ringwheel::Clock& clock() const { return *clock_; }
  // Waits `d` on the executor's clock. Returns true when the time passed, false when stopped first.
  bool SleepFor(std::chrono::nanoseconds d) { return clock_->WaitFor(d, stop_); }

  // Appends a line to the fire's job log. The first form writes `text` as is (no formatting).
  void Log(std::string_view text) { log_->Write(text); }
  template <class... Args>
  requires(sizeof...(Args) > 0) void Log(fmt::format_string<Args...> format, Args&&... args) {
    log_->Write(fmt::format(format, std::forward<Args>(args)...));
  }
  // The job log file (for a handler that hands it to a child process).
  [[nodiscard]] std::filesystem::path log_path() const { return log_->Path(); }

  // A JSON value for the child jobs of this fire: the admin keeps it with the fire's result, and a child
  // job's parameter can name it ({{parent.output}}, {{parent.output.path.to.field}}; docs/operations.md,
  // "Passing a result to child jobs"). Sent with the callback as cronwheel's extension field `output`
  // (an XXL-JOB admin ignores it). Returns false, and keeps nothing, when `output` is null or its compact
  // JSON is longer than xxljob::kMaxFireOutputBytes (16 KiB). The last call wins.
  bool SetOutput(nlohmann::json output);
  [[nodiscard]] const std::optional<nlohmann::json>& output() const { return output_; }
  void Succeed(std::string msg = {}) { result_ = JobResult{200, std::move(msg)}; }
  void Fail(std::string msg) { result_ = JobResult{500, std::move(msg)}; }
  void SetResult(int code, std::string msg) { result_ = JobResult{code, std::move(msg)}; }
  // The result set so far (nullopt = none set: reported as 200).
  [[nodiscard]] const std::optional<JobResult>& result() const { return result_; }

 private:
  FireInfo info_;
  JobLogSink* log_;
  std::stop_token stop_;
  ringwheel::Clock* clock_;
  std::optional<JobResult> result_;
  std::optional<nlohmann::json> output_;
};

// A named job handler (a BEAN job in XXL-JOB terms).
using JobHandler = std::function<void(JobContext&)>;

}  // namespace cronwheel::executor
