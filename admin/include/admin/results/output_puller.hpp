#pragma once
// The fire output archive's pull side (docs/operations.md, "The fire output archive"; docs/architecture.md,
// "The life of one fire", step 6). cronwheel-executor sends each fire's job log with its callback (the jobLog
// extension, archived in the callback's statement); an executor that does not (every XXL-JOB executor, or a
// cronwheel-executor with callback_log_max_bytes 0) has its fire queued instead (fire_output_pull, due
// `pull_delay` after the callback, so that an executor writing its log asynchronously has flushed it), and
// this reads the log from the executor's /log and archives it:
//  * off the callback's thread: AdminApp runs RunOnce every second; each round claims at most `batch` due
//    pulls (the queue is in PostgreSQL, so a pull survives an admin's restart and is taken by any admin:
//    ResultStore::ClaimOutputPulls) and pulls them on at most `concurrency` threads of the round's own;
//  * a log is read from line 1, page after page (fromLineNum = the last line + 1) until the executor says it
//    is the end (isEnd) or a page brings no new line (XXL-JOB's executors say isEnd only for a missing file,
//    docs/xxl-job-protocol.md §2 "/log"); its head and tail are kept within `max_bytes`
//    (cronwheel/head_tail.hpp), and at most `max_bytes` x `transfer_factor` bytes are read (the rest of a
//    longer log is left out, and a last line says so);
//  * a pull that fails (the executor does not answer, or refuses) is tried again after `first_retry`, then
//    three times as long each time, `max_attempts` in all; then the fire's archive records that its output
//    could not be pulled and why (FireOutputArchive::State::kFailed), which the console and `cronwheel logs
//    tail` show. An executor that answers that it has no log of the fire ("readLog fail", XXL-JOB's answer
//    for a missing file), or a fire with no executor address, is recorded so at once: trying again cannot
//    help.
//
// Errors: the store's failures propagate from RunOnce (the PeriodicTask logs them and tries again: a claimed
// pull whose result was not recorded is due again after `lease`). Thread-safety: RunOnce from one thread at a
// time; stats() from any thread.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "admin/dispatch/executor_client.hpp"
#include "admin/results/result_store.hpp"
#include "ringwheel/clock.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {

// A job log within the archive's cap: `content` is made valid for a PostgreSQL text (a NUL byte becomes
// U+FFFD) and, when longer than `max_bytes` (plus a marker line: what a sender kept within the same cap is
// not cut again), kept as its head and tail around a marker line. `log_bytes`
// and `left_out` are the whole log's size and the bytes of it not in `content`, counting what the sender
// left out already (`left_out_before`, of `log_bytes`).
ArchivedLog KeepLog(std::string content, std::int64_t log_bytes, std::int64_t left_out_before,
                    std::size_t max_bytes);

// What reading one fire's log from its executor gave: the log, or why not.
struct PullResult {
  bool ok = false;
  ArchivedLog log;
  std::string error;   // when !ok: says which executor and what it answered
  bool final = false;  // when !ok: trying again cannot help (no address; the executor has no such log)
};
// Reads `pull`'s log from its executor with /log (see the header comment), with `token` (empty = none).
// Stops after `max_transfer` bytes. Synchronous: call it on a thread of your own, never on the executor
// client's.
PullResult PullLog(ExecutorClient& client, const std::string& token, const OutputPull& pull,
                   std::size_t max_bytes, std::size_t max_transfer);

class OutputPuller final {
 public:
  struct Settings {
    std::size_t max_bytes = std::size_t{1024} * 1024;  // output_archive_max_bytes
    int concurrency = 4;                               // output_pull_concurrency: /log requests at once
    int batch = 32;                                    // pulls claimed per round
    int max_attempts = 4;
    std::chrono::milliseconds first_retry{10'000};  // after the first failure; x3 after each further one
    std::chrono::milliseconds lease{300'000};       // a claimed pull not recorded by then is due again
    std::size_t transfer_factor = 4;                // read at most max_bytes x this of one log
  };
  // Counts since the start (for /metrics).
  struct Stats {
    std::uint64_t archived = 0;   // stored whole
    std::uint64_t truncated = 0;  // stored with its middle left out
    std::uint64_t retried = 0;    // failed, to be tried again
    std::uint64_t failed = 0;     // failed for good: recorded as such
  };

  // `global_token`: the token of fires whose group has none of its own.
  OutputPuller(Settings settings, ringwheel::Clock& clock, ResultStore& store, ExecutorClient& client,
               std::string global_token);
  OutputPuller(const OutputPuller&) = delete;
  OutputPuller& operator=(const OutputPuller&) = delete;

  // Claims the due pulls and handles them, round after round while a round claims a whole batch. Returns how
  // many it handled.
  int RunOnce();
  [[nodiscard]] Stats stats() const;

  // When a pull that failed its `attempts`-th try is tried again (epoch ms), or 0 when it is not (the last
  // attempt): first_retry, then x3 each time.
  [[nodiscard]] std::int64_t RetryAt(int attempts, std::int64_t now_ms) const;

 private:
  PulledOutput Pull(const OutputPull& pull, std::int64_t now_ms);

  Settings settings_;
  ringwheel::Clock& clock_;
  ResultStore& store_;
  ExecutorClient& client_;
  std::string global_token_;
  std::atomic<std::uint64_t> archived_{0};
  std::atomic<std::uint64_t> truncated_{0};
  std::atomic<std::uint64_t> retried_{0};
  std::atomic<std::uint64_t> failed_{0};
};

}  // namespace cronwheel::admin
