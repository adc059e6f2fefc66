#pragma once
// Many /run requests to one executor in one HTTP exchange (docs/architecture.md, "Ahead-of-time dispatch":
// many fires per request). Used by HttpExecutorClient for the fires sent ahead of their instant, which go
// only to cronwheel-executors (they announced runAt, and serve POST /runs: xxljob::ParseTriggerBatch).
//
// Batching is self-clocked, as Nagle's algorithm and group commit are: a run goes out at once while fewer
// than `max_in_flight` batches to its executor are unanswered; otherwise it waits, and when a batch is
// answered the runs that waited meanwhile (up to `max_batch`) go as the next one. A lone fire costs no delay;
// a burst of 10,000 becomes a few dozen exchanges, each as large as the executor's pace makes it.
//
// Each run's `done` gets its own answer (its element of the batch's {"answers": [...]}). When the batch as a
// whole failed, every run in it gets that failure with the batch's Delivery (kNotSent: none of them reached
// the executor; kUnknown: any may have) and `refused`, so TriggerService treats each as it would a /run of
// its own. A batch is sent with the earliest send_by_ms of its runs.
//
// Thread-safety: Add() from any thread; `post` is called without the lock held, from Add() or from the
// thread that runs a batch's `done`. Memory: the runs waiting, per executor and token, and an entry for
// each executor with runs in flight. Complexity: Add O(1) amortised (plus a batch's JSON when it sends one).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "admin/dispatch/executor_client.hpp"
#include "cronwheel/mutex.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {

class RunBatcher final {
 public:
  struct Settings {
    std::size_t max_in_flight = 4;  // unanswered batches per executor (and token); at least 1
    std::size_t max_batch = 1000;   // runs per batch; 1 to xxljob::kMaxBatchRuns
  };
  // POSTs `body` to <address>/runs with `token`; `done` gets the reply, exactly once.
  using Post = std::function<void(const std::string& address, const std::string& token, std::string body,
                                  std::int64_t send_by_ms, ExecutorClient::RunDone done)>;
  struct Stats {
    std::uint64_t batches = 0;  // POST /runs sent
    std::uint64_t runs = 0;     // runs in them
  };

  RunBatcher(Settings settings, Post post);
  RunBatcher(const RunBatcher&) = delete;
  RunBatcher& operator=(const RunBatcher&) = delete;

  // Sends `param` to `address` in a batch; `done` gets its answer (see above).
  void Add(const std::string& address, const std::string& token, const xxljob::TriggerParam& param,
           std::int64_t send_by_ms, ExecutorClient::RunDone done);

  [[nodiscard]] Stats stats() const;

 private:
  struct Run {
    xxljob::TriggerParam param;
    std::int64_t send_by_ms = 0;
    ExecutorClient::RunDone done;
  };
  using Key = std::pair<std::string, std::string>;  // address, token
  struct Queue {
    std::deque<Run> waiting;
    std::size_t in_flight = 0;
  };

  // Needs mu_: takes the next batch of `key` (at most max_batch waiting runs) if one may go now.
  std::vector<Run> TakeBatchLocked(const Key& key, Queue& q) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Send(const Key& key, std::vector<Run> batch);
  void Answered(const Key& key, std::vector<Run> batch, const ExecutorClient::RunReply& reply);

  Settings settings_;
  Post post_;
  mutable cronwheel::Mutex mu_;  // guards queues_ and stats_
  std::map<Key, Queue> queues_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace cronwheel::admin
