#pragma once
// Internal seam for the executor's timed jobs: fire timeouts, reaping idle job threads and starting fires
// sent ahead of their instant. The
// executor only needs "run this after a delay, unless cancelled"; the implementation is ringwheel's
// HashedWheelTimer (Netty's design, on the injected Clock), wrapped by WheelTimer.
//
// Precision: a task runs after its delay, at most one tick late (100 ms by default); never early.
// Thread-safety: After() and Handle::Cancel() may be called from any thread, including from a task.
// Lifetime: a Handle may outlive its Timer (Cancel() then does nothing). Stop() runs no further tasks
// and returns after a task in progress has finished; tasks not yet due are dropped. Tasks run on the
// timer's thread and must be short (they take a lock and push a callback). Stop() must not be called from
// a task.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

#include "ringwheel/clock.hpp"
#include "ringwheel/hashed_wheel_timer.hpp"

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
  // Runs `task` once, `delay` (>= 0) from now on the timer's clock. If the timer refuses (stopped), the
  // task never runs and the handle is empty.
  virtual Handle After(std::chrono::nanoseconds delay, std::function<void()> task) = 0;
  virtual void Stop() = 0;

 protected:
  Timer() = default;
  Timer(const Timer&) = default;
  Timer& operator=(const Timer&) = default;
};

// The executor's Timer: a ringwheel::HashedWheelTimer, by default with 100 ms ticks and 512 buckets (one
// turn is 51.2 s; a 90 s idle reaping or a long job timeout waits a few turns). Unbounded pending timeouts:
// each running fire holds at most one, each idle job thread one. The start timer of fires sent ahead of
// their instant (JobDispatcher) is one with 1 ms ticks and 8192 buckets (a turn of 8.2 s, longer than any
// lead): it wakes a thousand times a second, which costs a few milliseconds of CPU a second.
class WheelTimer final : public Timer {
 public:
  explicit WheelTimer(ringwheel::Clock& clock,
                      std::chrono::milliseconds tick = std::chrono::milliseconds(100),
                      std::size_t ticks_per_wheel = 512);
  ~WheelTimer() override;
  WheelTimer(const WheelTimer&) = delete;
  WheelTimer& operator=(const WheelTimer&) = delete;

  Handle After(std::chrono::nanoseconds delay, std::function<void()> task) override;
  void Stop() override;

 private:
  ringwheel::HashedWheelTimer wheel_;
};

}  // namespace cronwheel::executor
