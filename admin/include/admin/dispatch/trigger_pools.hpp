#pragma once
// The fast and slow trigger pools (docs/xxl-job-protocol.md §6): fixed worker threads taking fires from a
// bounded queue and calling TriggerService::Trigger, which routes the fire and hands its /run to the
// executor client without waiting for the answer (a worker blocks only on what routing itself waits for: a
// job not yet in the catalog, a FAILOVER or BUSYOVER probe). A job whose triggers took longer than
// `slow_threshold` (500 ms, from the worker taking it to its outcome being recorded) more than `slow_limit`
// (10) times in the current clock minute goes to the slow pool for the rest of that minute, so one slow
// executor cannot hold up every other job. A burst wakes one idle worker per queued fire, not all of them.
//
// Dispatch() never blocks: when a pool's queue is full the fire is recorded as failed, with the reason,
// on its row (XXL-JOB 2.5+ drops it with only a log line; 2.4 threw inside the scan loop).
//
// Thread-safety: Dispatch() from any thread. Drain() and the destructor wait until every queued fire has
// been sent and its outcome recorded, then (the destructor) stop the workers.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/schedule/seams.hpp"
#include "cronwheel/mutex.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

// Counts slow triggers per job in the current epoch minute (clock minute, as XXL-JOB).
class SlowJobTracker {
 public:
  SlowJobTracker(std::chrono::milliseconds threshold, int limit) : threshold_(threshold), limit_(limit) {}
  // Records one trigger of `job_id` that took `took`, finishing at now_ms.
  void Record(int job_id, std::chrono::nanoseconds took, std::int64_t now_ms);
  // Whether the job belongs in the slow pool now.
  [[nodiscard]] bool IsSlow(int job_id, std::int64_t now_ms);

 private:
  // Clears the counts when the minute changes.
  void Roll(std::int64_t now_ms) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::chrono::milliseconds threshold_;
  int limit_;
  cronwheel::Mutex mu_;
  std::int64_t minute_ ABSL_GUARDED_BY(mu_) = -1;
  std::unordered_map<int, int> counts_ ABSL_GUARDED_BY(mu_);
};

class TriggerPools final : public FireSink {
 public:
  struct Settings {
    int fast_threads = 200;            // XXL-JOB xxl.job.triggerpool.fast.max
    int slow_threads = 100;            // XXL-JOB xxl.job.triggerpool.slow.max
    std::size_t fast_queue = 100'000;  // fires waiting per pool before new ones are failed
    std::size_t slow_queue = 100'000;
    std::chrono::milliseconds slow_threshold{500};
    int slow_limit = 10;
  };
  struct Stats {
    std::uint64_t sent_fast = 0;
    std::uint64_t sent_slow = 0;
    std::uint64_t rejected = 0;  // queue full
    std::size_t queued_fast = 0;
    std::size_t queued_slow = 0;
    std::uint64_t rejected_fast = 0;  // of `rejected`, per pool (metrics)
    std::uint64_t rejected_slow = 0;
  };

  TriggerPools(Settings settings, ringwheel::Clock& clock, FireTrigger& trigger, TriggerRecorder& recorder);
  ~TriggerPools() override;
  TriggerPools(const TriggerPools&) = delete;
  TriggerPools& operator=(const TriggerPools&) = delete;

  void Dispatch(std::vector<Fire> fires) override;
  // Waits until both queues are empty and every fire taken has its outcome recorded (shutdown, tests).
  void Drain();
  [[nodiscard]] Stats stats() const;

 private:
  struct Pool {
    std::string name;
    std::size_t capacity = 0;
    std::deque<Fire> queue;
    std::size_t idle = 0;       // workers waiting for a fire
    std::size_t in_flight = 0;  // fires taken whose outcome is not recorded yet
    std::uint64_t sent = 0;
    std::uint64_t rejected = 0;
    std::condition_variable_any ready;
    std::vector<std::jthread> workers;
  };
  void Work(Pool& pool, const std::stop_token& stop);
  // Call with mu_ held: nothing queued, nothing in flight.
  [[nodiscard]] bool Idle() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Settings settings_;
  ringwheel::Clock& clock_;
  FireTrigger& trigger_;
  TriggerRecorder& recorder_;
  SlowJobTracker tracker_;
  mutable cronwheel::Mutex mu_;
  std::condition_variable_any idle_;
  std::uint64_t rejected_ ABSL_GUARDED_BY(mu_) = 0;
  Pool fast_;
  Pool slow_;
};

}  // namespace cronwheel::admin
