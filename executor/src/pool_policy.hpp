#pragma once
// The decisions of JobDispatcher's worker pool (job_dispatcher.hpp), apart from its threads: when a ready job
// wakes an idle worker, starts a new one or arms the starvation check, when an added worker may end, and
// how many workers the starvation check adds. JobDispatcher holds one under its mutex and carries out what
// it answers (notify a condition variable, start a thread, arm a timer); the unit tests drive it alone,
// through every interleaving of arrivals, wakes and ends they generate
// (tests/unit/executor/pool_policy_test).
//
// The rules:
//  * A job made ready wakes an idle worker, unless a wake is in flight already (the woken worker passes the
//    wake on when jobs are still ready after it took one: one wake per burst, not one per fire, as
//    work-stealing pools such as Go's scheduler do); with no idle worker it starts one, up to `workers`;
//    at `workers`, it arms the starvation check (once).
//  * The woken worker's pass-on follows the same rule as an arrival: a /run that found the worker idle with
//    its wake in flight left the rest of a burst to it, so with no idle worker left it starts one. (Waking
//    only idle workers here left a second fire waiting behind a long first one: issue 46's CI run.)
//  * The starvation check (every `blocked_after` while jobs wait) keeps `workers` workers that are not
//    blocked in a long handler: it starts one for each blocked one beyond those already running, no more
//    than the jobs waiting, up to `max_workers`.
//  * A worker that finds no work ends when the others, less the blocked ones, still make `workers`.
//
// Counts only: what is ready and which workers are blocked is the caller's (it knows the handlers' start
// times), passed in. Thread-safety: none (the caller's mutex). Complexity: O(1) per call.

#include <cstddef>

namespace cronwheel::executor {

class PoolPolicy {
 public:
  struct Limits {
    std::size_t workers = 8;         // kept (started on demand)
    std::size_t max_workers = 1024;  // with those added for blocked handlers
  };
  // What the caller does so that a ready job gets a worker.
  enum class Action {
    kNone,         // a worker is on its way (a wake in flight) or the starvation check is armed
    kWakeIdle,     // notify one idle worker, after releasing the mutex (the wake is counted in flight)
    kStartWorker,  // start a worker thread (counted live already)
    kArmCheck,     // arm the starvation check on the timer (counted armed already)
  };
  // What the starvation check does.
  struct Check {
    bool wake_idle = false;  // notify every idle worker (one may have missed its wake)
    std::size_t start = 0;   // workers to start (counted live already)
    bool rearm = false;      // arm it again (counted armed already)
  };

  explicit PoolPolicy(Limits limits) : limits_(limits) {}

  // A job was made ready.
  Action OnReady();
  // A worker took a job to run and `ready_left` jobs are still ready: the pass-on (OnReady when any is).
  Action OnTaken(std::size_t ready_left);
  // A worker found no job and waits.
  void OnWait() { ++idle_; }
  // A waiting worker woke, notified or not: it takes the wake in flight, if any (a worker woken spuriously
  // may take the job another was woken for, so a wake is never counted pending forever).
  void OnWake();
  // Whether a worker that found no job may end: live - 1 - blocked still make `workers`.
  [[nodiscard]] bool MayEnd(std::size_t blocked) const;
  // A worker ended.
  void OnEnd() { --live_; }
  // The starvation check ran: `ready` jobs wait and `blocked` workers have run their handler for
  // blocked_after or longer. `stopping`: the pool is stopping (nothing is started).
  Check OnCheck(std::size_t ready, std::size_t blocked, bool stopping);

  [[nodiscard]] std::size_t live() const { return live_; }
  [[nodiscard]] std::size_t idle() const { return idle_; }
  [[nodiscard]] std::size_t waking() const { return waking_; }
  [[nodiscard]] bool check_armed() const { return check_armed_; }
  [[nodiscard]] const Limits& limits() const { return limits_; }

 private:
  Limits limits_;
  std::size_t live_ = 0;
  std::size_t idle_ = 0;
  std::size_t waking_ = 0;  // workers notified that have not woken yet (0 or 1)
  bool check_armed_ = false;
};

}  // namespace cronwheel::executor
