#pragma once
// A Clock for tests that moves only when the test moves it (abseil's SimulatedClock, seastar's
// manual_clock). Advance() moves the wall and steady lines together and wakes every waiter whose
// deadline has passed; SetWallMs() steps only the wall line, as an NTP correction would.
//
// Threads under test block in WaitUntil(); a test synchronises with them without sleeping through
// AwaitWaiters(n), which returns once at least n threads are blocked in this clock.
//
// Thread-safety: every member may be called from any thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>

#include "ringwheel/clock.hpp"

namespace cwtest {

class FakeClock final : public ringwheel::Clock {
 public:
  // Starts at wall time `start_ms` (epoch ms; default 2026-01-01T00:00:00Z) and an arbitrary steady time.
  explicit FakeClock(std::int64_t start_ms = 1767225600000);

  [[nodiscard]] ringwheel::SystemTime WallNow() const override;
  [[nodiscard]] ringwheel::SteadyTime SteadyNow() const override;
  bool WaitUntil(ringwheel::SteadyTime deadline, std::stop_token stop) override;

  // Moves both lines forward by d (d >= 0) and wakes the waiters whose deadline passed.
  void Advance(std::chrono::nanoseconds d);
  // Steps the wall clock to `wall_ms` without moving steady time (a clock correction; may go back).
  void SetWallMs(std::int64_t wall_ms);
  // Advances both lines so that the wall clock reads `wall_ms` (must not be in the past).
  void AdvanceToWallMs(std::int64_t wall_ms);

  // Number of threads blocked in WaitUntil() whose deadline is still ahead (a thread released by
  // Advance() no longer counts, even before it has run).
  [[nodiscard]] int Waiters() const;
  // Blocks (on a real condition variable, not a sleep) until at least n threads are blocked in
  // WaitUntil(), or `timeout` of real time passes. Returns whether the count was reached.
  bool AwaitWaiters(int n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable_any cv_;  // waiters and AwaitWaiters() both wait here
  std::chrono::system_clock::duration wall_;
  std::chrono::steady_clock::duration steady_;
  std::multiset<ringwheel::SteadyTime> deadlines_;  // of the threads in WaitUntil()

  int BlockedLocked() const;
};

}  // namespace cwtest
