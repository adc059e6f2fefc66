#pragma once
// Injected time for everything in cronwheel. Logic never calls now() or sleeps directly: it asks a Clock,
// so every timing rule can be tested on a FakeClock (tests/support) that moves only when the test says.
// The pattern is abseil's Clock/SimulatedClock (absl/time/clock_interface.h).
//
// Two time lines:
//  * wall time (std::chrono::system_clock): what schedules are written in; fire instants are epoch
//    milliseconds named *_ms. It may jump (NTP, an operator).
//  * steady time (std::chrono::steady_clock): for measuring durations and for waiting; never jumps.
// Waiting is always on the steady line. To wait for a wall instant use WaitUntilWallMs(), which converts
// at call time; a caller that must not drift re-reads the wall clock after waking (the schedule thread does).

#include <chrono>
#include <cstdint>
#include <stop_token>

namespace ringwheel {

using SystemTime = std::chrono::system_clock::time_point;
using SteadyTime = std::chrono::steady_clock::time_point;

// Epoch milliseconds of a wall-clock time point (truncated toward negative infinity).
[[nodiscard]] constexpr std::int64_t ToEpochMs(SystemTime t) noexcept {
  return std::chrono::floor<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
[[nodiscard]] constexpr SystemTime FromEpochMs(std::int64_t ms) noexcept {
  return SystemTime{std::chrono::milliseconds{ms}};
}

// Thread-safety: implementations are safe to call from any number of threads at once.
class Clock {
 public:
  virtual ~Clock() = default;

  // Current wall time.
  [[nodiscard]] virtual SystemTime WallNow() const = 0;
  // Current steady (monotonic) time.
  [[nodiscard]] virtual SteadyTime SteadyNow() const = 0;

  // Blocks the calling thread until SteadyNow() >= deadline or `stop` is requested, whichever is first.
  // Returns true when the deadline was reached, false when woken by the stop request. A deadline in the
  // past returns true at once. Spurious wake-ups are absorbed here, never returned.
  virtual bool WaitUntil(SteadyTime deadline, std::stop_token stop) = 0;

  // Wall time as epoch milliseconds.
  [[nodiscard]] std::int64_t NowMs() const { return ToEpochMs(WallNow()); }

  // WaitUntil(SteadyNow() + d, stop).
  bool WaitFor(std::chrono::nanoseconds d, std::stop_token stop) {
    return WaitUntil(SteadyNow() + d, std::move(stop));
  }

  // Waits until the wall clock reads at least `wall_ms` (epoch ms), converting to the steady line now.
  // If the wall clock is stepped while waiting the wake-up is early or late by the step; callers re-read
  // NowMs() after waking. Returns false when stopped.
  bool WaitUntilWallMs(std::int64_t wall_ms, std::stop_token stop) {
    const auto delta = std::chrono::milliseconds{wall_ms - NowMs()};
    return WaitUntil(SteadyNow() + delta, std::move(stop));
  }

 protected:
  Clock() = default;
  Clock(const Clock&) = default;
  Clock& operator=(const Clock&) = default;
};

// The machine's clocks. Stateless; one shared instance is enough (RealClock::Instance()).
class RealClock final : public Clock {
 public:
  RealClock() = default;
  [[nodiscard]] SystemTime WallNow() const override { return std::chrono::system_clock::now(); }
  [[nodiscard]] SteadyTime SteadyNow() const override { return std::chrono::steady_clock::now(); }
  bool WaitUntil(SteadyTime deadline, std::stop_token stop) override;

  // A process-wide instance for main() to inject.
  static RealClock& Instance();
};

}  // namespace ringwheel
