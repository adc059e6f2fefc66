#pragma once
// HashedWheelTimer: one thread that runs short tasks after a delay, approximately (to one tick), for
// very many timeouts at once: Netty's HashedWheelTimer, on ringwheel's injected Clock.
//
// Where cronwheel uses it:
//   * executor: the job timeout (executorTimeout seconds of a /run request): a timeout per running job,
//     usually cancelled when the job finishes first; and reaping job threads idle for too long;
//   * admin: the back-off before a failed job's retry.
// It is not the scheduler's clock: fires are chosen by the schedule thread from PostgreSQL and placed in
// the SecondRing (second_ring.hpp).
//
// Design (Netty's, see hashed_wheel.hpp for the wheel itself):
//   * NewTimeout() may be called from any thread. It puts the timeout on a multi-producer single-consumer
//     submission queue; the worker moves at most Settings::max_transfers_per_tick of them into the wheel
//     at each tick (Netty: 100'000), so a burst of producers cannot stall a tick.
//   * The worker waits for the end of each tick on the Clock (Clock::WaitUntil; a FakeClock drives it in
//     tests), then: removes cancelled timeouts, transfers submissions, advances the wheel to the clock's
//     steady time, and runs each expired task on its own thread, in deadline-tick order.
//   * A task never runs before its deadline: deadlines round up to the end of their tick. It runs at most
//     one tick late plus the time the tasks before it take: tasks must be short (hand long work to a pool).
//   * Cancel is O(1): a timeout's state is an atomic (pending -> cancelled | expired | stopped), so
//     TimerHandle::Cancel() decides at once whether the task will run; the worker unlinks the cancelled
//     node at its next tick (Netty's cancelledTimeouts queue), freeing the task early.
//   * At most Settings::max_pending timeouts may be pending (scheduled, not yet run or cancelled); beyond
//     that NewTimeout() refuses with a ResourceExhausted status (Netty's maxPendingTimeouts; 0 = unlimited).
//   * Stop() stops the thread and returns the timeouts that did not run (Netty's stop()).
//
// Units: delays are std::chrono durations on the steady time line; deadlines are SteadyTime.
// Thread-safety: NewTimeout, pending, failed_tasks and TimerHandle::Cancel may be called from any thread,
// including from tasks. Stop() and the destructor must not be called from a task of this timer (that would
// join the thread from itself; Stop() throws std::logic_error).
// Errors: a task that throws is caught on the worker thread and counted in failed_tasks() (ringwheel does
// no logging); it does not stop the timer.

#include <absl/status/statusor.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ringwheel/clock.hpp"
#include "ringwheel/hashed_wheel.hpp"

namespace ringwheel {

namespace detail {
struct TimeoutState;
struct TimerInbox;
}  // namespace detail

// A scheduled timeout. Copyable; all copies refer to the same timeout. A default-constructed handle refers
// to nothing (Cancel returns false).
class TimerHandle {
 public:
  TimerHandle() = default;

  // Prevents the task from running. Returns true when this call prevented it; false when the task already
  // ran or is running, was cancelled before, or was returned by Stop(). Thread-safe, O(1).
  bool Cancel();

  [[nodiscard]] bool cancelled() const;
  // The task ran (or is running).
  [[nodiscard]] bool expired() const;
  // When the task becomes due (steady time).
  [[nodiscard]] SteadyTime deadline() const;

 private:
  friend class HashedWheelTimer;
  explicit TimerHandle(std::shared_ptr<detail::TimeoutState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::TimeoutState> state_;
};

class HashedWheelTimer final {
 public:
  struct Settings {
    // Length of a tick: the timer's precision. Netty's default is 100 ms.
    std::chrono::milliseconds tick{100};
    // Buckets, rounded up to a power of two; one turn of the wheel is tick * ticks_per_wheel (51.2 s by
    // default). Longer delays work too (they wait some turns); pick a turn near the usual delay.
    std::size_t ticks_per_wheel = 512;
    // Maximum of pending timeouts; NewTimeout refuses beyond it. 0 = unlimited.
    std::size_t max_pending = 0;
    // At most this many submissions are moved into the wheel per tick (the rest wait for the next tick).
    std::size_t max_transfers_per_tick = 100'000;
  };

  // A timeout returned by Stop(): it did not run.
  struct Unrun {
    SteadyTime deadline;
    std::function<void()> task;
  };

  // Starts the worker thread. `clock` must outlive the timer. Throws std::invalid_argument for a tick
  // below 1 ms, ticks_per_wheel outside 1..2^30, or max_transfers_per_tick of 0.
  explicit HashedWheelTimer(Clock& clock);
  HashedWheelTimer(Clock& clock, Settings settings);
  // Stops (Stop()) and drops the timeouts that did not run.
  ~HashedWheelTimer();

  HashedWheelTimer(const HashedWheelTimer&) = delete;
  HashedWheelTimer& operator=(const HashedWheelTimer&) = delete;
  HashedWheelTimer(HashedWheelTimer&&) = delete;
  HashedWheelTimer& operator=(HashedWheelTimer&&) = delete;

  // Runs `task` on the timer's thread once `delay` has passed on the clock's steady line (a negative
  // delay counts as 0). Returns the timeout's handle, or refuses with a status:
  //   InvalidArgument     the task is empty ("HashedWheelTimer: the task is empty");
  //   FailedPrecondition  the timer is stopped ("HashedWheelTimer: the timer is stopped; new timeout
  //   refused"); ResourceExhausted   max_pending timeouts are pending ("HashedWheelTimer: 1000 timeouts are
  //   pending, the
  //                       maximum (Settings::max_pending = 1000); new timeout refused").
  absl::StatusOr<TimerHandle> NewTimeout(std::function<void()> task, std::chrono::nanoseconds delay);

  // Stops the worker thread (waiting for a task that is running) and returns the timeouts that did not
  // run and were not cancelled, ordered by deadline; their handles' Cancel() returns false afterwards.
  // Later NewTimeout calls are refused. A second Stop() returns nothing.
  std::vector<Unrun> Stop();

  // Timeouts scheduled and not yet run, cancelled or returned by Stop().
  [[nodiscard]] std::size_t pending() const;
  // Tasks that threw.
  [[nodiscard]] std::uint64_t failed_tasks() const;
  [[nodiscard]] const Settings& settings() const { return settings_; }

 private:
  void Run(const std::stop_token& stop);
  void Tick(SteadyTime now);

  Clock& clock_;
  const Settings settings_;
  std::shared_ptr<detail::TimerInbox> inbox_;
  HashedWheel<std::shared_ptr<detail::TimeoutState>> wheel_;    // worker thread only (and Stop after join)
  std::vector<std::shared_ptr<detail::TimeoutState>> expired_;  // worker scratch
  std::atomic<std::uint64_t> failed_tasks_{0};
  std::jthread worker_;  // last: starts after everything above is built, stops first
};

}  // namespace ringwheel
