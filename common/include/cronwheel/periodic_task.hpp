#pragma once
// Runs a function every `interval` on its own thread, on an injected Clock (userver's PeriodicTask). The
// first run is after `first_delay` (0 = at once). An exception from the function is logged (ThrottledLog:
// the first of a streak, then at most once a minute) and the task goes on. final, non-copyable; the
// destructor stops the thread, waiting for a run in progress to return.
//
// Two of userver's settings, both off by default:
//  * `jitter`: each wait is `interval` plus a uniform draw in [-jitter, +jitter] (userver's `distribution`),
//    so the same task of many processes started together (executors' heartbeats after a deployment) spreads
//    out instead of reaching a shared server in step;
//  * `failure_interval`: after a run that threw, the next waits `failure_interval` instead of `interval`
//    (userver's `exception_period`), doubled for each further failure in a row up to `max_failure_interval`,
//    so a task whose dependency is down neither hammers it nor waits a whole long interval to recover.
// The rule is NextWait (pure, unit-tested); the draws come from a generator seeded by `seed`.
//
// Used by the admin's monitors and the executor's registry heartbeat, callback retry and log retention.
//
// Thread-safety: constructed and destroyed by one owner; the function runs on the task's thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "ringwheel/clock.hpp"

namespace cronwheel {

class PeriodicTask final {
 public:
  struct Settings {
    std::string name;  // for log lines ("<name> failed: ...")
    std::chrono::milliseconds interval{1000};
    std::chrono::milliseconds first_delay{0};
    std::chrono::milliseconds jitter{0};            // 0 = every wait is exact; at most `interval`
    std::chrono::milliseconds failure_interval{0};  // 0 = a failed run waits `interval` as any other
    std::chrono::milliseconds max_failure_interval{60'000};
    std::uint64_t seed = 0;  // the jitter's generator; 0 = from std::random_device
  };
  PeriodicTask(Settings settings, ringwheel::Clock& clock, std::function<void()> fn);
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  // Stops the thread (waits for a run in progress). Idempotent; the destructor calls it.
  void Stop();

  // The wait after a run: `failures_in_a_row` is 0 after a run that returned, n after the n-th run in a row
  // that threw; `draw` is uniform in [0, 1) (the jitter's position in [-jitter, +jitter]). Never negative.
  // O(1).
  static std::chrono::milliseconds NextWait(const Settings& settings, int failures_in_a_row, double draw);

 private:
  Settings settings_;
  ringwheel::Clock& clock_;
  std::function<void()> fn_;
  std::jthread thread_;
};

}  // namespace cronwheel
