#pragma once
// Internal seam for the executor's two timed jobs: fire timeouts and reaping idle job threads. The
// executor only needs "run this after a delay, unless cancelled"; the implementation behind the seam is
// ClockTimer (a min-heap on one thread, waiting on the injected Clock) until ringwheel's
// HashedWheelTimer is available, at which point only MakeTimer() changes.
//
// Thread-safety: After() and Handle::Cancel() may be called from any thread, including from a task.
// Lifetime: a Handle may outlive its Timer (Cancel() then does nothing). Stop() runs no further tasks
// and returns after a task in progress has finished; tasks not yet due are dropped. Tasks run on the
// timer's thread and must be short (they take a lock and push a callback).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>

#include "ringwheel/clock.hpp"

namespace cronwheel::executor {

class Timer {
 public:
  // Cancels one scheduled task. Default-constructed: cancels nothing.
  class Handle {
   public:
    Handle() = default;
    explicit Handle(std::function<void()> cancel) : cancel_(std::move(cancel)) {}
    // After Cancel() returns the task will not start (it may be running right now).
    void Cancel() {
      if (cancel_) cancel_();
      cancel_ = nullptr;
    }

   private:
    std::function<void()> cancel_;
  };

  virtual ~Timer() = default;
  // Runs `task` once, `delay` (>= 0) from now on the timer's clock.
  virtual Handle After(std::chrono::nanoseconds delay, std::function<void()> task) = 0;
  virtual void Stop() = 0;

 protected:
  Timer() = default;
  Timer(const Timer&) = default;
  Timer& operator=(const Timer&) = default;
};

// A timer thread over a sorted map of deadlines, waiting on a ringwheel::Clock (so a FakeClock drives it
// in tests: the thread is one waiter of the clock while it runs). O(log n) insert and cancel; a cancelled
// task is removed at once, so nothing it captured stays alive until its deadline.
class ClockTimer final : public Timer {
 public:
  explicit ClockTimer(ringwheel::Clock& clock);
  ~ClockTimer() override;
  ClockTimer(const ClockTimer&) = delete;
  ClockTimer& operator=(const ClockTimer&) = delete;

  Handle After(std::chrono::nanoseconds delay, std::function<void()> task) override;
  void Stop() override;

 private:
  using Key = std::pair<ringwheel::SteadyTime, std::uint64_t>;  // deadline, then insertion order
  struct State {
    std::mutex mu;
    std::map<Key, std::function<void()>> entries;
    std::uint64_t next_seq = 0;
    std::stop_source wake;                  // requested to cut the current wait short
    ringwheel::SteadyTime waiting_until{};  // deadline of the current wait (epoch = not waiting)
  };
  void Loop(const std::stop_token& stop);

  ringwheel::Clock& clock_;
  std::shared_ptr<State> state_;  // shared with the handles (weakly), which may outlive the timer
  std::jthread thread_;           // last: starts after the members above exist
};

// The timer the executor uses.
std::unique_ptr<Timer> MakeTimer(ringwheel::Clock& clock);

}  // namespace cronwheel::executor
