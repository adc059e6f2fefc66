#pragma once
// Runs a function every `interval` on its own thread, on an injected Clock (userver's PeriodicTask). The
// first run is after `first_delay` (0 = at once). An exception from the function is logged (ThrottledLog:
// the first of a streak, then at most once a minute) and the task goes on. final, non-copyable; the
// destructor stops the thread, waiting for a run in progress to return.
//
// Used by the admin's monitors and the executor's registry heartbeat, callback retry and log retention.
//
// Thread-safety: constructed and destroyed by one owner; the function runs on the task's thread.

#include <chrono>
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
  };
  PeriodicTask(Settings settings, ringwheel::Clock& clock, std::function<void()> fn);
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  // Stops the thread (waits for a run in progress). Idempotent; the destructor calls it.
  void Stop();

 private:
  Settings settings_;
  ringwheel::Clock& clock_;
  std::function<void()> fn_;
  std::jthread thread_;
};

}  // namespace cronwheel
