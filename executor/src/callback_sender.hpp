#pragma once
// Durable callbacks (docs/xxl-job-protocol.md §3 "Executor callback pipeline and the retry file").
//
// Finished fires are queued; one thread sends them in batches of at most `batch_size` (100) as one JSON
// array (the dialect A/B body) to <admin>/api/callback, trying each admin in order. Each fire's job log
// gets "----------- job callback finish." or "... callback fail, callbackResult: ...".
//
// A callback may carry its fire's job log (the jobLog extension, for the admin's archive of fire output:
// docs/operations.md, "The fire output archive"). The log never holds its result back: a batch is also
// closed before it would pass `batch_bytes` (4 MiB, under the admin's 5 MiB body limit; a callback larger
// than that goes alone), and a batch an admin refuses as too large (HTTP 413) is sent again at once without
// the logs (the admin then reads them with /log, as it does an XXL-JOB executor's), and spooled so. The
// logs are spooled with their results, so they survive what the results survive.
//
// A batch that no admin accepts is written to the spool directory as
//   <log dir>/callbacklogs/callback-<first logId>-<count>-<random>.json
// (a JSON array, written to a temporary file, fsync'd, renamed, directory fsync'd). Every
// `retry_interval` (and once at Start(), which replays the files a previous run left) each spool file is
// read, sent, and deleted only after an admin answered 200; a round stops at the first failure and the
// remaining files wait for the next one. So a callback is lost neither while every admin is down nor
// across an executor restart; it may be delivered twice (the admin treats a repeated callback as a repeat).
// Improvements over XXL-JOB: a portable JSON spool in every version (A wrote Java-serialised objects),
// the file is deleted only after success (XXL-JOB deletes it before retrying and rewrites it on failure),
// and Stop() flushes the queue (sending, or spooling once an admin has failed) so shutdown loses nothing.
// A spool file that does not parse is renamed to *.bad and logged, never retried forever.
// With no admin configured, callbacks are dropped (logged), as XXL-JOB does.
//
// Thread-safety: Push() from any thread. Lifetime: the admin client and log files must outlive it.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <stop_token>
#include <thread>
#include <vector>

#include "admin_client.hpp"
#include "cronwheel/mutex.hpp"
#include "cronwheel/periodic_task.hpp"
#include "job_dispatcher.hpp"
#include "job_log.hpp"
#include "ringwheel/clock.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::executor {

class CallbackSender final : public CallbackSink {
 public:
  struct Settings {
    std::filesystem::path spool_dir;          // <log dir>/callbacklogs (created 0700)
    std::size_t batch_size = 100;             // callbacks per POST
    std::chrono::seconds retry_interval{30};  // between spool retry rounds
    // A batch is closed before its callbacks' messages and job logs pass this many bytes (estimated).
    std::size_t batch_bytes = std::size_t{4} * 1024 * 1024;
  };
  // `logs` may be null (no job-log lines are written then).
  CallbackSender(Settings settings, AdminClient& admin, JobLogFiles* logs, ringwheel::Clock& clock);
  ~CallbackSender() override;
  CallbackSender(const CallbackSender&) = delete;
  CallbackSender& operator=(const CallbackSender&) = delete;

  // Starts the sending thread and the retry thread (whose first round runs at once).
  void Start();
  void Push(xxljob::HandleCallbackParam callback) override;
  // Sends or spools everything queued, then stops both threads. Later Push()es are spooled directly.
  void Stop();

  // Blocks (real time, at most `timeout`) until the queue is empty and no batch is being sent.
  bool AwaitIdle(std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Blocks until at least `n` retry rounds have completed since Start().
  bool AwaitRetryRounds(std::uint64_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // The spool files waiting to be sent, sorted by name.
  [[nodiscard]] std::vector<std::filesystem::path> SpoolFiles() const;
  // Callbacks queued and not yet sent or spooled (metrics).
  [[nodiscard]] std::size_t pending();
  // Callbacks written to the spool since the start (metrics).
  [[nodiscard]] std::uint64_t spooled() const { return spooled_.load(std::memory_order_relaxed); }

 private:
  // Moves the next batch off the front of `queue`: at most batch_size callbacks and batch_bytes (at least
  // one).
  std::vector<xxljob::HandleCallbackParam> TakeBatch(std::deque<xxljob::HandleCallbackParam>& queue) const;
  // admin_.Call of a callback batch; a batch refused as too large is sent again without its job logs, which
  // are then dropped from `batch` too (so a spooled copy has none). `dropped` says whether they were.
  AdminReply CallAdmin(std::vector<xxljob::HandleCallbackParam>& batch, bool& dropped);
  void SendLoop(const std::stop_token& stop);
  void RetryRound();
  // Sends one batch; on failure spools it. Returns whether an admin accepted it.
  bool SendOrSpool(std::vector<xxljob::HandleCallbackParam> batch, bool try_send);
  void Spool(const std::vector<xxljob::HandleCallbackParam>& batch, const std::string& why);
  void RetrySpool();
  void LogEach(const std::vector<xxljob::HandleCallbackParam>& batch, const std::string& line);

  Settings settings_;
  AdminClient& admin_;
  JobLogFiles* logs_;
  ringwheel::Clock& clock_;

  cronwheel::Mutex mu_;
  std::condition_variable_any cv_;
  std::deque<xxljob::HandleCallbackParam> queue_ ABSL_GUARDED_BY(mu_);
  bool sending_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> warned_no_admin_{false};
  std::uint64_t retry_rounds_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<std::uint64_t> spooled_{0};
  std::jthread sender_;
  std::unique_ptr<PeriodicTask> retrier_;
};

}  // namespace cronwheel::executor
