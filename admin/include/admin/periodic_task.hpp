#pragma once
// Runs a function every `interval` on its own thread, on an injected Clock (userver's PeriodicTask).
// The first run is after `first_delay`. An exception from the function is logged (once per failure streak,
// then every 60th) and the task goes on. final, non-copyable; the destructor stops the thread.
//
// Thread-safety: constructed and destroyed by one owner; the function runs on the task's thread.

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class PeriodicTask final {
 public:
  struct Settings {
    std::string name;
    std::chrono::milliseconds interval{1000};
    std::chrono::milliseconds first_delay{0};
  };
  PeriodicTask(Settings settings, ringwheel::Clock& clock, std::function<void()> fn);
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

 private:
  Settings settings_;
  ringwheel::Clock& clock_;
  std::function<void()> fn_;
  std::jthread thread_;
};

}  // namespace cronwheel::admin
